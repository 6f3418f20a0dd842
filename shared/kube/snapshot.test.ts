import { describe, expect, it } from 'vitest';
import type { Kube, KubeObject } from './client.js';
import { snapshotKube } from './snapshot.js';

const svc = (namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, labels } });

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

describe('snapshotKube: a resync reads each kind once and answers the passes from it (issue 17 item 3)', () => {
  it('answers gets and equality-selector lists of a listed kind from memory: a name not listed is Gone, with no request', async () => {
    const { kube, calls } = aRecordingKube();
    const snapshot = snapshotKube(kube, [{ apiVersion: 'v1', kind: 'Service', objects: [svc('a', 'x', { app: 'one' }), svc('a', 'y', { app: 'two' }), svc('b', 'x', { app: 'one' })] }]);
    expect((await snapshot.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'x' }))?.metadata.namespace).toBe('a');
    expect(await snapshot.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'z' })).toBeUndefined();
    expect((await snapshot.list('v1', 'Service', 'a', { labelSelector: 'app=one' })).map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/x']);
    expect((await snapshot.list('v1', 'Service')).length).toBe(3);
    expect(calls).toEqual([]);
  });

  it('sends what it cannot answer: other kinds (once per wrapper), set-based selectors, field selectors', async () => {
    const { kube, calls } = aRecordingKube();
    const snapshot = snapshotKube(kube, [{ apiVersion: 'v1', kind: 'Service', objects: [] }]);
    await snapshot.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'c' });
    await snapshot.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'c' });
    await snapshot.list('v1', 'Service', 'a', { labelSelector: 'app in (one)' });
    await snapshot.list('v1', 'Service', 'a', { fieldSelector: 'metadata.name=x' });
    expect(calls).toEqual(['get ConfigMap a/c', 'list Service a app in (one)', 'list Service a ']);
  });

  it('a written object is read as the write stored it (an apply\'s answer) or from the API server again (a delete), and lists of its kind in its namespace from the API server', async () => {
    const { kube, calls } = aRecordingKube();
    const snapshot = snapshotKube(kube, [{ apiVersion: 'v1', kind: 'Service', objects: [svc('a', 'x'), svc('a', 'y')] }]);
    const applied = await snapshot.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'a' } });
    expect(await snapshot.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'x' })).toBe(applied);
    await snapshot.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'y' });
    await snapshot.get({ apiVersion: 'v1', kind: 'Service', namespace: 'a', name: 'y' });
    await snapshot.list('v1', 'Service', 'a');
    await snapshot.list('v1', 'Service', 'b');
    expect(calls).toEqual(['apply Service x', 'delete Service y', 'get Service a/y', 'list Service a ']);
  });
});
