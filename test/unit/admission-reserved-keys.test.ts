/**
 * One rule for reserved keys (issue 20 item 5): the validating webhook and reconcile agree on
 * every key JavaScript gives a meaning to. A `__proto__` key is refused by both, with
 * parseDgd's issue ("a name that JavaScript takes as an object prototype cannot be a key
 * here"); `constructor`, `prototype` and the other Object.prototype names are ordinary keys to
 * both, and reconcile renders them. Tested both ways: admission denies whatever reconcile
 * refuses, and reconcile accepts (and renders) whatever admission allows.
 * The objects come from JSON text, as the API server sends them: JSON.parse keeps `__proto__`
 * as an own key.
 */
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview, findWebhookRoute, type WebhookRoute } from '../../functions/admission/index.js';
import { DEFAULT_RENDER_CONFIG, decideDgd, defaultDgd } from '../../shared/domain/index.js';
import { aComponent, aDgd } from '../support/builders.js';

const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__'] as const;

/** Where a user chooses map keys in a DGD (the worker is component 1). */
const POSITIONS = [
  ['metadata', 'labels'],
  ['metadata', 'annotations'],
  ['spec', 'labels'],
  ['spec', 'annotations'],
  ['spec', 'components', 1, 'podTemplate', 'metadata', 'labels'],
  ['spec', 'components', 1, 'podTemplate', 'metadata', 'annotations'],
  ['spec', 'components', 1, 'podTemplate', 'spec', 'nodeSelector'],
  ['spec', 'components', 1, 'podTemplate', 'spec', 'containers', 0, 'resources', 'limits'],
] as const;

const VALIDATE = findWebhookRoute('/validate/nvidia.com/v1beta1/dynamographdeployments') as WebhookRoute;
const NOW = new Date('2026-12-01T00:00:00Z');
const MARK = '"@@reserved@@":"x"';

/** The review text of a defaulted DGD with `key: "x"` added to the map at `position` (created if absent). */
function reviewText(key: string, position: readonly (string | number)[]): string {
  const dgd = JSON.parse(JSON.stringify(defaultDgd(aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { podTemplate: { metadata: { labels: { team: 'a' } }, spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', resources: { limits: { cpu: '1' } } }] } } })] } })))) as Record<string, unknown>;
  let node = dgd as Record<string | number, unknown>;
  for (const step of position.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = position[position.length - 1] as string;
  node[last] = { ...(node[last] as object | undefined), '@@reserved@@': 'x' };
  const text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' }, operation: 'CREATE', namespace: 'inference', name: 'my-graph', object: dgd },
  });
  // Written into the text, so JSON.parse makes it an own key whatever its name.
  return text.replace(MARK, `${JSON.stringify(key)}:"x"`);
}

function admissionVerdict(text: string): { allowed: boolean; message: string } {
  const answer = answerAdmissionReview(VALIDATE, text, { lpxEnabled: false });
  if (answer.status !== 200) throw new Error(answer.message);
  return { allowed: answer.review.response.allowed, message: answer.review.response.status?.message ?? '' };
}

function reconcileVerdict(text: string): { refused: boolean; message: string; rendered: string } {
  const parent = (JSON.parse(text) as { request: { object: Record<string, unknown> } }).request.object;
  const desired = decideDgd({ parent, children: { PodCliqueSet: new Map(), Service: new Map(), PodClique: new Map(), PodCliqueScalingGroup: new Map() } }, DEFAULT_RENDER_CONFIG, NOW);
  return { refused: desired.permanentFailure?.reason === 'InvalidSpec', message: desired.permanentFailure?.message ?? '', rendered: JSON.stringify(desired.apply) };
}

const rows = KEYS.flatMap((key) => POSITIONS.map((position) => ({ name: `${key} at ${position.join('.')}`, key, position })));

describe('one rule for reserved keys: the validating webhook and reconcile agree (issue 20 item 5)', () => {
  it.each(rows)('$name: admission denies what reconcile refuses, and reconcile accepts what admission allows', ({ key, position }) => {
    const text = reviewText(key, position);
    expect(text).toContain(`${JSON.stringify(key)}:"x"`);
    const admission = admissionVerdict(text);
    const reconcile = reconcileVerdict(text);
    expect(admission.allowed).toBe(!reconcile.refused);
    if (key === '__proto__') {
      // parseDgd's rule, "a name that JavaScript takes as an object prototype cannot be a key here".
      expect(admission.allowed).toBe(false);
      expect(admission.message).toContain('Invalid value: "__proto__": a name that JavaScript takes as an object prototype cannot be a key here');
      expect(reconcile.message).toContain('Invalid value: "__proto__": a name that JavaScript takes as an object prototype cannot be a key here');
    } else {
      expect(admission.allowed).toBe(true);
    }
  });

  it.each(KEYS.filter((key) => key !== '__proto__').map((key) => ({ name: key, key })))('a pod template label $name reaches the rendered pod template as written (an ordinary key)', ({ key }) => {
    const reconcile = reconcileVerdict(reviewText(key, ['spec', 'components', 1, 'podTemplate', 'metadata', 'labels']));
    expect(reconcile.refused).toBe(false);
    expect(reconcile.rendered).toContain(`${JSON.stringify(key)}:"x"`);
  });
});
