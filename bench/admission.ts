/**
 * Admission benchmark (not a test): AdmissionReviews per second and p50/p99 latency for a
 * 12-component DGD at concurrency 16 over loopback, plain HTTP and TLS, beside a bare Node
 * HTTP(S) server, with the admission server's TLS settings, that parses the same JSON each row sends
 * (the CREATE bodies, the defaulted CREATE bodies validation gets, and the UPDATE bodies with their
 * oldObject) and answers "allowed", all measured in one run.
 *
 * The servers run in a child process (one core) and the client in this one (the other), so
 * neither steals the other's event loop. Request counts are bounded; the run stops by itself.
 * Aims (issue 17 item 4): validate at least 0.7x and mutate at least 0.85x the bare server's
 * reviews/s at concurrency 16; at concurrency 1, p99 at most 1.5x the bare server's p99 over the
 * same transport and bodies (replacing the absolute 1 ms, which measured the machine's load as
 * much as the server).
 *
 * The server process runs with the chart's NODE_OPTIONS for admission (infra/chart/values.yaml
 * `admission.nodeOptions`: its heap as deployed), or `--node-options="FLAGS"` instead (to measure
 * a V8 flag before putting it in the chart).
 * Usage: npm run bench:admission [-- --requests N --warmup N --concurrency N --rounds N --log-level L --node-options="FLAGS"]
 * (rows are measured in `--rounds` interleaved slices, default 20, about a second each here, so each row and its baseline see the same load: with 5, a bare row of the UPDATE bodies ran 3x faster than one of the half-size CREATE bodies in the same run)
 * (BENCH_CPU_PROF=DIR writes a CPU profile of the server process into DIR.)
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { Pool } from 'undici';
import { generateServingCertificates, type ServingCertificates } from '../functions/admission/dev-certs.js';
import { startAdmissionServer } from '../functions/admission/index.js';
import { TLS12_CIPHERS, TLS_MIN_VERSION } from '../functions/admission/server.js';
import { defaultDgd } from '../shared/domain/index.js';
import { boundLogFields } from '../shared/runtime/index.js';

type Obj = Record<string, unknown>;

const PROVIDER = 'grove.io/v1alpha1';

function container(name: string, image: string, args: string[]): Obj {
  return {
    name,
    image,
    command: ['python3', '-m', 'dynamo.vllm'],
    args,
    env: Array.from({ length: 10 }, (_, i) => ({ name: `DYN_SETTING_${i}`, value: `value-${i}` })).concat([{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token-secret', key: 'HF_TOKEN' } } } as never]),
    resources: { limits: { 'nvidia.com/gpu': '1' }, requests: { cpu: '8', memory: '64Gi', 'ephemeral-storage': '2Gi' } },
    volumeMounts: [{ name: 'model-cache', mountPath: '/root/.cache/huggingface' }],
    workingDir: '/workspace/examples/backends/vllm',
  };
}

function component(name: string, type: string, replicas: number, extra: Obj = {}): Obj {
  return {
    name,
    type,
    replicas,
    podTemplate: {
      metadata: { labels: { team: 'inference' } },
      spec: {
        containers: [container('main', 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', ['--model', 'Qwen/Qwen3-0.6B', '--disaggregation-mode', type])],
        volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'model-cache' } }],
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      },
    },
    ...extra,
  };
}

/** A 12-component Coherent DGD with native minima and budgets, as users write it (targets and replicas left to defaulting where omitted). */
export function twelveComponentDgd(decodeReplicas = 8): Obj {
  const budget = (min: number, max: number, isScalingGroup = false): Obj => ({
    providerOverride: { apiVersion: PROVIDER, value: { ...(isScalingGroup ? { minAvailable: min } : { spec: { minAvailable: min } }), rollingUpdate: { maxUnavailable: max } } },
  });
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'vllm-disagg', namespace: 'bench', annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } },
    spec: {
      backendFramework: 'vllm',
      env: [{ name: 'DYN_LOG', value: 'info' }],
      components: [
        component('Frontend', 'frontend', 2),
        component('planner', 'planner', 1),
        ...Array.from({ length: 4 }, (_, i) => component(`prefill-${i}`, 'prefill', 4, budget(1, 1))),
        ...Array.from({ length: 4 }, (_, i) => component(`decode-${i}`, 'decode', i === 0 ? decodeReplicas : 8, budget(2, 2))),
        component('decode-mn', 'decode', 2, { multinode: { nodeCount: 2 }, ...budget(1, 1, true) }),
        component('worker-agg', 'worker', 3),
      ],
    },
  };
}

function review(uid: string, operation: 'CREATE' | 'UPDATE', object: Obj, oldObject?: Obj): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' },
      resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' },
      operation,
      namespace: 'bench',
      name: 'vllm-disagg',
      object,
      ...(oldObject === undefined ? {} : { oldObject }),
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      dryRun: false,
    },
  });
}

// ---- Child: the servers ---------------------------------------------------------------

interface Ports {
  readonly admissionHttp: number;
  readonly admissionTls: number;
  readonly bareHttp: number;
  readonly bareTls: number;
}

/** The baseline: reads the body, parses the same JSON, answers "allowed" with the uid. */
function bareHandler(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
    const text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: parsed.request.uid, allowed: true } });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  });
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function listen(server: ReturnType<typeof createHttpServer>): Promise<number> {
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function runServers(certs: ServingCertificates, logLevel: string): Promise<void> {
  // The admission server logs one line per review, as in production (the same field formatter as
  // shared/runtime/lifecycle.ts gives it); to /dev/null here.
  const log = pino({ level: logLevel, formatters: { log: boundLogFields } }, pino.destination({ dest: '/dev/null', sync: true }));
  const config = { lpxEnabled: false };
  const tls = { cert: certs.certPem, key: certs.keyPem };
  const admissionHttp = await startAdmissionServer({ port: 0, host: '127.0.0.1', config, log, shutdownDelaySeconds: 0 });
  const admissionTls = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls, config, log, shutdownDelaySeconds: 0 });
  const ports: Ports = {
    admissionHttp: admissionHttp.port,
    admissionTls: admissionTls.port,
    bareHttp: await listen(createHttpServer(bareHandler)),
    // The same TLS settings as the admission server's (versions, TLS 1.2 ciphers, order), so both negotiate alike.
    bareTls: await listen(createHttpsServer({ ...tls, minVersion: TLS_MIN_VERSION, ciphers: TLS12_CIPHERS, honorCipherOrder: true }, bareHandler)),
  };
  process.send?.(ports);
  // The parent asks for this process's CPU time around each slice (server CPU per review).
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpuMicros: cpuMicros() });
  });
  process.on('disconnect', () => process.exit(0));
}

// ---- Parent: the client ---------------------------------------------------------------

/** The request bodies a row sends: CREATE as a user writes it (mutate), CREATE after defaulting (validate), UPDATE with its oldObject. */
type BodyKind = 'CREATE' | 'CREATE defaulted' | 'UPDATE';

interface Target {
  readonly transport: 'HTTP' | 'TLS';
  readonly server: string;
  readonly request: string;
  readonly url: string;
  readonly path: string;
  /** Pre-encoded request bodies (uids differ), sent round-robin. */
  readonly bodies: readonly Buffer[];
  readonly isBaseline: boolean;
  /** Which request bodies it sends; a row is compared with the bare server parsing the same ones. */
  readonly bodyKind: BodyKind;
}

interface Measurement {
  readonly target: Target;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** The server process's CPU time per review (user + system), in µs, over the measured requests. */
  readonly serverCpuMicros: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** Reads the server process's CPU time so far, in µs. */
type ServerCpu = () => Promise<number>;

async function measure(target: Target, ca: string, options: { requests: number; warmup: number; concurrency: number }, serverCpu: ServerCpu): Promise<{ latencies: Float64Array; elapsedSeconds: number; errors: number; serverCpuMicros: number }> {
  const pool = new Pool(target.url, { connections: options.concurrency, pipelining: 1, connect: { ca } });
  const send = async (index: number): Promise<boolean> => {
    const body = target.bodies[index % target.bodies.length] as Buffer;
    const response = await pool.request({ method: 'POST', path: target.path, body, headers: { 'content-type': 'application/json' } });
    const text = await response.body.text();
    // Every row is an allowed review (the bench DGD is valid): a denial would measure another path.
    return response.statusCode === 200 && text.includes('"allowed":true');
  };
  const run = async (count: number, latencies?: Float64Array): Promise<number> => {
    let next = 0;
    let errors = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const index = next;
        next += 1;
        const started = performance.now();
        const ok = await send(index).catch(() => false);
        if (latencies !== undefined) latencies[index] = performance.now() - started;
        if (!ok) errors += 1;
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    return errors;
  };
  await run(options.warmup);
  const latencies = new Float64Array(options.requests);
  const cpuBefore = await serverCpu();
  const started = performance.now();
  const errors = await run(options.requests, latencies);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const serverCpuMicros = (await serverCpu()) - cpuBefore;
  await pool.close();
  return { latencies, elapsedSeconds, errors, serverCpuMicros };
}

/**
 * Measures every target in `rounds` interleaved slices (each target's share of requests and
 * warm-up per slice, targets in turn), so a row and its baseline see the same machine: on a
 * shared, loaded machine the load moves within minutes, and rows measured one after the other
 * compared the server with a baseline measured under another load.
 */
async function measureInterleaved(targets: readonly Target[], ca: string, options: { requests: number; warmup: number; concurrency: number }, rounds: number, label: string, serverCpu: ServerCpu): Promise<Measurement[]> {
  const perRound = { requests: Math.max(1, Math.floor(options.requests / rounds)), warmup: Math.max(1, Math.floor(options.warmup / rounds)), concurrency: options.concurrency };
  const runs = targets.map(() => ({ latencies: [] as Float64Array[], elapsedSeconds: 0, errors: 0, serverCpuMicros: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, target] of targets.entries()) {
      const slice = await measure(target, ca, perRound, serverCpu);
      const run = runs[index] as (typeof runs)[number];
      run.latencies.push(slice.latencies);
      run.elapsedSeconds += slice.elapsedSeconds;
      run.errors += slice.errors;
      run.serverCpuMicros += slice.serverCpuMicros;
    }
    process.stderr.write(`bench: ${label} round ${round + 1}/${rounds} done\n`);
  }
  return targets.map((target, index) => {
    const run = runs[index] as (typeof runs)[number];
    const all = new Float64Array(run.latencies.reduce((sum, l) => sum + l.length, 0));
    let offset = 0;
    for (const l of run.latencies) {
      all.set(l, offset);
      offset += l.length;
    }
    all.sort();
    return { target, perSecond: all.length / run.elapsedSeconds, p50Ms: percentile(all, 50), p99Ms: percentile(all, 99), errors: run.errors, serverCpuMicros: run.serverCpuMicros / all.length };
  });
}

/**
 * Aims (issue 17 item 4): at concurrency 16, validate reviews at least 0.7x and mutate reviews at
 * least 0.85x the bare server's reviews/s; at concurrency 1, p99 at most 1.5x the bare server's
 * p99 (same transport, same bodies, same run).
 */
export const THROUGHPUT_AIM: Readonly<Record<string, number>> = { validate: 0.7, mutate: 0.85 };
export const SERIAL_P99_AIM_X_BARE = 1.5;

function table(results: readonly Measurement[], aim: { readonly isSerial: boolean }): string {
  const header = ['transport', 'server', 'request', 'reviews/s', 'p50 ms', 'p99 ms', 'vs bare', 'errors', 'server CPU µs/review', 'CPU x bare', aim.isSerial ? 'p99 vs bare' : 'aim (x bare)', aim.isSerial ? `p99 <= ${SERIAL_P99_AIM_X_BARE}x bare` : '-'];
  const rows = results.map((m) => {
    const bare = results.find((b) => b.target.isBaseline && b.target.transport === m.target.transport && b.target.bodyKind === m.target.bodyKind);
    const ratio = bare === undefined ? Number.NaN : m.perSecond / bare.perSecond;
    const wanted = THROUGHPUT_AIM[m.target.request.split(' ')[0] ?? ''] ?? 0.7;
    const isThroughputMet = m.target.isBaseline || aim.isSerial ? '' : `>= ${wanted}: ${ratio >= wanted ? 'met' : 'MISSED'}`;
    const p99Ratio = bare === undefined ? Number.NaN : m.p99Ms / bare.p99Ms;
    const isLatencyMet = !aim.isSerial || m.target.isBaseline ? '' : p99Ratio <= SERIAL_P99_AIM_X_BARE ? 'met' : 'MISSED';
    const serialRatio = aim.isSerial ? (m.target.isBaseline ? '1.00' : p99Ratio.toFixed(2)) : isThroughputMet;
    return [m.target.transport, m.target.server, m.target.request, m.perSecond.toFixed(0), m.p50Ms.toFixed(2), m.p99Ms.toFixed(2), m.target.isBaseline ? '1.00' : ratio.toFixed(2), String(m.errors), m.serverCpuMicros.toFixed(0), bare === undefined ? '' : (m.serverCpuMicros / bare.serverCpuMicros).toFixed(2), serialRatio, isLatencyMet];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => (i >= 3 && i <= 9 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i >= 3 && i <= 9 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * Bundles this file's server side as the function ships (scripts/build.mjs
 * `buildSnapshotBundles`: esbuild, whitespace and syntax minified, identifiers kept, no
 * `keepNames`), so the servers run the code the image runs, not tsx's transform of the sources
 * (which wraps every named function in esbuild's `__name`: 0.1x of the bare server's CPU per
 * mutate review, 2026-12-02). The bare server is in the same bundle, so both sides run alike.
 * Returns the bundle's path in `dir` (under the repository's dist/, so `esbuild` and `undici`,
 * left external, resolve).
 */
async function buildServerBundle(dir: string): Promise<string> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const outfile = path.join(dir, 'admission-bench-server.mjs');
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    logLevel: 'warning',
    // Left out: only the client side (this process) uses them.
    external: ['esbuild', 'undici'],
    define: { __DYNAMO_FN_VERSION__: JSON.stringify(version) },
    banner: { js: "import { createRequire as __benchCreateRequire } from 'node:module'; const require = __benchCreateRequire(import.meta.url);" },
  });
  return outfile;
}

/** The chart's NODE_OPTIONS for admission (infra/chart/values.yaml `admission.nodeOptions`). */
async function chartAdmissionNodeOptions(): Promise<string> {
  const values = parseYaml(await readFile(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'infra', 'chart', 'values.yaml'), 'utf8')) as { admission: { nodeOptions: string } };
  return values.admission.nodeOptions;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'server-child': { type: 'boolean', default: false },
      requests: { type: 'string', default: '10000' },
      warmup: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '20' },
      'log-level': { type: 'string', default: 'info' },
      'node-options': { type: 'string' },
    },
  });
  if (values['server-child']) {
    const certs = JSON.parse(process.env['BENCH_CERTS'] ?? '{}') as ServingCertificates;
    await runServers(certs, values['log-level']);
    return -1;
  }
  const options = { requests: Number(values.requests), warmup: Number(values.warmup), concurrency: Number(values.concurrency), rounds: Math.max(1, Number(values.rounds)) };
  const certs = await generateServingCertificates();
  // Under dist/ (ignored by git), so the bundle's external imports resolve from node_modules.
  const benchDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
  await mkdir(benchDist, { recursive: true });
  const serverDir = await mkdtemp(path.join(benchDist, 'bench-admission-'));
  const serverScript = await buildServerBundle(serverDir).catch(async (error: unknown) => {
    await rm(serverDir, { recursive: true, force: true });
    throw error;
  });
  const serverNodeOptions = values['node-options'] ?? (await chartAdmissionNodeOptions());
  const child: ChildProcess = fork(serverScript, ['--server-child', '--log-level', values['log-level']], {
    execArgv: process.env['BENCH_CPU_PROF'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir=' + process.env['BENCH_CPU_PROF']],
    env: { ...process.env, NODE_OPTIONS: serverNodeOptions, BENCH_CERTS: JSON.stringify(certs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const ports = await new Promise<Ports>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Ports));
      child.once('exit', (code) => reject(new Error(`server process exited with ${String(code)}`)));
    });
    // Validation sees what the API server sends it: the object after the mutating webhook.
    const dgd = twelveComponentDgd();
    const defaulted = defaultDgd(dgd);
    const scaled = defaultDgd(twelveComponentDgd(6));
    const bodies = (make: (uid: string) => string): Buffer[] => Array.from({ length: 64 }, (_, i) => Buffer.from(make(`bench-${i}`)));
    const createBodies = bodies((uid) => review(uid, 'CREATE', dgd));
    const defaultedBodies = bodies((uid) => review(uid, 'CREATE', defaulted));
    const updateBodies = bodies((uid) => review(uid, 'UPDATE', scaled, defaulted));
    const requests = [
      { request: 'validate CREATE', path: '/validate/nvidia.com/v1beta1/dynamographdeployments', bodies: defaultedBodies, bodyKind: 'CREATE defaulted' as const },
      { request: 'mutate CREATE', path: '/mutate/nvidia.com/v1beta1/dynamographdeployments', bodies: createBodies, bodyKind: 'CREATE' as const },
      { request: 'validate UPDATE', path: '/validate/nvidia.com/v1beta1/dynamographdeployments', bodies: updateBodies, bodyKind: 'UPDATE' as const },
    ];
    const targets: Target[] = [];
    for (const [transport, scheme, bare, admission] of [
      ['HTTP', 'http', ports.bareHttp, ports.admissionHttp],
      ['TLS', 'https', ports.bareTls, ports.admissionTls],
    ] as const) {
      const bareTarget = (bodyKind: BodyKind, requestBodies: Buffer[]): Target => ({ transport, server: 'bare node:http', request: `parse ${bodyKind} + allowed`, url: `${scheme}://127.0.0.1:${bare}`, path: '/', bodies: requestBodies, isBaseline: true, bodyKind });
      const admissionTarget = (r: (typeof requests)[number]): Target => ({ transport, server: 'admission', request: r.request, url: `${scheme}://127.0.0.1:${admission}`, path: r.path, bodies: r.bodies, isBaseline: false, bodyKind: r.bodyKind });
      // Each row beside a baseline parsing the very bodies it sends (validate CREATE gets the defaulted ones, a little longer).
      for (const [bodyKind, requestBodies] of [['CREATE defaulted', defaultedBodies], ['CREATE', createBodies], ['UPDATE', updateBodies]] as const) {
        targets.push(bareTarget(bodyKind, requestBodies), ...requests.filter((r) => r.bodyKind === bodyKind).map(admissionTarget));
      }
    }
    const bodyBytes = `${createBodies[0]?.length ?? 0} bytes per CREATE review, ${defaultedBodies[0]?.length ?? 0} defaulted, ${updateBodies[0]?.length ?? 0} per UPDATE`;
    process.stderr.write(`bench: 12-component DGD, ${bodyBytes}, ${options.requests} requests (+${options.warmup} warm-up) per row, concurrency ${options.concurrency}, loopback\n`);
    // One question at a time over the IPC channel: the answer is the server process's CPU time so far.
    const serverCpu: ServerCpu = () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { cpuMicros: number }).cpuMicros));
        child.send('cpu');
      });
    const results = await measureInterleaved(targets, certs.caPem, options, options.rounds, `concurrency ${options.concurrency}`, serverCpu);
    // The same rows one request at a time: the service latency without queueing behind 15 others.
    const serial = { requests: Math.max(1, Math.floor(options.requests / 5)), warmup: Math.max(1, Math.floor(options.warmup / 5)), concurrency: 1 };
    const serialResults = await measureInterleaved(targets, certs.caPem, serial, options.rounds, 'concurrency 1', serverCpu);
    process.stdout.write(`\nAdmissionReview throughput and latency: 12-component DGD (${bodyBytes}), concurrency ${options.concurrency}, ${options.requests} requests per row after ${options.warmup} warm-up, in ${options.rounds} interleaved rounds, loopback, server log level ${values['log-level']}, server NODE_OPTIONS "${serverNodeOptions}"\n\n`);
    process.stdout.write(`${table(results, { isSerial: false })}\n\naim: validate at least ${THROUGHPUT_AIM['validate']} x and mutate at least ${THROUGHPUT_AIM['mutate']} x the reviews/s of the bare server parsing the same bodies over the same transport\n`);
    process.stdout.write(`\nThe same rows at concurrency 1 (${serial.requests} requests per row): service latency without queueing; aim p99 at most ${SERIAL_P99_AIM_X_BARE} x the bare server's p99 over the same transport and bodies\n\n${table(serialResults, { isSerial: true })}\n`);
    return [...results, ...serialResults].some((m) => m.errors > 0) ? 1 : 0;
  } finally {
    // Disconnecting lets the server process exit by itself (writing a CPU profile if asked); kill it if it lingers.
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.disconnect();
    const timer = setTimeout(() => child.kill(), 5000);
    await exited;
    clearTimeout(timer);
    await rm(serverDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv.includes('--server-child')) {
  const code = await main();
  if (code >= 0) process.exitCode = code;
}

export { main as runAdmissionBench };
