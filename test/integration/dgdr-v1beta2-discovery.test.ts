/**
 * DGDR v1beta2 admission's hardware discovery from metrics exporters on the real API server
 * (issue 10 leftover): the v1beta2 webhooks registered as `dynamo-fn dev` registers them
 * (shared/cli/dev-profile.ts `devWebhook`, timeoutSeconds 10), scoped to this file's namespace,
 * served by the admission server with the Node lister and the exporter reader `serve admission`
 * builds (functions/admission/index.ts `createExporterLoader`, budget `discoveryBudgetSeconds(10)`).
 * kwok runs GPU nodes without GPU Feature Discovery labels (no GFD installed), a DCGM exporter pod
 * on each NVIDIA node (label `app=nvidia-dcgm-exporter`, a pod of the GPU Operator's DaemonSet in
 * `gpu-operator`) and an Intel XPU Manager exporter pod (`app.kubernetes.io/name=xpumd`, its
 * DaemonSet's, in a namespace the reader is told to trust) on an Intel node, and gives each a pod
 * IP. A labelled pod planted in the user's namespace is never read (issue 20 item 1).
 *
 * What does not run here: the exporters themselves (there are no GPUs). A real HTTP server on
 * loopback stands in for each exporter pod and serves the Prometheus text a DCGM exporter serves
 * (test/fixtures/dcgm/) or the xpumd text of upstream's TestScrapeMetricsEndpoint "xpumd
 * metrics". kwok's pod IPs route nowhere, so, as in dcgm-discovery.test.ts, the reader gets
 * upstream's endpoint overrides (`DCGM_METRICS_ENDPOINT_TEMPLATE`,
 * `INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`) pointing at that server with the pod IP in the path: each
 * pod is still found through the API server and scraped by the IP kwok wrote into its status. The
 * 60 s cache runs on a clock the test holds still.
 *
 * Source: dgdr-reference "v1beta2 hardware SKU" ("Omit hardware to let admission discover and
 * persist sku, budget, and numGpusPerNode. An exactly empty hardware: {} object opts out of all
 * operator cluster and DCGM discovery"); upstream-notes/dgdr.md §3.2.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { V1BETA2_ROUTES, createExporterLoader, discoveryBudgetSeconds, nodeFacts, startAdmissionServer, type AdmissionServer, type WebhookRoute } from '../../functions/admission/index.js';
import { devWebhook } from '../../shared/cli/dev-profile.js';
import { GpuDiscoveryCache } from '../../shared/discovery/index.js';
import { createKube, type ApplyObject, type Kube } from '../../shared/kube/index.js';
import { gpuNodeObjects, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient, type ApiAnswer, type ApiClient, type Obj } from '../support/api.js';
import { eventually } from '../support/eventually.js';
import { GPU_OPERATOR_DCGM_EXPORTER, applyExporterDaemonSet, createExporterPod, deleteExporterPods, intelXpuManager, type RunningExporterPod } from '../support/exporter-daemonsets.js';
import { repoRoot } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const LABEL = 'dynamo-fn.test/dgdr-v1beta2-discovery';
const CONFIGURATION = 'dgdr-v1beta2-discovery-test';
const H200_METRICS = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'h200-hgx-8gpu.metrics'), 'utf8');
const XPUMD_METRICS = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'xpumd-b60-3gpu.metrics'), 'utf8');
// Generous: a loaded 2-core machine can take many seconds for kwok and the webhook configuration.
const TIMEOUT_MS = 90_000;
/** devWebhook's timeoutSeconds: the budget the reader gets, as `serve admission` derives it from WEBHOOK_TIMEOUT_SECONDS. */
const WEBHOOK_TIMEOUT_SECONDS = 10;

let api: ApiClient;
let namespace = '';
let admission: AdmissionServer | undefined;
let exporters: Server | undefined;
let nodeNames: string[] = [];
let dcgmPods: RunningExporterPod[] = [];
let xpumdPod: RunningExporterPod = { namespace: '', name: '', podIp: '', nodeName: '' };
/** Where the administrator installed Intel XPU Manager, trusted beside gpu-operator. */
let intelNamespace = '';
/** Labelled pods no administrator runs (one test plants them). */
let plantedPods: RunningExporterPod[] = [];
let fakeNodeNames: string[] = [];
/** An exporter that accepts the connection and never answers. */
const HANG = 'hang';
/** The body each exporter path (`/<pod IP>/metrics`, `/xpu/<pod IP>/metrics`) serves, the HTTP status it fails with, or {@link HANG}. */
const bodies = new Map<string, string | number | typeof HANG>();
let templates = { dcgm: '', intelXpu: '' };
/** How many times each exporter path was scraped. */
const scrapes = new Map<string, number>();
/** The cache's clock: held still, moved on only by the test. */
let clockMs = Date.now();

const dcgmPath = (podIp: string): string => `/${podIp}/metrics`;
const xpuPath = (podIp: string): string => `/xpu/${podIp}/metrics`;
const allScrapes = (): number => [...scrapes.values()].reduce((sum, n) => sum + n, 0);
const requestPath = (name?: string): string => `/apis/nvidia.com/v1beta2/namespaces/${namespace}/dynamographdeploymentrequests${name === undefined ? '' : `/${name}`}`;
/** A static workload with a concurrency target; isl and osl are admission's defaults. */
const v1beta2 = (name: string, spec: Obj): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', metadata: { name, namespace }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, workload: { static: { concurrency: 8 } }, ...spec } });
/** `hardware: {}` leaves the hardware to the AISimulate input, which must then name it (dgdr-reference "v1beta2 hardware SKU"). */
const OPTED_OUT = { hardware: {}, aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' }, optimization: { constraints: { max_candidate_gpus: 8 } } } } };
const message = (answer: ApiAnswer): string => String(answer.body['message'] ?? '');
const hardwareOf = (answer: ApiAnswer): unknown => (answer.body['spec'] as Obj | undefined)?.['hardware'];

/** GPU nodes without GPU Feature Discovery labels: only `nvidia.com/gpu` capacity. */
async function createBareGpuNodes(fleet: string, prefix: string): Promise<string[]> {
  const nodes = gpuNodeObjects(parseGpuFleet(fleet), prefix);
  for (const node of nodes) {
    const labels = { ...(node.metadata.labels as Record<string, string>) };
    for (const key of ['nvidia.com/gpu.product', 'nvidia.com/gpu.count', 'nvidia.com/gpu.memory']) delete labels[key];
    await admin.apply({ ...node, metadata: { ...node.metadata, labels } } as ApplyObject, { force: true });
    await admin.applyStatus({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name }, status: node['status'] }, { force: true });
  }
  return nodes.map((node) => node.metadata.name);
}

beforeAll(async () => {
  exporters = createServer((request, response) => {
    const url = request.url ?? '';
    scrapes.set(url, (scrapes.get(url) ?? 0) + 1);
    const body = bodies.get(url);
    if (body === HANG) return;
    if (typeof body === 'string') {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body);
      return;
    }
    response.writeHead(typeof body === 'number' ? body : 404).end();
  });
  await new Promise<void>((done) => exporters?.listen(0, '127.0.0.1', done));
  const exporterPort = (exporters.address() as { port: number }).port;
  templates = { dcgm: `http://127.0.0.1:${exporterPort}/{POD_IP}/metrics`, intelXpu: `http://127.0.0.1:${exporterPort}/xpu/{POD_IP}/metrics` };

  api = apiClient();
  namespace = await createTestNamespace(kubeConfig, 'v1beta2-discovery');
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [LABEL]: 'true' } } }, { force: true });
  const nvidiaNodes = await createBareGpuNodes('2xNVIDIA-H200:8', 'v1beta2-dcgm-gpu');
  const [intelNode = ''] = await createBareGpuNodes('1xIntel-Arc-Pro-B60:3:24480', 'v1beta2-dcgm-xpu');
  nodeNames = [...nvidiaNodes, intelNode];
  // The GPU Operator's DCGM exporters (its DaemonSet's pods in gpu-operator) and Intel XPU Manager's, where the administrator put it.
  const dcgmDaemonSetUid = await applyExporterDaemonSet(admin, GPU_OPERATOR_DCGM_EXPORTER);
  dcgmPods = [];
  for (const nodeName of nvidiaNodes) dcgmPods.push(await createExporterPod(admin, GPU_OPERATOR_DCGM_EXPORTER, nodeName, dcgmDaemonSetUid, TIMEOUT_MS));
  intelNamespace = await createTestNamespace(kubeConfig, 'intel-xpu');
  const intel = intelXpuManager(intelNamespace);
  xpumdPod = await createExporterPod(admin, intel, intelNode, await applyExporterDaemonSet(admin, intel), TIMEOUT_MS);

  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  admission = await startAdmissionServer({
    port: 0,
    host: '127.0.0.1',
    tls: { cert: certs.certPem, key: certs.keyPem },
    config: { lpxEnabled: false },
    log,
    shutdownDelaySeconds: 0,
    listNodes: async () => (await admin.list('v1', 'Node')).map(nodeFacts),
    loadExporters: createExporterLoader(admin, {
      templates,
      budgetSeconds: discoveryBudgetSeconds(WEBHOOK_TIMEOUT_SECONDS),
      cache: new GpuDiscoveryCache(() => new Date(clockMs)),
      // GPU_EXPORTER_NAMESPACES=gpu-operator,<intel namespace>, as `serve admission` parses it.
      trustedNamespaces: ['gpu-operator', intelNamespace],
      log,
    }),
  });
  const base = `https://127.0.0.1:${admission.port}`;
  const caBundle = Buffer.from(certs.caPem).toString('base64');
  const scoped = (route: WebhookRoute) => ({ ...devWebhook(route, base, caBundle), namespaceSelector: { matchLabels: { [LABEL]: 'true' } } });
  for (const [kind, webhookKind] of [['MutatingWebhookConfiguration', 'mutate'], ['ValidatingWebhookConfiguration', 'validate']] as const) {
    await admin.apply({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: CONFIGURATION }, webhooks: V1BETA2_ROUTES.filter((route) => route.kind === webhookKind).map(scoped) } as Parameters<Kube['apply']>[0], { force: true });
  }
  // The API server picks webhook configurations up asynchronously: wait until the mutating
  // webhook defaults a probe (the static workload default; hardware: {} so nothing is discovered).
  await eventually('the v1beta2 webhooks to be active', async () => {
    const probe = await api('POST', requestPath(), v1beta2('probe', OPTED_OUT));
    if (probe.status === 201) await api('DELETE', requestPath('probe'));
    const workload = (probe.body['spec'] as { workload?: { static?: { isl?: number } } } | undefined)?.workload;
    return probe.status === 201 && workload?.static?.isl === 4000 ? true : undefined;
  }, 60_000);
}, 300_000);

afterAll(async () => {
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) await admin.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: CONFIGURATION });
  await admission?.close();
  // Exporter pods are found cluster-wide: the files after this one must not see them (kwok finishes the delete).
  await deleteExporterPods(admin, [...dcgmPods, xpumdPod, ...plantedPods], TIMEOUT_MS);
  await admin.delete({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: GPU_OPERATOR_DCGM_EXPORTER.namespace, name: GPU_OPERATOR_DCGM_EXPORTER.name });
  if (intelNamespace !== '') await admin.delete({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: intelNamespace, name: intelXpuManager(intelNamespace).name });
  for (const name of [...nodeNames, ...fakeNodeNames]) if (name !== '') await admin.delete({ apiVersion: 'v1', kind: 'Node', name });
  exporters?.closeAllConnections();
  await new Promise<void>((done) => (exporters === undefined ? done() : exporters.close(() => done())));
});

describe('DGDR v1beta2 admission discovers hardware from metrics exporters (dgdr-reference "v1beta2 hardware SKU")', { timeout: 180_000 }, () => {
  it('"Omit hardware to let admission discover and persist sku, budget, and numGpusPerNode": with no GFD labels, the DCGM exporters\' metrics give h200_sxm, 8 per node, a budget of 16 (upstream enrichHardwareFromDiscovery: DCGM first)', async () => {
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    const created = await api('POST', requestPath(), v1beta2('dcgm-omitted', {}));
    expect(created.status, message(created)).toBe(201);
    const stored = await eventually('the request stored', async () => {
      const answer = await api('GET', requestPath('dcgm-omitted'));
      return answer.status === 200 ? answer : undefined;
    }, TIMEOUT_MS);
    expect(hardwareOf(stored)).toEqual({ gpu: { sku: 'h200_sxm', budget: 16, numGpusPerNode: 8 } });
    for (const pod of dcgmPods) expect(scrapes.get(dcgmPath(pod.podIp)) ?? 0).toBeGreaterThan(0);
  });

  it('"An exactly empty hardware: {} object opts out of all operator cluster and DCGM discovery": stored as {}, no exporter scraped', async () => {
    // A new SKU filter would miss the cache; hardware: {} must not even look (the counts stay put).
    const scrapedBefore = allScrapes();
    const created = await api('POST', requestPath(), v1beta2('opted-out', OPTED_OUT));
    expect(created.status, message(created)).toBe(201);
    expect(hardwareOf(created)).toEqual({});
    expect(hardwareOf(await api('GET', requestPath('opted-out')))).toEqual({});
    expect(allScrapes()).toBe(scrapedBefore);
  });

  it('"admission discovers and persists each missing field while preserving every explicit value": an explicit budget is kept, the rest from the cached DCGM discovery, though the exporters now fail (upstream GPUDiscoveryCache: 60 s per SKU filter)', async () => {
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), 503);
    const scrapedBefore = allScrapes();
    clockMs += 59_000;
    const created = await api('POST', requestPath(), v1beta2('dcgm-partial', { hardware: { gpu: { budget: 4 } } }));
    expect(created.status, message(created)).toBe(201);
    expect(hardwareOf(await api('GET', requestPath('dcgm-partial')))).toEqual({ gpu: { sku: 'h200_sxm', budget: 4, numGpusPerNode: 8 } });
    expect(allScrapes()).toBe(scrapedBefore);
  });

  it('sku b60 (an AISimulate system v1beta1 cannot hold): no DCGM node of that SKU, so the Intel XPU exporter is read at its :8080 template, giving budget 3 and numGpusPerNode 3 (upstream discoverFromMetricsSources; TestScrapeMetricsEndpoint "xpumd metrics": 3 devices)', async () => {
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    bodies.set(xpuPath(xpumdPod.podIp), XPUMD_METRICS);
    const created = await api('POST', requestPath(), v1beta2('xpu-b60', { hardware: { gpu: { sku: 'b60' } } }));
    expect(created.status, message(created)).toBe(201);
    expect(hardwareOf(await api('GET', requestPath('xpu-b60')))).toEqual({ gpu: { sku: 'b60', budget: 3, numGpusPerNode: 3 } });
    expect(scrapes.get(xpuPath(xpumdPod.podIp)) ?? 0).toBeGreaterThan(0);
  });

  it('60 s on, DCGM and Intel XPU failing and no labelled node of the sku: denied naming the field and every failure, nothing stored (upstream DiscoverGPUHardware)', async () => {
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), 503);
    bodies.set(xpuPath(xpumdPod.podIp), 503);
    clockMs += 61_000;
    // A SKU no test labels a node with, so the node-label fallback cannot succeed either.
    const refused = await api('POST', requestPath(), v1beta2('dcgm-down', { hardware: { gpu: { sku: 'gb300' } } }));
    expect(refused.status).toBe(422);
    expect(message(refused)).toContain('spec.hardware.gpu: Required value: metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [');
    expect(message(refused)).toContain('returned status 503');
    expect(message(refused)).toContain('; intel-xpumd discovery failed: failed to scrape any intel-xpumd exporter pod: [');
    expect(message(refused)).toContain('; node-label discovery failed: ');
    expect((await api('GET', requestPath('dcgm-down'))).status).toBe(404);
  });

  it('a function only trusts what it can prove (issue 20 item 1): a labelled pod planted in the user\'s namespace serving a fabricated 16 x B200 node is never scraped; the GPU Operator\'s DaemonSet pods give h200_sxm', async () => {
    fakeNodeNames = await createBareGpuNodes('1xNVIDIA-B200:8', 'v1beta2-dcgm-fake');
    const fakeNode = fakeNodeNames[0] ?? '';
    const userDaemonSet = { ...GPU_OPERATOR_DCGM_EXPORTER, namespace };
    const planted = await createExporterPod(admin, userDaemonSet, fakeNode, await applyExporterDaemonSet(admin, userDaemonSet), TIMEOUT_MS);
    plantedPods = [planted];
    bodies.set(dcgmPath(planted.podIp), Array.from({ length: 16 }, (_, gpu) => `DCGM_FI_DEV_GPU_TEMP{gpu="${gpu}",modelName="NVIDIA B200",Hostname="${fakeNode}"} 40\nDCGM_FI_DEV_FB_FREE{gpu="${gpu}",Hostname="${fakeNode}"} 183359\n`).join(''));
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), H200_METRICS.replaceAll('Hostname="gpu-node-0"', `Hostname="${pod.nodeName}"`));
    clockMs += 61_000;
    const created = await api('POST', requestPath(), v1beta2('dcgm-planted', {}));
    expect(created.status, message(created)).toBe(201);
    expect(hardwareOf(await api('GET', requestPath('dcgm-planted')))).toEqual({ gpu: { sku: 'h200_sxm', budget: 16, numGpusPerNode: 8 } });
    expect(scrapes.get(dcgmPath(planted.podIp)) ?? 0).toBe(0);
    for (const pod of dcgmPods) expect(scrapes.get(dcgmPath(pod.podIp)) ?? 0).toBeGreaterThan(0);
  });

  it('an exporter pod that never answers is cut off by the time budget (the webhook timeout less 2 s), before upstream\'s 5 s request timeout, so admission answers in time', async () => {
    for (const pod of dcgmPods) bodies.set(dcgmPath(pod.podIp), HANG);
    // A 1 s budget (a 3 s webhook timeout) against the real exporter pods, read as the webhook reads them.
    const facts = await createExporterLoader(admin, { templates, budgetSeconds: discoveryBudgetSeconds(3) })('h200_sxm');
    const endpointOf = (podIp: string): string => templates.dcgm.replace('{POD_IP}', podIp);
    const got = facts.exporterPods.map((pod) => ({ name: pod.name, scrape: pod.scrape })).sort((a, b) => a.name.localeCompare(b.name));
    const want = dcgmPods.map((pod) => ({ name: pod.name, scrape: { endpoint: endpointOf(pod.podIp), ok: false, error: `HTTP GET ${endpointOf(pod.podIp)} failed: hardware discovery's time budget of 1 s ran out` } }));
    expect(got).toEqual(want.sort((a, b) => a.name.localeCompare(b.name)));
  });
});
