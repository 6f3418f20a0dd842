/**
 * The DGD status write on a real kube-apiserver: reconcile writes the status it decided from the
 * DGD it read, with that read's resourceVersion as a precondition, so a status another
 * controller wrote in between (a checkpoint made ready) is not overwritten from the stale read.
 * No DynamoCheckpoint controller runs here (docs/known-limits.md "Checkpoints"): the test writes
 * `status.checkpoints.<component>.ready: true` as such a controller would, under its own field
 * manager, between reconcile's read and its write.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1 } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube } from '../../functions/reconcile/index.js';
import { handle, type ReconcileDeps } from '../../functions/reconcile/dgd.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const checkpointController: Kube = createKube(kubeConfig, { fieldManager: 'checkpoint-controller' });
const NAME = 'restored';
const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';

const event = (namespace: string): KubeEvent => ({ id: `test-${randomUUID()}`, type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME }, object: undefined });

function aGraph(namespace: string): Record<string, unknown> {
  const container = { name: 'main', image: IMAGE };
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: NAME, namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [container] } } },
        { name: 'worker', type: 'worker', replicas: 2, experimental: { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } }, podTemplate: { spec: { containers: [container] } } },
      ],
    },
  };
}

const checkpointsOf = (dgd: KubeObject | undefined) => (dgd?.['status'] as { checkpoints?: Record<string, { ready: boolean }> } | undefined)?.checkpoints;

describe('DGD status write: "a checkpoint another controller made ready" is not overwritten from a stale read', () => {
  let namespace = '';
  const reconcileKube = createKube(kubeConfig, { fieldManager: 'dynamo-reconcile' });
  const deps: ReconcileDeps = depsWithKube({ log, now: () => new Date(), config: defaultConfig({ kubeconfigPath: process.env['KUBECONFIG'] }) }, reconcileKube);

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'dgd-status');
    await user.apply(aGraph(namespace) as Parameters<Kube['apply']>[0], { force: true });
    // The first pass: the checkpoint is absent, so the worker waits for it.
    await handle(event(namespace), deps);
    const first = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME });
    expect(checkpointsOf(first)).toEqual({ worker: { ready: false } });
  });

  it('the pass that read ready: false before the controller wrote ready: true gets 409 on its status write and ends without writing it or its Events (the change has its own event); the next pass keeps ready: true and releases the worker', async () => {
    // A spec edit (the frontend scaled to 2) makes the next pass decide a status write: a new generation to observe.
    const edited = aGraph(namespace) as { spec: { components: { replicas: number }[] } };
    edited.spec.components[0]!.replicas = 2;
    await user.apply(edited as unknown as Parameters<Kube['apply']>[0], { force: true });
    let isRaced = false;
    const racing: ReconcileDeps = {
      ...deps,
      kube: {
        ...deps.kube,
        get: async (ref) => {
          const read = await deps.kube.get(ref);
          if (!isRaced && ref.kind === DGD_KIND) {
            isRaced = true;
            // As a checkpoint controller would, after reconcile read the DGD and before it writes the status.
            await checkpointController.applyStatus({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { name: NAME, namespace }, status: { checkpoints: { worker: { ready: true } } } } as Parameters<Kube['applyStatus']>[0], { force: true });
          }
          return read;
        },
      },
    };
    const statusWrites: unknown[] = [];
    const applyStatus = racing.kube.applyStatus.bind(racing.kube);
    racing.kube.applyStatus = async (object, options) => {
      statusWrites.push(object);
      return applyStatus(object, options);
    };
    const before = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME });
    const eventsBefore = (await user.list('events.k8s.io/v1', 'Event', namespace)).length;
    expect(await handle(event(namespace), racing)).toEqual({ kind: 'Done' });
    expect(isRaced).toBe(true);
    // It tried, with the version it read as the precondition, and the API server refused it.
    expect(statusWrites).toHaveLength(1);
    expect((statusWrites[0] as KubeObject).metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    const afterRace = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME });
    expect(checkpointsOf(afterRace)?.['worker']).toEqual({ ready: true });
    expect((afterRace?.['status'] as { observedGeneration?: number }).observedGeneration).toBe((before?.['status'] as { observedGeneration?: number }).observedGeneration);
    expect((await user.list('events.k8s.io/v1', 'Event', namespace)).length).toBe(eventsBefore);
    // Decided again on a fresh read: the ready checkpoint is kept and the worker no longer waits.
    await handle(event(namespace), deps);
    const settled = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME });
    expect(checkpointsOf(settled)?.['worker']).toEqual({ ready: true });
    const ready = (settled?.['status'] as { conditions?: { type: string; reason?: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.reason).not.toBe('waiting_for_checkpoint');
  });
});
