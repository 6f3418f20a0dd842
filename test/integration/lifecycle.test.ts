/**
 * A DGD after its first apply, on the real API server: scaling through Grove's scale
 * subresources, the Coherent gate, child events, ownership safety and deletion.
 *
 * Grove's controller cannot run here, so this file acts as Grove and says so where it does:
 * it creates the PodCliques Grove would create from the PodCliqueSet template (template
 * replicas seed them, the PodCliqueSet is their controller), and writes the PodCliqueSet and
 * PodClique status Grove would write. The `/scale` subresource itself is the API server's
 * (the Grove CRDs declare `scale` with specReplicasPath `.spec.replicas`), so a scale write
 * by the function lands in the PodClique's `spec.replicas` exactly as it would with Grove.
 * The bridge runs without a periodic resync, so whatever converges here was driven by events.
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
/** Writes what Grove's controller would write (its own field manager). */
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
let world: ReconcileWorld;
let bridge: EventBridge;

const DGD_REF = { apiVersion: DGD_V1BETA1, kind: DGD_KIND };
const GROVE = 'grove.io/v1alpha1';
const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
/** Child events restore within seconds: well under the resync period, which is off here. */
const SECONDS = 15_000;

beforeAll(async () => {
  world = await startReconcileWorld(log);
  bridge = world.bridge;
});

afterAll(async () => {
  await world.stop();
});

function aDgd(namespace: string, name: string, workerReplicas: number, annotations?: Record<string, string>): ApplyObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name, namespace, ...(annotations === undefined ? {} : { annotations }) },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
        { name: 'worker', type: 'worker', replicas: workerReplicas, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
      ],
    },
  };
}

async function getDgd(namespace: string, name: string): Promise<KubeObject | undefined> {
  return user.get({ ...DGD_REF, namespace, name });
}

function conditionOf(dgd: KubeObject | undefined, type: string): { status: string; reason: string; message: string } | undefined {
  const conditions = (dgd?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === type);
}

async function getPcs(namespace: string, name: string): Promise<KubeObject | undefined> {
  return user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name });
}

interface TemplateClique {
  name: string;
  spec: { roleName: string; replicas: number; podSpec: Record<string, unknown> };
}

/**
 * Acting as Grove: creates the PodCliques of the PodCliqueSet's standalone cliques
 * (`<pcs>-0-<clique>`, replicas seeded from the template, the PodCliqueSet as controller, the
 * `app.kubernetes.io/part-of` label), once.
 */
async function groveCreatesCliques(pcs: KubeObject): Promise<void> {
  const namespace = pcs.metadata.namespace ?? '';
  const cliques = (pcs['spec'] as { template: { cliques: TemplateClique[] } }).template.cliques;
  for (const clique of cliques) {
    const name = `${pcs.metadata.name}-0-${clique.name}`;
    if ((await grove.get({ apiVersion: GROVE, kind: 'PodClique', namespace, name })) !== undefined) continue;
    await grove.apply({
      apiVersion: GROVE,
      kind: 'PodClique',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/part-of': pcs.metadata.name, 'app.kubernetes.io/managed-by': 'grove-operator' },
        ownerReferences: [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: pcs.metadata.name, uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { roleName: clique.spec.roleName, replicas: clique.spec.replicas, podSpec: clique.spec.podSpec },
    });
  }
}

/** Acting as Grove: every PodClique's pods are up to date and Ready at its current spec.replicas. */
async function groveReportsCliquesReady(namespace: string, pcsName: string): Promise<void> {
  for (const clique of await grove.list(GROVE, 'PodClique', namespace, { labelSelector: `app.kubernetes.io/part-of=${pcsName}` })) {
    const replicas = (clique['spec'] as { replicas: number }).replicas;
    await grove.applyStatus(
      {
        apiVersion: GROVE,
        kind: 'PodClique',
        metadata: { name: clique.metadata.name, namespace },
        status: { observedGeneration: clique.metadata.generation, replicas, readyReplicas: replicas, updatedReplicas: replicas, scheduledReplicas: replicas, scheduleGatedReplicas: 0 },
      },
      { force: true },
    );
  }
}

/** Acting as Grove: the PodCliqueSet's status (acknowledged generation, rollout progress). */
async function groveReportsPcs(pcs: KubeObject, progress: { updateStartedAt: string; updateEndedAt?: string } | undefined, observedGeneration = pcs.metadata.generation): Promise<void> {
  await grove.applyStatus(
    {
      apiVersion: GROVE,
      kind: 'PodCliqueSet',
      metadata: { name: pcs.metadata.name, namespace: pcs.metadata.namespace ?? '' },
      status: { observedGeneration, replicas: 1, updatedReplicas: 1, availableReplicas: 1, ...(progress === undefined ? {} : { updateProgress: progress }) },
    },
    { force: true },
  );
}

async function cliqueReplicas(namespace: string, name: string): Promise<number | undefined> {
  const clique = await user.get({ apiVersion: GROVE, kind: 'PodClique', namespace, name });
  return (clique?.['spec'] as { replicas?: number } | undefined)?.replicas;
}

/** Applies the DGD, waits for its PodCliqueSet, acts as Grove until the DGD is Ready. */
async function runningDgd(namespace: string, name: string, workerReplicas: number, annotations?: Record<string, string>): Promise<KubeObject> {
  await user.apply(aDgd(namespace, name, workerReplicas, annotations), { force: true });
  const pcs = await eventually(`PodCliqueSet ${namespace}/${name}`, () => getPcs(namespace, name));
  await groveCreatesCliques(pcs);
  await groveReportsCliquesReady(namespace, name);
  await groveReportsPcs(pcs, undefined);
  await eventually('Ready=True', async () => (conditionOf(await getDgd(namespace, name), 'Ready')?.status === 'True' ? true : undefined), SECONDS);
  return (await getPcs(namespace, name)) as KubeObject;
}

describe('scaling through Grove scale subresources (acting as Grove: PodCliques and their status written by this test)', () => {
  it('"template replicas only seed creation": a replica edit changes the clique\'s scale, not the PodCliqueSet template (no new generation, no rollout)', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'scale');
    const pcs = await runningDgd(namespace, 'graph', 2);
    const dgd = await getDgd(namespace, 'graph');
    expect(dgd?.['status']).toMatchObject({
      state: 'successful',
      observedGeneration: dgd?.metadata.generation,
      components: { worker: { componentKind: 'PodClique', componentNames: ['graph-0-worker'], replicas: 2, updatedReplicas: 2, readyReplicas: 2 } },
    });

    await user.apply(aDgd(namespace, 'graph', 4), { force: true });
    await eventually('worker PodClique scaled to 4', async () => ((await cliqueReplicas(namespace, 'graph-0-worker')) === 4 ? true : undefined), SECONDS);
    const scale = await user.get({ apiVersion: GROVE, kind: 'PodClique', namespace, name: 'graph-0-worker' });
    expect((scale?.['spec'] as { replicas: number }).replicas).toBe(4);
    const after = (await getPcs(namespace, 'graph')) as KubeObject;
    expect(after.metadata.generation).toBe(pcs.metadata.generation);
    expect(after['spec']).toEqual(pcs['spec']);
    expect((await getDgd(namespace, 'graph'))?.['status']).toMatchObject({ components: { worker: { replicas: 2, readyReplicas: 2 } } });

    // Acting as Grove: the new pods come up; the DGD reports the component at 4 and Ready.
    await groveReportsCliquesReady(namespace, 'graph');
    const ready = await eventually(
      'components.worker at 4 and Ready=True',
      async () => {
        const current = await getDgd(namespace, 'graph');
        const worker = (current?.['status'] as { components?: Record<string, { readyReplicas?: number }> } | undefined)?.components?.['worker'];
        return worker?.readyReplicas === 4 && conditionOf(current, 'Ready')?.status === 'True' ? current : undefined;
      },
      SECONDS,
    );
    expect((ready['status'] as { observedGeneration: number }).observedGeneration).toBe(ready.metadata.generation);
  });

  it('"Grove rejects replica changes throughout an active Coherent rollout": ScalingDeferred appears while the rollout is active and clears when it completes; the scale write follows', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'coherent');
    const coherent = { 'nvidia.com/grove-update-strategy': 'Coherent' };
    const pcs = await runningDgd(namespace, 'graph', 2, coherent);
    expect((pcs['spec'] as { updateStrategy?: { type: string } }).updateStrategy?.type).toBe('Coherent');

    // Acting as Grove: a Coherent rollout is in progress on the acknowledged generation.
    await groveReportsPcs(pcs, { updateStartedAt: '2026-11-29T12:00:00Z' });
    await user.apply(aDgd(namespace, 'graph', 3, coherent), { force: true });
    const deferred = await eventually('ScalingDeferred=True', async () => {
      const current = await getDgd(namespace, 'graph');
      return conditionOf(current, 'ScalingDeferred')?.status === 'True' ? current : undefined;
    }, SECONDS);
    expect(conditionOf(deferred, 'ScalingDeferred')).toMatchObject({ reason: 'CoherentUpdateInProgress', message: 'Replica changes are deferred until the Grove coherent update completes' });
    expect(conditionOf(deferred, 'Ready')).toMatchObject({ status: 'False', reason: 'scaling_deferred' });
    expect(deferred['status']).toMatchObject({ state: 'pending', components: { worker: { replicas: 2 } } });
    await bridge.idle();
    expect(await cliqueReplicas(namespace, 'graph-0-worker')).toBe(2);

    // Acting as Grove: the rollout completes. The PodCliqueSet event resumes scaling.
    await groveReportsPcs(pcs, { updateStartedAt: '2026-11-29T12:00:00Z', updateEndedAt: '2026-11-29T12:03:00Z' });
    await eventually('worker PodClique scaled to 3', async () => ((await cliqueReplicas(namespace, 'graph-0-worker')) === 3 ? true : undefined), SECONDS);
    const allowed = await eventually('ScalingDeferred=False', async () => {
      const current = await getDgd(namespace, 'graph');
      return conditionOf(current, 'ScalingDeferred')?.status === 'False' ? current : undefined;
    }, SECONDS);
    expect(conditionOf(allowed, 'ScalingDeferred')).toMatchObject({ reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred' });
  });
});

describe('a WaitForCheckpoint gate through the PodCliqueScalingGroup scale subresource (issue 20; acting as Grove and as a checkpoint controller, neither of which runs here)', () => {
  /** A frontend and a multinode decode (3 replicas, minimum 2) that waits for its checkpoint. */
  const gatedDgd = (namespace: string): ApplyObject => ({
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: 'graph', namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
        {
          name: 'decode',
          type: 'decode',
          replicas: 3,
          minAvailable: 2,
          multinode: { nodeCount: 2 },
          experimental: { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } },
          podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } },
        },
      ],
    },
  });
  const groupReplicas = async (namespace: string): Promise<number | undefined> =>
    ((await user.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name: 'graph-0-decode' }))?.['spec'] as { replicas?: number } | undefined)?.replicas;

  it('"nil replicas are skipped, unless checkpoint-gated (then 0)": the gated scaling group Grove creates from its seed (the minimum, 2) is scaled to 0, and to the DGD\'s 3 once status.checkpoints says ready, the PodCliqueSet untouched', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'ckpt');
    await user.apply(gatedDgd(namespace), { force: true });
    const pcs = await eventually('PodCliqueSet', () => getPcs(namespace, 'graph'));
    const template = (pcs['spec'] as { template: { cliques: TemplateClique[]; podCliqueScalingGroups: { name: string; cliqueNames: string[]; replicas: number; minAvailable: number }[] } }).template;
    const group = template.podCliqueScalingGroups.find((g) => g.name === 'decode');
    // Seeded with its minimum, which Grove accepts ("replicas must be > 0, and 0 < minAvailable ≤ replicas"), not upstream's 0.
    expect(group).toMatchObject({ replicas: 2, minAvailable: 2, cliqueNames: ['decode-ldr', 'decode-wkr'] });

    // Acting as Grove: the standalone frontend PodClique and the decode PodCliqueScalingGroup,
    // seeded from the template, the PodCliqueSet their controller.
    const owner = [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: 'graph', uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }];
    const labels = { 'app.kubernetes.io/part-of': 'graph', 'app.kubernetes.io/managed-by': 'grove-operator' };
    const frontend = template.cliques.find((c) => c.name === 'frontend') as TemplateClique;
    await grove.apply({ apiVersion: GROVE, kind: 'PodClique', metadata: { name: 'graph-0-frontend', namespace, labels, ownerReferences: owner }, spec: { roleName: 'frontend', replicas: frontend.spec.replicas, podSpec: frontend.spec.podSpec } });
    await grove.apply({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', metadata: { name: 'graph-0-decode', namespace, labels, ownerReferences: owner }, spec: { replicas: group?.replicas, minAvailable: group?.minAvailable, cliqueNames: group?.cliqueNames } });

    await eventually('decode PodCliqueScalingGroup held at 0', async () => ((await groupReplicas(namespace)) === 0 ? true : undefined), SECONDS);
    const waiting = await eventually('Ready=False waiting_for_checkpoint', async () => {
      const current = await getDgd(namespace, 'graph');
      return conditionOf(current, 'Ready')?.reason === 'waiting_for_checkpoint' ? current : undefined;
    }, SECONDS);
    expect(conditionOf(waiting, 'Ready')).toMatchObject({ status: 'False', message: 'Waiting for checkpoints: decode' });
    await bridge.idle();
    expect(await groupReplicas(namespace)).toBe(0);

    // Acting as a checkpoint controller (no DynamoCheckpoint controller runs here): the
    // checkpoint is ready. The DGD's own event releases the gate.
    await user.applyStatus({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { name: 'graph', namespace }, status: { checkpoints: { decode: { checkpointName: 'decode-ckpt', ready: true } } } }, { force: true });
    await eventually('decode PodCliqueScalingGroup released to 3', async () => ((await groupReplicas(namespace)) === 3 ? true : undefined), SECONDS);
    const released = await eventually('Ready no longer waiting_for_checkpoint', async () => {
      const current = await getDgd(namespace, 'graph');
      return conditionOf(current, 'Ready')?.reason !== 'waiting_for_checkpoint' ? current : undefined;
    }, SECONDS);
    expect((released['status'] as { checkpoints?: unknown }).checkpoints).toEqual({ decode: { checkpointName: 'decode-ckpt', ready: true } });
    const after = (await getPcs(namespace, 'graph')) as KubeObject;
    expect(after.metadata.generation).toBe(pcs.metadata.generation);
    expect(after['spec']).toEqual(pcs['spec']);
  });
});

describe('child events reach the owning DGD (no resync runs here)', () => {
  it('a deleted PodCliqueSet and a deleted Service are restored within seconds', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'restore');
    await user.apply(aDgd(namespace, 'graph', 1), { force: true });
    const pcs = await eventually('PodCliqueSet', () => getPcs(namespace, 'graph'));
    const service = await eventually('Service graph-worker', () => user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' }));
    await bridge.idle();

    await user.delete({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' });
    const restoredService = await eventually('Service graph-worker restored', async () => {
      const current = await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' });
      return current !== undefined && current.metadata.uid !== service.metadata.uid ? current : undefined;
    }, SECONDS);
    expect(restoredService.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: DGD_KIND, name: 'graph', controller: true })]);

    await user.delete({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: 'graph' });
    const restoredPcs = await eventually('PodCliqueSet restored', async () => {
      const current = await getPcs(namespace, 'graph');
      return current !== undefined && current.metadata.uid !== pcs.metadata.uid ? current : undefined;
    }, SECONDS);
    expect(restoredPcs['spec']).toEqual(pcs['spec']);
  });

  it('a hand-edited Service field the function owns is taken back within seconds', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'handedit');
    await user.apply(aDgd(namespace, 'graph', 1), { force: true });
    const service = await eventually('Service graph-frontend', () => user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-frontend' }));
    const selector = (service['spec'] as { selector: Record<string, string> }).selector;
    expect(selector['nvidia.com/dynamo-component']).toBeDefined();
    await bridge.idle();
    await user.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'graph-frontend', namespace }, spec: { selector: { ...selector, 'nvidia.com/dynamo-component': 'hijacked' } } }, { force: true });
    await eventually('selector taken back', async () => {
      const current = await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-frontend' });
      const value = (current?.['spec'] as { selector: Record<string, string> } | undefined)?.selector['nvidia.com/dynamo-component'];
      return value === selector['nvidia.com/dynamo-component'] ? true : undefined;
    }, SECONDS);
  });

  it('Grove\'s progress on a PodClique reaches the DGD\'s status without a resync', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'progress');
    await user.apply(aDgd(namespace, 'graph', 2), { force: true });
    const pcs = await eventually('PodCliqueSet', () => getPcs(namespace, 'graph'));
    await groveReportsPcs(pcs, undefined);
    await groveCreatesCliques(pcs);
    await eventually('components.worker found', async () => {
      const worker = ((await getDgd(namespace, 'graph'))?.['status'] as { components?: Record<string, { componentKind?: string; replicas?: number }> } | undefined)?.components?.['worker'];
      return worker?.componentKind === 'PodClique' && conditionOf(await getDgd(namespace, 'graph'), 'Ready')?.message.includes('worker: updating') === true ? true : undefined;
    }, SECONDS);
    await groveReportsCliquesReady(namespace, 'graph');
    await eventually('Ready=True', async () => (conditionOf(await getDgd(namespace, 'graph'), 'Ready')?.status === 'True' ? true : undefined), SECONDS);
  });
});

describe('ownership safety: "never touching objects we do not own" (issue 7 part 5)', () => {
  it('a hand-made Service and PodCliqueSet of the rendered names survive the DGD\'s create and delete unchanged, and the DGD reports Ready=False naming them', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'owner');
    const handService = await user.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'graph-frontend', namespace, labels: { team: 'ours' } }, spec: { ports: [{ name: 'web', port: 80 }] } });
    const handPcs = await user.apply({
      apiVersion: GROVE,
      kind: 'PodCliqueSet',
      metadata: { name: 'graph', namespace },
      spec: {
        replicas: 1,
        template: { cliques: [{ name: 'main', spec: { roleName: 'main', replicas: 1, podSpec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } }] },
      },
    });

    await user.apply(aDgd(namespace, 'graph', 1), { force: true });
    const ready = await eventually('Ready=False OwnershipConflict', async () => {
      const condition = conditionOf(await getDgd(namespace, 'graph'), 'Ready');
      return condition?.reason === 'OwnershipConflict' ? condition : undefined;
    });
    expect(ready).toEqual(
      expect.objectContaining({
        status: 'False',
        message:
          `PodCliqueSet ${namespace}/graph exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched; ` +
          `Service ${namespace}/graph-frontend exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched`,
      }),
    );
    // The name that was free is ours: created, controlled by the DGD.
    const ours = await eventually('Service graph-worker', () => user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' }));
    expect(ours.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: DGD_KIND, controller: true })]);
    await bridge.idle();
    const unchanged = async (): Promise<void> => {
      const service = await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-frontend' });
      const pcs = await getPcs(namespace, 'graph');
      expect(service?.metadata.resourceVersion).toBe(handService.metadata.resourceVersion);
      expect(service?.metadata.ownerReferences).toBeUndefined();
      expect(pcs?.metadata.resourceVersion).toBe(handPcs.metadata.resourceVersion);
      expect(pcs?.metadata.ownerReferences).toBeUndefined();
    };
    await unchanged();

    await user.delete({ ...DGD_REF, namespace, name: 'graph' });
    await eventually('DGD gone', async () => ((await getDgd(namespace, 'graph')) === undefined ? true : undefined));
    // The garbage collector (kube-controller-manager runs here) removes what the DGD controlled...
    await eventually('Service graph-worker collected', async () => ((await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' })) === undefined ? true : undefined));
    await bridge.idle();
    // ...and nothing else.
    await unchanged();
  });
});

describe('issue 20 "the same rule everywhere a function reads what a Job or a user could also write": Grove children', () => {
  it('a PodClique planted at a rendered clique name, controlled by another object and reporting ready, is not the DGD\'s: no scale write reaches it and the component reads "resource not found"', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'planted');
    // The planted clique's controller exists (the garbage collector runs here and would remove a clique whose owner does not).
    const decoy = await user.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'decoy', namespace } });
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'decoy', uid: decoy.metadata.uid, controller: true }];
    const planted = await user.apply({
      apiVersion: GROVE,
      kind: 'PodClique',
      metadata: { name: 'graph-0-frontend', namespace, labels: { 'app.kubernetes.io/part-of': 'graph', 'app.kubernetes.io/managed-by': 'grove-operator' }, ownerReferences },
      spec: { roleName: 'frontend', replicas: 3, podSpec: { containers: [{ name: 'main', image: IMAGE }] } },
    });
    await user.applyStatus(
      { apiVersion: GROVE, kind: 'PodClique', metadata: { name: 'graph-0-frontend', namespace }, status: { observedGeneration: planted.metadata.generation, replicas: 3, readyReplicas: 3, updatedReplicas: 3, scheduledReplicas: 3, scheduleGatedReplicas: 0 } },
      { force: true },
    );

    await user.apply(aDgd(namespace, 'graph', 1), { force: true });
    const pcs = await eventually('PodCliqueSet', () => getPcs(namespace, 'graph'));
    // Acting as Grove: it creates the worker's clique (the frontend's name is taken, so it cannot create that one) and reports progress.
    await groveCreatesCliques(pcs);
    await groveReportsCliquesReady(namespace, 'graph');
    await groveReportsPcs(pcs, undefined);
    // The pass after Grove's writes: the real worker clique is read as ready.
    await eventually('components.worker ready', async () => {
      const worker = ((await getDgd(namespace, 'graph'))?.['status'] as { components?: Record<string, { readyReplicas?: number }> } | undefined)?.components?.['worker'];
      return worker?.readyReplicas === 1 ? true : undefined;
    }, SECONDS);
    await bridge.idle();

    expect(conditionOf(await getDgd(namespace, 'graph'), 'Ready')).toMatchObject({ status: 'False', message: 'frontend: resource not found' });
    const stored = await user.get({ apiVersion: GROVE, kind: 'PodClique', namespace, name: 'graph-0-frontend' });
    expect({ replicas: (stored?.['spec'] as { replicas?: number } | undefined)?.replicas, ownerReferences: stored?.metadata.ownerReferences }).toEqual({ replicas: 3, ownerReferences });
  });
});

describe('deletion: "Nothing is written to a DGD under deletion or to its children" (issue 8 part 6)', () => {
  it('a DGD held by a finalizer while deleted gets no status write, and a deleted child is not recreated', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'deleting');
    await user.apply({ ...aDgd(namespace, 'graph', 1), metadata: { name: 'graph', namespace, finalizers: ['example.com/hold'] } }, { force: true });
    await eventually('PodCliqueSet', () => getPcs(namespace, 'graph'));
    await eventually('Ready condition', async () => conditionOf(await getDgd(namespace, 'graph'), 'Ready'));
    await bridge.idle();

    await user.delete({ ...DGD_REF, namespace, name: 'graph' });
    const deleting = await eventually('deletionTimestamp set', async () => {
      const current = await getDgd(namespace, 'graph');
      return current?.metadata['deletionTimestamp'] !== undefined ? current : undefined;
    });
    await bridge.idle();
    const before = (await getDgd(namespace, 'graph'))?.metadata.resourceVersion;
    await user.delete({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' });
    await bridge.resync();
    await bridge.idle();
    expect((await getDgd(namespace, 'graph'))?.metadata.resourceVersion).toBe(before ?? deleting.metadata.resourceVersion);
    expect(await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: 'graph-worker' })).toBeUndefined();

    const held = (await getDgd(namespace, 'graph')) as KubeObject;
    await user.replace({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    await eventually('DGD gone', async () => ((await getDgd(namespace, 'graph')) === undefined ? true : undefined));
  });
});
