/**
 * Reconcile memory benchmark (not a test): the peak RSS of `dynamo-fn serve reconcile`, the
 * process the chart runs in each Knative revision, against a real API server: idle, during a
 * resync of N DGDs (RESYNC_CONCURRENCY at once), and under bursts of containerConcurrency
 * concurrent events. The chart's memory request and limit for reconcile
 * (infra/chart/values.yaml) come from this run.
 *
 * Usage: npx tsx bench/reconcile-memory.ts [--dgds N] [--concurrency N] [--rounds N]
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { DGD_KIND, DGD_V1BETA1, parseDgd } from '../shared/api/index.js';
import { readKubeObjects } from '../shared/cli/yaml-input.js';
import { createKube, type KubeObject } from '../shared/kube/index.js';
import { startControlPlane } from '../test/harness/apiserver.js';
import { defaultCrdFiles } from '../test/harness/crds.js';
import { createLineLog } from '../test/harness/log.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { dgds: { type: 'string', default: '200' }, concurrency: { type: 'string', default: '16' }, rounds: { type: 'string', default: '8' } } });
const dgdCount = Number(values.dgds);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
async function rssMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

const log = createLineLog();
const plane = await startControlPlane({ log, crdFiles: await defaultCrdFiles() });
const admin = createKube(plane.kubeConfig, { fieldManager: 'bench' });
let child: ReturnType<typeof spawn> | undefined;
try {
  // The disaggregated example: the largest of the examples (prefill and decode, a rollout budget).
  const text = await readFile(path.join(root, 'examples', 'vllm-disaggregated-coherent.yaml'), 'utf8');
  const parsed = readKubeObjects(text, 'example').objects.map(({ object }) => parseDgd(object)).find((r) => r.ok);
  if (parsed === undefined || !parsed.ok) throw new Error('cannot read the example DGD');
  const namespace = 'bench';
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  for (let i = 0; i < dgdCount; i++) {
    const { status: _status, ...dgd } = parsed.dgd;
    await admin.apply({ ...dgd, metadata: { name: `bench-${i}`, namespace, ...(dgd.metadata.annotations === undefined ? {} : { annotations: dgd.metadata.annotations }) } } as unknown as KubeObject, { force: true });
  }
  log.info({ dgds: dgdCount }, 'Applied DGDs');

  const port = await freePort();
  child = spawn(process.execPath, [path.join(root, 'bin', 'dynamo-fn.js'), 'serve', 'reconcile', '--port', String(port)], {
    env: { ...process.env, KUBECONFIG: plane.kubeconfigPath, LOG_LEVEL: 'warn', RESYNC_CONCURRENCY: '8' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const pid = child.pid ?? 0;
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const ready = await request(`${url}/readyz`).then((r) => (r.body.dump(), r.statusCode === 200)).catch(() => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = await rssMb(pid);

  const send = (type: string, ext: Record<string, string>, data: unknown) =>
    request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': randomBytes(8).toString('hex'), 'ce-source': 'bench', 'ce-type': type, ...Object.fromEntries(Object.entries(ext).map(([k, v]) => [`ce-${k}`, v])) },
      body: JSON.stringify(data),
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
    }).then((r) => r.body.dump());

  let started = Date.now();
  await send('dev.dynamo-fn.resync', { kind: DGD_KIND, apiversion: DGD_V1BETA1 }, {});
  const resyncSeconds = (Date.now() - started) / 1000;
  const afterResync = await rssMb(pid);

  started = Date.now();
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      Array.from({ length: concurrency }, (_, i) => {
        const name = `bench-${(round * concurrency + i) % dgdCount}`;
        return send('dev.knative.apiserver.ref.update', { kind: DGD_KIND, apiversion: DGD_V1BETA1, name, namespace }, { apiVersion: DGD_V1BETA1, kind: DGD_KIND, name, namespace });
      }),
    );
  }
  const burstSeconds = (Date.now() - started) / 1000;
  const afterBursts = await rssMb(pid);
  process.stdout.write(
    [
      `serve reconcile, ${dgdCount} DGDs (examples/vllm-disaggregated-coherent.yaml), RESYNC_CONCURRENCY=8, ${rounds} bursts of ${concurrency} events`,
      `idle:                RSS ${idle.rss} MB`,
      `after resync (${resyncSeconds.toFixed(1)} s): RSS ${afterResync.rss} MB, peak ${afterResync.peak} MB`,
      `after bursts (${burstSeconds.toFixed(1)} s): RSS ${afterBursts.rss} MB, peak ${afterBursts.peak} MB`,
      '',
    ].join('\n'),
  );
} finally {
  child?.kill('SIGTERM');
  await plane.stop();
}
