/**
 * The v1beta2 webhooks through `answerAdmissionReview`, as the API server calls them: which
 * reviews are defaulted, which are left to the v1beta1 webhooks (by `requestKind`), the
 * envelope checks, and the denial's kind. The rules themselves are tabled in
 * shared/domain/v1beta2/request-admission.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview, type AdmissionResponse, type WebhookRoute } from './index.js';

type Obj = Record<string, unknown>;

const MUTATE: WebhookRoute = { kind: 'mutate', version: 'v1beta2', resource: 'dynamographdeploymentrequests' };
const VALIDATE: WebhookRoute = { kind: 'validate', version: 'v1beta2', resource: 'dynamographdeploymentrequests' };
const VALIDATE_V1BETA1: WebhookRoute = { kind: 'validate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' };
const NODES = [{ name: 'gpu-a', labels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3-SXM', 'nvidia.com/gpu.count': '8', 'nvidia.com/gpu.memory': '81559' } }];
const TRACE = { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'a.jsonl' } } };

const v1beta2 = (spec: Obj): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns' }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec } });

function review(route: WebhookRoute, input: { object: Obj; old?: Obj; kindVersion?: string; requestVersion?: string }): AdmissionResponse {
  const kind = { group: 'nvidia.com', version: input.kindVersion ?? route.version, kind: 'DynamoGraphDeploymentRequest' };
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u', kind, requestKind: { ...kind, version: input.requestVersion ?? kind.version }, operation: input.old === undefined ? 'CREATE' : 'UPDATE', namespace: 'ns', name: 'r', object: input.object, ...(input.old === undefined ? {} : { oldObject: input.old }) },
  });
  const answer = answerAdmissionReview(route, body, { lpxEnabled: false }, { nodes: NODES });
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
