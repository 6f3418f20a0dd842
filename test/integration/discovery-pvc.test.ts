/**
 * The DGD's own identity and claims on a real kube-apiserver (with kube-controller-manager's
 * garbage collector): the Kubernetes discovery ServiceAccount, Role and RoleBinding (upstream
 * `internal/discovery/resource.go`, `reconcileK8sDiscoveryResources`) and the v1alpha1
 * `spec.pvcs[]` claims with `create: true` (upstream `reconcilePVC`), applied through the event
 * bridge and the conversion webhook the global setup runs. Never touching what is not ours: a
 * hand-made ServiceAccount of the discovery name and a hand-made claim of a `create: true` name
 * survive the DGD's create and delete unchanged. No StorageClass provisions here, so claims stay
 * Pending; only the objects are asserted.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1 } from '../../shared/api/index.js';
import type { EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type ApplyObject, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { startReconcileWorld, type ReconcileWorld } from '../support/reconcile-world.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
let world: ReconcileWorld;
let bridge: EventBridge;

const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
const RBAC = 'rbac.authorization.k8s.io/v1';
/** Generous for a loaded 2-core machine; garbage collection is slower than a reconcile. */
const WAIT_MS = 60_000;

beforeAll(async () => {
  world = await startReconcileWorld(log);
  bridge = world.bridge;
});

afterAll(async () => {
  await world.stop();
});

function aDgd(namespace: string, name: string): ApplyObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name, namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
        { name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
      ],
    },
  };
}

function anAlphaDgd(namespace: string, name: string, pvcs: unknown[]): ApplyObject {
  return {
    apiVersion: 'nvidia.com/v1alpha1',
    kind: DGD_KIND,
    metadata: { name, namespace },
    spec: {
      backendFramework: 'vllm',
      pvcs,
      services: {
        Frontend: { componentType: 'frontend', replicas: 1, extraPodSpec: { mainContainer: { image: IMAGE } } },
        Worker: { componentType: 'worker', replicas: 1, volumeMounts: [{ name: 'model-cache', mountPoint: '/models' }, { name: 'shared-data', mountPoint: '/data' }], extraPodSpec: { mainContainer: { image: IMAGE } } },
      },
    },
  };
}

const get = (apiVersion: string, kind: string, namespace: string, name: string): Promise<KubeObject | undefined> => user.get({ apiVersion, kind, namespace, name });
const gone = (apiVersion: string, kind: string, namespace: string, name: string) => async () => ((await get(apiVersion, kind, namespace, name)) === undefined ? true : undefined);

function readyOf(dgd: KubeObject | undefined): { reason: string; message: string } | undefined {
  return (dgd?.['status'] as { conditions?: { type: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
}

describe('Kubernetes discovery identity (upstream reconcileK8sDiscoveryResources)', () => {
  it('a DGD with Kubernetes discovery (the default) gets the ServiceAccount, Role and RoleBinding it controls, its pods run as that ServiceAccount, and the garbage collector removes them with the DGD', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'discovery');
    const dgd = await user.apply(aDgd(namespace, 'graph'), { force: true });
    const owner = [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: 'graph', uid: dgd.metadata.uid, controller: true, blockOwnerDeletion: true }];
    const labels = { 'app.kubernetes.io/component': 'rbac', 'app.kubernetes.io/managed-by': 'dynamo-operator', 'app.kubernetes.io/name': 'graph-k8s-service-discovery' };

    const account = await eventually('ServiceAccount graph-k8s-service-discovery', () => get('v1', 'ServiceAccount', namespace, 'graph-k8s-service-discovery'), WAIT_MS);
    expect(account.metadata).toMatchObject({ labels, ownerReferences: owner });
    const role = await eventually('Role', () => get(RBAC, 'Role', namespace, 'graph-k8s-service-discovery-role'), WAIT_MS);
    expect(role.metadata).toMatchObject({ labels, ownerReferences: owner });
    expect(role['rules']).toEqual([
      { apiGroups: [''], resources: ['endpoints', 'pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['nvidia.com'], resources: ['dynamoworkermetadatas'], verbs: ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
    ]);
    const binding = await eventually('RoleBinding', () => get(RBAC, 'RoleBinding', namespace, 'graph-k8s-service-discovery-binding'), WAIT_MS);
    expect([binding['subjects'], binding['roleRef']]).toEqual([
      [{ kind: 'ServiceAccount', name: 'graph-k8s-service-discovery', namespace }],
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'graph-k8s-service-discovery-role' },
    ]);
    const pcs = await eventually('PodCliqueSet graph', () => get('grove.io/v1alpha1', 'PodCliqueSet', namespace, 'graph'), WAIT_MS);
    const cliques = (pcs['spec'] as { template: { cliques: { spec: { podSpec: { serviceAccountName?: string } } }[] } }).template.cliques;
    expect(cliques.map((c) => c.spec.podSpec.serviceAccountName)).toEqual(['graph-k8s-service-discovery', 'graph-k8s-service-discovery']);

    await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: 'graph' });
    await eventually('ServiceAccount collected', gone('v1', 'ServiceAccount', namespace, 'graph-k8s-service-discovery'), WAIT_MS);
    await eventually('Role collected', gone(RBAC, 'Role', namespace, 'graph-k8s-service-discovery-role'), WAIT_MS);
    await eventually('RoleBinding collected', gone(RBAC, 'RoleBinding', namespace, 'graph-k8s-service-discovery-binding'), WAIT_MS);
  });

  it('a hand-made ServiceAccount of the discovery name survives the DGD\'s create and delete unchanged, and the DGD reports Ready=False OwnershipConflict naming it', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'discovery-own');
    const handMade = await user.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'graph-k8s-service-discovery', namespace, labels: { team: 'ours' } } });
    await user.apply(aDgd(namespace, 'graph'), { force: true });
    const ready = await eventually('Ready=False OwnershipConflict', async () => {
      const condition = readyOf(await get(DGD_V1BETA1, DGD_KIND, namespace, 'graph'));
      return condition?.reason === 'OwnershipConflict' ? condition : undefined;
    }, WAIT_MS);
    expect(ready.message).toBe(`ServiceAccount ${namespace}/graph-k8s-service-discovery exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched`);
    await bridge.idle();
    const unchanged = async (): Promise<void> => {
      const account = await get('v1', 'ServiceAccount', namespace, 'graph-k8s-service-discovery');
      expect(account?.metadata.resourceVersion).toBe(handMade.metadata.resourceVersion);
      expect(account?.metadata.ownerReferences).toBeUndefined();
    };
    await unchanged();
    await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: 'graph' });
    // The Role the DGD did control goes with it; the hand-made ServiceAccount stays as it was.
    await eventually('Role collected', gone(RBAC, 'Role', namespace, 'graph-k8s-service-discovery-role'), WAIT_MS);
    await bridge.idle();
    await unchanged();
  });
});

describe('v1alpha1 spec.pvcs[].create (upstream reconcilePVC, constructPVC)', () => {
  it('creates an absent create: true claim with the DGD as controller, uses an existing one of that name untouched, and reports a claim the user is to provide while it is missing', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'alpha-pvc');
    // A claim the user made under a `create: true` name: upstream uses it as it is.
    const handMade = await user.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'shared-data', namespace }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual' } });
    const pvcs = [
      { name: 'model-cache', create: true, storageClass: 'standard', size: '100Gi', volumeAccessMode: 'ReadWriteMany' },
      { name: 'shared-data', create: true, storageClass: 'standard', size: '5Gi', volumeAccessMode: 'ReadWriteOnce' },
      { name: 'user-claim' },
    ];
    await user.apply(anAlphaDgd(namespace, 'llama', pvcs), { force: true });
    const dgd = await eventually('DGD stored', () => get(DGD_V1BETA1, DGD_KIND, namespace, 'llama'), WAIT_MS);

    const created = await eventually('PVC model-cache', () => get('v1', 'PersistentVolumeClaim', namespace, 'model-cache'), WAIT_MS);
    expect(created.metadata.ownerReferences).toEqual([{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: 'llama', uid: dgd.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(created['spec']).toMatchObject({ accessModes: ['ReadWriteMany'], resources: { requests: { storage: '100Gi' } }, storageClassName: 'standard' });
    const pcs = await eventually('PodCliqueSet llama', () => get('grove.io/v1alpha1', 'PodCliqueSet', namespace, 'llama'), WAIT_MS);
    const worker = (pcs['spec'] as { template: { cliques: { name: string; spec: { podSpec: { volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] } } }[] } }).template.cliques.find((c) => c.name === 'worker');
    expect(worker?.spec.podSpec.volumes?.filter((v) => v.persistentVolumeClaim !== undefined)).toEqual([
      { name: 'model-cache', persistentVolumeClaim: { claimName: 'model-cache' } },
      { name: 'shared-data', persistentVolumeClaim: { claimName: 'shared-data' } },
    ]);
    await bridge.idle();
    const existing = await get('v1', 'PersistentVolumeClaim', namespace, 'shared-data');
    expect([existing?.metadata.resourceVersion, existing?.metadata.ownerReferences]).toEqual([handMade.metadata.resourceVersion, undefined]);
    expect(await get('v1', 'PersistentVolumeClaim', namespace, 'user-claim')).toBeUndefined();
    // The claim the user is to provide is missing: upstream's reconcilePVC error, on the status.
    const failed = await eventually('Ready=False naming the missing claim', async () => {
      const condition = readyOf(await get(DGD_V1BETA1, DGD_KIND, namespace, 'llama'));
      return condition?.reason === 'failed_to_reconcile_the_resources' ? condition : undefined;
    }, WAIT_MS);
    expect(failed.message).toBe('legacy top-level PVC "user-claim" does not exist and create is not enabled');
    // Once the user provides it, the next pass (here a spec edit; in production also the resync) no longer reports it.
    await user.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'user-claim', namespace }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual' } });
    await user.apply({ ...anAlphaDgd(namespace, 'llama', pvcs), metadata: { name: 'llama', namespace, labels: { touched: 'yes' } } }, { force: true });
    await eventually('the missing-claim failure cleared', async () => {
      const condition = readyOf(await get(DGD_V1BETA1, DGD_KIND, namespace, 'llama'));
      return condition !== undefined && condition.reason !== 'failed_to_reconcile_the_resources' ? condition : undefined;
    }, WAIT_MS);

    await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: 'llama' });
    // The garbage collector deletes the claim the DGD created (its pvc-protection finalizer
    // may hold it a moment: deleting is enough), and not the hand-made one.
    await eventually('PVC model-cache deleted', async () => {
      const pvc = await get('v1', 'PersistentVolumeClaim', namespace, 'model-cache');
      return pvc === undefined || pvc.metadata['deletionTimestamp'] !== undefined ? true : undefined;
    }, WAIT_MS);
    const after = await get('v1', 'PersistentVolumeClaim', namespace, 'shared-data');
    expect([after?.metadata.resourceVersion, after?.metadata['deletionTimestamp']]).toEqual([handMade.metadata.resourceVersion, undefined]);
  });
});
