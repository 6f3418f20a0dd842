import { describe, expect, it } from 'vitest';
import { isResourceVersionConflict, type KubeObject } from '../kube/index.js';
import { PermanentError } from '../runtime/index.js';
import { createMemoryKube } from './memory-kube.js';

const service = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'inference' }, spec: { ports: [{ port: 80 }] }, ...extra });

describe('memory-kube: the in-memory API server replay runs against (shared/dev/memory-kube.ts)', () => {
  it('records a no-op apply as unchanged (same resourceVersion), a changed one as changed (bumped resourceVersion and generation)', async () => {
    const kube = createMemoryKube([service('a')], 'm');
    const before = await kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' });
    await kube.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'inference' }, spec: { ports: [{ port: 80 }] } });
    await kube.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'inference' }, spec: { ports: [{ port: 81 }] } });
    const writes = kube.takeWrites();
    expect(writes.map((w) => ('changed' in w ? w.changed : undefined))).toEqual([false, true]);
    const after = await kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' });
    expect([before?.metadata.generation, after?.metadata.generation]).toEqual([1, 2]);
    expect(after?.metadata.resourceVersion).not.toBe(before?.metadata.resourceVersion);
  });

  it('hands out copies: changing what get returned changes nothing stored', async () => {
    const kube = createMemoryKube([service('a')], 'm');
    const got = await kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' });
    (got?.['spec'] as { ports: { port: number }[] }).ports[0] = { port: 1 };
    expect((await kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' }))?.['spec']).toEqual({ ports: [{ port: 80 }] });
  });

  it('hands out copies from apply too, changed or not: changing the returned object changes nothing stored', async () => {
    const labelled = service('a', { metadata: { name: 'a', namespace: 'inference', labels: { app: 'x' } }, status: { loadBalancer: {} } });
    const kube = createMemoryKube([labelled], 'm');
    const ref = { apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' };
    const stored = await kube.get(ref);
    for (const spec of [{ ports: [{ port: 80 }] }, { ports: [{ port: 81 }] }]) {
      const returned = await kube.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'inference' }, spec });
      const before = JSON.stringify(await kube.get(ref));
      (returned.metadata.labels as Record<string, string>)['app'] = 'changed';
      (returned['status'] as Record<string, unknown>)['changed'] = true;
      (returned['spec'] as { ports: unknown[] }).ports.push({ port: 1 });
      expect(JSON.stringify(await kube.get(ref))).toBe(before);
    }
    expect(stored?.metadata.labels).toEqual({ app: 'x' });
  });

  it('removes an object a captured delete names (in any served version of its group), and says whether it held it', () => {
    const kube = createMemoryKube([{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'inference' } }], 'm');
    expect(kube.has({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', namespace: 'inference', name: 'g' })).toBe(true);
    expect(kube.remove({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', namespace: 'inference', name: 'g' })).toBe(true);
    expect(kube.remove({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'inference', name: 'g' })).toBe(false);
    expect(kube.objects()).toEqual([]);
    expect(kube.takeWrites()).toEqual([]);
  });

  it('shares one store and one write log between field managers (as one API server), each client naming its own', async () => {
    const kube = createMemoryKube([], 'first');
    const other = kube.as('second');
    await other.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'b', namespace: 'inference' }, spec: {} });
    expect([kube.fieldManager, other.fieldManager]).toEqual(['first', 'second']);
    expect(kube.has({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'b' })).toBe(true);
    expect(kube.takeWrites().map((w) => w.verb)).toEqual(['apply']);
  });

  it('tells whether anything a traced pass read changed since: the object, or any object of a kind it listed', async () => {
    const kube = createMemoryKube([service('a'), service('b')], 'm');
    const { reads } = await kube.trace(async () => {
      await kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' });
      return kube.list('v1', 'ConfigMap', 'inference');
    });
    const at = kube.version();
    await kube.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'b', namespace: 'inference' }, spec: { ports: [] } });
    expect(kube.isUnchangedSince(reads, at)).toBe(true);
    await kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'inference' }, data: {} });
    expect(kube.isUnchangedSince(reads, at)).toBe(false);
    const { reads: readA } = await kube.trace(() => kube.get({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' }));
    const at2 = kube.version();
    kube.remove({ apiVersion: 'v1', kind: 'Service', namespace: 'inference', name: 'a' });
    expect(kube.isUnchangedSince(readA, at2)).toBe(false);
  });

  it('stores what a Resource-mode event carries as the API server reported it (not a write)', () => {
    const kube = createMemoryKube([], 'm');
    kube.observe(service('a', { metadata: { name: 'a', namespace: 'inference', resourceVersion: '42' } }));
    expect(kube.objects()).toEqual([service('a', { metadata: { name: 'a', namespace: 'inference', resourceVersion: '42' } })]);
    expect(kube.takeWrites()).toEqual([]);
  });

  it('a write\'s resourceVersion precondition is kept as the API server keeps it: another version is a 409 Conflict (apply, status apply, update, delete); the version read passes', async () => {
    const kube = createMemoryKube([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: {} }], 'test');
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
    const read = await kube.get(ref);
    const stale = 'stale';
    const conflicts = await Promise.all([
      kube.apply({ ...ref, metadata: { name: 'a', namespace: 'ns', resourceVersion: stale } } as never).catch((e: unknown) => e),
      kube.applyStatus({ ...ref, metadata: { name: 'a', namespace: 'ns', resourceVersion: stale }, status: {} } as never).catch((e: unknown) => e),
      kube.replace({ ...(read as KubeObject), metadata: { ...(read as KubeObject).metadata, resourceVersion: stale } }).catch((e: unknown) => e),
      kube.delete(ref, { resourceVersion: stale }).catch((e: unknown) => e),
    ]);
    expect(conflicts.map(isResourceVersionConflict)).toEqual([true, true, true, true]);
    expect(await kube.get(ref)).toEqual(read);
    await kube.delete(ref, { resourceVersion: read?.metadata.resourceVersion });
    expect(await kube.get(ref)).toBeUndefined();
  });
});

describe('memory-kube: server-side apply to a user\'s DGD or DGDR keeps the fields other managers own', () => {
  const dgdrRef = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'r' };
  const stored = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns', annotations: { 'user.example/note': 'keep' } }, spec: { model: 'm' } };

  it('an apply of annotations alone (profile\'s) keeps the user\'s spec and annotations; an annotation the same manager applied before and leaves out is removed, as server-side apply removes a field its manager no longer applies', async () => {
    const kube = createMemoryKube([stored], 'dynamo-profile');
    await kube.apply({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: 'r', namespace: 'ns', annotations: { 'nvidia.com/generated-dgd-spec': 'x', 'dgdr.nvidia.com/additional-resources': 'y' } } }, { force: true });
    expect(await kube.get(dgdrRef)).toMatchObject({ spec: { model: 'm' }, metadata: { annotations: { 'user.example/note': 'keep', 'nvidia.com/generated-dgd-spec': 'x', 'dgdr.nvidia.com/additional-resources': 'y' } } });
    await kube.apply({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: 'r', namespace: 'ns', annotations: { 'dgdr.nvidia.com/additional-resources': 'y' } } }, { force: true });
    expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual({ 'user.example/note': 'keep', 'dgdr.nvidia.com/additional-resources': 'y' });
    // Another manager's apply without them removes nothing of this one's.
    await kube.as('someone').apply({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: 'r', namespace: 'ns' } }, { force: true });
    expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual({ 'user.example/note': 'keep', 'dgdr.nvidia.com/additional-resources': 'y' });
    await kube.apply({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: 'r', namespace: 'ns' } }, { force: true });
    expect(await kube.get(dgdrRef)).toMatchObject({ spec: { model: 'm' }, metadata: { annotations: { 'user.example/note': 'keep' } } });
  });
});

describe('memory-kube: an annotation another writer took or shares stays when the manager that applied it leaves it out, as server-side apply keeps a field another manager owns', () => {
  const dgdrRef = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'r' };
  const stored: KubeObject = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns' }, spec: { model: 'm' } };
  const applying = (annotations?: Record<string, string>) => ({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: 'r', namespace: 'ns', ...(annotations === undefined ? {} : { annotations }) } });

  it.each([
    { name: 'a forced apply of another value takes it', value: '2', want: { a: '2' } },
    { name: 'an apply of the same value shares it', value: '1', want: { a: '1' } },
  ])('another manager\'s $name: the first manager\'s apply without it keeps it', async ({ value, want }) => {
    const kube = createMemoryKube([stored], 'dynamo-profile');
    await kube.apply(applying({ a: '1' }), { force: true });
    await kube.as('someone').apply(applying({ a: value }), { force: true });
    await kube.apply(applying(), { force: true });
    expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual(want);
  });

  it('an update (kubectl edit) that changes the annotation takes it from the applier: the applier\'s apply without it keeps it', async () => {
    const kube = createMemoryKube([stored], 'dynamo-profile');
    const applied = await kube.apply(applying({ a: '1' }), { force: true });
    await kube.as('kubectl-edit').replace({ ...applied, metadata: { ...applied.metadata, annotations: { a: 'edited' } } });
    await kube.apply(applying(), { force: true });
    expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual({ a: 'edited' });
  });

  it('replay: a captured request whose managedFields say the manager applied an annotation (in the cluster, before the capture) loses it when that manager leaves it out; one an update set stays', async () => {
    const managedFields = [
      { manager: 'dynamo-profile', operation: 'Apply', apiVersion: 'nvidia.com/v1beta1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:nvidia.com/generated-dgd-spec': {}, 'f:dgdr.nvidia.com/additional-resources': {} } } } },
      { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'nvidia.com/v1beta1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:user.example/note': {} } } } },
    ];
    const captured: KubeObject = { ...stored, metadata: { ...stored.metadata, managedFields, annotations: { 'nvidia.com/generated-dgd-spec': 'x', 'dgdr.nvidia.com/additional-resources': 'y', 'user.example/note': 'keep' } } };
    for (const kube of [createMemoryKube([captured], 'dynamo-profile'), (() => { const k = createMemoryKube([], 'dynamo-profile'); k.observe(captured); return k; })()]) {
      await kube.apply(applying({ 'dgdr.nvidia.com/additional-resources': 'y' }), { force: true });
      expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual({ 'dgdr.nvidia.com/additional-resources': 'y', 'user.example/note': 'keep' });
    }
  });

  it('replay: a request deleted and created again under its name (captured events: remove, observe) is another object: the annotation its creator set stays', async () => {
    const kube = createMemoryKube([stored], 'dynamo-profile');
    await kube.apply(applying({ a: '1' }), { force: true });
    kube.remove(dgdrRef);
    kube.observe({ ...stored, metadata: { ...stored.metadata, uid: 'uid-2', resourceVersion: '99', annotations: { a: '1' } } });
    await kube.apply(applying(), { force: true });
    expect((await kube.get(dgdrRef))?.metadata.annotations).toEqual({ a: '1' });
  });
});

describe('memory-kube: resourceVersions after starting and captured objects', () => {
  it('a write after a starting or captured object that came with a version is given a newer one, so a precondition on the old version fails as on the API server', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'c' };
    const kube = createMemoryKube([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', resourceVersion: '1' }, data: { a: '1' } }], 'm');
    const written = await kube.replace({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', resourceVersion: '1' }, data: { a: '2' } });
    expect(written.metadata.resourceVersion).not.toBe('1');
    await expect(kube.delete(ref, { resourceVersion: '1' })).rejects.toThrow('the object has been modified');
    kube.observe({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd', namespace: 'ns', resourceVersion: '900' }, data: {} });
    const next = await kube.replace({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { a: '3' } });
    expect(Number(next.metadata.resourceVersion)).toBeGreaterThan(900);
  });
});

describe('memory-kube: preconditions on a missing object, as the real kube-apiserver answers them (checked there: test/integration/profile-adoption.test.ts, kube.test.ts)', () => {
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'gone' };
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

  it('a server-side apply carrying only a resourceVersion creates the missing object (the precondition is checked against an existing one only); one carrying a uid is a 409 Conflict and creates nothing', async () => {
    const kube = createMemoryKube([], 'test');
    await kube.apply({ ...configMap, metadata: { name: 'gone', namespace: 'ns', resourceVersion: '5' } });
    expect(await kube.get(ref)).toBeDefined();
    await kube.delete(ref);
    const refused = await kube.apply({ ...configMap, metadata: { name: 'gone', namespace: 'ns', resourceVersion: '5', uid: 'uid-read' } }).catch((e: unknown) => e);
    expect(isResourceVersionConflict(refused)).toBe(true);
    expect(await kube.get(ref)).toBeUndefined();
  });

  it('an update (PUT) of a missing object is a 404 NotFound (PermanentError) and creates nothing, with or without a resourceVersion', async () => {
    const kube = createMemoryKube([], 'test');
    for (const metadata of [{ name: 'gone', namespace: 'ns', resourceVersion: '5' }, { name: 'gone', namespace: 'ns' }]) {
      const refused = await kube.replace({ ...configMap, metadata, data: { a: '1' } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PermanentError);
      expect((refused as PermanentError).reason).toBe('NotFound');
    }
    expect(await kube.get(ref)).toBeUndefined();
    expect(kube.takeWrites()).toEqual([]);
  });
});
