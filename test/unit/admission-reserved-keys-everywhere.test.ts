/**
 * One rule for reserved keys (issue 20 item 5), at every object position of a rich DGD rather
 * than the eight user maps of admission-reserved-keys.test.ts: inside pod specs (affinity,
 * resources.requests, securityContext, volumes), a container, a providerOverride value merged
 * into the PodCliqueSet, the component itself, and the DGD root. At each position the key is
 * written into the review's JSON text (JSON.parse keeps `__proto__` as an own key, as the API
 * server sends it), and the validating webhook must allow exactly what reconcile accepts.
 */
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview, findWebhookRoute, type WebhookRoute } from '../../functions/admission/index.js';
import { DEFAULT_RENDER_CONFIG, decideDgd, defaultDgd } from '../../shared/domain/index.js';
import { aComponent, aDgd } from '../support/builders.js';

const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'] as const;
const VALIDATE = findWebhookRoute('/validate/nvidia.com/v1beta1/dynamographdeployments') as WebhookRoute;
const NOW = new Date('2026-12-01T00:00:00Z');
const MARK = '"@@reserved@@":"x"';

type Json = Record<string, unknown>;

/** A defaulted DGD with many nested objects a user writes. */
function richDgd(): Json {
  const worker = aComponent('worker', 'worker', {
    podTemplate: {
      metadata: { labels: { team: 'a' }, annotations: { note: 'n' } },
      spec: {
        nodeSelector: { pool: 'gpu' },
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['gpu'] }] }] } } },
        securityContext: { runAsNonRoot: true },
        volumes: [{ name: 'cache', emptyDir: { sizeLimit: '1Gi' } }],
        containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', resources: { limits: { cpu: '1' }, requests: { cpu: '1' } }, env: [{ name: 'A', value: 'b' }], securityContext: { allowPrivilegeEscalation: false } }],
      },
    },
    providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { spec: { minAvailable: 1 } } },
  } as never);
  return JSON.parse(JSON.stringify(defaultDgd(aDgd({ spec: { components: [aComponent('frontend', 'frontend'), worker] } })))) as Json;
}

/** Every path to an object (not a list) in `value`, the root included. */
function objectPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => objectPaths(item, [...path, i]));
  if (typeof value !== 'object' || value === null) return [];
  return [path, ...Object.entries(value).flatMap(([key, child]) => objectPaths(child, [...path, key]))];
}

function reviewText(key: string, position: readonly (string | number)[]): string {
  const dgd = richDgd();
  let node = dgd as Record<string | number, unknown>;
  for (const step of position) node = node[step] as Record<string | number, unknown>;
  node['@@reserved@@'] = 'x';
  const text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' }, operation: 'CREATE', namespace: 'inference', name: 'my-graph', object: dgd },
  });
  return text.replace(MARK, `${JSON.stringify(key)}:"x"`);
}

const positions = objectPaths(richDgd()).filter((p) => p.length > 0);
const rows = KEYS.flatMap((key) => positions.map((position) => ({ name: `${key} at ${position.join('.')}`, key, position })));

/** Both verdicts for a review: admission's allowed, and whether reconcile accepts (renders) the DGD. */
function verdicts(text: string): { admission: boolean; reconcile: boolean } {
  const answer = answerAdmissionReview(VALIDATE, text, { lpxEnabled: false });
  if (answer.status !== 200) throw new Error(answer.message);
  const parent = (JSON.parse(text) as { request: { object: Json } }).request.object;
  const desired = decideDgd({ parent, children: { PodCliqueSet: new Map(), Service: new Map(), PodClique: new Map(), PodCliqueScalingGroup: new Map() } }, DEFAULT_RENDER_CONFIG, NOW);
  return { admission: answer.review.response.allowed, reconcile: desired.permanentFailure === undefined };
}

describe('one rule for reserved keys at every object position (issue 20 item 5: "the validating webhook\'s fast path and the reconcile agree on every key")', () => {
  it('covers the nested positions (pod spec, affinity, resources, volumes, container, providerOverride value, component, root)', () => {
    expect(positions.length).toBeGreaterThan(25);
  });

  it.each(rows)('$name: __proto__ is refused by both; any other name gets the verdicts an ordinary key gets there, from both', ({ key, position }) => {
    const text = reviewText(key, position);
    expect(text).toContain(`${JSON.stringify(key)}:"x"`);
    const got = verdicts(text);
    // An ordinary key at the same position: some positions refuse any unknown key (admission's
    // providerOverride rules), and that is not a reserved-key rule.
    const ordinary = verdicts(reviewText('ordinary-key', position));
    expect(got).toEqual(key === '__proto__' ? { admission: false, reconcile: false } : ordinary);
    // Nothing reaches Object.prototype, whatever the path.
    expect(({} as Json)['x']).toBeUndefined();
  });

  it('an ordinary key where admission allows it is accepted by reconcile too (the baseline agrees)', () => {
    for (const position of positions) {
      const ordinary = verdicts(reviewText('ordinary-key', position));
      if (ordinary.admission) expect({ position: position.join('.'), reconcile: ordinary.reconcile }).toEqual({ position: position.join('.'), reconcile: true });
    }
  });
});
