import { describe, expect, it } from 'vitest';
import type { Dgd } from '../../api/index.js';
import type { LpxBuild, LpxBuildPartition } from './build.js';
import { decideLpxHandoff } from './handoff.js';
import { lpxInputRevision } from './input-revision.js';
import { lpxPodCliqueSetName, pipelineRequestName } from './names.js';
import { desiredPipelineRequests } from './pipeline-requests.js';
import { lpxLayoutKey, renderLpxPodCliqueSet } from './render-pcs.js';
import { deriveLpxWorkloads, resolveLpxWorkloads } from './workloads.js';

const ID = { namespace: 'inference', name: 'llama', uid: '11111111-1111-4111-8111-111111111111' };
const role = (name: string, replicas?: number) => ({ name, ...(replicas === undefined ? {} : { replicas }), podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1` }] } } });

function aDgd(overrides: { annotations?: Record<string, string>; components?: unknown[] } = {}): Dgd {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'llama', namespace: 'inference', uid: 'dgd-uid', annotations: overrides.annotations ?? {} },
    spec: {
      components: (overrides.components ?? [
        { name: 'frontend', type: 'frontend' },
        { name: 'engine', type: 'lpx', replicas: 2, lpx: { buildId: 'b' }, roles: [role('agent', 4), role('conductor')] },
      ]) as Dgd['spec']['components'],
    },
  };
}
const pair = [
  { name: 'draft', type: 'lpx', replicas: 2, lpx: { buildId: 'd', scheduling: { attemptDeadlineSeconds: 30 } }, roles: [role('agent')] },
  { name: 'target', type: 'lpx', replicas: 1, minAvailable: 1, lpx: { buildId: 't' }, roles: [role('agent'), role('conductor')], providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { minAvailable: 1, rollingUpdate: { maxUnavailable: 1 } } } },
];

function render(dgd: Dgd) {
  return renderLpxPodCliqueSet(dgd, ID, resolveLpxWorkloads(dgd), new Map(), { terminationDelay: '15m' }) as unknown as {
    metadata: { name: string; ownerReferences: unknown[] };
    spec: { replicas: number; updateStrategy?: { type: string }; template: { cliques: { name: string; annotations: Record<string, string>; labels: Record<string, string>; spec: { replicas: number; minAvailable: number; startsAfter?: string[]; podSpec: { schedulerName: string } } }[]; podCliqueScalingGroups: Record<string, unknown>[] } };
  };
}

describe('renderLpxPodCliqueSet (lpx.md §1.1, §2.3, §6.2; upstream fixture node-local-v2-hybrid.yaml)', () => {
  it('renders one replica, agent and conductor cliques under scaling group "lpx", the conductor starting after the agents, all on the lpx-scheduler', () => {
    const pcs = render(aDgd());
    expect(pcs.metadata.name).toBe(lpxPodCliqueSetName(ID));
    expect(pcs.metadata.ownerReferences).toEqual([{ apiVersion: 'nvidia.com/v1alpha1', kind: 'LPXGraphDeployment', name: 'llama', uid: ID.uid, controller: true, blockOwnerDeletion: true }]);
    expect(pcs.spec.replicas).toBe(1);
    expect(pcs.spec.template.cliques.map((c) => [c.name, c.spec.replicas, c.spec.minAvailable, c.annotations['scheduling.lpu.nvidia.com/role'], c.spec.startsAfter, c.spec.podSpec.schedulerName])).toEqual([
      ['agt', 4, 4, 'agent', undefined, 'lpx-scheduler'],
      ['cond', 1, 1, 'conductor', ['agt'], 'lpx-scheduler'],
    ]);
    expect(pcs.spec.template.cliques[1]?.labels['lpx.nvidia.com/serving']).toBe('true');
    // The seed is minAvailable (default 1), never the explicit replicas (lpx.md §6.2).
    expect(pcs.spec.template.podCliqueScalingGroups).toMatchObject([{ name: 'lpx', cliqueNames: ['agt', 'cond'], replicas: 1, minAvailable: 1 }]);
  });

  it('"This applies to aggregated, disaggregated, and LPX deployments": the strategy annotation sets updateStrategy; none without it', () => {
    expect(render(aDgd({ annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } })).spec.updateStrategy).toEqual({ type: 'Coherent' });
    expect(render(aDgd()).spec.updateStrategy).toBeUndefined();
  });

  it('a shared pair: agents agt0..agt{n-1} for draft0..draft{n-1}, then target; availability and budget from the target, the draft has none of its own', () => {
    const pcs = render(aDgd({ components: pair }));
    expect(pcs.spec.template.cliques.map((c) => [c.name, c.annotations['scheduling.lpu.nvidia.com/model']])).toEqual([
      ['agt0', 'draft0'],
      ['agt1', 'draft1'],
      ['agt2', 'target'],
      ['cond', undefined],
    ]);
    expect(pcs.spec.template.podCliqueScalingGroups).toMatchObject([{ name: 'lpx', minAvailable: 1, rollingUpdate: { maxUnavailable: 1 } }]);
  });
});

describe('pipeline requests (lpx.md §3.2)', () => {
  it('one request per workload, model and replica ordinal, controlled by the PodCliqueSet; names exclude the revision', () => {
    const dgd = aDgd({ components: pair });
    const requests = desiredPipelineRequests(ID, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', 2]]), { name: 'llama-ab12', uid: 'pcs-uid' });
    expect(requests.map((r) => [r.replicaIndex, r.model])).toEqual([
      [0, 'draft0'], [0, 'draft1'], [0, 'target'],
      [1, 'draft0'], [1, 'draft1'], [1, 'target'],
    ]);
    expect(requests[0]?.name).toBe(pipelineRequestName(ID, { workload: 'lpx', workloadCount: 1, model: 'draft0', replicaIndex: 0 }));
    expect(requests[0]?.name).toMatch(/^lpx-llama-[0-9a-f]{32}$/);
    expect(requests[3]?.object.metadata['ownerReferences']).toEqual([{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name: 'llama-ab12', uid: 'pcs-uid', controller: true, blockOwnerDeletion: true }]);
    expect(requests[3]?.object['spec']).toMatchObject({ materializationTarget: { podCliqueSetReplicaIndex: 0, podCliqueScalingGroupRef: { name: 'llama-ab12-0-lpx', replicaIndex: 1 } }, nodeLocal: { model: 'draft0', agentPodCliqueRef: { name: 'llama-ab12-0-lpx-1-agt0' } } });
  });
});

describe('input revision (dgd-reference "Grove rollout budget overrides"; lpx.md §2.1)', () => {
  const withBudget = (maxUnavailable: number) =>
    aDgd({ components: [{ name: 'frontend', type: 'frontend' }, { name: 'engine', type: 'lpx', replicas: 2, lpx: { buildId: 'b' }, roles: [role('agent'), role('conductor')], providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { rollingUpdate: { maxUnavailable } } } }] });

  it('"For LPX, budget edits advance the input revision ... The PCS identity and existing pipeline requests remain unchanged"', () => {
    const before = withBudget(1);
    const after = withBudget(2);
    expect(lpxInputRevision(after, '')).not.toBe(lpxInputRevision(before, ''));
    expect(render(after).metadata.name).toBe(render(before).metadata.name);
    const names = (dgd: Dgd) => desiredPipelineRequests(ID, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', 2]]), { name: 'p', uid: 'u' }).map((r) => [r.name, r.object['spec']]);
    expect(names(after)).toEqual(names(before));
    expect(render(after).spec.template.podCliqueScalingGroups[0]).toMatchObject({ rollingUpdate: { maxUnavailable: 2 } });
  });

  it('an ordinary component edit outside the workers\' hash leaves it unchanged; the strategy annotation changes it', () => {
    const base = aDgd();
    const frontendEdit = aDgd({ components: [{ name: 'frontend', type: 'frontend', replicas: 3 }, ...(base.spec.components.slice(1) as unknown[])] });
    expect(lpxInputRevision(frontendEdit, '')).toBe(lpxInputRevision(base, ''));
    expect(lpxInputRevision(aDgd({ annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } }), '')).not.toBe(lpxInputRevision(base, ''));
  });

  it('the LPXGraphDeployment is named after the DGD, controlled by it, and never adopted from another owner', () => {
    const handoff = decideLpxHandoff(aDgd(), undefined);
    expect(handoff).toMatchObject({ ok: true, object: { metadata: { name: 'llama', namespace: 'inference', ownerReferences: [{ kind: 'DynamoGraphDeployment', uid: 'dgd-uid', controller: true, blockOwnerDeletion: true }] } } });
    expect(decideLpxHandoff(aDgd(), { ownerReferences: [{ uid: 'someone-else', controller: true }], annotations: {} })).toEqual({
      ok: false,
      message: 'LPXGraphDeployment "llama" belongs to a different source; adoption is not supported',
    });
  });
});

describe('lpxLayoutKey (lpx.md §6.2 "Incompatible means changes to clique names, topology or minAvailable; PCSG configs; PCSG annotations or workload digests, when the strategy is OnDelete")', () => {
  const engine = (extra: Record<string, unknown>) => aDgd({ components: [{ name: 'engine', type: 'lpx', lpx: { buildId: 'b' }, roles: [role('agent'), role('conductor')], ...extra }], annotations: {} });
  const onDelete = (extra: Record<string, unknown>) => aDgd({ components: [{ name: 'engine', type: 'lpx', lpx: { buildId: 'b' }, roles: [role('agent'), role('conductor')], ...extra }], annotations: { 'nvidia.com/grove-update-strategy': 'OnDelete' } });
  const key = (dgd: Dgd) => lpxLayoutKey(render(dgd).spec);
  it.each([
    { name: 'a new minAvailable changes the layout', before: engine({}), after: engine({ minAvailable: 2 }), isSame: false },
    { name: 'a pod-template edit rolls in place under RollingRecreate', before: engine({}), after: engine({ roles: [role('agent'), { ...role('conductor'), podTemplate: { spec: { containers: [{ name: 'main', image: 'lpx-conductor:2' }] } } }] }), isSame: true },
    { name: 'the same edit under OnDelete changes the workload digest, so the layout', before: onDelete({}), after: onDelete({ roles: [role('agent'), { ...role('conductor'), podTemplate: { spec: { containers: [{ name: 'main', image: 'lpx-conductor:2' }] } } }] }), isSame: false },
  ])('$name', ({ before, after, isSame }) => {
    expect(key(after) === key(before)).toBe(isSame);
  });
});

describe('build-derived rendering (upstream fixture node-local-v2-hybrid.yaml; TestRenderHybridLocalPartitions; lpx.md §1.1, §3.1)', () => {
  const XT32 = 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';
  const xt = (id: number, chips: number): LpxBuildPartition => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: XT32.replace('32C', `${chips}C`), chipCount: chips, nodeCount: Math.max(1, chips / 8) }, hxExtent: undefined });
  // node-local-v2-connected-lpx: one hybrid XT partition of 32 chips.
  const hybridBuild: LpxBuild = { path: 'file:///nfs/node-local-v2-connected-lpx', family: 'xt8888', compilationMode: 'lpx', partitions: [xt(0, 32)], selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined };
  const conductorWithEnv = { name: 'conductor', podTemplate: { spec: { containers: [{ name: 'main', image: 'gpu:1', resources: { limits: { 'nvidia.com/gpu': 1 } }, env: [{ name: 'LPX_LOCAL_PARTITION_IDS', value: 'authored' }, { name: 'RDMA_PORT', value: '19877' }] }] } } };
  const engine = (lpx: Record<string, unknown>) => aDgd({ components: [{ name: 'lpu', type: 'lpx', replicas: 1, lpx: { buildId: 'node-local-v2-connected-lpx', ...lpx }, roles: [conductorWithEnv, role('agent')] }] });
  const derive = (dgd: Dgd, build: LpxBuild) => {
    const derived = deriveLpxWorkloads(dgd, resolveLpxWorkloads(dgd), new Map([['lpu', { build, buildId: 'node-local-v2-connected-lpx' }]]));
    if (!derived.ok) throw new Error(derived.error);
    return derived.value;
  };
  type Clique = { name: string; annotations: Record<string, string>; spec: { replicas: number; minAvailable: number; startsAfter?: string[]; podSpec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
  const renderDerived = (dgd: Dgd, build: LpxBuild) => renderLpxPodCliqueSet(dgd, ID, derive(dgd, build), new Map(), { terminationDelay: '15m' }) as unknown as { spec: { template: { cliques: Clique[]; podCliqueScalingGroups: { cliqueNames: string[] }[] } } };
  // The runtime container comes first (`main`; an LPU-only conductor's is renamed `conductor`, runtime-pods.ts).
  const localIds = (clique: Clique | undefined) => clique?.spec.podSpec.containers[0]?.env?.filter((e) => e.name === 'LPX_LOCAL_PARTITION_IDS');

  it('"Agent replicas are derived from the build": agt has replicas/minAvailable 4 from the 32-chip partition, workload-mode v2StrictHybrid; the Cyborg conductor is cyborg-worker without the authored LPX_LOCAL_PARTITION_IDS', () => {
    const pcs = renderDerived(engine({}), hybridBuild);
    const [agt, cond] = pcs.spec.template.cliques;
    expect([agt?.name, agt?.spec.replicas, agt?.spec.minAvailable, agt?.annotations['scheduling.lpu.nvidia.com/workload-mode']]).toEqual(['agt', 4, 4, 'v2StrictHybrid']);
    expect([cond?.name, cond?.annotations['scheduling.lpu.nvidia.com/role'], cond?.annotations['scheduling.lpu.nvidia.com/workload-mode'], cond?.spec.startsAfter]).toEqual(['cond', 'cyborg-worker', undefined, ['agt']]);
    expect(localIds(cond)).toEqual([]);
  });

  it.each([
    { name: 'partial selection renders Agents for remote partitions', localPartitions: { ids: [11] }, agents: 9, startsAfter: ['agt'], members: ['agt', 'cond'], env: [{ name: 'LPX_LOCAL_PARTITION_IDS', value: '11' }] },
    { name: 'all-local selection renders only Cyborg', localPartitions: { all: true }, agents: undefined, startsAfter: undefined, members: ['cond'], env: [{ name: 'LPX_LOCAL_PARTITION_IDS', value: '7,11' }] },
  ])('TestRenderHybridLocalPartitions: $name', ({ localPartitions, agents, startsAfter, members, env }) => {
    const chainBuild: LpxBuild = { ...hybridBuild, partitions: [xt(7, 8), xt(8, 64), xt(11, 64)], selectedPropSyncChains: [[7, 8]] };
    const pcs = renderDerived(engine({ localPartitions }), chainBuild);
    const cond = pcs.spec.template.cliques.find((c) => c.name === 'cond');
    expect(pcs.spec.template.cliques.find((c) => c.name === 'agt')?.spec.replicas).toBe(agents);
    expect(cond?.spec.startsAfter).toEqual(startsAfter);
    expect(pcs.spec.template.podCliqueScalingGroups[0]?.cliqueNames).toEqual(members);
    expect(localIds(cond)).toEqual(env);
  });

  it('the request spec carries what the build derives (lpx.md §3.1): partitions, mappings, connectors, family, mode, the Cyborg clique; no request when every partition is local', () => {
    const dgd = engine({});
    const [request] = desiredPipelineRequests(ID, 'llama', derive(dgd, hybridBuild), new Map([['lpx', 1]]), { name: 'llama-ab12', uid: 'pcs-uid' });
    expect(request?.object['spec']).toEqual({
      allocationMetadata: {},
      targetFamily: 'xt8888',
      workloadMode: 'v2StrictHybrid',
      executionBackend: 'nodeLocal',
      materializationTarget: { podCliqueSetReplicaIndex: 0, podCliqueScalingGroupRef: { name: 'llama-ab12-0-lpx', replicaIndex: 0 } },
      nodeLocal: { agentPodCliqueRef: { name: 'llama-ab12-0-lpx-0-agt' }, model: 'default', partitionMappings: [{ modelPartitionId: 0, partitionId: 'partition-000' }] },
      cyborgPodCliqueRef: { name: 'llama-ab12-0-lpx-0-cond' },
      partitions: [{ id: 'partition-000', ordinal: 0, compilerPartitionId: 0, xtShape: 'c32' }],
      propSyncConnectors: [],
      repairPolicy: { mode: 'samePlacement' },
    });
    const allLocal = engine({ localPartitions: { all: true } });
    expect(desiredPipelineRequests(ID, 'llama', derive(allLocal, hybridBuild), new Map([['lpx', 2]]), { name: 'p', uid: 'u' })).toEqual([]);
  });

  it('"a build change changes the intent": another build gives requests that no longer match, and an LPU-only conductor is not Cyborg', () => {
    const dgd = engine({});
    const spec = (build: LpxBuild) => desiredPipelineRequests(ID, 'llama', derive(dgd, build), new Map([['lpx', 1]]), { name: 'p', uid: 'u' })[0]?.object['spec'] as Record<string, unknown>;
    const lpuOnly = { ...hybridBuild, compilationMode: 'lpuOnly' as const, partitions: [xt(0, 64)] };
    expect(spec(lpuOnly)).not.toEqual(spec(hybridBuild));
    expect([spec(lpuOnly)['workloadMode'], spec(lpuOnly)['cyborgPodCliqueRef']]).toEqual(['v2LpuOnly', undefined]);
    const cond = renderDerived(dgd, lpuOnly).spec.template.cliques.find((c) => c.name === 'cond');
    expect([cond?.annotations['scheduling.lpu.nvidia.com/role'], localIds(cond)]).toEqual(['conductor', [{ name: 'LPX_LOCAL_PARTITION_IDS', value: 'authored' }]]);
  });
});
