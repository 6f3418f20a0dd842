/**
 * Reconcile event benchmark (not a test): one reconcile process, started as the chart runs it
 * (`node --snapshot-blob dist/bundles/reconcile.blob --`, the V8 startup snapshot of the function's own bundle from `npm run build`, which
 * `npm run bench:reconcile-memory` runs first; its V8 heap pinned by the chart's
 * `functionNodeOptions`), handles events for
 * unchanged DGDs on a real API server, beside bare GETs of the same DGDs at the same concurrency
 * measured in the same run. Prints the event rate against the GETs', the function's CPU per
 * event (from /proc/<pid>/stat), its peak RSS through the events against the chart's reconcile
 * memory limit (infra/chart/values.yaml `reconcile.resources.limits.memory`), its RSS growth
 * after a warm-up, and the API calls per event by verb (every request of both sides goes
 * through one loopback recorder). Then `--child-events` events for the DGDs' PodCliqueSets
 * (each a full pass: a child's event drops the DGD's quiet record, functions/reconcile/quiet.ts),
 * their rate and CPU, the peak RSS covering both.
 * Aims (issue 17 item 3): at least 0.5x the bare GETs' rate; under 256 MiB RSS through 10,000 events.
 *
 * Usage: npm run bench:reconcile-memory [-- --dgds N --events N --concurrency N --child-events N --cpu-prof-dir DIR]
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { DGD_KIND, DGD_V1BETA1 } from '../shared/api/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube } from '../shared/kube/index.js';
import { RESYNC_EVENT_TYPE } from '../shared/runtime/index.js';
import { startControlPlane } from '../test/harness/apiserver.js';
import { defaultCrdFiles } from '../test/harness/crds.js';
import { createLineLog } from '../test/harness/log.js';
import { startRequestRecorder, type RecordedRequest } from '../test/support/rbac.js';
import { countByVerb, recordedKubeconfig } from '../test/support/request-count.js';
import { functionSnapshotArgs } from '../shared/cli/function-snapshot.js';
import { renderTable } from './table.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { dgds: { type: 'string', default: '20' }, events: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '16' }, 'child-events': { type: 'string', default: '1000' }, 'cpu-prof-dir': { type: 'string' } } });
const dgdCount = Number(values.dgds);
const eventCount = Number(values.events);
const concurrency = Number(values.concurrency);
const childEventCount = Number(values['child-events']);
const WARMUP_EVENTS = 300;
const RSS_AIM_MIB = 256;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process, in MiB. */
async function rssMib(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

/** User + system CPU of a process, in seconds (clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs `task(i)` for i in [0, count) with `workers` at once; resolves to the seconds taken. */
async function timed(count: number, workers: number, task: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        await task(index);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

const chartValues = parseYaml(await readFile(path.join(root, 'infra', 'chart', 'values.yaml'), 'utf8')) as { functionNodeOptions: string; reconcile: { resources: { limits: { memory: string } } } };
const log = createLineLog();
const plane = await startControlPlane({ log, crdFiles: await defaultCrdFiles(), withControllerManager: false });
const recorder = await startRequestRecorder(plane.kubeConfig);
const dir = await mkdtemp(path.join(tmpdir(), 'bench-reconcile-memory-'));
let child: ReturnType<typeof spawn> | undefined;
try {
  const kubeconfigPath = await recordedKubeconfig(dir, recorder.url, plane.token);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const admin = createKube(kubeConfig, { fieldManager: 'kubectl' });
  const namespace = 'bench';
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const names = Array.from({ length: dgdCount }, (_, index) => `load-${index}`);
  for (const name of names) {
    await admin.apply({
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      metadata: { name, namespace },
      spec: {
        backendFramework: 'vllm',
        components: [
          { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
          { name: 'worker', type: 'worker', replicas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        ],
      },
    });
  }

  const port = await freePort();
  // As the chart starts it: from its V8 startup snapshot (shared/cli/function-snapshot.ts).
  const bundle = path.join(root, 'dist', 'bundles', 'reconcile.blob');
  if (!existsSync(bundle)) throw new Error(`no ${bundle}: run npm run build (npm run bench:reconcile-memory does)`);
  // --cpu-prof-dir DIR: the process writes a V8 CPU profile of its whole run there on exit.
  const profile = values['cpu-prof-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof-dir'])];
  child = spawn(process.execPath, [...profile, ...functionSnapshotArgs(path.join(root, 'dist', 'bundles'), 'reconcile')], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: chartValues.functionNodeOptions, PORT: String(port), KUBECONFIG: kubeconfigPath, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const pid = child.pid ?? 0;
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    const ready = await request(`${url}/readyz`).then(async (r) => (await r.body.dump(), r.statusCode === 200)).catch(() => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const idle = await rssMib(pid);

  const send = async (type: string, ext: Record<string, string>, data: unknown): Promise<void> => {
    const answer = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': `${type}-${Math.random().toString(16).slice(2)}`, 'ce-source': 'bench', 'ce-type': type, ...Object.fromEntries(Object.entries(ext).map(([k, v]) => [`ce-${k}`, v])) },
      body: JSON.stringify(data),
      headersTimeout: 600_000,
      bodyTimeout: 600_000,
    });
    await answer.body.dump();
    if (answer.statusCode !== 204) throw new Error(`event answered ${answer.statusCode}`);
  };
  // An event for a DGD's PodCliqueSet (named as the DGD): a child's event is always a full pass.
  const childEvent = (index: number) => {
    const name = names[index % names.length] ?? '';
    return send('dev.knative.apiserver.ref.update', { kind: 'PodCliqueSet', apiversion: 'grove.io/v1alpha1', name, namespace }, { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name, namespace });
  };
  const dgdEvent = (index: number) => {
    const name = names[index % names.length] ?? '';
    return send('dev.knative.apiserver.ref.update', { kind: DGD_KIND, apiversion: DGD_V1BETA1, name, namespace }, { apiVersion: DGD_V1BETA1, kind: DGD_KIND, name, namespace });
  };
  // Converge, then settle (statuses move on once the children exist): the DGDs are unchanged from here.
  for (let i = 0; i < 3; i++) await send(RESYNC_EVENT_TYPE, {}, {});
  await timed(WARMUP_EVENTS, concurrency, dgdEvent);
  const afterWarmup = await rssMib(pid);

  // Baseline: bare GETs of the same DGDs at the same concurrency, through the same recorder.
  const getSeconds = await timed(eventCount, concurrency, async (index) => {
    await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: names[index % names.length] ?? '' });
  });

  let peak = afterWarmup;
  const sampler = setInterval(() => {
    void rssMib(pid).then((rss) => (peak = Math.max(peak, rss)), () => undefined);
  }, 100);
  const from = recorder.requests.length;
  const cpuBefore = await cpuSeconds(pid);
  const eventSeconds = await timed(eventCount, concurrency, dgdEvent);
  const cpuUsed = (await cpuSeconds(pid)) - cpuBefore;
  const end = await rssMib(pid);
  const calls: RecordedRequest[] = recorder.requests.slice(from);
  const perEvent = Object.entries(countByVerb(calls)).map(([verb, count]) => `${verb} ${(count / eventCount).toFixed(2)}`).join(', ');

  // Then full passes: events for the DGDs' PodCliqueSets, the RSS still sampled.
  const childFrom = recorder.requests.length;
  const childCpuBefore = await cpuSeconds(pid);
  const childSeconds = childEventCount === 0 ? 0 : await timed(childEventCount, concurrency, childEvent);
  const childCpu = (await cpuSeconds(pid)) - childCpuBefore;
  clearInterval(sampler);
  peak = Math.max(peak, end, await rssMib(pid));
  const childCalls = recorder.requests.slice(childFrom);
  const perChildEvent = Object.entries(countByVerb(childCalls)).map(([verb, count]) => `${verb} ${(count / Math.max(1, childEventCount)).toFixed(2)}`).join(', ');

  process.stdout.write(
    renderTable(`reconcile (dist/bundles/reconcile.blob): ${eventCount} events for ${dgdCount} unchanged DGDs, concurrency ${concurrency}, NODE_OPTIONS "${chartValues.functionNodeOptions}" (real API server on loopback, every request through one recorder)`, [
      { name: 'events for unchanged DGDs', value: eventCount / eventSeconds, unit: '/s', baseline: { name: 'bare GETs of the same DGDs', value: eventCount / getSeconds }, aim: { text: '>= 0.5x', isMet: eventCount / eventSeconds >= 0.5 * (eventCount / getSeconds) } },
      { name: 'CPU per event (function process)', value: (cpuUsed / eventCount) * 1000, unit: 'ms' },
      ...(childEventCount === 0 ? [] : [
        { name: `full passes (${childEventCount} events for their PodCliqueSets)`, value: childEventCount / childSeconds, unit: '/s', baseline: { name: 'events for unchanged DGDs', value: eventCount / eventSeconds } },
        { name: 'CPU per full pass (function process)', value: (childCpu / childEventCount) * 1000, unit: 'ms' },
      ]),
      { name: `peak RSS through ${eventCount + childEventCount} events`, value: peak, unit: 'MiB', baseline: { name: `chart limit (${chartValues.reconcile.resources.limits.memory})`, value: Number(/^(\d+)Mi$/.exec(chartValues.reconcile.resources.limits.memory)?.[1] ?? 0) }, aim: { text: `< ${RSS_AIM_MIB} MiB`, isMet: peak < RSS_AIM_MIB } },
      { name: `RSS growth after warm-up (through the ${eventCount} events)`, value: end - afterWarmup, unit: 'MiB', baseline: { name: `RSS after ${WARMUP_EVENTS} warm-up events`, value: afterWarmup } },
    ]) + `idle RSS ${idle.toFixed(0)} MiB; API calls per event for an unchanged DGD: ${perEvent || 'none'}; per full pass: ${perChildEvent || 'none'}\n`,
  );
} finally {
  if (child !== undefined && child.exitCode === null) {
    // Wait for the exit, so a CPU profile is written before the API server goes away.
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  await recorder.close();
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
}
