/**
 * Refuse at admission what cannot be stored (issue 20 item 6): a 1.4 MB DGD whose rendered
 * PodCliqueSet would be 2.1 MB is denied by the validating webhook with the size and the limit,
 * etcd's default --max-request-bytes of 1.5 MiB ("By default, the maximum size of any request is
 * 1.5 MiB", etcd "System limits"); before, it was admitted and the API server refused the
 * PodCliqueSet at every reconcile. The cheap bound that lets ordinary DGDs skip the render is
 * checked against real renders.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview, findWebhookRoute, type WebhookRoute } from '../../functions/admission/index.js';
import { parseDgd, type Dgd } from '../../shared/api/index.js';
import { ETCD_MAX_REQUEST_BYTES, defaultDgd, jsonBytesLowerBound, renderDgd, renderedBytesBound, storedBytesEstimate, validateDgd } from '../../shared/domain/index.js';
import { twelveComponentDgd } from '../../bench/admission.js';

const VALIDATE = findWebhookRoute('/validate/nvidia.com/v1beta1/dynamographdeployments') as WebhookRoute;

function component(name: string, type: string, annotationBytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    type,
    replicas: 1,
    podTemplate: {
      metadata: { annotations: { 'example.com/blob': 'x'.repeat(annotationBytes) } },
      spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] },
    },
    ...extra,
  };
}

/** A DGD whose pod templates carry `annotationBytes` each; the decode one is multinode (its template is rendered into two cliques). */
function bigDgd(annotationBytes: number, decodeAnnotationBytes = annotationBytes): Record<string, unknown> {
  return defaultDgd({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'big', namespace: 'inference' },
    spec: { backendFramework: 'vllm', components: [component('Frontend', 'frontend', 0), component('prefill', 'prefill', annotationBytes), component('decode', 'decode', decodeAnnotationBytes, { multinode: { nodeCount: 2 } })] },
  }) as Record<string, unknown>;
}

function review(object: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' }, operation: 'CREATE', namespace: 'inference', name: 'big', object },
  });
}

function pcsBytes(object: unknown): number {
  const parsed = parseDgd(object);
  if (!parsed.ok) throw new Error('fixture does not parse');
  const rendered = renderDgd(parsed.dgd);
  if (!rendered.ok) throw new Error('fixture does not render');
  return Buffer.byteLength(JSON.stringify(rendered.objects.find((o) => o.kind === 'PodCliqueSet')));
}

function storedBytesOf(object: unknown): number {
  const parsed = parseDgd(object);
  if (!parsed.ok) throw new Error('fixture does not parse');
  const rendered = renderDgd(parsed.dgd);
  if (!rendered.ok) throw new Error('fixture does not render');
  return storedBytesEstimate(rendered.objects.find((o) => o.kind === 'PodCliqueSet'));
}

describe('refuse at admission what cannot be stored (issue 20 item 6)', () => {
  it('the limit is etcd\'s default --max-request-bytes, 1.5 MiB', () => {
    expect(ETCD_MAX_REQUEST_BYTES).toBe(1_572_864);
  });

  it('denies a 1.4 MB DGD whose PodCliqueSet would be 2.1 MB, naming the object, its size and the limit', () => {
    const dgd = bigDgd(700_000);
    const dgdBytes = Buffer.byteLength(JSON.stringify(dgd));
    const bytes = pcsBytes(dgd);
    expect(dgdBytes).toBeGreaterThan(1_390_000);
    expect(dgdBytes).toBeLessThan(1_420_000);
    expect(bytes).toBeGreaterThan(2_090_000);
    expect(bytes).toBeLessThan(2_140_000);
    const answer = answerAdmissionReview(VALIDATE, review(dgd), { lpxEnabled: false });
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.allowed).toBe(false);
    expect(answer.review.response.status?.message).toBe(
      `DynamoGraphDeployment.nvidia.com "big" is invalid: spec: Invalid value: "PodCliqueSet/big": the rendered PodCliqueSet would be ${bytes} bytes of JSON, about ${storedBytesOf(dgd)} bytes as stored with the managedFields the API server adds, more than the 1572864 bytes one stored object may have (etcd --max-request-bytes, default 1.5 MiB); the API server would refuse it: make the pod templates or the spec-level env, labels and annotations smaller, or split the graph`,
    );
  });

  it('allows a 1.4 MB DGD whose PodCliqueSet stays under the limit (size alone is not the rule)', () => {
    const dgd = bigDgd(1_400_000, 0);
    expect(Buffer.byteLength(JSON.stringify(dgd))).toBeGreaterThan(1_390_000);
    expect(pcsBytes(dgd)).toBeLessThan(ETCD_MAX_REQUEST_BYTES);
    const answer = answerAdmissionReview(VALIDATE, review(dgd), { lpxEnabled: false });
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.allowed).toBe(true);
  });

  it('the 12-component bench DGD skips the render: its bound, from the review body length, is under the limit', () => {
    const dgd = defaultDgd(twelveComponentDgd());
    const parsed = parseDgd(dgd);
    if (!parsed.ok) throw new Error('bench DGD does not parse');
    expect(renderedBytesBound(parsed.dgd, Buffer.byteLength(review(dgd)))).toBeLessThanOrEqual(ETCD_MAX_REQUEST_BYTES);
    expect(validateDgd(dgd, undefined, { lpxEnabled: false }).issues).toEqual([]);
  });

  it('the 12-component bench UPDATE review skips the render too: body bytes less the stored object\'s lower bound', () => {
    const object = defaultDgd(twelveComponentDgd(6));
    const stored = defaultDgd(twelveComponentDgd());
    const body = JSON.stringify({ request: { object, oldObject: stored } });
    const parsed = parseDgd(object);
    if (!parsed.ok) throw new Error('bench DGD does not parse');
    expect(jsonBytesLowerBound(stored)).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(stored)));
    expect(renderedBytesBound(parsed.dgd, Buffer.byteLength(body) - jsonBytesLowerBound(stored))).toBeLessThanOrEqual(ETCD_MAX_REQUEST_BYTES);
  });

  it('property: jsonBytesLowerBound never exceeds the bytes of any JSON text of the value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonBytesLowerBound(value)).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('property: no rendered object, as stored (JSON, managedFields, metadata), is larger than renderedBytesBound (many components, multinode, roles-free templates, containers, spec-level env, labels, annotations)', () => {
    const text = (max: number) => fc.string({ maxLength: max, unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '漢', '😀') });
    const env = fc.array(fc.record({ name: fc.constantFrom('A', 'B_LONGER_NAME', 'C'), value: text(400) }), { maxLength: 6 });
    const componentArb = fc.record({
      type: fc.constantFrom('frontend', 'worker', 'prefill', 'decode', 'planner'),
      isMultinode: fc.boolean(),
      containers: fc.integer({ min: 1, max: 4 }),
      env,
      // Structure-heavy maps too: the managedFields the API server adds grow with keys, not values.
      labels: fc.oneof(fc.dictionary(fc.constantFrom('a', 'b', 'example.com/c'), text(200)), fc.dictionary(fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'b', 'c', 'd', 'e') }), fc.constantFrom('', 'x', 'yz'), { maxKeys: 400 })),
      annotations: fc.oneof(fc.dictionary(fc.constantFrom('a', 'b'), text(2000)), fc.dictionary(fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'b', 'c', 'd', 'e') }), fc.constantFrom('', 'x'), { maxKeys: 400 })),
      args: fc.array(text(300), { maxLength: 4 }),
    });
    fc.assert(
      fc.property(fc.array(componentArb, { minLength: 1, maxLength: 8 }), env, fc.dictionary(fc.constantFrom('team', 'x'), text(100)), fc.dictionary(fc.constantFrom('note'), text(3000)), fc.string({ minLength: 1, maxLength: 40, unit: fc.constantFrom('a', 'b', '1', '-') }).map((s) => `g${s}z`), (components, specEnv, labels, annotations, name) => {
        const object = {
          apiVersion: 'nvidia.com/v1beta1',
          kind: 'DynamoGraphDeployment',
          metadata: { name, namespace: 'ns', uid: 'u' },
          spec: {
            backendFramework: 'vllm',
            env: specEnv,
            labels,
            annotations,
            components: components.map((c, i) => ({
              name: `c${i}`,
              type: c.type === 'frontend' && i > 0 ? 'worker' : c.type,
              replicas: 1,
              ...(c.isMultinode ? { multinode: { nodeCount: 2 } } : {}),
              podTemplate: {
                metadata: { labels: c.labels, annotations: c.annotations },
                spec: { containers: Array.from({ length: c.containers }, (_, j) => ({ name: j === 0 ? 'main' : `side${j}`, image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', args: c.args, env: c.env })) },
              },
            })),
          },
        };
        const parsed = parseDgd(JSON.parse(JSON.stringify(defaultDgd(object))));
        if (!parsed.ok) return;
        const rendered = renderDgd(parsed.dgd as Dgd);
        if (!rendered.ok) return;
        const bound = renderedBytesBound(parsed.dgd, Buffer.byteLength(JSON.stringify(parsed.dgd)));
        // The bound covers what is stored (JSON, managedFields, metadata), so skipping the render under it is sound.
        for (const rendered1 of rendered.objects) expect(storedBytesEstimate(rendered1)).toBeLessThanOrEqual(bound);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
