/**
 * Cold-start benchmark (not a test), per function, as the chart starts it: `node --snapshot-blob
 * dist/bundles/<function>.blob --` (the V8 startup snapshot of the function's own bundle, `npm
 * run build`; the arguments are shared/cli/function-snapshot.ts's functionSnapshotArgs, which
 * test/integration/chart.test.ts holds the chart's commands to) with the chart's
 * NODE_OPTIONS (infra/chart/values.yaml `functionNodeOptions`, `admission.nodeOptions`) and the
 * image's environment (infra/image/image.json: NODE_ENV, Node's compile cache in dist/compile-cache): from
 * spawning the process to its first answered event, and its resident memory once idle, beside
 * a bare `node` HTTP server answering "hello" to the same POST, all measured in one run, each
 * process started fresh `--runs` times (the median is printed). Scale from zero costs exactly
 * this, before Knative's own activation.
 *
 * The events are real work for the host: reconcile, profile and cleanup each get an
 * ApiServerSource event (Reference mode) for an object of a kind they take, answered after the
 * function loaded it from a stub API server in this process (discovery, then a 404: the object
 * is gone, so the answer is an empty 2xx). The functions find the stub as the chart's pods find
 * the API server: in-cluster (KUBERNETES_SERVICE_HOST/PORT, over TLS, with a service account
 * token and CA file; DYNAMO_FN_SERVICE_ACCOUNT_DIR names the bench's own directory for them). Admission gets a validating AdmissionReview for a
 * DynamoGraphDeployment over TLS (a throwaway certificate) and answers it `allowed`.
 * Aims (issue 17 item 2): start to the first answered event at most 2x the bare server's; idle
 * RSS at most 60 MiB. The CPU time each process used to its first answer is printed beside the
 * bare server's (no aim): on a loaded machine the wall-clock times mostly measure waiting for a
 * core, the CPU times what a start costs. Each bundle's size is printed: the bytes it loads at start (the entry and
 * its statically imported chunks) and those only its dynamic imports (gated code) reach, and
 * its snapshot bundle's and blob's.
 *
 * Usage: npm run bench:cold-start [-- --runs N --sources --functions reconcile,admission --extra-node-options="FLAGS" --cpu-prof DIR]
 * (--cpu-prof DIR writes a V8 CPU profile of each function's start into DIR, each process
 * stopped with SIGTERM so it is written; the profiler's own cost is in the times printed then.)
 * (--extra-node-options appends FLAGS to the chart's NODE_OPTIONS of every function, to measure
 * what a V8 flag buys before putting it in the chart.)
 * (--sources adds `serve reconcile` from the sources through tsx, as `npx dynamo-fn` in a clone
 * runs it, for comparison; no aim.)
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { generateServingCertificates } from '../functions/admission/dev-certs.js';
import { ENV_SERVICE_ACCOUNT_DIR } from '../shared/kube/transport.js';
import { functionSnapshotArgs } from '../shared/cli/function-snapshot.js';
import { median, renderTable, type BenchRow } from './table.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BUNDLES = join(REPO, 'dist', 'bundles');

const BARE_SERVER = `
const http = require('node:http');
http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello'); }); })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

/** What the stub API server serves: discovery per group version, and a 404 for every object. */
const DISCOVERY: Readonly<Record<string, readonly { readonly name: string; readonly kind: string }[]>> = {
  '/api/v1': [
    { name: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' },
    { name: 'configmaps', kind: 'ConfigMap' },
    { name: 'services', kind: 'Service' },
  ],
  '/apis/nvidia.com/v1beta1': [
    { name: 'dynamographdeployments', kind: 'DynamoGraphDeployment' },
    { name: 'dynamographdeploymentrequests', kind: 'DynamoGraphDeploymentRequest' },
  ],
  '/apis/batch/v1': [{ name: 'jobs', kind: 'Job' }],
};

/** The event each CloudEvents function gets: an object of a kind it takes, gone by the time it looks. */
const EVENTS: Readonly<Record<'reconcile' | 'profile' | 'cleanup', { readonly apiVersion: string; readonly kind: string }>> = {
  reconcile: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' },
  profile: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' },
  cleanup: { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
};

function startStubApiServer(tls: { readonly cert: string; readonly key: string }): Promise<Server> {
  const server = createServer(tls, (req, res) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const resources = DISCOVERY[path];
    res.setHeader('content-type', 'application/json');
    if (resources !== undefined) {
      res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: path.replace(/^\/apis?\//, ''), resources: resources.map((r) => ({ ...r, namespaced: true, singularName: '', verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] })) }));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** CPU time (user + system) the process has used, in ms (/proc/<pid>/stat utime + stime, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 'NaN');
  return kib / 1024;
}

interface Probe {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly dispatcher?: Agent;
  /** Whether the answer is the one wanted (a 2xx, and for admission an allowed review). */
  readonly isAnswered: (statusCode: number, body: string) => boolean;
}

async function firstAnswer(probe: Probe, deadlineMs: number, child?: ChildProcess): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  let last = 'no answer';
  for (;;) {
    // A process that exited (a blob built by another Node.js, a bad option) will not answer.
    if (child !== undefined && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`${probe.url}: the process exited (${child.exitCode === null ? `signal ${String(child.signalCode)}` : `code ${child.exitCode}`}) before answering`);
    try {
      const response = await request(probe.url, { method: 'POST', headers: probe.headers, body: probe.body, ...(probe.dispatcher === undefined ? {} : { dispatcher: probe.dispatcher }) });
      const text = await response.body.text();
      if (probe.isAnswered(response.statusCode, text)) return;
      last = `${response.statusCode} ${text.slice(0, 600)}`;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`no answer from ${probe.url} within ${deadlineMs} ms (last: ${last})`);
    await sleep(2);
  }
}

/** Stops a measured process: SIGKILL, or SIGTERM (the function drains and exits, so Node writes its `--cpu-prof` profile) with --cpu-prof. */
async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * What a pod's container starts with besides the image's and the chart's variables: PATH and
 * HOME only. Not this shell's environment: a developer's NODE_EXTRA_CA_CERTS (this machine
 * sets it to the system bundle, 144 certificates) made every function parse those certificates
 * at its first TLS connection, 10-25 ms no pod pays, and NODE_OPTIONS would change how Node starts.
 */
function podEnvironment(): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/' };
}

let nextPort = 23_000 + Math.floor(Math.random() * 2000);

interface Sample {
  readonly ms: number;
  /** CPU time to the first answer: less sensitive than `ms` to what else the machine runs. */
  readonly cpuMs: number;
  readonly rssMiB: number;
}

/** Spawns `node ...args`, waits for the probe's first answer on a fresh port; then idle RSS. */
async function measure(args: (port: number) => readonly string[], env: NodeJS.ProcessEnv, probe: (port: number) => Probe, stopSignal: NodeJS.Signals = 'SIGKILL'): Promise<Sample> {
  const port = nextPort++;
  let stderr = '';
  const started = performance.now();
  const child = spawn(process.execPath, args(port), { cwd: REPO, env: { ...podEnvironment(), ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await firstAnswer(probe(port), 60_000, child).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; stderr: ${stderr.slice(0, 2000)}`);
    });
    const ms = performance.now() - started;
    const cpu = cpuMs(child.pid ?? 0);
    await sleep(1000);
    return { ms, cpuMs: cpu, rssMiB: rssMiB(child.pid ?? 0) };
  } finally {
    await stop(child, stopSignal);
  }
}

interface BundleSize {
  readonly startBytes: number;
  readonly startFiles: number;
  readonly lazyBytes: number;
  /** The function's snapshot bundle and blob (scripts/build.mjs), absent for the CLI. */
  readonly snapshotBundleBytes?: number;
  readonly snapshotBlobBytes?: number;
}

const FUNCTIONS = ['admission', 'reconcile', 'profile', 'cleanup'] as const;

export async function runColdStartBench(runs: number, options: { readonly withSources?: boolean; readonly functions?: readonly string[]; readonly extraNodeOptions?: string; readonly cpuProfileDir?: string } = {}): Promise<string> {
  if (!existsSync(join(BUNDLES, 'sizes.json'))) throw new Error(`no bundles in ${BUNDLES}: run npm run build (npm run bench:cold-start does)`);
  const sizes = JSON.parse(readFileSync(join(BUNDLES, 'sizes.json'), 'utf8')) as Record<string, BundleSize>;
  const values = parseYaml(readFileSync(join(REPO, 'infra', 'chart', 'values.yaml'), 'utf8')) as { functionNodeOptions: string; admission: { nodeOptions: string } };
  const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
  const certs = await generateServingCertificates();
  const stub = await startStubApiServer({ cert: certs.certPem, key: certs.keyPem });
  try {
    // In-cluster, as the chart runs them: the stub API server over TLS as
    // KUBERNETES_SERVICE_HOST/PORT, a service account token and CA in a directory of our own.
    const serviceAccount = join(dir, 'serviceaccount');
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, 'token'), 'cold-start-token');
    writeFileSync(join(serviceAccount, 'ca.crt'), certs.caPem);
    writeFileSync(join(serviceAccount, 'namespace'), 'default');
    const bareFile = join(dir, 'bare.cjs');
    writeFileSync(bareFile, BARE_SERVER);
    writeFileSync(join(dir, 'tls.crt'), certs.certPem);
    writeFileSync(join(dir, 'tls.key'), certs.keyPem);
    const tls = new Agent({ connect: { ca: certs.caPem } });

    const cloudEventProbe = (name: keyof typeof EVENTS) => (port: number): Probe => {
      const { apiVersion, kind } = EVENTS[name];
      return {
        url: `http://127.0.0.1:${port}/`,
        headers: { 'ce-id': '1', 'ce-specversion': '1.0', 'ce-type': 'dev.knative.apiserver.ref.update', 'ce-source': 'https://127.0.0.1', 'ce-kind': kind, 'ce-apiversion': apiVersion, 'ce-name': 'cold-start', 'ce-namespace': 'default', 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion, kind, name: 'cold-start', namespace: 'default' }),
        isAnswered: (statusCode) => statusCode >= 200 && statusCode < 300,
      };
    };
    const admissionProbe = (port: number): Probe => ({
      url: `https://127.0.0.1:${port}/validate/nvidia.com/v1beta1/dynamographdeployments`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'cold-start',
          kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' },
          resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' },
          operation: 'CREATE',
          namespace: 'default',
          name: 'cold-start',
          userInfo: { username: 'bench' },
          object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'cold-start', namespace: 'default' }, spec: { components: [{ name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } }] } },
        },
      }),
      dispatcher: tls,
      isAnswered: (statusCode, body) => statusCode === 200 && (JSON.parse(body) as { response?: { allowed?: boolean } }).response?.allowed === true,
    });

    // The image's environment (infra/image/image.json), its /app paths in this checkout: Node's
    // compile cache of the bundles (NODE_COMPILE_CACHE, written by npm run build).
    const imageSpec = JSON.parse(readFileSync(join(REPO, 'infra', 'image', 'image.json'), 'utf8')) as { readonly WorkingDir: string; readonly Env: readonly string[] };
    const imageEnv = Object.fromEntries(
      imageSpec.Env.filter((entry) => entry.startsWith('NODE_')).map((entry) => {
        const [name = '', ...value] = entry.split('=');
        return [name, value.join('=').replace(new RegExp(`^${imageSpec.WorkingDir}/`), REPO)];
      }),
    );
    const env = { ...imageEnv, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String((stub.address() as AddressInfo).port), [ENV_SERVICE_ACCOUNT_DIR]: serviceAccount, LOG_LEVEL: 'warn' };
    const variants = [
      ...FUNCTIONS.filter((name) => options.functions === undefined || options.functions.includes(name)).map((name) => ({
        name,
        label: `${name} (dist/bundles/${name}.blob)`,
        args: (port: number) => {
          const start = functionSnapshotArgs(BUNDLES, name);
          return name === 'admission' ? [...start, '--port', String(port), '--tls-cert', join(dir, 'tls.crt'), '--tls-key', join(dir, 'tls.key')] : start;
        },
        env: { ...env, NODE_OPTIONS: [name === 'admission' ? values.admission.nodeOptions : values.functionNodeOptions, options.extraNodeOptions ?? '', options.cpuProfileDir === undefined ? '' : `--cpu-prof --cpu-prof-dir=${options.cpuProfileDir}`].join(' ').trim() },
        probe: name === 'admission' ? admissionProbe : cloudEventProbe(name),
        hasAim: true,
      })),
      ...(options.withSources === true
        ? [{ name: 'reconcile', label: 'reconcile from the sources through tsx (bin/dynamo-fn.js serve reconcile)', args: () => [join(REPO, 'bin', 'dynamo-fn.js'), 'serve', 'reconcile'], env: { ...env, NODE_OPTIONS: values.functionNodeOptions }, probe: cloudEventProbe('reconcile'), hasAim: false }]
        : []),
    ];
    const bare: Sample[] = [];
    const ours = variants.map(() => [] as Sample[]);
    for (let run = 0; run < runs; run += 1) {
      bare.push(await measure(() => [bareFile], {}, (port) => ({ url: `http://127.0.0.1:${port}/`, headers: { 'content-type': 'application/json' }, body: '{}', isAnswered: (statusCode) => statusCode === 200 })));
      for (const [index, variant] of variants.entries()) ours[index]?.push(await measure(variant.args, variant.env, variant.probe, options.cpuProfileDir === undefined ? 'SIGKILL' : 'SIGTERM'));
    }
    await tls.close();
    const bareMs = median(bare.map((m) => m.ms));
    const bareRss = median(bare.map((m) => m.rssMiB));
    const bareCpu = median(bare.map((m) => m.cpuMs));
    const baseline = 'bare node http hello';
    const rows: BenchRow[] = variants.flatMap((variant, index) => {
      const ms = median((ours[index] ?? []).map((m) => m.ms));
      const rss = median((ours[index] ?? []).map((m) => m.rssMiB));
      const cpu = median((ours[index] ?? []).map((m) => m.cpuMs));
      const first = variant.name === 'admission' ? 'first answered AdmissionReview (TLS)' : 'first answered CloudEvent';
      return [
        { name: `${variant.label}: start to ${first}`, value: ms, unit: 'ms', baseline: { name: baseline, value: bareMs }, ...(variant.hasAim ? { aim: { text: '<= 2x', isMet: ms <= 2 * bareMs } } : {}) },
        { name: `${variant.label}: CPU time to ${first}`, value: cpu, unit: 'ms', baseline: { name: baseline, value: bareCpu } },
        { name: `${variant.label}: idle RSS`, value: rss, unit: 'MiB', baseline: { name: baseline, value: bareRss }, ...(variant.hasAim ? { aim: { text: '<= 60 MiB', isMet: rss <= 60 } } : {}) },
      ];
    });
    const sizeRows: BenchRow[] = [...FUNCTIONS, 'dynamo-fn' as const].flatMap((name) => {
      const size = sizes[name];
      if (size === undefined) return [];
      return [
        { name: `bundle ${name}.mjs: loaded at start (${size.startFiles} file${size.startFiles === 1 ? '' : 's'})`, value: size.startBytes / 1024 / 1024, unit: 'MiB' },
        { name: `bundle ${name}.mjs: behind dynamic imports (gated code)`, value: size.lazyBytes / 1024 / 1024, unit: 'MiB' },
        ...(size.snapshotBundleBytes === undefined ? [] : [{ name: `snapshot bundle ${name}.snapshot.cjs (minified; its source is held in the snapshot)`, value: size.snapshotBundleBytes / 1024 / 1024, unit: 'MiB' }]),
        ...(size.snapshotBlobBytes === undefined ? [] : [{ name: `snapshot ${name}.blob (what the chart starts; Node's own start state included)`, value: size.snapshotBlobBytes / 1024 / 1024, unit: 'MiB' }]),
      ];
    });
    return renderTable(`Cold start per function, as the chart starts it (median of ${runs} fresh processes each)`, [...rows, ...sizeRows]);
  } finally {
    stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, sources: { type: 'boolean', default: false }, functions: { type: 'string' }, 'extra-node-options': { type: 'string' }, 'cpu-prof': { type: 'string' } } });
  process.stdout.write(await runColdStartBench(Number(values.runs), { withSources: values.sources, ...(values.functions === undefined ? {} : { functions: values.functions.split(',') }), ...(values['extra-node-options'] === undefined ? {} : { extraNodeOptions: values['extra-node-options'] }), ...(values['cpu-prof'] === undefined ? {} : { cpuProfileDir: resolve(values['cpu-prof']) }) }));
}
