/**
 * The resync snapshot: one LIST per kind, every later read answered from it (issue 17 item 3:
 * "A resync reads in bulk: one paginated LIST per kind it needs, grouped by owner in memory").
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, ListOptions, ObjectRef } from './client.js';
import { createListSnapshot, matchesLabels, parseLabelSelector, type KubeReader } from './snapshot.js';

const anObject = (kind: string, namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name, namespace, labels } });

/** A reader over fixed objects that records every call (the API server's view of the requests). */
function aRecordingReader(objects: readonly KubeObject[]) {
  const calls: string[] = [];
  const reader: KubeReader = {
    get(ref: ObjectRef) {
      calls.push(`get ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
      return Promise.resolve(objects.find((o) => o.kind === ref.kind && o.metadata.name === ref.name && o.metadata.namespace === ref.namespace));
    },
    list(apiVersion: string, kind: string, namespace?: string, options: ListOptions = {}) {
      calls.push(`list ${kind} ${namespace ?? '*'} ${options.labelSelector ?? ''}`.trim());
      const requirements = parseLabelSelector(options.labelSelector ?? '') ?? [];
      return Promise.resolve(objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace) && matchesLabels(requirements, o.metadata.labels)));
    },
  };
  return { reader, calls };
}

const WORLD = [
  anObject('ConfigMap', 'a', 'out-1', { 'dgdr.nvidia.com/name': 'one', 'dgdr.nvidia.com/namespace': 'a' }),
  anObject('ConfigMap', 'a', 'planner-1', { 'dgdr.nvidia.com/name': 'one', 'dgdr.nvidia.com/namespace': 'a' }),
  anObject('ConfigMap', 'b', 'out-1', { 'dgdr.nvidia.com/name': 'two', 'dgdr.nvidia.com/namespace': 'b' }),
  anObject('Pod', 'a', 'p1', { 'nvidia.com/dgdr-run-uid': 'u1' }),
  anObject('Pod', 'a', 'p2', {}),
];

describe('createListSnapshot', () => {
  it('lists a kind once, cluster-wide, and answers gets and lists of it from memory', async () => {
    const { reader, calls } = aRecordingReader(WORLD);
    const snapshot = createListSnapshot(reader);
    const reads = await Promise.all([
      snapshot.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'out-1' }),
      snapshot.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'b', name: 'out-1' }),
      snapshot.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'b', name: 'missing' }),
      snapshot.list('v1', 'ConfigMap', 'a', { labelSelector: 'dgdr.nvidia.com/name=one,dgdr.nvidia.com/namespace=a' }),
      snapshot.list('v1', 'ConfigMap', 'b', { labelSelector: 'dgdr.nvidia.com/name=one' }),
      snapshot.list('v1', 'ConfigMap'),
    ]);
    expect(reads.map((r) => (r === undefined ? undefined : Array.isArray(r) ? r.map((o) => `${o.metadata.namespace}/${o.metadata.name}`) : `${r.metadata.namespace}/${r.metadata.name}`))).toEqual([
      'a/out-1',
      'b/out-1',
      undefined,
      ['a/out-1', 'a/planner-1'],
      [],
      ['a/out-1', 'a/planner-1', 'b/out-1'],
    ]);
    expect(calls).toEqual(['list ConfigMap *']);
  });

  it('a byLabel kind is listed by that label and answers only lists that require it; its gets and other lists go to the API server', async () => {
    const { reader, calls } = aRecordingReader(WORLD);
    const snapshot = createListSnapshot(reader, { byLabel: [{ apiVersion: 'v1', kind: 'Pod', label: 'nvidia.com/dgdr-run-uid' }] });
    expect((await snapshot.list('v1', 'Pod', 'a', { labelSelector: 'nvidia.com/dgdr-run-uid=u1' })).map((o) => o.metadata.name)).toEqual(['p1']);
    expect((await snapshot.list('v1', 'Pod', 'a', { labelSelector: 'nvidia.com/dgdr-run-uid=u2' })).map((o) => o.metadata.name)).toEqual([]);
    expect((await snapshot.list('v1', 'Pod', 'a', { labelSelector: 'job-name=x' })).map((o) => o.metadata.name)).toEqual([]);
    await snapshot.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p2' });
    expect(calls).toEqual(['list Pod * nvidia.com/dgdr-run-uid', 'list Pod a job-name=x', 'get Pod a/p2']);
  });

  it('a set-based selector or a field selector goes to the API server', async () => {
    const { reader, calls } = aRecordingReader(WORLD);
    const snapshot = createListSnapshot(reader);
    await snapshot.list('v1', 'ConfigMap', 'a', { labelSelector: 'dgdr.nvidia.com/name in (one)' });
    await snapshot.list('v1', 'ConfigMap', 'a', { fieldSelector: 'metadata.name=out-1' });
    expect(calls).toEqual(['list ConfigMap a dgdr.nvidia.com/name in (one)', 'list ConfigMap a']);
  });

  it('a failed LIST is not kept: the next read lists again', async () => {
    let failures = 1;
    const calls: string[] = [];
    const reader: KubeReader = {
      get: () => Promise.reject(new Error('unused')),
      list: (_apiVersion, kind) => {
        calls.push(kind);
        if (failures-- > 0) return Promise.reject(new Error('boom'));
        return Promise.resolve(WORLD.filter((o) => o.kind === kind));
      },
    };
    const snapshot = createListSnapshot(reader);
    await expect(snapshot.list('v1', 'ConfigMap')).rejects.toThrow('boom');
    expect(await snapshot.list('v1', 'ConfigMap')).toHaveLength(3);
    expect(calls).toEqual(['ConfigMap', 'ConfigMap']);
  });
});

describe('parseLabelSelector and matchesLabels (equality-based selectors, as the API server matches them)', () => {
  it.each<{ readonly name: string; readonly selector: string; readonly labels: Record<string, string>; readonly want: boolean }>([
    { name: 'a=b matches a=b', selector: 'a=b', labels: { a: 'b' }, want: true },
    { name: 'a==b is a=b', selector: 'a==b', labels: { a: 'b' }, want: true },
    { name: 'a=b does not match a=c', selector: 'a=b', labels: { a: 'c' }, want: false },
    { name: 'a!=b matches a missing label', selector: 'a!=b', labels: {}, want: true },
    { name: 'a (exists) needs the label', selector: 'a', labels: {}, want: false },
    { name: '!a (absent) refuses the label', selector: '!a', labels: { a: '' }, want: false },
    { name: 'every term must hold', selector: 'a=b,c=d', labels: { a: 'b' }, want: false },
    { name: 'the empty selector matches everything', selector: '', labels: {}, want: true },
  ])('$name', ({ selector, labels, want }) => {
    const requirements = parseLabelSelector(selector);
    expect(requirements).toBeDefined();
    expect(matchesLabels(requirements ?? [], labels)).toBe(want);
  });

  it('a set-based selector is not parsed (sent to the API server)', () => {
    expect(parseLabelSelector('a in (b,c)')).toBeUndefined();
    expect(parseLabelSelector('a notin (b)')).toBeUndefined();
  });
});
