/**
 * Metrics hardware discovery on the real control plane (issue 13, "DCGM where present", and its
 * leftovers: Intel XPU exporters, the 60 s discovery cache): kube-apiserver, the job controller,
 * kube-scheduler and kwok with simulated GPU nodes; DCGM exporter pods as the GPU Operator's
 * DaemonSet would run them (labels `app=nvidia-dcgm-exporter`, one per GPU node, bound to it), and
 * an Intel XPU Manager exporter pod (`app.kubernetes.io/name=xpumd`) on an Intel node; kwok makes
 * them Running and gives each a pod IP; the profile function behind the local event bridge, on a
 * clock the test holds still and moves on (the function's injectable `now`), so the 60 s cache
 * expires exactly when the test says, however slow the machine. The exporter pods are what
 * discovery trusts (issue 20 item 1, "a function only trusts what it can prove"): the DCGM ones
 * pods of the GPU Operator's DaemonSet in `gpu-operator` (the default trusted namespace), the
 * Intel one a pod of Intel XPU Manager's DaemonSet in a namespace the function is told to trust
 * (`GPU_EXPORTER_NAMESPACES`); a labelled pod planted in a user's namespace serving a fabricated
 * SKU, and a bare pod in `gpu-operator`, are never scraped, and a failed discovery names them.
 *
 * What does not run here: the exporters themselves (there are no GPUs). A real HTTP server on
 * loopback stands in for each exporter pod and serves the Prometheus text a DCGM exporter serves
 * (test/fixtures/dcgm/, format of NVIDIA/dcgm-exporter's `/metrics`) or the xpumd text of
 * upstream's discovery test (TestScrapeMetricsEndpoint "xpumd metrics"). Upstream scrapes every
 * Running exporter pod directly at `http://{POD_IP}:9400/metrics` (Intel: `:8080`); kwok's pod IPs
 * route nowhere, so the function gets upstream's own overrides, `DCGM_METRICS_ENDPOINT_TEMPLATE`
 * and `INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`, pointing at the server with the pod IP in the path
 * (`http://127.0.0.1:<port>/{POD_IP}/metrics`, `.../xpu/{POD_IP}/metrics`): each pod is still found
 * through the API server and scraped by its own IP.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import profile from '../../functions/profile/index.js';
import { initProfile } from '../../functions/profile/index.js';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type ApplyObject, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import { gpuNodeObjects, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { GPU_OPERATOR_DCGM_EXPORTER, applyExporterDaemonSet, createExporterPod, deleteExporterPods, intelXpuManager, type RunningExporterPod } from '../support/exporter-daemonsets.js';
import { repoRoot } from '../support/paths.js';
import { admitDgdrThroughChain } from '../unit/dgdr-admission-chain.js';

type Obj = Record<string, unknown>;

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const DGDR = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' };
const NODE_PREFIX = 'dcgm-gpu';
const XPU_NODE_PREFIX = 'dcgm-xpu';
const H200_METRICS = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'h200-hgx-8gpu.metrics'), 'utf8');
const XPUMD_METRICS = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'xpumd-b60-3gpu.metrics'), 'utf8');
// Generous: a loaded 2-core machine can take many seconds per reconcile pass.
const TIMEOUT_MS = 90_000;

let exporters: Server;
let exporterPort = 0;
/** The body each exporter path (`/<pod IP>/metrics`, `/xpu/<pod IP>/metrics`) serves, or the HTTP status it fails with. */
const bodies = new Map<string, string | number>();
/** How many times each exporter path was scraped. */
const scrapes = new Map<string, number>();
let server: FunctionServer;
let bridge: EventBridge;
let namespace = '';
let nodeNames: string[] = [];
let xpuNodeName = '';
let exporterPods: RunningExporterPod[] = [];
let xpumdPod: RunningExporterPod = { namespace: '', name: '', podIp: '', nodeName: '' };
/** Where the administrator installed Intel XPU Manager: named in GPU_EXPORTER_NAMESPACES beside gpu-operator. */
let intelNamespace = '';
/** Labelled pods no administrator runs (the last test plants them). */
let plantedPods: RunningExporterPod[] = [];
let fakeNodeNames: string[] = [];
/** The profile function's clock: held still, moved on only by the test. */
let clockMs = Date.now();

const dcgmPath = (podIp: string): string => `/${podIp}/metrics`;
const xpuPath = (podIp: string): string => `/xpu/${podIp}/metrics`;
const dcgmScrapes = (): number => exporterPods.reduce((sum, pod) => sum + (scrapes.get(dcgmPath(pod.podIp)) ?? 0), 0);

/**
 * Waits until the profile function handles no event (its `dynamo_fn_events_in_flight` gauge at 0).
 * An earlier request can be reconciled by two passes at once (its API event and a resync); the
 * second can still be scraping after the first created the Job. Once none is in flight, every
 * later pass reads that Job (or the cache) and scrapes nothing for those requests.
 */
async function functionIdle(): Promise<void> {
  await eventually('the profile function with no event in flight', async () => {
    const text = await (await fetch(new URL('/metrics', server.url))).text();
    const line = text.split('\n').find((l) => l.startsWith('dynamo_fn_events_in_flight{'));
    return line !== undefined && Number(line.slice(line.lastIndexOf(' ') + 1)) === 0 ? true : undefined;
  }, TIMEOUT_MS, 50);
}

/** GPU nodes without GPU Feature Discovery labels (no GFD installed): only `nvidia.com/gpu` capacity. */
async function createBareGpuNodes(fleet: string, prefix: string): Promise<string[]> {
  const nodes = gpuNodeObjects(parseGpuFleet(fleet), prefix);
  for (const node of nodes) {
    const labels = { ...(node.metadata.labels as Record<string, string>) };
    for (const key of ['nvidia.com/gpu.product', 'nvidia.com/gpu.count', 'nvidia.com/gpu.memory']) delete labels[key];
    await user.apply({ ...node, metadata: { ...node.metadata, labels } } as ApplyObject, { force: true });
    await user.applyStatus({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name }, status: node['status'] }, { force: true });
  }
  return nodes.map((node) => node.metadata.name);
}

beforeAll(async () => {
  exporters = createServer((request, response) => {
    const path = request.url ?? '';
    scrapes.set(path, (scrapes.get(path) ?? 0) + 1);
    const body = bodies.get(path);
    if (typeof body === 'string') {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body);
      return;
    }
    response.writeHead(typeof body === 'number' ? body : 404).end();
  });
  await new Promise<void>((done) => exporters.listen(0, '127.0.0.1', done));
  exporterPort = (exporters.address() as { port: number }).port;

  namespace = await createTestNamespace(kubeConfig, 'dcgm');
  nodeNames = await createBareGpuNodes('2xNVIDIA-H200:8', NODE_PREFIX);
  [xpuNodeName = ''] = await createBareGpuNodes('1xIntel-Arc-Pro-B60:3:24480', XPU_NODE_PREFIX);
  // Intel XPU Manager's exporter, as its DaemonSet runs it (upstream xpumdPod: app.kubernetes.io/name=xpumd), where the administrator put it.
  intelNamespace = await createTestNamespace(kubeConfig, 'intel-xpu');
  const intel = intelXpuManager(intelNamespace);
  xpumdPod = await createExporterPod(user, intel, xpuNodeName, await applyExporterDaemonSet(user, intel), TIMEOUT_MS);
  // The GPU Operator's DCGM exporters: its DaemonSet's pods in gpu-operator, one per GPU node.
  const dcgmDaemonSetUid = await applyExporterDaemonSet(user, GPU_OPERATOR_DCGM_EXPORTER);
  exporterPods = [];
  for (const nodeName of nodeNames) exporterPods.push(await createExporterPod(user, GPU_OPERATOR_DCGM_EXPORTER, nodeName, dcgmDaemonSetUid, TIMEOUT_MS));

  const env = {
    ...process.env,
    DCGM_METRICS_ENDPOINT_TEMPLATE: `http://127.0.0.1:${exporterPort}/{POD_IP}/metrics`,
    INTEL_XPU_METRICS_ENDPOINT_TEMPLATE: `http://127.0.0.1:${exporterPort}/xpu/{POD_IP}/metrics`,
    GPU_EXPORTER_NAMESPACES: `gpu-operator,${intelNamespace}`,
  };
  server = await startFunctionServer(
    { ...profile, init: (base) => initProfile(base, env) },
    { config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] }), log, host: '127.0.0.1', now: () => new Date(clockMs) },
  );
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 2,
    retry: { retries: 5, backoffDelayMs: 100 },
    subscriptions: [{ name: 'profile', url: server.url, kinds: [DGDR, { apiVersion: 'batch/v1', kind: 'Job' }, { apiVersion: 'v1', kind: 'ConfigMap' }], mode: 'Reference' }],
  });
}, 300_000);

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
  // Exporter pods are found cluster-wide: the files after this one must not see them (kwok finishes the delete).
  await deleteExporterPods(user, [...exporterPods, xpumdPod, ...plantedPods], TIMEOUT_MS);
  await user.delete({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: GPU_OPERATOR_DCGM_EXPORTER.namespace, name: GPU_OPERATOR_DCGM_EXPORTER.name });
  if (intelNamespace !== '') await user.delete({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: intelNamespace, name: intelXpuManager(intelNamespace).name });
  for (const name of [...nodeNames, xpuNodeName, ...fakeNodeNames]) if (name !== '') await user.delete({ apiVersion: 'v1', kind: 'Node', name });
  await new Promise<void>((done) => exporters?.close(() => done()));
});

/** Applies a request as `kubectl apply` would after our admission (defaults and validation, in-process). */
async function applyDgdr(name: string, spec: Obj): Promise<void> {
  const admitted = admitDgdrThroughChain({ object: { ...DGDR, metadata: { name, namespace }, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', ...spec } } });
  expect(admitted.issues).toEqual([]);
  await eventually('the request applied', async () => {
    try {
      return await user.apply(admitted.object as ApplyObject, { force: true });
    } catch (error) {
      if (error instanceof TransientError) return undefined;
      throw error;
    }
  });
}

async function getDgdr(name: string): Promise<KubeObject | undefined> {
  return user.get({ ...DGDR, namespace, name });
}

describe('hardware discovery from DCGM exporters', { timeout: 240_000 }, () => {
  it('GFD labels absent: the exporters\' metrics give gpuSku, vramMb, numGpusPerNode, totalGpus and interconnect nvlink, persisted and passed to the profiler (upstream enrichHardwareFromDiscovery: DCGM first)', async () => {
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    await applyDgdr('dcgm-h200', {});
    const want = { gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 16, rdma: false, interconnect: 'nvlink' };
    const stored = await eventually('the discovered hardware on the request', async () => {
      const dgdr = await getDgdr('dcgm-h200');
      return (dgdr?.['spec'] as { hardware?: unknown } | undefined)?.hardware === undefined ? undefined : dgdr;
    }, TIMEOUT_MS);
    expect((stored['spec'] as Obj)['hardware']).toEqual(want);
    // Upstream passes the enriched spec to the profiler as --config: the interconnect reaches it.
    const job = await eventually('the profiling Job', () => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-dcgm-h200' }), TIMEOUT_MS);
    const profiler = ((job['spec'] as { template: { spec: { containers: { name: string; args: string[] }[] } } }).template.spec.containers).find((c) => c.name === 'profiler');
    const config = JSON.parse(profiler?.args[1] ?? '{}') as { hardware?: unknown };
    expect(config.hardware).toEqual(want);
  });

  it('explicit gpuSku, vramMb, numGpusPerNode and totalGpus: interconnect and rdma are still discovered, best-effort, and the explicit values kept (upstream enrichHardwareFromDiscovery "metadataComplete")', async () => {
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    const explicit = { gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 4 };
    await applyDgdr('dcgm-explicit', { hardware: explicit });
    const job = await eventually('the profiling Job', () => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-dcgm-explicit' }), TIMEOUT_MS);
    const want = { ...explicit, interconnect: 'nvlink', rdma: false };
    expect(((await getDgdr('dcgm-explicit'))?.['spec'] as Obj)['hardware']).toEqual(want);
    const profiler = ((job['spec'] as { template: { spec: { containers: { name: string; args: string[] }[] } } }).template.spec.containers).find((c) => c.name === 'profiler');
    expect((JSON.parse(profiler?.args[1] ?? '{}') as { hardware?: unknown }).hardware).toEqual(want);
  });

  async function failedValidation(name: string): Promise<{ status: string; reason: string; message: string } | undefined> {
    const failed = await eventually('the request to fail validation', async () => {
      const dgdr = await getDgdr(name);
      return (dgdr?.['status'] as { phase?: string } | undefined)?.phase === 'Failed' ? dgdr : undefined;
    }, TIMEOUT_MS);
    return ((failed['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] }).conditions ?? []).find((c) => c.type === 'Validation');
  }

  it('a request within 60 s of a discovery reuses it without scraping, though the exporters now fail (upstream GPUDiscoveryCache: 60 s per SKU filter)', async () => {
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), 503);
    // What this request scrapes is counted from here: the earlier requests' passes have finished.
    await functionIdle();
    const scrapedBefore = dcgmScrapes();
    clockMs += 59_000;
    await applyDgdr('dcgm-cached', {});
    const stored = await eventually('the cached hardware on the request', async () => {
      const dgdr = await getDgdr('dcgm-cached');
      return (dgdr?.['spec'] as { hardware?: unknown } | undefined)?.hardware === undefined ? undefined : dgdr;
    }, TIMEOUT_MS);
    expect((stored['spec'] as Obj)['hardware']).toEqual({ gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 16, rdma: false, interconnect: 'nvlink' });
    await eventually('the profiling Job', () => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-dcgm-cached' }), TIMEOUT_MS);
    expect(dcgmScrapes()).toBe(scrapedBefore);
  });

  it('60 s on, the exporters are read again: DCGM and Intel XPU failing and no GFD labels fail the request before any Job, naming every failure (upstream discoverFromMetricsSources, DiscoverGPUHardware)', async () => {
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), 503);
    bodies.set(xpuPath(xpumdPod.podIp), 503);
    const scrapedBefore = dcgmScrapes();
    clockMs += 2_000;
    await applyDgdr('dcgm-down', {});
    const validation = await failedValidation('dcgm-down');
    expect(validation).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    const endpoints = [...exporterPods].map((pod) => `pod ${pod.name} (${pod.podIp}): http://127.0.0.1:${exporterPort}/${pod.podIp}/metrics: metrics endpoint http://127.0.0.1:${exporterPort}/${pod.podIp}/metrics returned status 503`);
    expect(validation?.message).toContain('GPU hardware discovery failed: metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [');
    for (const endpoint of endpoints) expect(validation?.message).toContain(endpoint);
    const xpuEndpoint = `http://127.0.0.1:${exporterPort}/xpu/${xpumdPod.podIp}/metrics`;
    expect(validation?.message).toContain(`; intel-xpumd discovery failed: failed to scrape any intel-xpumd exporter pod: [pod ${xpumdPod.name} (${xpumdPod.podIp}): ${xpuEndpoint}: metrics endpoint ${xpuEndpoint} returned status 503]`);
    expect(validation?.message).toContain('; node-label discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found');
    expect(dcgmScrapes()).toBeGreaterThan(scrapedBefore);
    expect(await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-dcgm-down' })).toBeUndefined();
  });

  it('DCGM failing, an Intel XPU exporter read at its :8080 template: the B60 node is found, and b60, not a v1beta1 gpuSku, fails the request naming it (upstream TestEnrichHardwareFromDiscovery_B60UsesXPUMD; dgdr-reference "SKU format")', async () => {
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), 503);
    bodies.set(xpuPath(xpumdPod.podIp), XPUMD_METRICS);
    const xpuScrapedBefore = scrapes.get(xpuPath(xpumdPod.podIp)) ?? 0;
    await applyDgdr('xpu-b60', {});
    const validation = await failedValidation('xpu-b60');
    expect(validation).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(validation?.message).toContain(`GPU hardware discovery failed: GPU product "Intel(R) Graphics [0xe211]" on node ${xpuNodeName} is the AISimulate system b60, which spec.hardware.gpuSku cannot hold`);
    expect(validation?.message).toContain('request this hardware as nvidia.com/v1beta2 with spec.hardware.gpu.sku b60, budget and numGpusPerNode');
    expect(scrapes.get(xpuPath(xpumdPod.podIp)) ?? 0).toBeGreaterThan(xpuScrapedBefore);
    expect(await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-xpu-b60' })).toBeUndefined();
  });

  it('a function only trusts what it can prove (issue 20 item 1): a labelled pod planted in a user\'s namespace (even DaemonSet-controlled) and a bare pod in gpu-operator, both serving a fabricated 16 x B200 node, are never scraped; the GPU Operator\'s DaemonSet pods decide, and a failed discovery names the planted pods', async () => {
    // A node of the planted pods' own, so that, trusted, their 16 B200s would be the auto-selected shape.
    fakeNodeNames = await createBareGpuNodes('1xNVIDIA-B200:8', 'dcgm-fake');
    const fakeNode = fakeNodeNames[0] ?? '';
    // A user may run a DaemonSet in their own namespace: the owner does not make the namespace trusted.
    const userDaemonSet = { ...GPU_OPERATOR_DCGM_EXPORTER, namespace };
    const planted = await createExporterPod(user, userDaemonSet, fakeNode, await applyExporterDaemonSet(user, userDaemonSet), TIMEOUT_MS);
    const bare = await createExporterPod(user, GPU_OPERATOR_DCGM_EXPORTER, fakeNode, undefined, TIMEOUT_MS);
    plantedPods = [planted, bare];
    const fabricated = Array.from({ length: 16 }, (_, gpu) => `DCGM_FI_DEV_GPU_TEMP{gpu="${gpu}",modelName="NVIDIA B200",Hostname="${fakeNode}"} 40\nDCGM_FI_DEV_FB_FREE{gpu="${gpu}",Hostname="${fakeNode}"} 183359\n`).join('');
    for (const pod of plantedPods) bodies.set(dcgmPath(pod.podIp), fabricated);
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    await functionIdle();
    clockMs += 61_000;
    await applyDgdr('dcgm-planted', {});
    const stored = await eventually('the discovered hardware on the request', async () => {
      const dgdr = await getDgdr('dcgm-planted');
      return (dgdr?.['spec'] as { hardware?: unknown } | undefined)?.hardware === undefined ? undefined : dgdr;
    }, TIMEOUT_MS);
    expect((stored['spec'] as Obj)['hardware']).toEqual({ gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 16, rdma: false, interconnect: 'nvlink' });
    for (const pod of plantedPods) expect(scrapes.get(dcgmPath(pod.podIp)) ?? 0).toBe(0);

    // Trusted exporters down, 60 s on: the request's message names the pods it ignored, and why.
    for (const pod of exporterPods) bodies.set(dcgmPath(pod.podIp), 503);
    bodies.set(xpuPath(xpumdPod.podIp), 503);
    await functionIdle();
    clockMs += 61_000;
    await applyDgdr('dcgm-planted-down', {});
    const validation = await failedValidation('dcgm-planted-down');
    expect(validation?.message).toContain('GPU hardware discovery failed: metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [');
    expect(validation?.message).toContain('; ignored untrusted exporter pods: ');
    expect(validation?.message).toContain(`${namespace}/${planted.name} (namespace ${namespace} is not a trusted exporter namespace (gpu-operator, ${intelNamespace}))`);
    expect(validation?.message).toContain(`gpu-operator/${bare.name} (not controlled by a DaemonSet)`);
    expect(validation?.message).toContain('; node-label discovery failed: ');
    for (const pod of plantedPods) expect(scrapes.get(dcgmPath(pod.podIp)) ?? 0).toBe(0);
  });
});
