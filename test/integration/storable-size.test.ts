/**
 * Refuse at admission what cannot be stored (issue 20 item 6), at the boundary, against the real
 * kube-apiserver and etcd (default --max-request-bytes, 1.5 MiB). What etcd judges is the stored
 * object: its JSON plus the managedFields and metadata the API server adds. A PodCliqueSet 1 KiB
 * of JSON under the limit was admitted before and then refused by etcd at every reconcile (a 500,
 * retried); now its DGD is denied, and the largest DGD admission allows is stored.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { answerAdmissionReview, findWebhookRoute, type WebhookRoute } from '../../functions/admission/index.js';
import { FIELD_MANAGER_RECONCILE, parseDgd } from '../../shared/api/index.js';
import { ETCD_MAX_REQUEST_BYTES, defaultDgd, renderDgd, storedBytesEstimate } from '../../shared/domain/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

const VALIDATE = findWebhookRoute('/validate/nvidia.com/v1beta1/dynamographdeployments') as WebhookRoute;
const kubeConfig = testKubeConfig();
const reconcileKube: Kube = createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE });
let namespace = '';

beforeAll(async () => {
  namespace = await createTestNamespace(kubeConfig, 'storable');
});

function component(name: string, type: string, annotationBytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    type,
    replicas: 1,
    podTemplate: { metadata: { annotations: { 'example.com/blob': 'x'.repeat(annotationBytes) } }, spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } },
    ...extra,
  };
}

function dgdWith(name: string, annotationBytes: number): Record<string, unknown> {
  return defaultDgd({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name, namespace, uid: '6f1d2c3b-0000-4000-8000-000000000001' },
    spec: { backendFramework: 'vllm', components: [component('Frontend', 'frontend', 0), component('prefill', 'prefill', annotationBytes), component('decode', 'decode', annotationBytes, { multinode: { nodeCount: 2 } })] },
  }) as Record<string, unknown>;
}

function renderedPcs(object: unknown): Record<string, unknown> {
  const parsed = parseDgd(object);
  if (!parsed.ok) throw new Error('fixture does not parse');
  const rendered = renderDgd(parsed.dgd);
  if (!rendered.ok) throw new Error('fixture does not render');
  const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet');
  if (pcs === undefined) throw new Error('no PodCliqueSet');
  return pcs as unknown as Record<string, unknown>;
}

/** The DGD with the largest annotation whose rendered PodCliqueSet's `measure` stays at or under `target` (binary search). */
function largestDgdUnder(name: string, target: number, measure: (pcs: Record<string, unknown>) => number): { dgd: Record<string, unknown>; pcs: Record<string, unknown>; measured: number } {
  let low = 1000;
  let high = 1_200_000;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (measure(renderedPcs(dgdWith(name, mid))) <= target) low = mid;
    else high = mid;
  }
  const dgd = dgdWith(name, low);
  const pcs = renderedPcs(dgd);
  return { dgd, pcs, measured: measure(pcs) };
}

const jsonBytes = (pcs: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(pcs));

function admit(dgd: unknown): { allowed: boolean; message: string } {
  const text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' }, operation: 'CREATE', namespace, name: 'x', object: dgd },
  });
  const answer = answerAdmissionReview(VALIDATE, text, { lpxEnabled: false });
  if (answer.status !== 200) throw new Error(answer.message);
  return { allowed: answer.review.response.allowed, message: answer.review.response.status?.message ?? '' };
}

describe('"Refuse at admission what cannot be stored: a DGD whose rendered children would exceed the API server\'s request size is denied at admission with the size and the limit" (issue 20 item 6), at the boundary on a real API server', () => {
  it('a PodCliqueSet of 1 KiB less JSON than etcd\'s limit cannot be stored (the managedFields the API server adds go over it), and its DGD is denied at admission', async () => {
    const { dgd, pcs, measured } = largestDgdUnder('json-under', ETCD_MAX_REQUEST_BYTES - 1024, jsonBytes);
    expect(measured).toBeGreaterThan(ETCD_MAX_REQUEST_BYTES - 1024 - 4);
    await expect(reconcileKube.apply(pcs as never, { force: true })).rejects.toThrow(/etcdserver: request is too large/);
    const verdict = admit(dgd);
    expect(verdict.allowed).toBe(false);
    expect(verdict.message).toContain(`the rendered PodCliqueSet would be ${measured} bytes of JSON, about ${storedBytesEstimate(pcs)} bytes as stored with the managedFields the API server adds, more than the ${ETCD_MAX_REQUEST_BYTES} bytes one stored object may have`);
  }, 120_000);

  it('the largest DGD admission allows (its PodCliqueSet\'s stored estimate just under the limit) is stored by reconcile\'s server-side apply', async () => {
    const { dgd, pcs, measured } = largestDgdUnder('largest-admitted', ETCD_MAX_REQUEST_BYTES, storedBytesEstimate);
    expect(measured).toBeGreaterThan(ETCD_MAX_REQUEST_BYTES - 16);
    expect(admit(dgd).allowed).toBe(true);
    const stored = await reconcileKube.apply(pcs as never, { force: true });
    expect(stored.metadata.name).toBe('largest-admitted');
  }, 120_000);

  it('one annotation byte more and admission denies it', () => {
    const { dgd } = largestDgdUnder('one-more', ETCD_MAX_REQUEST_BYTES, storedBytesEstimate);
    const components = ((dgd['spec'] as Record<string, unknown>)['components'] as Record<string, unknown>[]).map((c) => structuredClone(c));
    const annotations = ((components[1]?.['podTemplate'] as Record<string, unknown>)['metadata'] as Record<string, Record<string, string>>)['annotations'] as Record<string, string>;
    annotations['example.com/blob'] += 'x';
    expect(admit({ ...dgd, spec: { ...(dgd['spec'] as object), components } }).allowed).toBe(false);
  }, 120_000);
});
