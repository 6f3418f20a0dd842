import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../runtime/index.js';
import { functionSnapshotArgs, snapshotBlobPath, warmUpForSnapshot, warmUpMessages } from './function-snapshot.js';

describe('snapshotBlobPath', () => {
  it.each([
    { name: 'the path after --snapshot-blob', input: ['--max-old-space-size=192', '--snapshot-blob', '/app/dist/bundles/reconcile.blob'], want: '/app/dist/bundles/reconcile.blob' },
    { name: 'the path of --snapshot-blob=PATH', input: ['--snapshot-blob=/app/dist/bundles/cleanup.blob'], want: '/app/dist/bundles/cleanup.blob' },
    { name: 'nothing when node was not started from a snapshot', input: ['--max-semi-space-size=8'], want: undefined },
  ])('$name', ({ input, want }) => {
    expect(snapshotBlobPath(input)).toBe(want);
  });
});

describe('functionSnapshotArgs', () => {
  it('starts a function from <bundles>/<function>.blob, and ends node\'s options with -- so the function\'s own (--port) reach it', () => {
    expect(functionSnapshotArgs('/app/dist/bundles', 'admission')).toEqual(['--snapshot-blob', '/app/dist/bundles/admission.blob', '--']);
  });

  it('names a blob that the main function maps back to the function\'s ES module bundle beside it (import.meta.url)', () => {
    const [, blob] = functionSnapshotArgs('/app/dist/bundles', 'reconcile');
    expect(snapshotBlobPath(functionSnapshotArgs('/app/dist/bundles', 'reconcile'))).toBe(blob);
    expect(blob?.replace(/\.blob$/, '.mjs')).toBe('/app/dist/bundles/reconcile.mjs');
  });
});

describe('warmUpForSnapshot', () => {
  it('runs to the end without a throw (the snapshot build calls it; its results are dropped)', () => {
    expect(warmUpForSnapshot()).toBeUndefined();
  });

  it('decodes a real ApiServerSource event in each mode, "Reference mode" and "Resource mode" (knative.md §1.2-1.4), down the accepted path a real event takes, not a rejection', () => {
    expect(warmUpMessages().map((message) => decodeEvent(message))).toEqual([
      { ok: true, decoded: { category: 'apiserver', mode: 'Reference', event: { id: 'warm-up', type: 'dev.knative.apiserver.ref.update', source: 'https://127.0.0.1', key: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'warm-up' }, object: undefined } } },
      { ok: true, decoded: { category: 'apiserver', mode: 'Resource', event: { id: 'warm-up', type: 'dev.knative.apiserver.resource.update', source: 'https://127.0.0.1', key: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'warm-up' }, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'warm-up', namespace: 'default', uid: 'u', resourceVersion: '1', labels: { a: 'b' } } } } } },
    ]);
  });
});
