/**
 * The v1beta2 webhooks through `answerAdmissionReview`, as the API server calls them: which
 * reviews are defaulted, which are left to the v1beta1 webhooks (by `requestKind`), the
 * envelope checks, and the denial's kind. The rules themselves are tabled in
 * shared/domain/v1beta2/request-admission.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview, type AdmissionResponse, type WebhookRoute } from './index.js';
import { hardwareDiscoveryFilter } from './dgdr-v1beta2.js';

type Obj = Record<string, unknown>;

const MUTATE: WebhookRoute = { kind: 'mutate', version: 'v1beta2', resource: 'dynamographdeploymentrequests' };
const VALIDATE: WebhookRoute = { kind: 'validate', version: 'v1beta2', resource: 'dynamographdeploymentrequests' };
const VALIDATE_V1BETA1: WebhookRoute = { kind: 'validate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' };
const NODES = [{ name: 'gpu-a', labels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3-SXM', 'nvidia.com/gpu.count': '8', 'nvidia.com/gpu.memory': '81559' } }];
const TRACE = { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'a.jsonl' } } };

const v1beta2 = (spec: Obj): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns' }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec } });

function reviewBody(route: WebhookRoute, input: { object: Obj; old?: Obj; kindVersion?: string; requestVersion?: string }): string {
  const kind = { group: 'nvidia.com', version: input.kindVersion ?? route.version, kind: 'DynamoGraphDeploymentRequest' };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u', kind, requestKind: { ...kind, version: input.requestVersion ?? kind.version }, operation: input.old === undefined ? 'CREATE' : 'UPDATE', namespace: 'ns', name: 'r', object: input.object, ...(input.old === undefined ? {} : { oldObject: input.old }) },
  });
}

function review(route: WebhookRoute, input: { object: Obj; old?: Obj; kindVersion?: string; requestVersion?: string }): AdmissionResponse {
  const answer = answerAdmissionReview(route, reviewBody(route, input), { lpxEnabled: false }, { nodes: NODES });
  if (answer.status !== 200) throw new Error(answer.message);
  return answer.review.response;
}

const patchOf = (response: AdmissionResponse): unknown => (response.patch === undefined ? undefined : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')));

describe('v1beta2 DGDR webhooks', () => {
  it('a v1beta2 create with hardware omitted gets the discovered hardware as a JSON Patch (reference "Omit hardware to let admission discover and persist")', () => {
    const response = review(MUTATE, { object: v1beta2({ workload: { trace: TRACE } }) });
    expect(patchOf(response)).toEqual([{ op: 'add', path: '/spec/hardware', value: { gpu: { sku: 'h100_sxm', budget: 8, numGpusPerNode: 8 } } }]);
  });

  it('a request written through v1beta1 (an unchanged spec.v1beta2 view, here native) is not defaulted: it is stored as written (reference "Conversion views")', () => {
    expect(review(MUTATE, { object: v1beta2({ workload: { trace: TRACE } }), requestVersion: 'v1beta1' })).toEqual({ uid: 'u', allowed: true });
  });

  it('a native v1beta1 request written through its own version reads here as spec.v1beta1 and is left to the v1beta1 webhooks', () => {
    const view = { ...v1beta2({}), spec: { v1beta1: { model: 'm' } } };
    expect(review(VALIDATE, { object: view, requestVersion: 'v1beta1' })).toEqual({ uid: 'u', allowed: true });
  });

  it('an edited spec.v1beta1 view from a v1beta2 client is denied as a DynamoGraphDeploymentRequest, naming the path', () => {
    const old = { ...v1beta2({}), spec: { v1beta1: { model: 'm' } } };
    const response = review(VALIDATE, { object: { ...old, spec: { v1beta1: { model: 'n' } } }, old });
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe('DynamoGraphDeploymentRequest.nvidia.com "r" is invalid: spec.v1beta1.model: Forbidden: the read-only conversion view spec.v1beta1 may only be written back unchanged; modify the request through nvidia.com/v1beta1');
  });

  it('the v1beta1 webhook leaves a request made in v1beta2 (its spec.v1beta2 view) to the v1beta2 webhooks', () => {
    const view = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns' }, spec: { v1beta2: { model: { name: 'm' } } } };
    expect(review(VALIDATE_V1BETA1, { object: view, requestVersion: 'v1beta2' })).toEqual({ uid: 'u', allowed: true });
    expect(review(VALIDATE_V1BETA1, { object: view, requestVersion: 'v1beta1' }).allowed).toBe(false);
  });

  it('a review of another version than the route names is a bad request', () => {
    const response = review(VALIDATE, { object: v1beta2({}), kindVersion: 'v1beta1' });
    expect(response).toEqual({ uid: 'u', allowed: false, status: { code: 400, reason: 'BadRequest', message: 'this webhook admits nvidia.com/v1beta2, Kind=DynamoGraphDeploymentRequest, not nvidia.com/v1beta1, Kind=DynamoGraphDeploymentRequest' } });
  });
});

describe('hardwareDiscoveryFilter: which v1beta2 reviews read the Nodes and scrape the exporters', () => {
  const hardware = { gpu: { sku: 'h100_sxm', budget: 8, numGpusPerNode: 8 } };
  const rows = [
    { name: 'a create with hardware omitted: discovery, unfiltered', reason: 'reference "Omit hardware to let admission discover and persist sku, budget, and numGpusPerNode"', route: MUTATE, input: { object: v1beta2({}) }, want: { gpuSku: undefined } },
    { name: 'a partial hardware with a sku: discovery filtered by it', reason: 'reference "Any nonempty object ... is partial hardware intent"; upstream GPUDiscoveryCache keyed by the SKU filter', route: MUTATE, input: { object: v1beta2({ hardware: { gpu: { sku: 'b60' } } }) }, want: { gpuSku: 'b60' } },
    { name: 'hardware: {}: nothing read', reason: 'reference "An exactly empty hardware: {} object opts out of all operator cluster and DCGM discovery"', route: MUTATE, input: { object: v1beta2({ hardware: {} }) }, want: undefined },
    { name: 'fully explicit hardware: nothing read', reason: 'reference "Set all three values to bypass discovery with fully explicit hardware"', route: MUTATE, input: { object: v1beta2({ hardware }) }, want: undefined },
    { name: 'an update that leaves the spec unchanged: nothing read', reason: 'defaultV1Beta2Request defaults nothing then (an unchanged request writes back without change)', route: MUTATE, input: { object: v1beta2({}), old: v1beta2({}) }, want: undefined },
    { name: 'a request written through v1beta1: nothing read', reason: 'it is stored as written (reference "Conversion views")', route: MUTATE, input: { object: v1beta2({}), requestVersion: 'v1beta1' }, want: undefined },
    { name: 'the validating webhook: nothing read', reason: 'only defaulting discovers', route: VALIDATE, input: { object: v1beta2({}) }, want: undefined },
  ];
  it.each(rows)('$name', ({ route, input, want }) => {
    expect(hardwareDiscoveryFilter(route, reviewBody(route, input))).toEqual(want);
  });

  it('a body that is not JSON: nothing read (the answer reports it)', () => {
    expect(hardwareDiscoveryFilter(MUTATE, '{')).toBeUndefined();
  });
});

describe('v1beta2 DGDR defaulting with exporters observed', () => {
  it('the DCGM exporter\'s node wins over the GFD labels (upstream enrichHardwareFromDiscovery: DCGM first)', () => {
    const body = Array.from({ length: 4 }, (_, gpu) => `DCGM_FI_DEV_GPU_TEMP{gpu="${gpu}",modelName="NVIDIA L40S",Hostname="l40s-0"} 40\nDCGM_FI_DEV_FB_FREE{gpu="${gpu}",Hostname="l40s-0"} 46068\n`).join('');
    const exporters = { exporterPods: [{ namespace: 'gpu-operator', name: 'dcgm-0', nodeName: 'l40s-0', phase: 'Running', podIp: '10.0.0.1', scrape: { endpoint: 'http://10.0.0.1:9400/metrics', ok: true as const, body } }], isGpuOperatorRunning: false };
    const answer = answerAdmissionReview(MUTATE, reviewBody(MUTATE, { object: v1beta2({ workload: { trace: TRACE } }) }), { lpxEnabled: false }, { nodes: NODES, exporters });
    if (answer.status !== 200) throw new Error(answer.message);
    expect(patchOf(answer.review.response)).toEqual([{ op: 'add', path: '/spec/hardware', value: { gpu: { sku: 'l40s', budget: 4, numGpusPerNode: 4 } } }]);
  });
});
