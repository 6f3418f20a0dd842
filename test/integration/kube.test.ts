/**
 * shared/kube against the real API server: get/list, server-side apply of objects and status,
 * replace, delete, Events, and how each failure is classified.
 */
import net from 'node:net';

import { KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';

import { createKube, kubeStatusOf, type ApplyObject, type Kube } from '../../shared/kube/index.js';
import { PermanentError, TransientError } from '../../shared/runtime/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

const PCS = { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet' } as const;

function aPodCliqueSet(namespace: string, name: string, spec: Record<string, unknown> = {}): ApplyObject {
  return {
    ...PCS,
    metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'kube-test' } },
    spec: {
      replicas: 1,
      template: {
        cliques: [
          {
            name: 'worker',
            spec: {
              roleName: 'worker',
              replicas: 1,
              podSpec: { containers: [{ name: 'main', image: 'registry.invalid/worker:1' }] },
            },
          },
        ],
      },
      ...spec,
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('shared/kube', () => {
  const kubeConfig = testKubeConfig();
  const kube: Kube = createKube(kubeConfig, { fieldManager: 'kube-test' });
  let namespace = '';

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'kube');
  });

  it('get of a missing object resolves to undefined', async () => {
    await expect(kube.get({ ...PCS, namespace, name: 'missing' })).resolves.toBeUndefined();
  });

  it('apply creates the object; applying the same intent again changes nothing', async () => {
    const first = await kube.apply(aPodCliqueSet(namespace, 'twice'));
    const second = await kube.apply(aPodCliqueSet(namespace, 'twice'));
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(second.metadata.generation).toBe(1);
    expect(await kube.get({ ...PCS, namespace, name: 'twice' })).toMatchObject({ spec: { replicas: 1 } });
  });

  it('applyStatus writes the status subresource and leaves spec alone', async () => {
    const applied = await kube.apply(aPodCliqueSet(namespace, 'with-status'));
    const withStatus = await kube.applyStatus({
      ...PCS,
      metadata: { name: 'with-status', namespace },
      status: { observedGeneration: 1, replicas: 1, availableReplicas: 0 },
    });
    expect(withStatus['status']).toMatchObject({ observedGeneration: 1, replicas: 1, availableReplicas: 0 });
    expect(withStatus['spec']).toEqual(applied['spec']);
    expect(withStatus.metadata.generation).toBe(1);
    const managers = (withStatus.metadata['managedFields'] as Array<{ manager: string; subresource?: string }>).map(
      (entry) => [entry.manager, entry.subresource ?? ''],
    );
    expect(managers).toEqual(expect.arrayContaining([['kube-test', ''], ['kube-test', 'status']]));
  });

  it('list returns objects with apiVersion and kind, in one namespace or all', async () => {
    await kube.apply(aPodCliqueSet(namespace, 'listed'));
    const inNamespace = await kube.list(PCS.apiVersion, PCS.kind, namespace);
    expect(inNamespace.map((pcs) => pcs.metadata.name)).toContain('listed');
    expect(inNamespace.every((pcs) => pcs.apiVersion === PCS.apiVersion && pcs.kind === PCS.kind)).toBe(true);
    const everywhere = await kube.list(PCS.apiVersion, PCS.kind, undefined, {
      labelSelector: 'app.kubernetes.io/part-of=kube-test',
    });
    expect(everywhere.map((pcs) => `${pcs.metadata.namespace}/${pcs.metadata.name}`)).toContain(`${namespace}/listed`);
  });

  it('an invalid spec is a PermanentError (422 Invalid) naming the field', async () => {
    const error = await failure(kube.apply(aPodCliqueSet(namespace, 'invalid', { updateStrategy: { type: 'Rolling' } })));
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ reason: 'Invalid' });
    expect(kubeStatusOf(error)?.code).toBe(422);
    expect((error as Error).message).toContain(`cannot apply PodCliqueSet ${namespace}/invalid: 422 Invalid:`);
    expect((error as Error).message).toContain('spec.updateStrategy.type: Unsupported value: "Rolling"');
  });

  it('an apply with a field the schema does not declare is a PermanentError', async () => {
    const error = await failure(kube.apply(aPodCliqueSet(namespace, 'unknown-field', { surprise: true })));
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ reason: 'BadRequest' });
    // Kubernetes 1.35 answers a bare 500 here (kubernetes/kubernetes#139253); see errors.ts.
    expect(kubeStatusOf(error)?.code).toBe(500);
    expect((error as Error).message).toContain('.spec.surprise: field not declared in schema');
  });

  it("an apply that conflicts with another manager's field is a PermanentError; force takes the field", async () => {
    await kube.apply(aPodCliqueSet(namespace, 'contested', { replicas: 2 }));
    const other = createKube(kubeConfig, { fieldManager: 'kube-test-other' });
    const error = await failure(other.apply(aPodCliqueSet(namespace, 'contested', { replicas: 3 })));
    expect(error).toBeInstanceOf(PermanentError);
    expect(kubeStatusOf(error)).toMatchObject({ code: 409, causeReasons: ['FieldManagerConflict'] });
    const forced = await other.apply(aPodCliqueSet(namespace, 'contested', { replicas: 3 }), { force: true });
    expect(forced['spec']).toMatchObject({ replicas: 3 });
  });

  it('server-side apply removes an annotation its manager leaves out only while no other writer owns it (shared/dev/memory-kube.ts mirrors this): taken by another\'s forced apply, shared by another\'s apply of the same value, or taken by an update, it stays', async () => {
    const other = createKube(kubeConfig, { fieldManager: 'kube-test-other' });
    const applying = (name: string, annotations?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(annotations === undefined ? {} : { annotations }) } }) as const;
    const annotationsOf = async (name: string) => (await kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name }))?.metadata.annotations;
    await kube.apply(applying('ssa-taken', { a: '1' }), { force: true });
    await other.apply(applying('ssa-taken', { a: '2' }), { force: true });
    await kube.apply(applying('ssa-taken'), { force: true });
    expect(await annotationsOf('ssa-taken')).toEqual({ a: '2' });
    await kube.apply(applying('ssa-shared', { a: '1' }), { force: true });
    await other.apply(applying('ssa-shared', { a: '1' }), { force: true });
    await kube.apply(applying('ssa-shared'), { force: true });
    expect(await annotationsOf('ssa-shared')).toEqual({ a: '1' });
    const applied = await kube.apply(applying('ssa-edited', { a: '1' }), { force: true });
    await other.replace({ ...applied, metadata: { ...applied.metadata, annotations: { a: 'edited' } } });
    await kube.apply(applying('ssa-edited'), { force: true });
    expect(await annotationsOf('ssa-edited')).toEqual({ a: 'edited' });
    // And the one it alone applied goes.
    await kube.apply(applying('ssa-alone', { a: '1' }), { force: true });
    await kube.apply(applying('ssa-alone'), { force: true });
    expect(await annotationsOf('ssa-alone')).toBeUndefined();
  });

  it('a replace with a stale resourceVersion is a TransientError (409)', async () => {
    const stored = await kube.apply(aPodCliqueSet(namespace, 'replaced'));
    const updated = await kube.replace({ ...stored, spec: { ...(stored['spec'] as object), replicas: 2 } });
    expect(updated.metadata.resourceVersion).not.toBe(stored.metadata.resourceVersion);
    const error = await failure(kube.replace({ ...stored, spec: { ...(stored['spec'] as object), replicas: 3 } }));
    expect(error).toBeInstanceOf(TransientError);
    expect(kubeStatusOf(error)).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  it('preconditions on a missing object (what shared/dev/memory-kube.ts mirrors): an apply carrying only a resourceVersion creates it; one carrying a uid is a 409 (TransientError) and creates nothing; a replace is a 404 NotFound (PermanentError)', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'precondition-missing' };
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
    const created = await kube.apply({ ...configMap, metadata: { name: ref.name, namespace, resourceVersion: '5' } }, { force: true });
    expect(created.metadata.resourceVersion).not.toBe('5');
    await kube.delete(ref);
    const refused = await failure(kube.apply({ ...configMap, metadata: { name: ref.name, namespace, resourceVersion: '5', uid: created.metadata.uid } }, { force: true }));
    expect(refused).toBeInstanceOf(TransientError);
    expect(kubeStatusOf(refused)).toMatchObject({ code: 409, reason: 'Conflict' });
    const missing = await failure(kube.replace({ ...created, metadata: { ...created.metadata } }));
    expect(missing).toBeInstanceOf(PermanentError);
    expect(kubeStatusOf(missing)).toMatchObject({ code: 404, reason: 'NotFound' });
    expect(await kube.get(ref)).toBeUndefined();
  });

  it('a delete carrying a uid precondition (what trace-claim\'s Job stop sends; shared/dev/memory-kube.ts mirrors it): the object of that name created again since (another uid) is a 409 (TransientError) and stays; the uid read deletes it', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'precondition-uid' };
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
    const first = await kube.apply({ ...configMap, metadata: { name: ref.name, namespace } }, { force: true });
    await kube.delete(ref);
    const second = await kube.apply({ ...configMap, metadata: { name: ref.name, namespace } }, { force: true });
    const refused = await failure(kube.delete(ref, { uid: first.metadata.uid ?? '' }));
    expect(refused).toBeInstanceOf(TransientError);
    expect(kubeStatusOf(refused)).toMatchObject({ code: 409, reason: 'Conflict' });
    expect((await kube.get(ref))?.metadata.uid).toBe(second.metadata.uid);
    await kube.delete(ref, { uid: second.metadata.uid ?? '' });
    expect(await kube.get(ref)).toBeUndefined();
  });

  it('delete removes the object, and deleting it again is done too', async () => {
    await kube.apply(aPodCliqueSet(namespace, 'deleted'));
    await kube.delete({ ...PCS, namespace, name: 'deleted' });
    await expect(kube.get({ ...PCS, namespace, name: 'deleted' })).resolves.toBeUndefined();
    await expect(kube.delete({ ...PCS, namespace, name: 'deleted' })).resolves.toBeUndefined();
  });

  it('createEvent records an events.k8s.io/v1 Event about the object', async () => {
    const regarding = await kube.apply(aPodCliqueSet(namespace, 'eventful'));
    const event = await kube.createEvent({
      regarding: { ...PCS, namespace, name: 'eventful', uid: regarding.metadata.uid ?? '' },
      reason: 'CreatedPodCliqueSet',
      note: 'Created PodCliqueSet eventful',
      type: 'Normal',
      action: 'Reconcile',
      reportingController: 'nvidia.com/kube-test',
      reportingInstance: 'kube-test-0',
    });
    const stored = await kube.get({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      namespace,
      name: event.metadata.name,
    });
    expect(stored).toMatchObject({
      regarding: { kind: 'PodCliqueSet', name: 'eventful', namespace, uid: regarding.metadata.uid },
      reason: 'CreatedPodCliqueSet',
      note: 'Created PodCliqueSet eventful',
      type: 'Normal',
      action: 'Reconcile',
      reportingController: 'nvidia.com/kube-test',
      reportingInstance: 'kube-test-0',
    });
  });

  it('a kind the API server does not serve is a PermanentError (UnknownKind)', async () => {
    const error = await failure(kube.get({ apiVersion: 'grove.io/v1alpha1', kind: 'NoSuchKind', namespace, name: 'x' }));
    expect(error).toBeInstanceOf(PermanentError);
    expect(error).toMatchObject({ reason: 'UnknownKind' });
    const noGroup = await failure(kube.get({ apiVersion: 'nosuch.example.com/v1', kind: 'Thing', namespace, name: 'x' }));
    expect(noGroup).toMatchObject({ reason: 'UnknownKind' });
  });

  it('an API server that does not answer is a TransientError', async () => {
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: 'gone', server: `https://127.0.0.1:${await closedPort()}`, skipTLSVerify: true }],
      users: [{ name: 'nobody', token: 'x' }],
      contexts: [{ name: 'gone', cluster: 'gone', user: 'nobody' }],
      currentContext: 'gone',
    });
    const error = await failure(createKube(unreachable, { fieldManager: 'kube-test' }).get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'x' }));
    expect(error).toBeInstanceOf(TransientError);
  });
});
