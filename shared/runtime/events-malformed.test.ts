/**
 * Events never 500 on bad input (issue 20 item 4): a Resource-mode object whose metadata is not
 * shaped as the API server stores ObjectMeta (an `ownerReferences` that is an object or holds
 * `null`, a label that is a number, ...) is a 400 at decode time, never an exception in a
 * handler; and whatever decodes, the child routes' owner lookups (childOwner,
 * lpxRuntimeConfigMapOwner, controllerRefOf) never throw on it.
 */
import fc from 'fast-check';
import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { childOwner, controllerRefOf, lpxRuntimeConfigMapOwner, type OwnedObject } from '../domain/index.js';
import { decodeEvent, type HttpMessage } from './events.js';
import { anApiServerEvent } from './test-support.js';

const CHILD_KEY = { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', namespace: 'team-a', name: 'llama' };

function childEventWithMetadata(metadata: unknown): HttpMessage {
  const message = HTTP.binary(anApiServerEvent({ key: CHILD_KEY, data: { apiVersion: CHILD_KEY.apiVersion, kind: CHILD_KEY.kind, metadata } }));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) if (typeof value === 'string') headers[name] = value;
  return { headers, body: Buffer.from(String(message.body ?? '')) };
}

const DGD_OWNER = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'llama', uid: 'u-1', controller: true };

describe('malformed metadata in a Resource-mode event is a 400, not a handler exception', () => {
  it.each([
    { name: 'ownerReferences is an object', metadata: { name: 'llama', ownerReferences: DGD_OWNER }, reason: 'apiserver event object metadata.ownerReferences is not a list' },
    { name: 'ownerReferences holds null', metadata: { name: 'llama', ownerReferences: [null] }, reason: 'apiserver event object metadata.ownerReferences[0] is not an object' },
    { name: 'an owner reference without a uid', metadata: { name: 'llama', ownerReferences: [{ ...DGD_OWNER, uid: undefined }] }, reason: 'apiserver event object metadata.ownerReferences[0].uid is not a string' },
    { name: 'controller is a string', metadata: { name: 'llama', ownerReferences: [{ ...DGD_OWNER, controller: 'true' }] }, reason: 'apiserver event object metadata.ownerReferences[0].controller is not a boolean' },
    { name: 'metadata is a list', metadata: ['llama'], reason: 'apiserver event object metadata is not an object' },
    { name: 'namespace is a number', metadata: { name: 'llama', namespace: 7 }, reason: 'apiserver event object metadata.namespace is not a string' },
    { name: 'a label value is a number', metadata: { name: 'llama', labels: { tier: 1 } }, reason: 'apiserver event object metadata.labels is not a map of strings' },
    { name: 'finalizers holds an object', metadata: { name: 'llama', finalizers: [{}] }, reason: 'apiserver event object metadata.finalizers is not a list of strings' },
  ])('$name: rejected with "$reason"', ({ metadata, reason }) => {
    expect(decodeEvent(childEventWithMetadata(metadata))).toEqual({ ok: false, reason });
  });

  it('a well-formed child (controller reference to a DGD) still decodes and names its DGD', () => {
    const decoded = decodeEvent(childEventWithMetadata({ name: 'llama', namespace: 'team-a', ownerReferences: [DGD_OWNER] }));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok || decoded.decoded.category !== 'apiserver') throw new Error('not decoded');
    expect(childOwner(decoded.decoded.event.object as OwnedObject)).toEqual({ kind: 'DynamoGraphDeployment', apiVersion: 'nvidia.com/v1beta1', namespace: 'team-a', name: 'llama' });
  });

  it('fuzz: any JSON metadata either decodes to an object the owner lookups read without throwing, or is refused (fast-check, fixed seed)', () => {
    const ownerReference = fc.record(
      { apiVersion: fc.oneof(fc.constant('nvidia.com/v1beta1'), fc.constant('grove.io/v1alpha1'), fc.jsonValue()), kind: fc.oneof(fc.constant('DynamoGraphDeployment'), fc.constant('PodCliqueSet'), fc.constant('LPXGraphDeployment'), fc.jsonValue()), name: fc.jsonValue(), uid: fc.jsonValue(), controller: fc.jsonValue() },
      { requiredKeys: [] },
    );
    const metadata = fc.oneof(
      fc.jsonValue(),
      fc.record({ name: fc.jsonValue(), namespace: fc.jsonValue(), labels: fc.jsonValue(), ownerReferences: fc.oneof(fc.jsonValue(), fc.array(fc.oneof(ownerReference, fc.jsonValue()))) }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(metadata, (value) => {
        const decoded = decodeEvent(childEventWithMetadata(value));
        if (!decoded.ok || decoded.decoded.category !== 'apiserver') return;
        const object = decoded.decoded.event.object as OwnedObject;
        childOwner(object);
        lpxRuntimeConfigMapOwner(object);
        controllerRefOf(object);
      }),
      { seed: 20_261_201, numRuns: 300 },
    );
  });

  it('the owner lookups alone never throw on objects that bypass decoding (a Reference-mode read, a replayed capture)', () => {
    for (const ownerReferences of [{}, [null], [1, 'x'], null, 'owner']) {
      const object = { metadata: { name: 'llama', ownerReferences } } as unknown as OwnedObject;
      expect(controllerRefOf(object)).toBeUndefined();
      expect(childOwner(object)).toBeUndefined();
    }
  });
});
