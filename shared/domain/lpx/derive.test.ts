import { describe, expect, it } from 'vitest';
import type { Dgd } from '../../api/index.js';
import type { LpxBuild, LpxBuildPartition } from './build.js';
import { applyLocalPartitionIds, deriveLpxComponent, lpxRuntimePartitions, lpxWorkloadMode, selectLpxPipeline, validateAgentReplicas, xtShape, xtTopologyCompatibilityKey, type LpxPipeline } from './derive.js';
import { deepFreeze } from '../../../test/support/builders.js';
import { deriveLpxWorkloads, resolveLpxWorkloads } from './workloads.js';

// LpxBuild literals with the values of upstream's compiler fixtures (never a Cap'n Proto file).
const XT_TOPOLOGY = (chips: number) => `URSA_V2__Q8__${chips}C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA`;
const xt = (id: number, chips: number): LpxBuildPartition => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: XT_TOPOLOGY(chips), chipCount: chips, nodeCount: Math.max(1, chips / 8) }, hxExtent: undefined });
const hx = (id: number, extent: number[]): LpxBuildPartition => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: 'HX_OPAQUE', chipCount: extent.reduce((a, b) => a * b, 1), nodeCount: (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1) }, hxExtent: extent });
function aBuild(overrides: Partial<LpxBuild> = {}): LpxBuild {
  return {
    path: 'file:///models/b',
    family: 'xt8888',
    compilationMode: 'lpuOnly',
    partitions: [xt(0, 32)],
    selectedPropSyncChains: [],
    standaloneTokenEmbeddings: false,
    supportsCpuEmbeddings: false,
    ioFpgaCount: 1,
    ioFanoutFactor: 1,
    batchSize: 1,
    tokenEmbeddingsPath: undefined,
    ...overrides,
  };
}
// Upstream local_partitions_test.go: "a hybrid build with chain 7-8 and an independent partition 11"
// (partition 7 at 8 chips, 8 and 11 at 64 chips).
const hybridChainBuild = aBuild({ compilationMode: 'lpx', partitions: [xt(7, 8), xt(8, 64), xt(11, 64)], selectedPropSyncChains: [[7, 8]] });
const lpx = (localPartitions?: unknown) => ({ lpx: { buildId: 'model-build', ...(localPartitions === undefined ? {} : { localPartitions }) } });

describe('deriveLpxComponent: local partitions (upstream TestProjectModelV2LocalPartitions, TestRenderHybridLocalPartitions)', () => {
  it.each([
    { name: 'omitted selection renders every LPU Agent', selection: undefined, agents: 17, compilerIds: [7, 8, 11], connectors: 1, local: [] },
    { name: 'independent partition runs locally', selection: { ids: [11] }, agents: 9, compilerIds: [7, 8], connectors: 1, local: [11] },
    { name: 'selected chain runs locally as one runtime partition', selection: { ids: [7] }, agents: 8, compilerIds: [11], connectors: 0, local: [7] },
    { name: 'every partition runs locally', selection: { all: true }, agents: 0, compilerIds: [], connectors: 0, local: [7, 11] },
  ])('$name', ({ selection, agents, compilerIds, connectors, local }) => {
    const derived = deriveLpxComponent(lpx(selection), hybridChainBuild, 'model-build', 'hybrid', 'default');
    if (!derived.ok) throw new Error(derived.error);
    expect(derived.value.agentReplicas).toBe(agents);
    expect(derived.value.partitions.map((p) => p.compilerPartitionId)).toEqual(compilerIds);
    expect(derived.value.partitions.map((p) => p.ordinal)).toEqual(compilerIds.map((_, i) => i));
    expect(derived.value.propSyncConnectors).toHaveLength(connectors);
    expect(derived.value.localPartitionIds).toEqual(local);
  });

  it.each([
    { name: 'chain member is not a runtime partition', pipeline: 'hybrid' as LpxPipeline, selection: { ids: [8] }, error: 'localPartitions references partition 8 of the prop-sync chain that starts at partition 7; select 7' },
    { name: 'unknown partition', pipeline: 'hybrid' as LpxPipeline, selection: { ids: [99] }, error: 'localPartitions references partition 99, which the build does not contain' },
    { name: 'LPU-only pipeline has no Cyborg GPU', pipeline: 'single' as LpxPipeline, selection: { ids: [11] }, error: 'unsupported LPX runtime: localPartitions requires a hybrid build with a Cyborg conductor' },
  ])('$name: "$error"', ({ pipeline, selection, error }) => {
    // ResolveSelectedWorkload wraps projection errors: "project LPX model %q from build %q: %w".
    const build = pipeline === 'single' ? aBuild({ partitions: [xt(7, 8), xt(8, 64), xt(11, 64)] }) : hybridChainBuild;
    expect(deriveLpxComponent(lpx(selection), build, 'model-build', pipeline, 'default')).toEqual({ ok: false, error: `project LPX model "default" from build "model-build": ${error}` });
  });

  it('"Reject the oversized build even when every partition runs locally" (TestProjectModelV2LocalPartitionsKeepsPhysicalBuildBound)', () => {
    const build = aBuild({ compilationMode: 'lpx', partitions: Array.from({ length: 257 }, (_, id) => xt(id, 8)) });
    expect(deriveLpxComponent(lpx({ all: true }), build, 'b', 'hybrid', 'default')).toEqual({ ok: false, error: 'project LPX model "default" from build "b": LPX projection has 257 partitions, limit is 1..256' });
  });

  describe('HX (upstream TestProjectModelV3LocalPartitions: a hybrid HX build with partitions 1-4 of [16,1,1,1] and a selected chain 2-3)', () => {
    const hxHybrid = aBuild({ family: 'hx16x8x2x3', compilationMode: 'lpx', partitions: [1, 2, 3, 4].map((id) => hx(id, [16, 1, 1, 1])), selectedPropSyncChains: [[2, 3]] });
    const links = Array.from({ length: 16 }, (_, i) => [i, i]);
    const info = (ids: number[]) => Object.fromEntries([['num_partitions', ids.length], ...ids.map((id) => [String(id), { device: 'lpu', allocation: [16, 1, 1, 1] }])]);
    it.each([
      { name: 'partition before the chain runs locally', selection: { ids: [1] }, agents: 3, compilerIds: [2, 3, 4], connectors: [['partition-000', 'partition-001']], local: [1], partitionInfo: info([2, 3, 4]), pairs: [{ source_partition: 2, dest_partition: 3, connections: links, num_supported_lanes: [4, 2, 1] }] },
      { name: 'selected chain runs locally as one runtime partition', selection: { ids: [2] }, agents: 2, compilerIds: [1, 4], connectors: [], local: [2], partitionInfo: info([1, 4]), pairs: [] },
      { name: 'every partition runs locally', selection: { all: true }, agents: 0, compilerIds: [], connectors: [], local: [1, 2, 4], partitionInfo: { num_partitions: 0 }, pairs: [] },
    ])('$name', ({ selection, agents, compilerIds, connectors, local, partitionInfo, pairs }) => {
      const derived = deriveLpxComponent(lpx(selection), hxHybrid, 'b', 'hybrid', 'default');
      if (!derived.ok) throw new Error(derived.error);
      expect(derived.value.agentReplicas).toBe(agents);
      expect(derived.value.partitions.map((p) => [p.compilerPartitionId, p.extent])).toEqual(compilerIds.map((id) => [id, [16, 1, 1, 1]]));
      expect(derived.value.propSyncConnectors.map((c) => [c.fromPartitionId, c.toPartitionId])).toEqual(connectors);
      expect(derived.value.localPartitionIds).toEqual(local);
      expect(derived.value.allocationMetadata['partition_info']).toEqual(partitionInfo);
      expect(derived.value.allocationMetadata['prop_sync_info']).toEqual({ version: 1, prop_sync_pairs: pairs });
      expect(derived.value.workloadMode).toBe('v3HxStrictHybrid');
    });
    it.each([
      { name: 'chain member is not a runtime partition', selection: { ids: [3] }, error: 'localPartitions references partition 3 of the prop-sync chain that starts at partition 2; select 2' },
      { name: 'unknown partition (5 is the build\'s CUDA artifact, not an LPU partition)', selection: { ids: [5] }, error: 'localPartitions references partition 5, which the build does not contain' },
    ])('$name', ({ selection, error }) => {
      expect(deriveLpxComponent(lpx(selection), hxHybrid, 'b', 'hybrid', 'default')).toEqual({ ok: false, error: `project LPX model "default" from build "b": ${error}` });
    });
  });
});

/** A runtime partition as the LPU table reads it: id, path, chips, Agent endpoints, topology name. */
const runtimeView = (partitions: readonly LpxBuildPartition[]) =>
  partitions.map((p) => ({ id: p.sourcePartitionId, path: p.partPath, chips: p.topology.chipCount, nodes: p.runtimeNodeCount ?? p.topology.nodeCount, raw: p.topology.raw }));
const physical = (id: number, chips: number) => ({ id, path: `part-${id}`, chips, nodes: Math.max(1, chips / 8), raw: XT_TOPOLOGY(chips) });
const opaque = (partition: LpxBuildPartition, raw: string): LpxBuildPartition => ({ ...partition, topology: { ...partition.topology, raw } });

describe('lpxRuntimePartitions: "Preserve physical scheduler partitions while collapsing selected chains only in LPU runtime state" (upstream appendV2ModelProjections, collapseSelectedPropSyncChain; workload_projection_v2_test.go)', () => {
  it.each([
    {
      name: 'TestProjectModelV2SeparatesPhysicalPartitionsFromRuntimeChain: chain 7-8 (8 + 64 chips) is one runtime partition 7 of 9 endpoints with the root\'s topology, beside 11',
      build: aBuild({ compilationMode: 'lpx', partitions: [opaque(xt(7, 8), 'stage-a'), opaque(xt(8, 64), 'stage-b'), opaque(xt(11, 64), 'stage-b')], selectedPropSyncChains: [[7, 8]] }),
      selection: undefined,
      want: [{ id: 7, path: 'part-7', chips: 8, nodes: 9, raw: 'stage-a' }, { id: 11, path: 'part-11', chips: 64, nodes: 8, raw: 'stage-b' }],
      agents: 17,
      requests: [7, 8, 11],
      connectors: 1,
    },
    {
      name: 'TestProjectModelV2CollapsesSelectedChainIncludingPartitionZero: "Project without applying Nova\'s CPU-embedding partition omission"; chain 0-1-2 is runtime partition 0 of 3 endpoints',
      build: aBuild({ compilationMode: 'lpx', partitions: [xt(0, 8), xt(1, 8), xt(2, 8)], selectedPropSyncChains: [[0, 1, 2]], standaloneTokenEmbeddings: true, supportsCpuEmbeddings: true }),
      selection: undefined,
      want: [{ ...physical(0, 8), nodes: 3 }],
      agents: 3,
      requests: [0, 1, 2],
      connectors: 2,
    },
    {
      name: 'TestProjectModelV2PreservesAgentReplicasWhenCollapsingSubHostPartitions: "Keep both physical Agent endpoints and the original root topology"',
      build: aBuild({ compilationMode: 'lpx', partitions: [xt(7, 2), xt(8, 2)], selectedPropSyncChains: [[7, 8]] }),
      selection: undefined,
      want: [{ ...physical(7, 2), nodes: 2 }],
      agents: 2,
      requests: [7, 8],
      connectors: 1,
    },
    {
      name: 'TestProjectModelV2StrictHybridPreservesPartitionZero: "Keep Cyborg\'s partition zero independently of Nova\'s embedding placement"',
      build: aBuild({ compilationMode: 'lpx', partitions: [xt(0, 16), xt(1, 16)], standaloneTokenEmbeddings: true, supportsCpuEmbeddings: true }),
      selection: undefined,
      want: [physical(0, 16), physical(1, 16)],
      agents: 4,
      requests: [0, 1],
      connectors: 0,
    },
    {
      name: 'local partitions first (TestProjectModelV2LocalPartitions): the independent partition 11 on the Cyborg GPU leaves the collapsed chain',
      build: hybridChainBuild,
      selection: { ids: [11] },
      want: [{ ...physical(7, 8), nodes: 9 }],
      agents: 9,
      requests: [7, 8],
      connectors: 1,
    },
    {
      name: 'a selected chain on the Cyborg GPU moves whole, so nothing is left to collapse',
      build: hybridChainBuild,
      selection: { ids: [7] },
      want: [physical(11, 64)],
      agents: 8,
      requests: [11],
      connectors: 0,
    },
  ])('$name', ({ build, selection, want, agents, requests, connectors }) => {
    const runtime = lpxRuntimePartitions(lpx(selection), deepFreeze(build), 'hybrid');
    if (!runtime.ok) throw new Error(runtime.error);
    expect(runtimeView(runtime.value)).toEqual(want);
    // The scheduler still gets every physical partition, its endpoints and the chain's connectors.
    const derived = deriveLpxComponent(lpx(selection), build, 'model-build', 'hybrid', 'default');
    if (!derived.ok) throw new Error(derived.error);
    expect({ agents: derived.value.agentReplicas, requests: derived.value.partitions.map((p) => p.compilerPartitionId), connectors: derived.value.propSyncConnectors.length }).toEqual({ agents, requests, connectors });
  });

  it.each([
    { name: 'standalone CPU embeddings', supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true, want: [1, 2] },
    { name: 'CPU embeddings unsupported', supportsCpuEmbeddings: false, standaloneTokenEmbeddings: true, want: [0, 1, 2] },
    { name: 'partition zero is runnable', supportsCpuEmbeddings: true, standaloneTokenEmbeddings: false, want: [0, 1, 2] },
  ])('TestResolveBuildSettingsSelectedPropSyncChainWithCPUEmbeddings "$name": an LPU-only runtime runs its chain 0-1-2, "omit partition zero only when both flags permit it"', ({ supportsCpuEmbeddings, standaloneTokenEmbeddings, want }) => {
    const build = aBuild({ partitions: [xt(0, 16), xt(1, 16), xt(2, 16), xt(3, 16)], selectedPropSyncChains: [[0, 1, 2]], supportsCpuEmbeddings, standaloneTokenEmbeddings });
    const runtime = lpxRuntimePartitions(lpx(), build, 'single');
    if (!runtime.ok) throw new Error(runtime.error);
    expect(runtimeView(runtime.value)).toEqual(want.map((id) => physical(id, 16)));
    // The requests and Agents cover the same partitions (2 endpoints each).
    const derived = deriveLpxComponent(lpx(), build, 'model-build', 'single', 'default');
    expect(derived.ok && [derived.value.agentReplicas, derived.value.partitions.map((p) => p.compilerPartitionId)]).toEqual([2 * want.length, want]);
  });

  it('HX builds are not collapsed (upstream collapses only in the V2 projection): the partitions left after local ones', () => {
    const hxBuild = aBuild({ family: 'hx16x8x2x3', compilationMode: 'lpx', partitions: [hx(1, [16, 1, 1, 1]), hx(2, [16, 1, 1, 1]), hx(3, [16, 1, 1, 1])], selectedPropSyncChains: [[2, 3]] });
    const runtime = lpxRuntimePartitions(lpx({ ids: [1] }), hxBuild, 'hybrid');
    expect(runtime.ok && runtime.value.map((p) => p.sourcePartitionId)).toEqual([2, 3]);
  });

  it('errors are the derivation\'s, unwrapped: a chain member selected as local', () => {
    expect(lpxRuntimePartitions(lpx({ ids: [8] }), hybridChainBuild, 'hybrid')).toEqual({ ok: false, error: 'localPartitions references partition 8 of the prop-sync chain that starts at partition 7; select 7' });
  });
});

describe('applyLocalPartitionIds (upstream TestApplyLocalPartitionIDs)', () => {
  it.each([
    { name: 'no local partitions removes authored values', ids: [], env: [{ name: 'LPX_LOCAL_PARTITION_IDS', value: 'authored' }, { name: 'OTHER', value: 'kept' }], envFrom: false, want: [{ name: 'OTHER', value: 'kept' }] },
    { name: 'no local partitions shadows envFrom sources', ids: [], env: [], envFrom: true, want: [{ name: 'LPX_LOCAL_PARTITION_IDS' }] },
    { name: 'resolved selection replaces authored values', ids: [0, 2, 12], env: [{ name: 'LPX_LOCAL_PARTITION_IDS', value: 'authored' }, { name: 'OTHER', value: 'kept' }], envFrom: false, want: [{ name: 'OTHER', value: 'kept' }, { name: 'LPX_LOCAL_PARTITION_IDS', value: '0,2,12' }] },
  ])('$name', ({ ids, env, envFrom, want }) => {
    expect(applyLocalPartitionIds(env, envFrom, ids)).toEqual(want);
  });
});

describe('workload mode, target family and XT shapes', () => {
  it.each([
    { family: 'xt8888' as const, pipeline: 'single' as LpxPipeline, want: 'v2LpuOnly' },
    { family: 'xt8888' as const, pipeline: 'specDecode' as LpxPipeline, want: 'v2LpuOnly' },
    { family: 'xt8888' as const, pipeline: 'hybrid' as LpxPipeline, want: 'v2StrictHybrid' },
    { family: 'hx16x8x2x3' as const, pipeline: 'single' as LpxPipeline, want: 'v3HxLpuOnly' },
    { family: 'hx16x8x2x3' as const, pipeline: 'hybrid' as LpxPipeline, want: 'v3HxStrictHybrid' },
  ])('"HX and XT have separate wire values for the same two runtime shapes": $family $pipeline is $want (upstream schedulerWorkloadMode)', ({ family, pipeline, want }) => {
    expect(lpxWorkloadMode(family, pipeline)).toBe(want);
  });

  it('the pipeline: a pair is specDecode, a hybrid-compiled ("lpx") build is hybrid, else single (upstream ResolveSelectedWorkload)', () => {
    expect([selectLpxPipeline(2, { compilationMode: 'lpuOnly' }), selectLpxPipeline(1, { compilationMode: 'lpx' }), selectLpxPipeline(1, { compilationMode: 'lpuOnly' })]).toEqual(['specDecode', 'hybrid', 'single']);
  });

  it.each([
    { chips: 4, want: { ok: true, value: { shape: 'c8', endpoints: 1 } } },
    { chips: 32, want: { ok: true, value: { shape: 'c32', endpoints: 4 } } },
    { chips: 96, want: { ok: true, value: { shape: 'c96', endpoints: 12 } } },
    { chips: 72, want: { ok: false, error: 'chip count 72 is not a registered XT8888 partition shape' } },
    { chips: 12, want: { ok: false, error: 'chip count 12 is not a registered XT8888 partition shape' } },
  ])('"Reserve one whole physical host for compiler partitions that use fewer than eight chips": xtShape($chips)', ({ chips, want }) => {
    expect(xtShape(chips)).toEqual(want);
  });

  it('XT topologies of one chain may differ only in chip count (upstream topology compatibilityKey)', () => {
    expect(xtTopologyCompatibilityKey(XT_TOPOLOGY(8))).toBe(xtTopologyCompatibilityKey(XT_TOPOLOGY(64)));
    expect(xtTopologyCompatibilityKey(XT_TOPOLOGY(8))).not.toBe(xtTopologyCompatibilityKey('URSA_V2__Q4__8C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA'));
  });
});

describe('the request partitions, connectors and allocation metadata (upstream RequestSpec)', () => {
  it('node-local-v2-hybrid.yaml: one 32-chip partition is 4 Agents, partition-000 c32, no connectors, allocation metadata {}', () => {
    const derived = deriveLpxComponent(lpx(), aBuild({ compilationMode: 'lpx' }), 'node-local-v2-connected-lpx', 'hybrid', 'default');
    expect(derived).toEqual({
      ok: true,
      value: {
        pipeline: 'hybrid', targetFamily: 'xt8888', workloadMode: 'v2StrictHybrid', agentReplicas: 4,
        partitions: [{ id: 'partition-000', ordinal: 0, compilerPartitionId: 0, xtShape: 'c32' }],
        propSyncConnectors: [], allocationMetadata: {}, localPartitionIds: [],
      },
    });
  });

  it('an XT chain edge is an xt8888Gap connector with offset 0 between the request ids (upstream v2Connectors)', () => {
    const derived = deriveLpxComponent(lpx(), hybridChainBuild, 'b', 'hybrid', 'default');
    expect(derived.ok && derived.value.propSyncConnectors).toEqual([{ fromPartitionId: 'partition-000', toPartitionId: 'partition-001', requirement: { kind: 'xt8888Gap', maxInterPartitionOffset: 0 } }]);
  });

  it('"LPU-only runtime requires exactly one selected prop-sync chain" and keeps only that chain (upstream consumeRuntimeSelectedPropSyncChain)', () => {
    const single = deriveLpxComponent(lpx(), aBuild({ partitions: [xt(7, 8), xt(8, 64), xt(11, 64)], selectedPropSyncChains: [[7, 8]] }), 'b', 'single', 'default');
    expect(single.ok && single.value.partitions.map((p) => p.compilerPartitionId)).toEqual([7, 8]);
    expect(single.ok && single.value.agentReplicas).toBe(9);
    const two = deriveLpxComponent(lpx(), aBuild({ partitions: [xt(0, 8), xt(1, 8), xt(2, 8), xt(3, 8)], selectedPropSyncChains: [[0, 1], [2, 3]] }), 'b', 'single', 'default');
    expect(two).toEqual({ ok: false, error: 'project LPX model "default" from build "b": resolving configured V2 build: LPU-only runtime requires exactly one selected prop-sync chain, got 2' });
  });

  it('"Omit host-only embeddings": a standalone CPU-capable embedding partition 0 is not requested (upstream omitStandaloneEmbeddingPartition)', () => {
    const derived = deriveLpxComponent(lpx(), aBuild({ partitions: [xt(0, 8), xt(1, 32)], standaloneTokenEmbeddings: true, supportsCpuEmbeddings: true }), 'b', 'single', 'default');
    expect(derived.ok && derived.value.partitions).toEqual([{ id: 'partition-000', ordinal: 0, compilerPartitionId: 1, xtShape: 'c32' }]);
  });

  it('TestProjectModelHXProjectsSelectedPropSyncChain: two [16,1,1,1] partitions, one hxPropSyncV1 connector of 16 links, the V3 envelope', () => {
    const derived = deriveLpxComponent(lpx(), aBuild({ family: 'hx16x8x2x3', partitions: [hx(1, [16, 1, 1, 1]), hx(2, [16, 1, 1, 1])], selectedPropSyncChains: [[1, 2]] }), 'b', 'single', 'default');
    if (!derived.ok) throw new Error(derived.error);
    const links = Array.from({ length: 16 }, (_, i) => ({ fromLogicalDevice: i, toLogicalDevice: i }));
    expect(derived.value.partitions).toEqual([{ id: 'partition-000', ordinal: 0, compilerPartitionId: 1, extent: [16, 1, 1, 1] }, { id: 'partition-001', ordinal: 1, compilerPartitionId: 2, extent: [16, 1, 1, 1] }]);
    expect(derived.value.propSyncConnectors).toEqual([{ fromPartitionId: 'partition-000', toPartitionId: 'partition-001', requirement: { kind: 'hxPropSyncV1', connections: links, acceptableLaneMultiplicities: [4, 2, 1] } }]);
    expect(derived.value.allocationMetadata).toEqual({
      arch: 'lp30', topology: 'lyra', metadata_version: 1,
      partition_info: { num_partitions: 2, 1: { device: 'lpu', allocation: [16, 1, 1, 1] }, 2: { device: 'lpu', allocation: [16, 1, 1, 1] } },
      prop_sync_info: { version: 1, prop_sync_pairs: [{ source_partition: 1, dest_partition: 2, connections: links.map((l) => [l.fromLogicalDevice, l.toLogicalDevice]), num_supported_lanes: [4, 2, 1] }] },
    });
    expect([derived.value.workloadMode, derived.value.targetFamily, derived.value.agentReplicas]).toEqual(['v3HxLpuOnly', 'hx16x8x2x3', 2]);
  });

  it('TestProjectModelHXUsesMultiNodePropSyncBoundary: a [16,2,1,1] source links from logical device 16 to 31', () => {
    const derived = deriveLpxComponent(lpx(), aBuild({ family: 'hx16x8x2x3', partitions: [hx(1, [16, 2, 1, 1]), hx(2, [16, 1, 1, 1])], selectedPropSyncChains: [[1, 2]] }), 'b', 'single', 'default');
    const links = derived.ok ? derived.value.propSyncConnectors[0]?.requirement.connections : undefined;
    expect([links?.[0], links?.[15]]).toEqual([{ fromLogicalDevice: 16, toLogicalDevice: 0 }, { fromLogicalDevice: 31, toLogicalDevice: 15 }]);
    expect(derived.ok && derived.value.agentReplicas).toBe(3);
  });

  it('"V3 LPU-only workloads require a complete adjacent prop-sync connector chain"', () => {
    const derived = deriveLpxComponent(lpx(), aBuild({ family: 'hx16x8x2x3', partitions: [hx(1, [16, 1, 1, 1]), hx(2, [16, 1, 1, 1])] }), 'b', 'single', 'default');
    expect(derived).toEqual({ ok: false, error: 'project LPX model "default" from build "b": V3 LPU-only workloads require a complete adjacent prop-sync connector chain' });
  });
});

describe('deriveLpxWorkloads (upstream ResolveSelectedWorkload; lpx.md §1.1 "An explicit agent count must equal the derived count")', () => {
  // A hybrid build's conductor is the Cyborg GPU runtime, so it holds a GPU (cyborg-gpu.ts).
  const gpu = (name: string) => (name === 'conductor' ? { resources: { limits: { 'nvidia.com/gpu': 1 } } } : {});
  const role = (name: string, replicas?: number) => ({ name, ...(replicas === undefined ? {} : { replicas }), podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1`, ...gpu(name) }] } } });
  const dgd = (engine: Record<string, unknown>): Dgd => ({
    apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'ns' },
    spec: { components: [{ name: 'frontend', type: 'frontend' }, { name: 'lpu', type: 'lpx', replicas: 1, lpx: { buildId: 'b' }, roles: [role('conductor'), role('agent')], ...engine }] as Dgd['spec']['components'] },
  });
  const builds = (build: LpxBuild) => new Map([['lpu', { build, buildId: 'b' }]]);

  it('without a decoded build the workloads are unchanged (the agent role replicas, else 1)', () => {
    const graph = dgd({ roles: [role('conductor'), role('agent', 3)] });
    expect(deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), new Map())).toEqual({ ok: true, value: resolveLpxWorkloads(graph) });
  });

  it('the compiled count replaces the agent count; an equal explicit count is accepted', () => {
    for (const agent of [role('agent'), role('agent', 4)]) {
      const graph = dgd({ roles: [role('conductor'), agent] });
      const derived = deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), builds(aBuild({ compilationMode: 'lpx' })));
      expect(derived.ok && derived.value[0]?.models.map((m) => [m.agentReplicas, m.derived?.workloadMode])).toEqual([[4, 'v2StrictHybrid']]);
    }
  });

  it('"component %q agent replicas %d must match the compiled count %d", on the field path', () => {
    const graph = dgd({ roles: [role('conductor'), role('agent', 2)] });
    expect(deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), builds(aBuild({ compilationMode: 'lpx' })))).toEqual({
      ok: false,
      error: 'spec.components[1].roles[1].replicas: Invalid value: 2: component "lpu" agent replicas 2 must match the compiled count 4',
    });
    expect(validateAgentReplicas({ name: 'lpu', roles: [role('agent')] }, 1, 4)).toBeUndefined();
  });

  it('"component %q conductor replicas must be one for LPU-only execution"; a hybrid conductor may have more', () => {
    const graph = dgd({ roles: [role('conductor', 2), role('agent')] });
    expect(deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), builds(aBuild()))).toEqual({ ok: false, error: 'unsupported LPX runtime: component "lpu" conductor replicas must be one for LPU-only execution' });
    expect(deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), builds(aBuild({ compilationMode: 'lpx' }))).ok).toBe(true);
  });

  it('"the shared speculative runtime requires LPU-only builds"; a pair shares the family of one build per component', () => {
    const pairGraph: Dgd = {
      apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'ns' },
      spec: { components: [
        { name: 'draft', type: 'lpx', replicas: 2, lpx: { buildId: 'd' }, roles: [role('agent')] },
        { name: 'target', type: 'lpx', replicas: 1, lpx: { buildId: 't' }, roles: [role('agent'), role('conductor')] },
      ] as Dgd['spec']['components'] },
    };
    const both = (draft: LpxBuild, target: LpxBuild) => new Map([['draft', { build: draft, buildId: 'd' }], ['target', { build: target, buildId: 't' }]]);
    expect(deriveLpxWorkloads(pairGraph, resolveLpxWorkloads(pairGraph), both(aBuild({ compilationMode: 'lpx' }), aBuild()))).toEqual({ ok: false, error: 'unsupported LPX runtime: the shared speculative runtime requires LPU-only builds' });
    const derived = deriveLpxWorkloads(pairGraph, resolveLpxWorkloads(pairGraph), both(aBuild({ partitions: [xt(0, 8)] }), aBuild()));
    expect(derived.ok && derived.value[0]?.models.map((m) => [m.model, m.agentReplicas, m.derived?.pipeline])).toEqual([['draft0', 1, 'specDecode'], ['draft1', 1, 'specDecode'], ['target', 4, 'specDecode']]);
  });

  it('is deterministic and does not throw on frozen input (STYLE §16)', () => {
    const graph = deepFreeze(dgd({ lpx: { buildId: 'b', localPartitions: { ids: [11] } } }));
    const frozen = deepFreeze(new Map([['lpu', { build: hybridChainBuild, buildId: 'b' }]]));
    const workloads = deepFreeze(resolveLpxWorkloads(graph));
    const first = deriveLpxWorkloads(graph, workloads, frozen);
    expect(first.ok && first.value[0]?.models[0]?.derived?.localPartitionIds).toEqual([11]);
    expect(deriveLpxWorkloads(graph, workloads, frozen)).toEqual(first);
  });
});
