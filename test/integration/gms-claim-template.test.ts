/**
 * The GPU memory service's ResourceClaimTemplate on a real kube-apiserver (resource.k8s.io/v1,
 * with kube-controller-manager's garbage collector): an intra-pod GMS component's pods claim
 * their GPUs through DRA from `<dgd>-<component>-gpu`, which upstream's DGD controller creates
 * (`dra.GenerateResourceClaimTemplate`, synced per GMS component and controlled by the DGD).
 * Never touching what is not ours: a hand-made template of that name survives the DGD's create
 * and delete unchanged. No DRA driver runs here, so no claim is allocated; only the objects are
 * asserted.
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

const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0';
const RESOURCE = 'resource.k8s.io/v1';
/** Generous for a loaded 2-core machine; garbage collection is slower than a reconcile. */
const WAIT_MS = 60_000;

beforeAll(async () => {
  world = await startReconcileWorld(log);
  bridge = world.bridge;
});

afterAll(async () => {
  await world.stop();
});

function aGmsDgd(namespace: string, name: string): ApplyObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name, namespace, annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
        {
          name: 'worker',
          type: 'worker',
          replicas: 1,
          experimental: { gpuMemoryService: { mode: 'IntraPod' }, failover: { mode: 'IntraPod' } },
          podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE, command: ['python3', '-m', 'dynamo.vllm'], resources: { limits: { 'nvidia.com/gpu': '2' } } }] } },
        },
      ],
    },
  };
}

const get = (apiVersion: string, kind: string, namespace: string, name: string): Promise<KubeObject | undefined> => user.get({ apiVersion, kind, namespace, name });

function readyOf(dgd: KubeObject | undefined): { reason: string; message: string } | undefined {
  return (dgd?.['status'] as { conditions?: { type: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
}

describe('GPU memory service ResourceClaimTemplate (upstream dra.GenerateResourceClaimTemplate)', () => {
  it('an intra-pod GMS component gets <dgd>-<component>-gpu: one request "gpus" of exactly the main container\'s 2 GPUs of class gpu.nvidia.com, controlled by the DGD, claimed by its pods, and collected with the DGD', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'gms');
    const dgd = await user.apply(aGmsDgd(namespace, 'graph'), { force: true });
    const template = await eventually('ResourceClaimTemplate graph-worker-gpu', () => get(RESOURCE, 'ResourceClaimTemplate', namespace, 'graph-worker-gpu'), WAIT_MS);
    expect(template.metadata.ownerReferences).toEqual([{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: 'graph', uid: dgd.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect((template['spec'] as { spec: { devices: { requests: unknown[] } } }).spec.devices.requests).toEqual([
      { name: 'gpus', exactly: { deviceClassName: 'gpu.nvidia.com', allocationMode: 'ExactCount', count: 2 } },
    ]);
    const pcs = await eventually('PodCliqueSet graph', () => get('grove.io/v1alpha1', 'PodCliqueSet', namespace, 'graph'), WAIT_MS);
    const worker = (pcs['spec'] as { template: { cliques: { name: string; spec: { podSpec: { resourceClaims?: unknown[] } } }[] } }).template.cliques.find((c) => c.name === 'worker');
    expect(worker?.spec.podSpec.resourceClaims).toEqual([{ name: 'intrapod-shared-gpu', resourceClaimTemplateName: 'graph-worker-gpu' }]);

    await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: 'graph' });
    await eventually('ResourceClaimTemplate collected', async () => ((await get(RESOURCE, 'ResourceClaimTemplate', namespace, 'graph-worker-gpu')) === undefined ? true : undefined), WAIT_MS);
  });

  it('a hand-made ResourceClaimTemplate of that name survives the DGD\'s create and delete unchanged, and the DGD reports Ready=False OwnershipConflict naming it', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'gms-own');
    const handMade = await user.apply({
      apiVersion: RESOURCE,
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'graph-worker-gpu', namespace, labels: { team: 'ours' } },
      spec: { spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 8 } }] } } },
    });
    await user.apply(aGmsDgd(namespace, 'graph'), { force: true });
    const ready = await eventually('Ready=False OwnershipConflict', async () => {
      const condition = readyOf(await get(DGD_V1BETA1, DGD_KIND, namespace, 'graph'));
      return condition?.reason === 'OwnershipConflict' ? condition : undefined;
    }, WAIT_MS);
    expect(ready.message).toBe(`ResourceClaimTemplate ${namespace}/graph-worker-gpu exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched`);
    await bridge.idle();
    const unchanged = async (): Promise<void> => {
      const template = await get(RESOURCE, 'ResourceClaimTemplate', namespace, 'graph-worker-gpu');
      expect(template?.metadata.resourceVersion).toBe(handMade.metadata.resourceVersion);
      expect(template?.metadata.ownerReferences).toBeUndefined();
    };
    await unchanged();
    await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: 'graph' });
    await eventually('DGD gone', async () => ((await get(DGD_V1BETA1, DGD_KIND, namespace, 'graph')) === undefined ? true : undefined), WAIT_MS);
    await bridge.idle();
    await unchanged();
  });
});
