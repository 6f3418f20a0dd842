/**
 * What each function's V8 startup snapshot runs (`npm run build` -> dist/bundles/<name>.blob,
 * scripts/build.mjs): the same `dynamo-fn serve <name>` as ./function-entry.ts, with every module
 * of the function already evaluated when the process starts. The chart starts a function as
 * `node --snapshot-blob /app/dist/bundles/<name>.blob -- ARGS` (ARGS as after `serve <name>`).
 *
 * How: `node --build-snapshot` evaluates a CommonJS bundle of this module and the function's
 * (zod building the API schemas, pino, prom-client, cloudevents, the handlers), then
 * {@link setFunctionSnapshotMain}'s function runs in each process started from the blob. Node's
 * user-land snapshot cannot hold node:http's native handles, so the build gives node:http, https,
 * net and tls to the bundle as objects whose properties load the module on first use (in the
 * main function, when the server and the Kubernetes transport start).
 *
 * The bundle cannot `import()` (a snapshot has no dynamic-import callback) and
 * `import.meta.url` means nothing in it: the build replaces both with what the main function
 * sets on `globalThis` from the blob's own path (the blob sits beside `<name>.mjs`, so a path a
 * module derives from its location is the one it has in the ES module bundle):
 * - `__dynamoFnBundleUrl`: the file URL of `<name>.mjs` beside the blob;
 * - `__dynamoFnRequire`: a `require` from that folder, for the modules the build leaves out of
 *   the snapshot and writes as CommonJS files beside it (client-node for a kubeconfig file, the
 *   gRPC client of Model Express): loaded only when that setting is on.
 * @module
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startupSnapshot } from 'node:v8';
import { decodeEvent, parseConfig, type HttpMessage } from '../runtime/index.js';
import type { FunctionName } from './serve.js';
import { runBundledFunction } from './function-entry.js';

/**
 * The arguments of `node` that start function `name` from its snapshot in `bundlesDir`, before
 * the function's own arguments: the chart's command (/app/dist/bundles) and the cold-start
 * bench's (dist/bundles) are these; test/integration/chart.test.ts holds the chart to it and
 * test/image/image.test.ts starts the image's functions with it.
 * `--` ends node's options, so the function's (`--port`) are not taken for node's. Pure.
 */
export function functionSnapshotArgs(bundlesDir: string, name: FunctionName): readonly string[] {
  return ['--snapshot-blob', `${bundlesDir}/${name}.blob`, '--'];
}

/** The globals the main function sets for the snapshot bundle (see the module docstring). */
interface SnapshotGlobals {
  __dynamoFnBundleUrl?: string;
  __dynamoFnRequire?: NodeJS.Require;
}

/**
 * The path given to `--snapshot-blob` in `execArgv` (`--snapshot-blob PATH` or
 * `--snapshot-blob=PATH`), or undefined. Pure.
 */
export function snapshotBlobPath(execArgv: readonly string[]): string | undefined {
  for (const [index, arg] of execArgv.entries()) {
    if (arg === '--snapshot-blob') return execArgv[index + 1];
    if (arg.startsWith('--snapshot-blob=')) return arg.slice('--snapshot-blob='.length);
  }
  return undefined;
}

/** ApiServerSource events (knative.md §1.2-1.4), one per mode, for {@link warmUpForSnapshot}. */
const WARM_UP_EVENTS = [
  { type: 'dev.knative.apiserver.ref.update', data: { apiVersion: 'v1', kind: 'ConfigMap', name: 'warm-up', namespace: 'default' } },
  { type: 'dev.knative.apiserver.resource.update', data: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'warm-up', namespace: 'default', uid: 'u', resourceVersion: '1', labels: { a: 'b' } } } },
] as const;

/**
 * Runs, while the snapshot is built, the pure code every process runs before its first answer
 * whatever the event: the configuration's parse (zod) and the CloudEvent decode (the
 * cloudevents SDK and its ajv validator, both ApiServerSource modes). V8 compiles a function on
 * its first call; run here, their bytecode is in the snapshot instead of being compiled at each
 * start. Nothing is kept: both are pure, their results are dropped. Not the handlers: they need
 * the API server (each event's own work still runs in full at run time). Measured
 * (bench/cold-start.ts, 2026-12-02, interleaved with blobs built without it, load 4-8): CPU to
 * the first answer reconcile 140-160 ms against 160-170, cleanup 90-100 against 110-120; idle
 * RSS reconcile 68.9-69.7 MiB against 71.5 (what V8 compiles at run time, its parser's and
 * compiler's memory included, costs more than the bytecode deserialized).
 */
export function warmUpForSnapshot(): void {
  parseConfig({});
  for (const message of warmUpMessages()) decodeEvent(message);
}

/** The binary-mode messages {@link warmUpForSnapshot} decodes. Pure. */
export function warmUpMessages(): HttpMessage[] {
  return WARM_UP_EVENTS.map(({ type, data }) => ({
    headers: { 'ce-id': 'warm-up', 'ce-specversion': '1.0', 'ce-type': type, 'ce-source': 'https://127.0.0.1', 'ce-kind': data.kind, 'ce-apiversion': data.apiVersion, 'ce-name': 'warm-up', 'ce-namespace': 'default', 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(data)),
  }));
}

/**
 * Called by the snapshot bundle's entry while the snapshot is built: warms the code every
 * CloudEvents function's start runs ({@link warmUpForSnapshot}), then each process started from
 * the blob runs `serve <name> ...argv` with `module` as the function's module and exits with
 * its code, as ./function-entry.ts does. `process.argv` there is `[node, ...ARGS]` (Node takes
 * the arguments after `--`).
 */
export function setFunctionSnapshotMain(name: FunctionName, module: unknown): void {
  // Admission takes no CloudEvents. Warming its first review too (a DGD's CREATE through
  // answerAdmissionReview) bought no CPU and cost 0.6 MiB of idle RSS, so it was not kept.
  if (name !== 'admission') warmUpForSnapshot();
  startupSnapshot.setDeserializeMainFunction(() => {
    const blob = snapshotBlobPath(process.execArgv) ?? `${name}.blob`;
    const bundle = resolve(blob.replace(/\.blob$/, '.mjs'));
    const globals = globalThis as SnapshotGlobals;
    globals.__dynamoFnBundleUrl = pathToFileURL(bundle).href;
    globals.__dynamoFnRequire = createRequire(bundle);
    void runBundledFunction(name, module, process.argv.slice(1)).then((code) => {
      process.exitCode = code;
    });
  });
}
