/**
 * DGDR v1beta2 on the real API server: the version served through the conversion webhook with
 * the read-only conversion views, and the v1beta2 admission webhooks (request mutate + validate,
 * Run validate) registered as `dynamo-fn dev` registers them (shared/cli/dev-profile.ts
 * `devWebhook`), scoped to this file's namespace. Hardware discovery reads this file's own kwok
 * GPU nodes: 16 GPUs each (every other test's nodes have 8), so they are the discovered shape
 * even when other files' nodes exist; tainted NoSchedule so no other test's pod lands on them.
 *
 * Source: dgdr-reference "Conversion views", "v1beta2 hardware SKU", "v1beta2 DGD Overrides",
 * "Replay a recorded trace"; issue 10 parts 1-2.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { V1BETA2_ROUTES, nodeFacts, startAdmissionServer, type AdmissionServer, type WebhookRoute } from '../../functions/admission/index.js';
import { devWebhook } from '../../shared/cli/dev-profile.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { gpuNodeObjects, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient, type ApiAnswer, type ApiClient, type Obj } from '../support/api.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const LABEL = 'dynamo-fn.test/dgdr-v1beta2-api';
const CONFIGURATION = 'dgdr-v1beta2-api-test';
const NODE_PREFIX = 'v1beta2-api-gpu';
const TAINT = { key: 'dynamo-fn.test/v1beta2-api', value: 'discovery-only', effect: 'NoSchedule' };
/** What discovery persists from this file's nodes: 2 nodes of 16 L40S (budget 32 = the cap, dgdr-reference "totalGpus"). */
const DISCOVERED = { sku: 'l40s', budget: 32, numGpusPerNode: 16 };
const TRACE = { format: 'Dynamo', source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/a.jsonl.gz' } } };
const HARDWARE = { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } };

const ROUTES: readonly WebhookRoute[] = [
  { kind: 'mutate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' },
  { kind: 'validate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' },
  ...V1BETA2_ROUTES,
];

let api: ApiClient;
let namespace: string;
let admission: AdmissionServer | undefined;
let nodeNames: string[] = [];

const path = (version: string, name?: string, resource = 'dynamographdeploymentrequests'): string => `/apis/nvidia.com/${version}/namespaces/${namespace}/${resource}${name === undefined ? '' : `/${name}`}`;
const request = (version: string, name: string, spec: Obj): Obj => ({ apiVersion: `nvidia.com/${version}`, kind: 'DynamoGraphDeploymentRequest', metadata: { name, namespace }, spec });
const v1beta2 = (name: string, spec: Obj): Obj => request('v1beta2', name, { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec });
const message = (answer: ApiAnswer): string => String(answer.body['message'] ?? '');
const specOf = (answer: ApiAnswer): Obj => answer.body['spec'] as Obj;
const metadataOf = (answer: ApiAnswer): Obj => answer.body['metadata'] as Obj;

async function create(version: string, object: Obj, resource?: string): Promise<ApiAnswer> {
  return api('POST', path(version, undefined, resource), object);
}

beforeAll(async () => {
  api = apiClient();
  namespace = await createTestNamespace(kubeConfig, 'v1beta2-api');
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [LABEL]: 'true' } } }, { force: true });
  const nodes = gpuNodeObjects(parseGpuFleet('2xNVIDIA-L40S:16:46068'), NODE_PREFIX);
  for (const node of nodes) {
    await admin.apply({ ...node, spec: { taints: [TAINT] } }, { force: true });
    await admin.applyStatus({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name }, status: node['status'] }, { force: true });
  }
  nodeNames = nodes.map((node) => node.metadata.name);
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  admission = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log, shutdownDelaySeconds: 0, listNodes: async () => (await admin.list('v1', 'Node')).map(nodeFacts) });
  const base = `https://127.0.0.1:${admission.port}`;
  const caBundle = Buffer.from(certs.caPem).toString('base64');
  const scoped = (route: WebhookRoute) => ({ ...devWebhook(route, base, caBundle), namespaceSelector: { matchLabels: { [LABEL]: 'true' } } });
  for (const [kind, webhookKind] of [['MutatingWebhookConfiguration', 'mutate'], ['ValidatingWebhookConfiguration', 'validate']] as const) {
    await admin.apply({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: CONFIGURATION }, webhooks: ROUTES.filter((route) => route.kind === webhookKind).map(scoped) } as Parameters<Kube['apply']>[0], { force: true });
  }
  // The API server picks webhook configurations up asynchronously: wait until both a v1beta2
  // mutation (discovery persisted) and a v1beta1 view edit (refused) show the webhooks at work.
  await eventually('the v1beta2 webhooks to be active', async () => {
    const probe = await create('v1beta2', v1beta2('probe', { workload: { trace: TRACE } }));
    if (probe.status === 201) await api('DELETE', path('v1beta2', 'probe'));
    const isDiscovered = probe.status === 201 && (specOf(probe)['hardware'] as Obj | undefined) !== undefined;
    const viewProbe = await create('v1beta1', request('v1beta1', 'view-probe', { v1beta2: { model: { name: 'm' } } }));
    if (viewProbe.status === 201) await api('DELETE', path('v1beta1', 'view-probe'));
    return isDiscovered && viewProbe.status === 422 ? true : undefined;
  }, 60_000);
}, 180_000);

afterAll(async () => {
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) await admin.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: CONFIGURATION });
  await admission?.close();
  for (const name of nodeNames) await admin.delete({ apiVersion: 'v1', kind: 'Node', name });
});

describe('DGDR v1beta2 served through the conversion webhook', () => {
  it('the DGDR CRD serves v1beta1 (storage), v1alpha1 and v1beta2, converted by the webhook', async () => {
    const crd = await api('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeploymentrequests.nvidia.com');
    const spec = crd.body['spec'] as { conversion: { strategy: string }; versions: { name: string; served: boolean; storage: boolean }[] };
    expect(spec.conversion.strategy).toBe('Webhook');
    expect(spec.versions.map((v) => ({ name: v.name, served: v.served, storage: v.storage }))).toEqual([
      { name: 'v1beta1', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
      { name: 'v1beta2', served: true, storage: false },
    ]);
  });

  it('reference "represents a native v1beta2 request through v1alpha1 or v1beta1 by populating spec.v1beta2"; "An unchanged conversion view can be written back without changing the stored request"; editing it is refused', async () => {
    const created = await create('v1beta2', v1beta2('native-v1beta2', { hardware: HARDWARE, workload: { trace: TRACE } }));
    expect(created.status, message(created)).toBe(201);
    const native = await api('GET', path('v1beta2', 'native-v1beta2'));
    const beta = await api('GET', path('v1beta1', 'native-v1beta2'));
    const alpha = await api('GET', path('v1alpha1', 'native-v1beta2'));
    expect(specOf(beta)).toEqual({ v1beta2: specOf(native) });
    expect(specOf(alpha)).toEqual({ v1beta2: specOf(native) });

    for (const [version, view] of [['v1beta1', beta], ['v1alpha1', alpha]] as const) {
      const written = await api('PUT', path(version, 'native-v1beta2'), view.body);
      expect(written.status, `${version}: ${message(written)}`).toBe(200);
      const after = await api('GET', path('v1beta2', 'native-v1beta2'));
      expect(specOf(after)).toEqual(specOf(native));
      expect(metadataOf(after)['resourceVersion']).toBe(metadataOf(native)['resourceVersion']);
      expect(metadataOf(after)['generation']).toBe(metadataOf(native)['generation']);
    }

    for (const version of ['v1beta1', 'v1alpha1']) {
      const view = await api('GET', path(version, 'native-v1beta2'));
      const edited = structuredClone(view.body);
      ((((edited['spec'] as Obj)['v1beta2'] as Obj)['hardware'] as Obj)['gpu'] as Obj)['budget'] = 4;
      const refused = await api('PUT', path(version, 'native-v1beta2'), edited);
      expect(refused.status, version).toBe(422);
      expect(message(refused)).toContain('spec.v1beta2.hardware.gpu.budget: Forbidden: the read-only conversion view spec.v1beta2 may only be written back unchanged; modify the request through nvidia.com/v1beta2');
    }
    expect(specOf(await api('GET', path('v1beta2', 'native-v1beta2')))).toEqual(specOf(native));
  });

  it('reference "represents a native v1beta1 request through v1beta2 by populating spec.v1beta1"; written back unchanged through v1beta2; editing it is refused', async () => {
    const corpus = parse(readFileSync(resolve(sharedDir, 'corpus', 'dgdr', 'v1beta1-sample-example-llm-sla.yaml'), 'utf8')) as Obj;
    const created = await create('v1beta1', { ...corpus, metadata: { name: 'native-v1beta1', namespace } });
    expect(created.status, message(created)).toBe(201);
    const native = await api('GET', path('v1beta1', 'native-v1beta1'));
    const view = await api('GET', path('v1beta2', 'native-v1beta1'));
    expect(specOf(view)).toEqual({ v1beta1: specOf(native) });

    const written = await api('PUT', path('v1beta2', 'native-v1beta1'), view.body);
    expect(written.status, message(written)).toBe(200);
    const after = await api('GET', path('v1beta1', 'native-v1beta1'));
    expect(specOf(after)).toEqual(specOf(native));
    expect(metadataOf(after)['resourceVersion']).toBe(metadataOf(native)['resourceVersion']);

    const edited = structuredClone(view.body);
    ((edited['spec'] as Obj)['v1beta1'] as Obj)['model'] = 'Qwen/Qwen3-32B';
    const refused = await api('PUT', path('v1beta2', 'native-v1beta1'), edited);
    expect(refused.status).toBe(422);
    expect(message(refused)).toContain('spec.v1beta1.model: Forbidden: the read-only conversion view spec.v1beta1 may only be written back unchanged; modify the request through nvidia.com/v1beta1');
  });

  it.each([
    { name: 'spec.v1beta2 set through v1beta1', version: 'v1beta1', object: () => request('v1beta1', 'set-view-beta', { v1beta2: { model: { name: 'm' } } }), want: 'spec.v1beta2: Forbidden: a read-only conversion view may not be set; create and modify the request through nvidia.com/v1beta2' },
    { name: 'spec.v1beta2 set through v1alpha1', version: 'v1alpha1', object: () => request('v1alpha1', 'set-view-alpha', { v1beta2: { model: { name: 'm' } } }), want: 'spec.v1beta2: Forbidden: a read-only conversion view may not be set; create and modify the request through nvidia.com/v1beta2' },
    { name: 'spec.v1beta1 set through v1beta2', version: 'v1beta2', object: () => request('v1beta2', 'set-view-v1beta1', { v1beta1: { model: 'm' } }), want: 'spec.v1beta1: Forbidden: a read-only conversion view may not be set; create and modify the request through nvidia.com/v1beta1' },
  ])('reference "do not set or edit the conversion field directly": $name is refused', async ({ version, object, want }) => {
    const refused = await create(version, object());
    expect(refused.status).toBe(422);
    expect(message(refused)).toContain(want);
  });

  it('"Only model is unconditionally required": a v1beta1 request without model (and no view) is refused by the schema, naming spec.model', async () => {
    const refused = await create('v1beta1', request('v1beta1', 'no-model', { backend: 'vllm' }));
    expect(refused.status).toBe(422);
    expect(message(refused)).toContain('spec.model: Required value');
  });
});

describe('v1beta2 request admission (reference "v1beta2 hardware SKU", "Replay a recorded trace", "v1beta2 DGD Overrides")', () => {
  const rows = [
    {
      name: '"Omit hardware to let admission discover and persist sku, budget, and numGpusPerNode"; the static defaults without a trace',
      spec: { workload: { static: { concurrency: 8 } } },
      want: { hardware: { gpu: DISCOVERED }, workload: { static: { isl: 4000, osl: 1000, concurrency: 8 } } },
    },
    {
      name: '"An exactly empty hardware: {} object opts out of all operator cluster and DCGM discovery and typed hardware defaults"',
      spec: { hardware: {}, workload: { trace: TRACE }, aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' }, optimization: { constraints: { max_candidate_gpus: 8 } } } } },
      want: { hardware: {}, workload: { trace: TRACE }, aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' }, optimization: { constraints: { max_candidate_gpus: 8 } } } } },
    },
    {
      name: '"Any nonempty object ... is partial hardware intent: admission discovers and persists each missing field while preserving every explicit value"; no static default with a trace',
      spec: { hardware: { gpu: { numGpusPerNode: 8 } }, workload: { trace: TRACE } },
      want: { hardware: { gpu: { ...DISCOVERED, numGpusPerNode: 8 } }, workload: { trace: TRACE } },
    },
  ];
  it.each(rows)('$name', async ({ name, spec, want }) => {
    const object = v1beta2(`adm-${rows.findIndex((row) => row.name === name)}`, spec);
    const created = await create('v1beta2', object);
    expect(created.status, message(created)).toBe(201);
    expect(specOf(created)).toEqual({ model: { name: 'Qwen/Qwen3-0.6B' }, ...want });
  });

  it('"Admission passes an explicit SKU through unchanged. It warns when the bundled catalog does not contain that identifier, but does not reject it"', async () => {
    const created = await create('v1beta2', v1beta2('unknown-sku-trace', { hardware: { gpu: { sku: 'future_accelerator', budget: 8, numGpusPerNode: 8 } }, workload: { trace: TRACE }, aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' } } } }));
    expect(created.status, message(created)).toBe(201);
    expect((specOf(created)['hardware'] as Obj)['gpu']).toEqual({ sku: 'future_accelerator', budget: 8, numGpusPerNode: 8 });
    expect(created.warnings).toEqual([expect.stringContaining('spec.hardware.gpu.sku: "future_accelerator" is not in the bundled AISimulate system catalog')]);
  });

  it.each([
    { name: '"An unknown SKU must provide both budget and numGpusPerNode"', spec: { hardware: { gpu: { sku: 'future_accelerator' } }, workload: { trace: TRACE } }, want: 'spec.hardware.gpu: Required value: cannot discover budget and numGpusPerNode: no GPU nodes of sku "future_accelerator" found' },
    { name: '"the two are mutually exclusive": trace and static together', spec: { hardware: HARDWARE, workload: { trace: TRACE, static: { isl: 4000, osl: 1000 } } }, want: 'workload.trace and workload.static are mutually exclusive' },
    { name: '"concurrency ... Mutually exclusive with requestRate" (dgdr-reference "Spec reference"): a static workload with both', spec: { hardware: HARDWARE, workload: { static: { concurrency: 8, requestRate: 2 } } }, want: 'spec.workload.static.requestRate: Forbidden: may not be set together with spec.workload.static.concurrency: they are mutually exclusive' },
    { name: '"Other DGD API versions are not accepted here": a v1alpha1 DGD override', spec: { hardware: HARDWARE, workload: { trace: TRACE }, overrides: { dgd: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment' } } }, want: 'spec.overrides.dgd.apiVersion: Unsupported value: "nvidia.com/v1alpha1": supported values: "nvidia.com/v1beta1"' },
    { name: '"Request and Run admission validate the merged input against the bundled AISimulate input schema": hardware: {} without the upstream hardware selector (a static workload)', spec: { hardware: {} }, want: 'spec.aisim.inputOverrides.engine.hardware: Required value' },
  ])('$name is refused', async ({ spec, want }) => {
    const refused = await create('v1beta2', v1beta2('refused', spec));
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(message(refused)).toContain(want);
  });

  it('"To switch an existing request from static traffic to a trace, set spec.workload.static to null in the same update"; without it the update is refused', async () => {
    const created = await create('v1beta2', v1beta2('switch-to-trace', { hardware: HARDWARE, workload: { static: { concurrency: 8 } } }));
    expect(created.status, message(created)).toBe(201);
    expect((specOf(created)['workload'] as Obj)['static']).toEqual({ isl: 4000, osl: 1000, concurrency: 8 });
    const kept = await api('PATCH', path('v1beta2', 'switch-to-trace'), { spec: { workload: { trace: TRACE } } }, 'application/merge-patch+json');
    expect(kept.status).toBe(422);
    expect(message(kept)).toContain('spec.workload: Invalid value: workload.trace and workload.static are mutually exclusive; set workload.static to null in the same update to switch to a trace');
    const switched = await api('PATCH', path('v1beta2', 'switch-to-trace'), { spec: { workload: { trace: TRACE, static: null } } }, 'application/merge-patch+json');
    expect(switched.status, message(switched)).toBe(200);
    expect(specOf(switched)['workload']).toEqual({ trace: TRACE });
  });
});

describe('Run admission (reference "Run specs remain immutable; unchanged specs remain metadata-updatable")', () => {
  const run = (name: string, spec: Obj): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', metadata: { name, namespace }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec } });
  const RUNS = 'dynamographdeploymentruns';

  it('a static Run whose merged AISimulate input the bundled schema refuses is refused on create', async () => {
    const refused = await create('v1beta2', run('run-no-hardware', { hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } }), RUNS);
    expect(refused.status).toBe(422);
    expect(message(refused)).toContain('DynamoGraphDeploymentRun.nvidia.com "run-no-hardware" is invalid: spec.aisim.inputOverrides.engine.hardware: Required value');
  });

  it('a Run spec may not change; its metadata may', async () => {
    const created = await create('v1beta2', run('run-1', { hardware: HARDWARE, workload: { trace: TRACE } }), RUNS);
    expect(created.status, message(created)).toBe(201);
    const edited = await api('PATCH', path('v1beta2', 'run-1', RUNS), { spec: { hardware: { gpu: { budget: 4 } } } }, 'application/merge-patch+json');
    expect(edited.status).toBe(422);
    expect(message(edited)).toContain('spec is immutable');
    const labelled = await api('PATCH', path('v1beta2', 'run-1', RUNS), { metadata: { labels: { team: 'inference' } } }, 'application/merge-patch+json');
    expect(labelled.status, message(labelled)).toBe(200);
    expect((metadataOf(labelled)['labels'] as Obj)['team']).toBe('inference');
  });
});

/**
 * The reference's example manifests, each with its indentation restored (the reference text
 * prints them flush left). `printedIn` checks that every line of an example, trimmed, is a
 * contiguous run of the reference's lines, so an example here is the one printed there. The
 * spec fragments (`hardware: {}`, the trace's `source: null` override, v1beta1's `$patch` and
 * `gpuSku: gb200`) are placed in the smallest request the schema admits: a name and the model
 * of the neighbouring example.
 */
const REFERENCE_LINES = readFileSync(resolve(sharedDir, 'reference', 'dgdr-reference.txt'), 'utf8').split('\n').map((line) => line.trim()).filter((line) => line !== '');

function printedIn(example: string): boolean {
  const lines = example.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return REFERENCE_LINES.some((_, start) => lines.every((line, i) => REFERENCE_LINES[start + i] === line));
}

const FUTURE_ACCELERATOR = `
apiVersion: nvidia.com/v1beta2
kind: DynamoGraphDeploymentRequest
metadata:
  name: future-accelerator
spec:
  model:
    name: Qwen/Qwen3-0.6B
  hardware:
    gpu:
      sku: future_accelerator # Passed to AISimulate unchanged; admission warns if unknown.
      budget: 8
      numGpusPerNode: 8 # Completes explicit hardware; admission performs no discovery.
`;
const HARDWARE_OPT_OUT = `
spec:
  hardware: {}
  aisim:
    inputOverrides:
      engine:
        hardware: h200_sxm
      optimization:
        constraints:
          max_candidate_gpus: 8
`;
const CUSTOM_WORKER_IMAGE = `
apiVersion: nvidia.com/v1beta2
kind: DynamoGraphDeploymentRequest
metadata:
  name: custom-worker-image
spec:
  model:
    name: Qwen/Qwen3-0.6B
  backends: [vllm] # OPTIONAL; restricts results to this backend.
  overrides: # OPTIONAL; omitted means no DGD override.
    dgd: # OPTIONAL; partial DGD resource.
      apiVersion: nvidia.com/v1beta1 # REQUIRED when dgd is set.
      kind: DynamoGraphDeployment # REQUIRED when dgd is set.
      metadata:
        labels:
          workload: customized
      spec:
        components:
          - name: worker
            podTemplate:
              spec:
                containers:
                  - name: main
                    image: registry.example/runtime:1.7.0
`;
const TRACE_REPLAY = `
apiVersion: nvidia.com/v1beta2
kind: DynamoGraphDeploymentRequest
metadata:
  name: qwen3-trace-replay
spec:
  model:
    name: Qwen/Qwen3-0.6B
  workload:
    trace:
      # format defaults to Dynamo
      source:
        persistentVolumeClaim:
          claimName: request-traces # PersistentVolumeClaim in this namespace
          subPath: windows/2026-10-27T10-00.jsonl.gz
      replay:
        arrivalSpeedupRatio: 1.0 # optional; 2.0 replays arrivals twice as fast
`;
const SOURCE_NULL = `
spec:
  aisim:
    inputOverrides:
      traffic:
        source: null
`;
const CANDIDATE = `
apiVersion: nvidia.com/v1beta2
kind: DynamoGraphDeploymentCandidate
metadata:
  name: example-candidate
spec: # Immutable, opaque DGD spec; preserved even when validation fails.
  backendFramework: vllm
  components:
    - name: frontend
      type: frontend
      replicas: 1
      podTemplate:
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.7.0
    - name: worker
      type: worker
      replicas: 1
      podTemplate:
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.7.0
              args: [--model, Qwen/Qwen3-0.6B]
`;
const QWEN3_SGLANG = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeploymentRequest
metadata:
  name: qwen3-sglang
spec:
  model: Qwen/Qwen3-30B-A3B
  backend: sglang
  overrides:
    dgd:
      apiVersion: nvidia.com/v1beta1
      kind: DynamoGraphDeployment
      spec:
        components:
          - name: decode
            podTemplate:
              spec:
                containers:
                  - name: main
                    env:
                      - name: TRITON_PTXAS_PATH
                        value: /usr/local/cuda/bin/ptxas
`;
const ARGS_APPEND = `
spec:
  overrides:
    dgd:
      apiVersion: nvidia.com/v1beta1
      kind: DynamoGraphDeployment
      spec:
        components:
          - name: Frontend
            podTemplate:
              spec:
                containers:
                  - name: main
                    $patch:
                      args: append
                    args:
                      - --router-mode
                      - kv
`;
const GB200 = `
spec:
  hardware:
    gpuSku: gb200
`;

describe('every example manifest of dgdr-reference.txt is admitted as printed (issue 19)', () => {
  const fragment = (text: string): Obj => (parse(text) as { spec: Obj }).spec;
  const named = (version: string, name: string, model: unknown, spec: Obj): Obj => ({ apiVersion: `nvidia.com/${version}`, kind: 'DynamoGraphDeploymentRequest', metadata: { name }, spec: { model, ...spec } });
  const rows = [
    { name: 'future-accelerator ("v1beta2 hardware SKU"): no workload, explicit hardware with an SKU the bundled catalog lacks', texts: [FUTURE_ACCELERATOR], object: (): Obj => parse(FUTURE_ACCELERATOR) as Obj, resource: 'dynamographdeploymentrequests', version: 'v1beta2' },
    { name: 'the hardware: {} opt-out ("v1beta2 hardware SKU"), in a request for Qwen/Qwen3-0.6B', texts: [HARDWARE_OPT_OUT], object: (): Obj => named('v1beta2', 'hardware-opt-out', { name: 'Qwen/Qwen3-0.6B' }, fragment(HARDWARE_OPT_OUT)), resource: 'dynamographdeploymentrequests', version: 'v1beta2' },
    { name: 'custom-worker-image ("v1beta2 DGD Overrides"): no workload, hardware discovered', texts: [CUSTOM_WORKER_IMAGE], object: (): Obj => parse(CUSTOM_WORKER_IMAGE) as Obj, resource: 'dynamographdeploymentrequests', version: 'v1beta2' },
    { name: 'qwen3-trace-replay ("Replay a recorded trace")', texts: [TRACE_REPLAY], object: (): Obj => parse(TRACE_REPLAY) as Obj, resource: 'dynamographdeploymentrequests', version: 'v1beta2' },
    { name: 'qwen3-trace-replay with "this override deletes the lowered source" (traffic.source: null; not checked against the AISimulate schema at admission)', texts: [TRACE_REPLAY, SOURCE_NULL], object: (): Obj => { const request = parse(TRACE_REPLAY) as { metadata: Obj; spec: Obj }; return { ...request, metadata: { name: 'trace-source-null' }, spec: { ...request.spec, ...fragment(SOURCE_NULL) } }; }, resource: 'dynamographdeploymentrequests', version: 'v1beta2' },
    { name: 'example-candidate (the DynamoGraphDeploymentCandidate example; its status is written through the subresource)', texts: [CANDIDATE], object: (): Obj => parse(CANDIDATE) as Obj, resource: 'dynamographdeploymentcandidates', version: 'v1beta2' },
    { name: 'qwen3-sglang ("Generated component names", v1beta1)', texts: [QWEN3_SGLANG], object: (): Obj => parse(QWEN3_SGLANG) as Obj, resource: 'dynamographdeploymentrequests', version: 'v1beta1' },
    { name: 'the $patch: {args: append} override (v1beta1), in a request for Qwen/Qwen3-30B-A3B', texts: [ARGS_APPEND], object: (): Obj => named('v1beta1', 'args-append', 'Qwen/Qwen3-30B-A3B', fragment(ARGS_APPEND)), resource: 'dynamographdeploymentrequests', version: 'v1beta1' },
  ];

  it.each(rows)('the example is printed in the reference: $name', ({ texts }) => {
    for (const text of texts) expect(printedIn(text), text).toBe(true);
  });

  it.each(rows)('admitted: $name', async ({ object, resource, version }) => {
    const manifest = object();
    const created = await create(version, { ...manifest, metadata: { ...(manifest['metadata'] as Obj), namespace } }, resource);
    expect(created.status, message(created)).toBe(201);
  });

  it('the gpuSku: gb200 fragment ("SKU format", v1beta1), in a request for Qwen/Qwen3-0.6B, is printed in the reference and admitted (no GB200 node here: budget discovery is the controller\'s, which fails the request before a Job, reference "vramMb")', async () => {
    expect(printedIn(GB200)).toBe(true);
    const created = await create('v1beta1', { ...named('v1beta1', 'gb200', 'Qwen/Qwen3-0.6B', fragment(GB200)), metadata: { name: 'gb200', namespace } });
    expect(created.status, message(created)).toBe(201);
  });
});

describe('DynamoGraphDeploymentCandidate (reference "spec: # Immutable, opaque DGD spec; preserved even when validation fails")', () => {
  it('the API server refuses a change of a Candidate\'s spec ("spec is immutable") and keeps a field the DGD schema does not know', async () => {
    const candidate = parse(CANDIDATE) as { metadata: Obj; spec: Obj };
    const created = await create('v1beta2', { ...candidate, metadata: { name: 'immutable-candidate', namespace }, spec: { ...candidate.spec, notADgdField: { kept: true } } }, 'dynamographdeploymentcandidates');
    expect(created.status, message(created)).toBe(201);
    expect(specOf(created)['notADgdField']).toEqual({ kept: true });
    const edited = await api('PATCH', path('v1beta2', 'immutable-candidate', 'dynamographdeploymentcandidates'), { spec: { backendFramework: 'sglang' } }, 'application/merge-patch+json');
    expect(edited.status).toBe(422);
    expect(message(edited)).toContain('spec is immutable');
  });
});
