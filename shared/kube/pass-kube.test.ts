import { describe, expect, it } from 'vitest';
import type { Kube, KubeObject } from './client.js';
import { passKube } from './pass-kube.js';
import { createListSnapshot } from './snapshot.js';


/** A Kube that records each call and answers reads with a fixed object. */
function aRecordingKube(): { kube: Kube; calls: string[] } {
  const calls: string[] = [];
  const stored = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'a', resourceVersion: String(calls.length) } });
  const kube: Kube = {
    fieldManager: 'm',
    get: async (ref) => (calls.push(`get ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`), stored(ref.name)),
    list: async (apiVersion, kind, namespace, options) => (calls.push(`list ${kind} ${namespace ?? '*'} ${options?.labelSelector ?? ''}`), []),
    apply: async (obj) => (calls.push(`apply ${obj.kind} ${obj.metadata.name}`), stored(obj.metadata.name)),
    applyStatus: async (obj) => (calls.push(`applyStatus ${obj.kind} ${obj.metadata.name}`), stored(obj.metadata.name)),
    create: async (obj) => (calls.push(`create ${obj.kind} ${obj.metadata.name}`), stored(obj.metadata.name)),
    replace: async (obj) => (calls.push(`replace ${obj.kind} ${obj.metadata.name}`), stored(obj.metadata.name)),
    delete: async (ref) => void calls.push(`delete ${ref.kind} ${ref.name}`),
    createEvent: async (event) => (calls.push(`event ${event.reason}`), stored('e')),
    scale: async (ref) => (calls.push(`scale ${ref.kind} ${ref.name}`), stored(ref.name)),
  };
  return { kube, calls };
}

describe('passKube: one pass reads each object once and sees its own writes', () => {
  it('answers the reads of unwritten objects from the reader (a resync\'s list snapshot), with no request of its own', async () => {
    const { kube, calls } = aRecordingKube();
    const reader = createListSnapshot(kube);
    const pass = passKube(kube, reader);
    await pass.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'x' });
    await pass.list('v1', 'Service', 'a', { labelSelector: 'app=one' });
    expect(calls).toEqual(['list Service * ']);
  });

  it('without a reader, sends a get once per pass', async () => {
    const { kube, calls } = aRecordingKube();
    const pass = passKube(kube);
    await pass.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'c' });
    await pass.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'c' });
    expect(calls).toEqual(['get ConfigMap a/c']);
  });

  it('a written object is read as the write stored it (an apply\'s answer) or from the API server again (a delete), and lists of its kind in its namespace from the API server', async () => {
    const { kube, calls } = aRecordingKube();
    const pass = passKube(kube, createListSnapshot(kube));
    const applied = await pass.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'a' } });
    expect(await pass.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'x' })).toBe(applied);
    await pass.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'y' });
    await pass.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'y' });
    await pass.list('v1', 'Service', 'a');
    await pass.list('v1', 'Service', 'b');
    expect(calls).toEqual(['apply Service x', 'delete Service y', 'get Service a/y', 'list Service a ', 'list Service * ']);
  });
});
