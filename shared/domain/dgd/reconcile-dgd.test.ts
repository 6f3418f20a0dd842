import { describe, expect, it } from 'vitest';
import type { PodClique, PodCliqueScalingGroup, PodCliqueSet } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { decideScalingGate, keepSeededReplicas, keepUpdateStrategyDuringRollout } from './grove-scaling.js';
import { childOwner } from '../ownership.js';
import { decideDgd, decideDgdFailure, readyEventName, type DgdObserved } from './reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG, renderDgd, type RenderedObject } from './render.js';

const NOW = new Date('2026-11-29T12:00:00Z');
/** The worker hash the fixture's worker pods run (their DYN_NAMESPACE_WORKER_SUFFIX); the same for every replica count (replicas are not hashed, upstream-notes/dgd.md §4.3). */
const FIXTURE_WORKER_HASH = 'ae2600f9';
const LATER = new Date('2026-11-29T12:05:00Z');
const UID = '0b6c1e5e-1111-2222-3333-444455556666';
const OURS = [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'my-graph', uid: UID, controller: true, blockOwnerDeletion: true }];

interface World {
  readonly pcs?: Record<string, unknown>;
  readonly services?: Record<string, unknown>[];
  readonly cliques?: PodClique[];
  readonly groups?: PodCliqueScalingGroup[];
  readonly written?: boolean;
}

function observed(parent: unknown, world: World = {}): DgdObserved {
  const pcs = world.pcs;
  return deepFreeze({
    parent: parent as Record<string, unknown>,
    children: {
      PodCliqueSet: new Map(pcs === undefined ? [] : [[(pcs['metadata'] as { name: string }).name, pcs]]),
      Service: new Map((world.services ?? []).map((s) => [(s['metadata'] as { name: string }).name, s])),
      PodClique: new Map((world.cliques ?? []).map((c) => [c.metadata.name ?? '', c])),
      PodCliqueScalingGroup: new Map((world.groups ?? []).map((g) => [g.metadata.name ?? '', g])),
    },
    ...(world.written === undefined ? {} : { podCliqueSetWritten: world.written }),
  });
}

function aClique(name: string, replicas: number, status: Partial<NonNullable<PodClique['status']>> = {}): PodClique {
  return {
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodClique',
    metadata: { name, generation: 2 },
    spec: { roleName: name, replicas, podSpec: {} },
    status: { observedGeneration: 2, replicas, updatedReplicas: replicas, readyReplicas: replicas, ...status },
  };
}

/** The PodCliqueSet the DGD renders, stored as Grove would leave it: generation, strategy, status. */
function aStoredPcs(dgd: unknown, options: { generation?: number; observedGeneration?: number; strategy?: string; progress?: { updateStartedAt: string; updateEndedAt?: string } } = {}): Record<string, unknown> {
  const rendered = renderDgd(dgd as Parameters<typeof renderDgd>[0]);
  if (!rendered.ok) throw new Error('fixture does not render');
  const pcs = structuredClone(rendered.objects[0]) as RenderedObject & { spec: Record<string, unknown> };
  if (options.strategy !== undefined) pcs.spec['updateStrategy'] = { type: options.strategy };
  return {
    ...pcs,
    metadata: { ...pcs.metadata, generation: options.generation ?? 2, resourceVersion: '10' },
    status: {
      ...(options.observedGeneration === undefined ? {} : { observedGeneration: options.observedGeneration }),
      ...(options.progress === undefined ? {} : { updateProgress: options.progress }),
    },
  };
}

const dgd = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 3 } };
const withWorkers = (replicas: number, annotations?: Record<string, string>) => ({
  ...dgd,
  metadata: { ...dgd.metadata, ...(annotations === undefined ? {} : { annotations }) },
  spec: { ...dgd.spec, components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { replicas })] },
});
const readyChildren = [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 2)];
const COHERENT = { 'nvidia.com/grove-update-strategy': 'Coherent' };
const ROLLING = { 'nvidia.com/grove-update-strategy': 'RollingRecreate' };
const ACTIVE = { updateStartedAt: '2026-11-29T11:59:00Z' };
const ENDED = { updateStartedAt: '2026-11-29T11:58:00Z', updateEndedAt: '2026-11-29T11:59:00Z' };

describe('decideDgd (upstream-notes/dgd.md §4.7)', () => {
  it('applies the rendered PodCliqueSet and Services and reports Ready=False "<component>: resource not found" before Grove creates the children', () => {
    const desired = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, NOW);
    // With Kubernetes discovery (the default backend) the discovery ServiceAccount, Role and
    // RoleBinding are children too (upstream reconcileK8sDiscoveryResources).
    expect(desired.apply.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['PodCliqueSet/my-graph', 'Role/my-graph-k8s-service-discovery-role', 'RoleBinding/my-graph-k8s-service-discovery-binding', 'Service/my-graph-frontend', 'Service/my-graph-worker', 'ServiceAccount/my-graph-k8s-service-discovery']);
    expect(desired.create).toEqual([]);
    expect(desired.scale).toEqual([]);
    expect(desired.status).toEqual({
      observedGeneration: 3,
      state: 'pending',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'some_resources_are_not_ready',
          message: 'frontend: resource not found; worker: resource not found',
          lastTransitionTime: '2026-11-29T12:00:00Z',
          observedGeneration: 3,
        },
        { type: 'ScalingDeferred', status: 'False', reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 },
      ],
      components: {
        frontend: { componentKind: 'PodClique', componentNames: ['my-graph-0-frontend'], replicas: 0, updatedReplicas: 0, runtimeNamespace: 'inference-my-graph' },
        worker: { componentKind: 'PodClique', componentNames: ['my-graph-0-worker'], replicas: 0, updatedReplicas: 0, runtimeNamespace: `inference-my-graph-${FIXTURE_WORKER_HASH}` },
      },
    });
    // The Event name is `<dgd>.<16 hex>`, the same for the same transition decided again (a
    // duplicate event or a second replica), different for another DGD uid: asserted from those
    // properties, not from the function that computes it.
    expect(desired.events).toEqual([{ name: expect.stringMatching(/^my-graph\.[0-9a-f]{16}$/) as unknown as string, type: 'Normal', reason: 'some_resources_are_not_ready', note: 'frontend: resource not found; worker: resource not found' }]);
    expect(decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, LATER).events.map((e) => e.name)).toEqual(desired.events.map((e) => e.name));
    const otherUid = { ...dgd, metadata: { ...dgd.metadata, uid: 'another-uid' } };
    expect(decideDgd(observed(otherUid), DEFAULT_RENDER_CONFIG, NOW).events[0]?.name).not.toBe(desired.events[0]?.name);
    expect(desired.permanentFailure).toBeUndefined();
  });

  it('reports Ready=True, state successful, and status.components when every PodClique has replicas = updated = ready = desired', () => {
    const desired = decideDgd(observed(dgd, { pcs: aStoredPcs(dgd, { observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 1)] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.state).toBe('successful');
    expect(desired.status.conditions[0]).toMatchObject({ status: 'True', reason: 'all_resources_are_ready' });
    expect(desired.status.components).toEqual({
      frontend: { componentKind: 'PodClique', componentNames: ['my-graph-0-frontend'], replicas: 1, updatedReplicas: 1, readyReplicas: 1, runtimeNamespace: 'inference-my-graph' },
      worker: { componentKind: 'PodClique', componentNames: ['my-graph-0-worker'], replicas: 1, updatedReplicas: 1, readyReplicas: 1, runtimeNamespace: `inference-my-graph-${FIXTURE_WORKER_HASH}` },
    });
  });

  it('judges a scaling-group component by its available replicas', () => {
    const multinode = { ...dgd, spec: { ...dgd.spec, components: [aComponent('decode', 'decode', { replicas: 2, multinode: { nodeCount: 2 } })] } };
    const group: PodCliqueScalingGroup = {
      apiVersion: 'grove.io/v1alpha1',
      kind: 'PodCliqueScalingGroup',
      metadata: { name: 'my-graph-0-decode', generation: 1 },
      spec: { replicas: 2, cliqueNames: ['decode-ldr', 'decode-wkr'] },
      status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 1 },
    };
    const desired = decideDgd(observed(multinode, { groups: [group] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.conditions[0]?.message).toBe('decode: pods_not_ready');
  });

  it('is not fooled by old pods during a rollout: children that look ready are "updating" while Grove has not acknowledged the PodCliqueSet generation (Ready reason: their shared reason, upstream-notes/dgd.md §4.7 step 5)', () => {
    const world = { pcs: aStoredPcs(dgd, { generation: 3, observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 1)] };
    const desired = decideDgd(observed(dgd, world), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.state).toBe('pending');
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'updating', message: 'frontend: updating; worker: updating' });
  });

  it('is not fooled by old pods while a rollout is active (updateProgress without updateEndedAt), nor right after its own PodCliqueSet write', () => {
    const cliques = [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 1)];
    const active = decideDgd(observed(dgd, { pcs: aStoredPcs(dgd, { observedGeneration: 2, progress: ACTIVE }), cliques }), DEFAULT_RENDER_CONFIG, NOW);
    expect(active.status.conditions[0]?.message).toBe('frontend: updating; worker: updating');
    const written = decideDgd(observed(dgd, { pcs: aStoredPcs(dgd, { observedGeneration: 2 }), cliques, written: true }), DEFAULT_RENDER_CONFIG, NOW);
    expect(written.status.conditions[0]?.message).toBe('frontend: updating; worker: updating');
  });

  it('writes nothing new when deciding again after its own status was stored (same lastTransitionTime, no event)', () => {
    const first = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, NOW);
    const stored = { ...dgd, status: first.status };
    const second = decideDgd(observed(stored), DEFAULT_RENDER_CONFIG, LATER);
    expect(second.status).toEqual(first.status);
    expect(second.events).toEqual([]);
    expect(second.apply).toEqual(first.apply);
  });

  it('reports an invalid spec as Ready=False InvalidSpec with every field error, applies nothing, keeps observedGeneration and marks the failure permanent', () => {
    const bad = { ...dgd, spec: { ...dgd.spec, components: [{ name: 'worker', type: 'worker', replicas: -1 }] }, status: { observedGeneration: 2 } };
    const desired = decideDgd(observed(bad), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.scale).toEqual([]);
    expect(desired.status.state).toBe('failed');
    expect(desired.status.observedGeneration).toBe(2);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'InvalidSpec', observedGeneration: 3 });
    expect(desired.status.conditions[0]?.message).toBe('spec.components[0].replicas: Invalid value: -1: must be greater than or equal to 0');
    expect(desired.permanentFailure).toEqual({ reason: 'InvalidSpec', message: desired.status.conditions[0]?.message });
  });

  it('reports a disabled status without workload reconciliation when LPX components exist and lpx.enabled=false (dgd-reference)', () => {
    const lpx = { ...dgd, spec: { ...dgd.spec, components: [...dgd.spec.components, aComponent('lpu', 'lpx', { replicas: undefined, lpx: { buildId: 'b' } })] } };
    const desired = decideDgd(observed(lpx), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.scale).toEqual([]);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'LPXDisabled' });
  });
});

describe('scaling through Grove scale subresources (grove.md §A.6 "Template replicas only seed a PCLQ or PCSG at creation")', () => {
  it('a replica edit becomes a scale write on the PodClique and leaves the PodCliqueSet template (and its replicas seed) unchanged', () => {
    const before = withWorkers(2, ROLLING);
    const pcs = aStoredPcs(before, { observedGeneration: 2 });
    const after = withWorkers(5, ROLLING);
    const desired = decideDgd(observed(after, { pcs, cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([{ apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'my-graph-0-worker', component: 'worker', replicas: 5 }]);
    const appliedPcs = desired.apply.find((o) => o.kind === 'PodCliqueSet');
    expect(appliedPcs?.['spec']).toEqual(pcs['spec']);
  });

  it('a multinode replica edit scales the PodCliqueScalingGroup, keeping the scaling group seed and the per-replica node counts', () => {
    const decode = (replicas: number) => ({ ...dgd, spec: { ...dgd.spec, components: [aComponent('decode', 'decode', { replicas, multinode: { nodeCount: 3 } })] } });
    const pcs = aStoredPcs(decode(1), { observedGeneration: 2 });
    const group: PodCliqueScalingGroup = {
      apiVersion: 'grove.io/v1alpha1',
      kind: 'PodCliqueScalingGroup',
      metadata: { name: 'my-graph-0-decode', generation: 1 },
      spec: { replicas: 1, cliqueNames: ['decode-ldr', 'decode-wkr'] },
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    };
    const desired = decideDgd(observed(decode(4), { pcs, groups: [group] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'my-graph-0-decode', component: 'decode', replicas: 4 }]);
    expect(desired.apply.find((o) => o.kind === 'PodCliqueSet')?.['spec']).toEqual(pcs['spec']);
  });

  it('a component without replicas is left to whoever scales it ("nil replicas are skipped", upstream dgd_grove_scaler.go)', () => {
    const external = { ...dgd, spec: { ...dgd.spec, components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { replicas: undefined })] } };
    const desired = decideDgd(observed(external, { pcs: aStoredPcs(external, { observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 7)] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'True' });
  });

  it('keepSeededReplicas keeps observed clique and scaling-group replicas and nothing else ("Template replicas only seed a PCLQ or PCSG at creation", grove.md §A.6)', () => {
    const graph = (workers: number, decodes: number) => ({
      ...dgd,
      spec: { ...dgd.spec, components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { replicas: workers }), aComponent('decode', 'decode', { replicas: decodes, multinode: { nodeCount: 2 } })] },
    });
    const rendered = renderDgd(graph(9, 5));
    if (!rendered.ok) throw new Error('fixture does not render');
    const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet') as RenderedObject;
    const observedPcs = aStoredPcs(graph(2, 3)) as unknown as PodCliqueSet;
    type Template = { cliques: { name: string; spec: { replicas: number } }[]; podCliqueScalingGroups: { name: string; replicas: number }[] };
    // Expected: the rendered PodCliqueSet with exactly the seeds replaced by the stored ones: the
    // standalone worker clique 9 -> 2, the decode scaling group 5 -> 3; the multinode member
    // cliques keep their per-replica node counts (ldr 1, wkr 1) and nothing else moves.
    const expected = structuredClone(pcs) as unknown as { spec: { template: Template } };
    const clique = (name: string) => expected.spec.template.cliques.find((c) => c.name === name);
    const group = expected.spec.template.podCliqueScalingGroups.find((g) => g.name === 'decode');
    if (clique('worker') === undefined || group === undefined) throw new Error('fixture lacks the worker clique or the decode scaling group');
    (clique('worker') as { spec: { replicas: number } }).spec.replicas = 2;
    group.replicas = 3;
    expect([clique('decode-ldr')?.spec.replicas, clique('decode-wkr')?.spec.replicas]).toEqual([1, 1]);
    expect(keepSeededReplicas(pcs, observedPcs)).toEqual(expected);
    expect(keepSeededReplicas(pcs, undefined)).toBe(pcs);
  });
});

/**
 * The Coherent gate as a table of observed PodCliqueSet states. Rows are upstream's
 * `TestGroveScalingBlocked` (deploy/operator/internal/dynamo; PCS generation 2), plus the
 * "after a write, waits for its cache to observe that configuration" row.
 */
describe('decideScalingGate: "For Coherent, it also waits until Grove acknowledges the current configuration (status.observedGeneration matches metadata.generation) and any active rollout completes" (dgd-reference)', () => {
  const pcs = (strategy: string | undefined, observedGeneration: number | undefined, progress: 'none' | 'active' | 'ended'): PodCliqueSet =>
    ({
      apiVersion: 'grove.io/v1alpha1',
      kind: 'PodCliqueSet',
      metadata: { name: 'g', generation: 2 },
      spec: { replicas: 1, ...(strategy === undefined ? {} : { updateStrategy: { type: strategy } }), template: { cliques: [] } },
      status: {
        ...(observedGeneration === undefined ? {} : { observedGeneration }),
        ...(progress === 'none' ? {} : { updateProgress: progress === 'active' ? ACTIVE : ENDED }),
      },
    }) as PodCliqueSet;
  const rows: { name: string; reason: string; input: { pcs: PodCliqueSet | undefined; written: boolean }; want: ReturnType<typeof decideScalingGate> }[] = [
    { name: 'before creation', reason: 'a missing PCS has no active update', input: { pcs: undefined, written: false }, want: { blocked: false } },
    { name: 'initial configuration without observed generation', reason: 'RollingRecreate never waits on observedGeneration', input: { pcs: pcs(undefined, undefined, 'none'), written: false }, want: { blocked: false } },
    { name: 'initial coherent configuration without observed generation', reason: 'Missing progress does not acknowledge a new configuration', input: { pcs: pcs('Coherent', undefined, 'none'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'coherent configuration before an update starts', reason: 'progress from an older generation acknowledges nothing', input: { pcs: pcs('Coherent', 1, 'none'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'acknowledged coherent configuration without a rollout', reason: 'observedGeneration matches metadata.generation', input: { pcs: pcs('Coherent', 2, 'none'), written: false }, want: { blocked: false } },
    { name: 'active coherent update with lagging observed generation', reason: 'Grove rejects replica changes throughout an active Coherent rollout', input: { pcs: pcs('Coherent', 1, 'active'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'active coherent update without observed generation', reason: 'Grove rejects replica changes throughout an active Coherent rollout', input: { pcs: pcs('Coherent', undefined, 'active'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'active coherent update after generation acknowledgement', reason: 'and any active rollout completes', input: { pcs: pcs('Coherent', 2, 'active'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'completed coherent update with lagging observed generation', reason: 'completed progress from an older generation does not acknowledge a new configuration', input: { pcs: pcs('Coherent', 1, 'ended'), written: false }, want: { blocked: true, reason: 'CoherentUpdateInProgress' } },
    { name: 'completed acknowledged coherent update', reason: 'acknowledged and no active rollout', input: { pcs: pcs('Coherent', 2, 'ended'), written: false }, want: { blocked: false } },
    { name: 'active rolling recreate with lagging observed generation', reason: 'RollingRecreate rollouts do not block replica changes once the configuration is observed, even if Grove’s observed generation lags', input: { pcs: pcs('RollingRecreate', 1, 'active'), written: false }, want: { blocked: false } },
    { name: 'on delete with lagging observed generation', reason: 'only Coherent waits for acknowledgement', input: { pcs: pcs('OnDelete', 1, 'ended'), written: false }, want: { blocked: false } },
    { name: 'implicit rolling recreate with lagging observed generation', reason: 'no strategy is Grove’s default, RollingRecreate', input: { pcs: pcs(undefined, 1, 'active'), written: false }, want: { blocked: false } },
    { name: 'written in this pass, RollingRecreate', reason: 'after a write, waits for its cache to observe that configuration', input: { pcs: pcs('RollingRecreate', 2, 'ended'), written: true }, want: { blocked: true, reason: 'PodCliqueSetWritePending' } },
    { name: 'created in this pass', reason: 'after a write, waits for its cache to observe that configuration', input: { pcs: undefined, written: true }, want: { blocked: true, reason: 'PodCliqueSetWritePending' } },
  ];
  it.each(rows)('$name ($reason)', ({ input, want }) => {
    expect(decideScalingGate(input.pcs === undefined ? undefined : deepFreeze(input.pcs), input.written)).toEqual(want);
  });
});

describe('ScalingDeferred: "During this wait the operator continues observing workload readiness and component status and reports ScalingDeferred when a replica change is pending" (dgd-reference)', () => {
  it('under an active Coherent rollout a pending replica change is not written; ScalingDeferred=True CoherentUpdateInProgress, Ready=False scaling_deferred, state pending, components still reported', () => {
    const after = withWorkers(5, COHERENT);
    const desired = decideDgd(observed(after, { pcs: aStoredPcs(after, { generation: 3, observedGeneration: 3, strategy: 'Coherent', progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.status.state).toBe('pending');
    expect(desired.status.conditions).toEqual([
      // worker: desired 5, replicas 2: "updating" (upstream pcsgStatusReady: updated or replicas differ from desired)
      { type: 'Ready', status: 'False', reason: 'scaling_deferred', message: 'frontend: updating; worker: updating', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 },
      { type: 'ScalingDeferred', status: 'True', reason: 'CoherentUpdateInProgress', message: 'Replica changes are deferred until the Grove coherent update completes', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 },
    ]);
    expect(desired.status.components?.['worker']).toEqual({ componentKind: 'PodClique', componentNames: ['my-graph-0-worker'], replicas: 2, updatedReplicas: 2, readyReplicas: 2, runtimeNamespace: `inference-my-graph-${FIXTURE_WORKER_HASH}` });
  });

  it('when the rollout completes and Grove acknowledged the generation, the scale write goes out and ScalingDeferred turns False ScalingAllowed', () => {
    const after = withWorkers(5, COHERENT);
    const deferredBefore = { type: 'ScalingDeferred', status: 'True', reason: 'CoherentUpdateInProgress', message: 'Replica changes are deferred until the Grove coherent update completes', lastTransitionTime: '2026-11-29T12:00:00Z' };
    const stored = { ...after, status: { conditions: [deferredBefore] } };
    const desired = decideDgd(observed(stored, { pcs: aStoredPcs(after, { generation: 3, observedGeneration: 3, strategy: 'Coherent', progress: ENDED }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, LATER);
    expect(desired.scale.map((s) => [s.name, s.replicas])).toEqual([['my-graph-0-worker', 5]]);
    expect(desired.status.conditions[1]).toEqual({ type: 'ScalingDeferred', status: 'False', reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred', lastTransitionTime: LATER.toISOString().replace('.000Z', 'Z'), observedGeneration: 3 });
  });

  it('without a pending replica change an active Coherent rollout defers nothing: ScalingDeferred=False ScalingAllowed', () => {
    const same = withWorkers(2, COHERENT);
    const desired = decideDgd(observed(same, { pcs: aStoredPcs(same, { generation: 3, observedGeneration: 3, strategy: 'Coherent', progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.status.conditions[1]).toEqual({ type: 'ScalingDeferred', status: 'False', reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 });
    expect(desired.status.conditions[0]).toMatchObject({ reason: 'updating' });
  });

  it('RollingRecreate scales during its own rollout with a lagging observed generation', () => {
    const after = withWorkers(5, ROLLING);
    const desired = decideDgd(observed(after, { pcs: aStoredPcs(after, { generation: 3, observedGeneration: 2, strategy: 'RollingRecreate', progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale.map((s) => [s.name, s.replicas])).toEqual([['my-graph-0-worker', 5]]);
    expect(desired.status.conditions[1]).toMatchObject({ type: 'ScalingDeferred', status: 'False' });
  });

  it('right after its own PodCliqueSet write nothing is scaled and nothing is reported deferred (the PodCliqueSet event resumes scaling)', () => {
    const after = withWorkers(5, COHERENT);
    const desired = decideDgd(observed(after, { pcs: aStoredPcs(after, { generation: 3, observedGeneration: 3, strategy: 'Coherent' }), cliques: readyChildren, written: true }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.status.conditions[1]).toMatchObject({ type: 'ScalingDeferred', status: 'False' });
  });
});

describe('ownership: "a Service or PodCliqueSet of the same name that is not controlled by this DGD is left untouched, and the DGD reports Ready=False with a reason and a message naming the conflicting object" (issue 7 part 5)', () => {
  const handMadeService = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'my-graph-frontend', namespace: 'inference', uid: 'hand' }, spec: { ports: [{ port: 80 }] } };
  const foreignPcs = { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', metadata: { name: 'my-graph', namespace: 'inference', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'other', uid: 'x', controller: true }] }, spec: {} };

  it('leaves out every conflicting object, applies the rest, scales nothing, reports OwnershipConflict naming each object, permanently', () => {
    const desired = decideDgd(observed(withWorkers(5), { pcs: foreignPcs, services: [handMadeService], cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Role/my-graph-k8s-service-discovery-role', 'RoleBinding/my-graph-k8s-service-discovery-binding', 'Service/my-graph-worker', 'ServiceAccount/my-graph-k8s-service-discovery']);
    expect(desired.scale).toEqual([]);
    const message =
      'PodCliqueSet inference/my-graph exists and is not controlled by this DynamoGraphDeployment (controller: Deployment other); it is left untouched; ' +
      'Service inference/my-graph-frontend exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched';
    expect(desired.status).toEqual({
      observedGeneration: undefined,
      state: 'failed',
      conditions: [{ type: 'Ready', status: 'False', reason: 'OwnershipConflict', message, lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 }],
    });
    expect(desired.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'OwnershipConflict']]);
    expect(desired.permanentFailure).toEqual({ reason: 'OwnershipConflict', message });
  });

  it('an object this DGD controls (owner reference with controller: true and its uid) is applied as usual', () => {
    const ours = { ...handMadeService, metadata: { ...handMadeService.metadata, ownerReferences: OURS } };
    const desired = decideDgd(observed(dgd, { services: [ours] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply.map((o) => o.metadata.name)).toEqual(['my-graph', 'my-graph-k8s-service-discovery-role', 'my-graph-k8s-service-discovery-binding', 'my-graph-frontend', 'my-graph-worker', 'my-graph-k8s-service-discovery']);
    expect(desired.permanentFailure).toBeUndefined();
  });

  it('an object owned by another DGD of the same name (a different uid) is a conflict', () => {
    const otherUid = { ...handMadeService, metadata: { ...handMadeService.metadata, ownerReferences: [{ ...OURS[0], uid: 'previous-incarnation' }] } };
    const desired = decideDgd(observed(dgd, { services: [otherUid] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.conditions[0]).toMatchObject({ reason: 'OwnershipConflict', message: expect.stringContaining('(controller: DynamoGraphDeployment my-graph)') });
  });
});

describe('Ready reason: "Capacity classification gives insufficient_capacity ... Otherwise the reason is updating or pods_not_ready. Aggregated reason: the shared reason, or mixed_not_ready_reasons" (upstream-notes/dgd.md §4.7 step 5)', () => {
  const ready = (cliques: PodClique[]) => decideDgd(observed(withWorkers(2), { pcs: aStoredPcs(withWorkers(2), { observedGeneration: 2 }), cliques }), DEFAULT_RENDER_CONFIG, NOW).status.conditions[0];
  const frontendReady = aClique('my-graph-0-frontend', 1);
  it.each([
    { name: 'schedule-gated pods', worker: aClique('my-graph-0-worker', 2, { readyReplicas: 0, scheduleGatedReplicas: 2 }), want: { reason: 'insufficient_capacity', message: 'worker: insufficient_capacity' } },
    { name: 'PodCliqueScheduled=False InsufficientScheduledPods', worker: aClique('my-graph-0-worker', 2, { readyReplicas: 0, conditions: [{ type: 'PodCliqueScheduled', status: 'False', reason: 'InsufficientScheduledPods', message: '', lastTransitionTime: '2026-11-29T11:00:00Z' }] }), want: { reason: 'insufficient_capacity', message: 'worker: insufficient_capacity' } },
    { name: '0 < scheduled < desired', worker: aClique('my-graph-0-worker', 2, { readyReplicas: 1, scheduledReplicas: 1 }), want: { reason: 'insufficient_capacity', message: 'worker: insufficient_capacity' } },
    { name: 'all scheduled, not ready yet', worker: aClique('my-graph-0-worker', 2, { readyReplicas: 1, scheduledReplicas: 2 }), want: { reason: 'pods_not_ready', message: 'worker: pods_not_ready' } },
    { name: 'updated short of desired', worker: aClique('my-graph-0-worker', 2, { updatedReplicas: 1 }), want: { reason: 'updating', message: 'worker: updating' } },
  ])('$name', ({ worker, want }) => {
    expect(ready([frontendReady, worker])).toMatchObject({ status: 'False', ...want });
  });

  it('two components not ready for different reasons: mixed_not_ready_reasons', () => {
    const frontend = aClique('my-graph-0-frontend', 1, { readyReplicas: 0, scheduledReplicas: 1 });
    const worker = aClique('my-graph-0-worker', 2, { readyReplicas: 1, scheduledReplicas: 1 });
    expect(ready([frontend, worker])).toMatchObject({ status: 'False', reason: 'mixed_not_ready_reasons', message: 'frontend: pods_not_ready; worker: insufficient_capacity' });
  });
});

describe('worker-hash commit and status.components[*].runtimeNamespace (upstream-notes/dgd.md §4.3 "Where the hash is carried", §4.7 step 3)', () => {
  /** The hash the rendered worker pods run: their DYN_NAMESPACE_WORKER_SUFFIX (an oracle apart from the commit rule). */
  function podWorkerHash(object: unknown): string {
    const rendered = renderDgd(object as Parameters<typeof renderDgd>[0]);
    if (!rendered.ok) throw new Error('fixture does not render');
    const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; spec: { podSpec: { containers: { env?: { name: string; value?: string }[] }[] } } }[] } } };
    const env = pcs.spec.template.cliques.find((c) => c.name === 'worker')?.spec.podSpec.containers[0]?.env ?? [];
    const value = env.find((e) => e.name === 'DYN_NAMESPACE_WORKER_SUFFIX')?.value;
    if (value === undefined) throw new Error('no DYN_NAMESPACE_WORKER_SUFFIX on the worker');
    return value;
  }
  const rolledOut = (parent: unknown) => observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 2)] });

  it('once every worker runs the rendered hash, it is committed as nvidia.com/current-worker-hash-v2 and the worker\'s runtimeNamespace is "<dynamoNamespace>-<hash>"; the frontend\'s is the Dynamo namespace', () => {
    const parent = withWorkers(2);
    const hash = podWorkerHash(parent);
    const desired = decideDgd(rolledOut(parent), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.parentAnnotations).toEqual({ 'nvidia.com/current-worker-hash-v2': hash });
    expect([desired.status.components?.['frontend']?.['runtimeNamespace'], desired.status.components?.['worker']?.['runtimeNamespace']]).toEqual(['inference-my-graph', `inference-my-graph-${hash}`]);
  });

  it('an already committed hash is not written again', () => {
    const parent = withWorkers(2);
    const committed = withWorkers(2, { 'nvidia.com/current-worker-hash-v2': podWorkerHash(parent) });
    expect(decideDgd(rolledOut(committed), DEFAULT_RENDER_CONFIG, NOW).parentAnnotations).toBeUndefined();
  });

  it('"It switches only after every worker child has completed the PCS revision that Grove accepted": during an active update the committed hash and runtimeNamespace stay the old ones', () => {
    const parent = withWorkers(2, { 'nvidia.com/current-worker-hash-v2': 'deadbeef' });
    const desired = decideDgd(observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.parentAnnotations).toBeUndefined();
    expect(desired.status.components?.['worker']?.['runtimeNamespace']).toBe('inference-my-graph-deadbeef');
  });

  it('a worker child short of its updated replicas holds the commit back too', () => {
    const parent = withWorkers(2, { 'nvidia.com/current-worker-hash-v2': 'deadbeef' });
    const desired = decideDgd(observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 2, { updatedReplicas: 1 })] }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.parentAnnotations).toBeUndefined();
  });
  describe('the legacy v1 nvidia.com/current-worker-hash, as upstream still reads and writes it (dgd_worker_rollout_reconciler.go)', () => {
    const V1 = 'nvidia.com/current-worker-hash';
    const V2 = 'nvidia.com/current-worker-hash-v2';

    it('"Record the current desired state as v2 without changing the active v1 suffix" (migrateCurrentWorkerHashIfNeeded): a v1-only DGD gets v2 at once, even mid-update, v1 kept, runtimeNamespace still on v1, Event WorkerHashMigrated', () => {
      const parent = withWorkers(2, { [V1]: 'abc12345' });
      const desired = decideDgd(observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
      expect(desired.parentAnnotations).toEqual({ [V2]: podWorkerHash(parent) });
      expect(desired.removeParentAnnotations).toBeUndefined();
      expect(desired.status.components?.['worker']?.['runtimeNamespace']).toBe('inference-my-graph-abc12345');
      expect(desired.parentAnnotationsEvent).toMatchObject({ type: 'Normal', reason: 'WorkerHashMigrated', note: 'Recorded v2 worker hash annotation without rolling workers' });
      expect(decideDgd(observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW).parentAnnotationsEvent?.name).toBe(desired.parentAnnotationsEvent?.name);
    });

    it('v1 and a current v2 ("current.v2 == desired.v2"): nothing to write, v1 stays', () => {
      const parent = withWorkers(2);
      const both = withWorkers(2, { [V1]: 'abc12345', [V2]: podWorkerHash(parent) });
      const desired = decideDgd(rolledOut(both), DEFAULT_RENDER_CONFIG, NOW);
      expect([desired.parentAnnotations, desired.removeParentAnnotations]).toEqual([undefined, undefined]);
    });

    it('a new worker generation completed (v2 changes): v2 alone is recorded, v1 removed (workerHashesForCompletedGeneration)', () => {
      const parent = withWorkers(2, { [V1]: 'abc12345', [V2]: 'deadbeef' });
      const desired = decideDgd(rolledOut(parent), DEFAULT_RENDER_CONFIG, NOW);
      expect(desired.parentAnnotations).toEqual({ [V2]: podWorkerHash(parent) });
      expect(desired.removeParentAnnotations).toEqual([V1]);
      expect(desired.parentAnnotationsEvent).toBeUndefined();
    });

    it('the "legacy" sentinel is never migrated as a hash: it is replaced by v2 once the workers run it', () => {
      const parent = withWorkers(2, { [V1]: 'legacy' });
      const during = decideDgd(observed(parent, { pcs: aStoredPcs(parent, { observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
      expect(during.parentAnnotations).toBeUndefined();
      const after = decideDgd(rolledOut(parent), DEFAULT_RENDER_CONFIG, NOW);
      expect([after.parentAnnotations, after.removeParentAnnotations]).toEqual([{ [V2]: podWorkerHash(parent) }, [V1]]);
    });
  });
});

describe('update strategy during an active rollout: "keep the PCS\'s current strategy (or nil) until the active update ends" (upstream-notes/dgd.md §3.1 transition guard)', () => {
  const strategyOf = (desired: ReturnType<typeof decideDgd>) => (desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { updateStrategy?: { type: string } } }).spec.updateStrategy;

  it('a strategy-annotation change during an active update does not rewrite updateStrategy mid-rollout', () => {
    const desired = decideDgd(observed(withWorkers(2, COHERENT), { pcs: aStoredPcs(withWorkers(2), { observedGeneration: 2, strategy: 'RollingRecreate', progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(strategyOf(desired)).toEqual({ type: 'RollingRecreate' });
  });

  it('a stored PodCliqueSet without updateStrategy (Grove\'s default) keeps none while its update is active', () => {
    const desired = decideDgd(observed(withWorkers(2, COHERENT), { pcs: aStoredPcs(withWorkers(2), { observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(strategyOf(desired)).toBeUndefined();
  });

  it('once the update ended (updateEndedAt set), the annotation\'s strategy is applied', () => {
    const desired = decideDgd(observed(withWorkers(2, COHERENT), { pcs: aStoredPcs(withWorkers(2), { observedGeneration: 2, strategy: 'RollingRecreate', progress: ENDED }), cliques: readyChildren }), DEFAULT_RENDER_CONFIG, NOW);
    expect(strategyOf(desired)).toEqual({ type: 'Coherent' });
  });

  it('before the PodCliqueSet exists there is nothing to guard', () => {
    const rendered = renderDgd(withWorkers(2, ROLLING));
    if (!rendered.ok) throw new Error('fixture does not render');
    const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet') as RenderedObject;
    expect(keepUpdateStrategyDuringRollout(pcs, undefined)).toBe(pcs);
  });
});

describe('failures and Events', () => {
  it('decideDgdFailure: "report Failed with Ready=False while the failure persists" with the API server\'s message, components kept, observedGeneration not advanced (dgd-reference; upstream-notes/dgd.md §4.7 step 6)', () => {
    const stored = { ...dgd, status: { observedGeneration: 2 } };
    const message = 'cannot apply Service inference/my-graph-worker: 500 InternalError: Internal error occurred: failed to allocate a serviceIP: range is full';
    const desired = decideDgdFailure(observed(stored, { cliques: readyChildren }), NOW, message);
    expect(desired.apply).toEqual([]);
    expect(desired.scale).toEqual([]);
    expect(desired.status.state).toBe('failed');
    expect(desired.status.observedGeneration).toBe(2);
    expect(desired.status.conditions).toEqual([{ type: 'Ready', status: 'False', reason: 'failed_to_reconcile_the_resources', message, lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 3 }]);
    expect(desired.status.components?.['worker']).toMatchObject({ replicas: 2, readyReplicas: 2 });
    expect(desired.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'failed_to_reconcile_the_resources']]);
  });

  it('one Ready transition gives one Event: deciding it twice gives the same Event name; a message-only change gives none', () => {
    const first = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, NOW);
    const again = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, LATER);
    expect(again.events.map((e) => e.name)).toEqual(first.events.map((e) => e.name));
    const stored = { ...dgd, status: first.status };
    const progressed = decideDgd(observed(stored, { cliques: [aClique('my-graph-0-frontend', 1)] }), DEFAULT_RENDER_CONFIG, LATER);
    expect(progressed.status.conditions[0]?.message).toBe('worker: resource not found');
    expect(progressed.events).toEqual([]);
    const ready = decideDgd(observed(stored, { pcs: aStoredPcs(dgd, { observedGeneration: 2 }), cliques: [aClique('my-graph-0-frontend', 1), aClique('my-graph-0-worker', 1)] }), DEFAULT_RENDER_CONFIG, LATER);
    expect(ready.events).toHaveLength(1);
    expect(ready.events[0]?.name).not.toBe(first.events[0]?.name);
    expect(ready.events[0]?.name).toMatch(/^my-graph\.[0-9a-f]{16}$/);
  });
});

describe('childOwner: a child event reaches the DGD that controls it', () => {
  const rows: { name: string; reason: string; input: Record<string, unknown>; want: ReturnType<typeof childOwner> }[] = [
    { name: 'a PodCliqueSet or Service controlled by a DGD', reason: 'controller owner reference of kind DynamoGraphDeployment, group nvidia.com', input: { metadata: { name: 'my-graph', namespace: 'ns', ownerReferences: OURS } }, want: { kind: 'DynamoGraphDeployment', apiVersion: 'nvidia.com/v1beta1', namespace: 'ns', name: 'my-graph' } },
    { name: 'a PodClique controlled by a PodCliqueSet', reason: 'Grove makes the PodCliqueSet the controller of its PodCliques; the shell follows it', input: { metadata: { name: 'my-graph-0-worker', namespace: 'ns', ownerReferences: [{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name: 'my-graph', uid: 'p', controller: true }] } }, want: { kind: 'PodCliqueSet', namespace: 'ns', name: 'my-graph' } },
    { name: 'a hand-made object', reason: 'no controller: never adopted, triggers nothing', input: { metadata: { name: 'my-graph-frontend', namespace: 'ns' } }, want: undefined },
    { name: 'a non-controller DGD owner reference', reason: 'only controller: true counts', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...OURS[0], controller: false }] } }, want: undefined },
    { name: 'a DynamoGraphDeployment of another group', reason: 'kind and group must both match', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...OURS[0], apiVersion: 'example.com/v1' }] } }, want: undefined },
  ];
  it.each(rows)('$name ($reason)', ({ input, want }) => {
    expect(childOwner(deepFreeze(input))).toEqual(want);
  });
});

describe('decision checks (STYLE.md §16)', () => {
  const inputs = [observed(dgd), observed(withWorkers(5, COHERENT), { pcs: aStoredPcs(withWorkers(5, COHERENT), { strategy: 'Coherent', observedGeneration: 2, progress: ACTIVE }), cliques: readyChildren })];
  it.each(inputs.map((input, index) => ({ name: `input ${index}`, input })))('$name: the same input gives the same output, and a frozen input does not throw', ({ input }) => {
    expect(decideDgd(input, DEFAULT_RENDER_CONFIG, NOW)).toEqual(decideDgd(input, DEFAULT_RENDER_CONFIG, NOW));
  });
});

describe('v1alpha1 claims and the discovery identity as children (upstream reconcilePVC, reconcileK8sDiscoveryResources)', () => {
  const pvcs = [{ name: 'model-cache', create: true, storageClass: 'standard', size: '10Gi', volumeAccessMode: 'ReadWriteOnce' }];
  const withClaims = { ...dgd, metadata: { ...dgd.metadata, annotations: { 'nvidia.com/dgd-spec': JSON.stringify({ spec: { pvcs } }) } } };
  const world = (children: Record<string, Map<string, Record<string, unknown>>>): DgdObserved =>
    deepFreeze({ parent: withClaims as unknown as Record<string, unknown>, children: { ...observed(withClaims).children, ...children } });

  it('a claim to create that does not exist is created (never applied); one that exists, whoever made it, is used as it is', () => {
    const absent = decideDgd(world({ PersistentVolumeClaim: new Map() }), DEFAULT_RENDER_CONFIG, NOW);
    expect(absent.create.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['PersistentVolumeClaim/model-cache']);
    expect(absent.apply.map((o) => o.kind)).not.toContain('PersistentVolumeClaim');
    const handMade = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'model-cache', namespace: 'inference' } };
    const present = decideDgd(world({ PersistentVolumeClaim: new Map([['model-cache', handMade]]) }), DEFAULT_RENDER_CONFIG, NOW);
    expect([present.create, present.permanentFailure]).toEqual([[], undefined]);
  });

  it('a claim named for the user to provide (no create) that does not exist: upstream\'s "legacy top-level PVC ... does not exist and create is not enabled", Ready=False, permanent; the rest is still applied', () => {
    const named = { ...dgd, metadata: { ...dgd.metadata, annotations: { 'nvidia.com/dgd-spec': JSON.stringify({ spec: { pvcs: [{ name: 'weights' }] } }) } } };
    const at = (claims: Map<string, Record<string, unknown>>): DgdObserved => deepFreeze({ parent: named as unknown as Record<string, unknown>, children: { ...observed(named).children, PersistentVolumeClaim: claims } });
    const missing = decideDgd(at(new Map()), DEFAULT_RENDER_CONFIG, NOW);
    const message = 'legacy top-level PVC "weights" does not exist and create is not enabled';
    expect(missing.permanentFailure).toEqual({ reason: 'failed_to_reconcile_the_resources', message });
    expect(missing.status.conditions[0]).toMatchObject({ status: 'False', reason: 'failed_to_reconcile_the_resources', message });
    expect([missing.status.state, missing.scale, missing.apply.map((o) => o.kind)]).toEqual(['failed', [], ['PodCliqueSet', 'Role', 'RoleBinding', 'Service', 'Service', 'ServiceAccount']]);
    const present = decideDgd(at(new Map([['weights', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'weights' } }]])), DEFAULT_RENDER_CONFIG, NOW);
    expect(present.permanentFailure).toBeUndefined();
  });

  it('a hand-made ServiceAccount of the discovery name is left untouched and reported as an OwnershipConflict', () => {
    const handMade = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'my-graph-k8s-service-discovery', namespace: 'inference' } };
    const desired = decideDgd(world({ ServiceAccount: new Map([['my-graph-k8s-service-discovery', handMade]]) }), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply.map((o) => o.kind)).not.toContain('ServiceAccount');
    expect(desired.permanentFailure).toEqual({
      reason: 'OwnershipConflict',
      message: 'ServiceAccount inference/my-graph-k8s-service-discovery exists and is not controlled by this DynamoGraphDeployment (controller: none); it is left untouched',
    });
  });
});
