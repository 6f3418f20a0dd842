import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { decodeEvent, deriveObjectKey, parseApiServerSubject, PING_EVENT_TYPE, resyncEventFor, RESYNC_EVENT_TYPE, type HttpMessage } from './events.js';
import { DGD_KEY, aDgdObject, aResyncEvent, anApiServerEvent } from './test-support.js';

function messageOf(encoding: 'binary' | 'structured', event = anApiServerEvent()): HttpMessage {
  const message = encoding === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) if (typeof value === 'string') headers[name] = value;
  return { headers, body: Buffer.from(String(message.body ?? '')) };
}

describe('parseApiServerSubject', () => {
  it.each([
    {
      name: 'namespaced custom resource',
      subject: '/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/llama',
      want: { apiVersion: 'nvidia.com/v1beta1', namespace: 'team-a', name: 'llama' },
    },
    {
      name: 'core kind, which ApiServerSource also writes under /apis',
      subject: '/apis/v1/namespaces/team-a/services/llama-frontend',
      want: { apiVersion: 'v1', namespace: 'team-a', name: 'llama-frontend' },
    },
    {
      name: 'cluster-scoped: empty namespace segment',
      subject: '/apis/v1/namespaces//nodes/node-1',
      want: { apiVersion: 'v1', namespace: '', name: 'node-1' },
    },
    { name: 'not a selfLink', subject: 'dgd/llama', want: undefined },
    { name: 'absent', subject: undefined, want: undefined },
  ])('$name', ({ subject, want }) => {
    expect(parseApiServerSubject(subject)).toEqual(want);
  });
});

describe('deriveObjectKey', () => {
  const reference = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'llama', namespace: 'team-a' };
  it.each([
    {
      name: 'all from extensions',
      extensions: { kind: 'DynamoGraphDeployment', apiversion: 'nvidia.com/v1beta1', name: 'llama', namespace: 'team-a' },
      data: {},
      subject: undefined,
      want: { ok: true, key: DGD_KEY },
    },
    {
      name: 'Resource-mode data: name and namespace under metadata',
      extensions: {},
      data: aDgdObject(),
      subject: undefined,
      want: { ok: true, key: DGD_KEY },
    },
    { name: 'Reference-mode data', extensions: {}, data: reference, subject: undefined, want: { ok: true, key: DGD_KEY } },
    {
      name: 'an empty namespace extension is a cluster-scoped object, not a missing value',
      extensions: { namespace: '' },
      data: reference,
      subject: undefined,
      want: { ok: true, key: { ...DGD_KEY, namespace: '' } },
    },
    {
      name: 'subject as the last resort for name and namespace',
      extensions: { kind: 'DynamoGraphDeployment' },
      data: {},
      subject: '/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/llama',
      want: { ok: true, key: DGD_KEY },
    },
    {
      name: 'no kind: the subject plural is a guess, never a kind',
      extensions: {},
      data: {},
      subject: '/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/llama',
      want: { ok: false, reason: 'apiserver event has no kind' },
    },
    {
      name: 'no name',
      extensions: { kind: 'DynamoGraphDeployment', apiversion: 'nvidia.com/v1beta1' },
      data: {},
      subject: undefined,
      want: { ok: false, reason: 'apiserver event has no name' },
    },
    {
      name: 'no apiVersion',
      extensions: { kind: 'DynamoGraphDeployment', name: 'llama' },
      data: {},
      subject: undefined,
      want: { ok: false, reason: 'apiserver event has no apiversion' },
    },
  ])('$name', ({ extensions, data, subject, want }) => {
    expect(deriveObjectKey(extensions, data, subject)).toEqual(want);
  });
});

describe('decodeEvent', () => {
  it.each([
    { name: 'binary', encoding: 'binary' },
    { name: 'structured', encoding: 'structured' },
  ] as const)('decodes a Resource-mode update in $name mode', ({ encoding }) => {
    expect(decodeEvent(messageOf(encoding))).toEqual({
      ok: true,
      decoded: {
        category: 'apiserver',
        mode: 'Resource',
        event: {
          id: 'e7d0b8a4-0000-4000-8000-000000000001',
          type: 'dev.knative.apiserver.resource.update',
          source: 'https://10.96.0.1:443',
          key: DGD_KEY,
          object: aDgdObject(),
        },
      },
    });
  });

  it('accepts JSON content types with parameters in both modes', () => {
    const binary = messageOf('binary');
    const structured = messageOf('structured');
    const withCharset = (message: HttpMessage, contentType: string): HttpMessage => ({
      ...message,
      headers: { ...message.headers, 'content-type': contentType },
    });
    expect(decodeEvent(withCharset(binary, 'application/json; charset=utf-8')).ok).toBe(true);
    expect(decodeEvent(withCharset(structured, 'application/cloudevents+json; charset=UTF-8')).ok).toBe(true);
  });

  it('decodes a resync request with its optional kind', () => {
    expect(decodeEvent(messageOf('binary', aResyncEvent({ kind: 'DynamoGraphDeployment' })))).toEqual({
      ok: true,
      decoded: {
        category: 'resync',
        attributes: { id: 'resync-1', type: RESYNC_EVENT_TYPE, source: '/apis/v1/namespaces/dynamo/pingsources/resync' },
        kind: 'DynamoGraphDeployment',
        apiVersion: undefined,
      },
    });
  });

  it("decodes a Knative PingSource event (type dev.knative.sources.ping, kind from ceOverrides) as a resync request", () => {
    const ping = aResyncEvent({ kind: 'DynamoGraphDeployment' }).cloneWith({ type: PING_EVENT_TYPE });
    const decoded = decodeEvent(messageOf('binary', ping));
    expect(decoded.ok && decoded.decoded.category === 'resync' ? decoded.decoded.kind : undefined).toBe('DynamoGraphDeployment');
  });

  it('builds the Reference-mode event of one resync key', () => {
    const attributes = { id: 'resync-1', type: RESYNC_EVENT_TYPE, source: '/ping' };
    expect(resyncEventFor(attributes, DGD_KEY)).toEqual({
      id: 'resync-1',
      type: RESYNC_EVENT_TYPE,
      source: '/ping',
      key: DGD_KEY,
      object: undefined,
    });
  });
});
