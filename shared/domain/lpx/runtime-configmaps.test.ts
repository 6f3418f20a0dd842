/**
 * The LPX runtime ConfigMaps against upstream's expected outputs
 * (`internal/dynamo/lpx/testdata/from_dgd_yaml/*.yaml` @274172b2: names, content hashes, data)
 * and its unit tests (`lpu_configmap_test.go` @274172b2). Builds are `LpxBuild` literals with the
 * values those fixtures' builds decode to (partition ids, paths, topologies, endpoint counts).
 */
import { describe, expect, it } from 'vitest';
import type { Dgd } from '../../api/index.js';
import type { LpxBuild, LpxBuildPartition } from './build.js';
import { lpxPodCliqueSetName } from './names.js';
import { renderLpxPodCliqueSet } from './render-pcs.js';
import {
  bindRuntimeConfig,
  cyborgServersData,
  decideRuntimeConfigMapCreates,
  obsoleteRuntimeConfigMaps,
  renderLpxRuntimeConfigMaps,
  renderLpxRuntimeConfigs,
  renderRuntimeConfigMap,
  resolvedPartitionData,
  runtimeConfigMapHash,
  runtimeConfigVolumeIssue,
  type LpxRuntimeConfigs,
} from './runtime-configmaps.js';
import { resolveLpxWorkloads } from './workloads.js';

const URSA_32C = 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';
const URSA_16C = 'URSA_V2__Q8__16C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';

function aPartition(overrides: Partial<LpxBuildPartition> = {}): LpxBuildPartition {
  return { sourcePartitionId: 0, partPath: 'part-0', topology: { raw: URSA_16C, chipCount: 16, nodeCount: 2 }, hxExtent: undefined, ...overrides };
}
function aBuild(overrides: Partial<LpxBuild> = {}): LpxBuild {
  return {
    path: 'file:///models/build',
    family: 'xt8888',
    compilationMode: 'lpuOnly',
    partitions: [aPartition()],
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
/** The v2 builds of upstream's fixtures: hybrid (one 32-chip partition, 4 Agents), LPU-only (two 16-chip partitions). */
const HYBRID = aBuild({ compilationMode: 'lpx', partitions: [aPartition({ topology: { raw: URSA_32C, chipCount: 32, nodeCount: 4 } })] });
const LPU_ONLY = aBuild({ partitions: [aPartition(), aPartition({ sourcePartitionId: 1, partPath: 'part-1' })] });
/** node-local-v3-hx-hybrid's build: HX partition 1, extent [16, 1, 1, 1]. */
const HX_HYBRID = aBuild({ family: 'hx16x8x2x3', compilationMode: 'lpx', partitions: [aPartition({ sourcePartitionId: 1, partPath: 'part-1', topology: { raw: 'opaque-v3-topology', chipCount: 16, nodeCount: 1 }, hxExtent: [16, 1, 1, 1] })] });

const main = (mounts: unknown[] = []) => ({ spec: { containers: [{ name: 'main', image: 'lpx:1', volumeMounts: mounts }] } });
const engine = (name: string, roles: string[], extra: Record<string, unknown> = {}) => ({ name, type: 'lpx', lpx: { buildId: name }, roles: roles.map((r) => ({ name: r, podTemplate: main() })), ...extra });
function aDgd(name: string, components: unknown[]): Dgd {
  return { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name, namespace: 'test', uid: 'dgd-uid' }, spec: { components: components as Dgd['spec']['components'] } };
}
/** The fixtures' LPXGD identity (`lpx-render-uid`); its PodCliqueSet names are upstream's (`node-local-v2-hybrid-9d06`, ...). */
const idOf = (name: string) => ({ namespace: 'test', name, uid: 'lpx-render-uid' });
function configsFor(dgd: Dgd, builds: Record<string, LpxBuild>): LpxRuntimeConfigs {
  const rendered = renderLpxRuntimeConfigs(lpxPodCliqueSetName(idOf(dgd.metadata.name ?? '')), resolveLpxWorkloads(dgd), new Map(Object.entries(builds)));
  if (!rendered.ok) throw new Error(rendered.error);
  return rendered.configs;
}
const summary = (configs: LpxRuntimeConfigs) => [...configs.values()].map((c) => ({ configMaps: c.configMaps.map((m) => ({ name: m.name, data: m.data, hash: m.hash })), agents: c.agents, conductor: c.conductor }));

describe('renderLpxRuntimeConfigs (upstream RenderNodeLocal and renderRuntimeConfigMap; expected outputs testdata/from_dgd_yaml @274172b2)', () => {
  const pair = [engine('draft', ['agent'], { replicas: 2 }), engine('lpu', ['agent', 'conductor'], { replicas: 1 })];
  it.each([
    {
      name: 'node-local-v2-hybrid: the LPU table for the Agents and the Cyborg\'s lpu_servers for the conductor, each named <pcs>-<role>-<hash16>',
      dgd: aDgd('node-local-v2-hybrid', [engine('lpu', ['agent', 'conductor'])]),
      builds: { lpu: HYBRID } as Record<string, LpxBuild>,
      want: [{
        configMaps: [
          { name: 'node-local-v2-hybrid-9d06-decode-734ce683f6b7ea5f', data: { lpu_servers: 'lpx-${GROVE_PCSG_INDEX}-agt-0' }, hash: '734ce683f6b7ea5f7b0c0172b07d5e1ed45773120ab8c7d834967d180c62cea2' },
          { name: 'node-local-v2-hybrid-9d06-lpu-355e8ac6768c54e3', data: { nodes_per_partition: '4', partition_ids: '0', partition_node_offsets: '0', partition_paths: 'part-0', topologies: URSA_32C, partition_indices: '0', partition_models: 'default' }, hash: '355e8ac6768c54e3ee778e2044a7498390f64c82034bbc4cc3dafa0ef4031877' },
        ],
        agents: { configMapName: 'node-local-v2-hybrid-9d06-lpu-355e8ac6768c54e3', hash: '355e8ac6768c54e3ee778e2044a7498390f64c82034bbc4cc3dafa0ef4031877' },
        conductor: { configMapName: 'node-local-v2-hybrid-9d06-decode-734ce683f6b7ea5f', hash: '734ce683f6b7ea5f7b0c0172b07d5e1ed45773120ab8c7d834967d180c62cea2' },
      }],
    },
    {
      name: 'node-local-v2-lpu-only: "Omit model-identity columns that the XT Single runtime never consumes"; the conductor mounts the LPU table too',
      dgd: aDgd('node-local-v2-lpu-only', [engine('lpu', ['agent', 'conductor'])]),
      builds: { lpu: LPU_ONLY } as Record<string, LpxBuild>,
      want: [{
        configMaps: [{ name: 'node-local-v2-lpu-only-33b1-lpu-6bcf1f4cf22aaf55', data: { nodes_per_partition: '2\n2', partition_ids: '0\n1', partition_node_offsets: '0\n2', partition_paths: 'part-0\npart-1', topologies: `${URSA_16C}\n${URSA_16C}` }, hash: '6bcf1f4cf22aaf552736014dfc177eec81d993bf14b94b3328a39dd1b7d38e5d' }],
        agents: { configMapName: 'node-local-v2-lpu-only-33b1-lpu-6bcf1f4cf22aaf55', hash: '6bcf1f4cf22aaf552736014dfc177eec81d993bf14b94b3328a39dd1b7d38e5d' },
        conductor: { configMapName: 'node-local-v2-lpu-only-33b1-lpu-6bcf1f4cf22aaf55', hash: '6bcf1f4cf22aaf552736014dfc177eec81d993bf14b94b3328a39dd1b7d38e5d' },
      }],
    },
    {
      name: 'node-local-v2-specdecode: one table for draft0, draft1 and target, offsets from 0 per model',
      dgd: aDgd('node-local-v2-specdecode', pair),
      builds: { draft: LPU_ONLY, lpu: LPU_ONLY },
      want: [{
        configMaps: [{
          name: 'node-local-v2-specdecode-63df-lpu-b6f18b8ea30b38c5',
          data: {
            nodes_per_partition: '2\n2\n2\n2\n2\n2',
            partition_ids: '0\n1\n0\n1\n0\n1',
            partition_node_offsets: '0\n2\n0\n2\n0\n2',
            partition_paths: 'part-0\npart-1\npart-0\npart-1\npart-0\npart-1',
            topologies: Array(6).fill(URSA_16C).join('\n'),
            partition_indices: '0\n1\n0\n1\n0\n1',
            partition_models: 'draft0\ndraft0\ndraft1\ndraft1\ntarget\ntarget',
          },
          hash: 'b6f18b8ea30b38c5323a2f08b0c2aacf50a14ca785ed0d1f4fffdc31805fbe80',
        }],
        agents: { configMapName: 'node-local-v2-specdecode-63df-lpu-b6f18b8ea30b38c5', hash: 'b6f18b8ea30b38c5323a2f08b0c2aacf50a14ca785ed0d1f4fffdc31805fbe80' },
        conductor: { configMapName: 'node-local-v2-specdecode-63df-lpu-b6f18b8ea30b38c5', hash: 'b6f18b8ea30b38c5323a2f08b0c2aacf50a14ca785ed0d1f4fffdc31805fbe80' },
      }],
    },
    {
      name: 'node-local-v3-hx-hybrid: HX endpoints are extent[1]*extent[2]*extent[3]; no Cyborg map, and a conductor without a config mount mounts nothing',
      dgd: aDgd('node-local-v3-hx-hybrid', [engine('lpu', ['agent', 'conductor'])]),
      builds: { lpu: HX_HYBRID } as Record<string, LpxBuild>,
      want: [{
        configMaps: [{ name: 'node-local-v3-hx-hybrid-be18-lpu-f8b027cf29abf6cd', data: { nodes_per_partition: '1', partition_ids: '1', partition_node_offsets: '0', partition_paths: 'part-1', topologies: 'opaque-v3-topology', partition_indices: '0', partition_models: 'default' }, hash: 'f8b027cf29abf6cdbab73060b6697b18f7107df8c993859d94073d6012107d12' }],
        agents: { configMapName: 'node-local-v3-hx-hybrid-be18-lpu-f8b027cf29abf6cd', hash: 'f8b027cf29abf6cdbab73060b6697b18f7107df8c993859d94073d6012107d12' },
        conductor: undefined,
      }],
    },
    {
      name: 'a workload whose build is not decoded renders nothing (as before the decoder)',
      dgd: aDgd('node-local-v2-specdecode', pair),
      builds: { lpu: LPU_ONLY } as Record<string, LpxBuild>,
      want: [],
    },
  ])('$name', ({ dgd, builds, want }) => {
    expect(summary(configsFor(dgd, builds))).toEqual(want);
  });

  it('node-local-v2-hybrid-all-local: with every partition on the Cyborg GPU both maps are rendered empty, the Cyborg\'s lpu_servers an empty list', () => {
    const dgd = aDgd('node-local-v2-hybrid-all-local', [engine('lpu', ['agent', 'conductor'], { lpx: { buildId: 'lpu', localPartitions: { all: true } } })]);
    const [config] = summary(configsFor(dgd, { lpu: HYBRID }));
    // Upstream's prefix is node-local-v2-hybrid-all-local-4f40; ours is shorter (names.ts keeps
    // 31 characters for Grove's budget), the hashes are upstream's.
    const pcs = lpxPodCliqueSetName(idOf('node-local-v2-hybrid-all-local'));
    expect(config?.configMaps.map((m) => [m.name, m.data])).toEqual([
      [`${pcs}-decode-fd884c294bcb8400`, { lpu_servers: '' }],
      [`${pcs}-lpu-b79c921f010dd141`, { nodes_per_partition: '', partition_ids: '', partition_node_offsets: '', partition_paths: '', topologies: '', partition_indices: '', partition_models: '' }],
    ]);
    expect(config?.conductor).toEqual({ configMapName: `${pcs}-decode-fd884c294bcb8400`, hash: 'fd884c294bcb84009f3f599f5ab8f4dc6a696089567f23f0a5864a094c7614b6' });
  });

  it('"Bind the authored HX Cyborg configuration mount to the generated ConfigMap": an HX hybrid conductor mounting config gets the LPU table, unstamped', () => {
    const dgd = aDgd('node-local-v3-hx-hybrid', [{ ...engine('lpu', ['agent']), roles: [{ name: 'agent', podTemplate: main() }, { name: 'conductor', podTemplate: main([{ name: 'config', mountPath: '/configs' }]) }] }]);
    expect(summary(configsFor(dgd, { lpu: HX_HYBRID }))[0]?.conductor).toEqual({ configMapName: 'node-local-v3-hx-hybrid-be18-lpu-f8b027cf29abf6cd', hash: undefined });
  });

  it('with several workloads each gets its own maps under <pcs>-<scaling group>', () => {
    const dgd = aDgd('two', [engine('a', ['agent', 'conductor']), engine('b', ['agent', 'conductor'])]);
    const pcs = lpxPodCliqueSetName(idOf('two'));
    const names = [...configsFor(dgd, { a: LPU_ONLY, b: HYBRID }).values()].map((c) => c.configMaps.map((m) => m.name.replace(/-[0-9a-f]{16}$/, '')));
    expect(names).toEqual([[`${pcs}-lpx0-lpu`], [`${pcs}-lpx1-decode`, `${pcs}-lpx1-lpu`]]);
    // The Cyborg addresses its own workload's Agents (lpx1, lpx1-agt).
    expect([...configsFor(dgd, { b: HYBRID }).values()][0]?.configMaps[0]?.data).toEqual({ lpu_servers: 'lpx1-${GROVE_PCSG_INDEX}-lpx1-agt-0' });
  });
});

describe('the runtime partitions behind both tables (derive.ts lpxRuntimePartitions; upstream ModelProjection.configuredBuild)', () => {
  const sixteen = (count: number) => Array.from({ length: count }, (_, id) => aPartition({ sourcePartitionId: id, partPath: `part-${id}` }));
  const hybridOf = (count: number, chains: number[][]) => aBuild({ compilationMode: 'lpx', partitions: sixteen(count), selectedPropSyncChains: chains });
  const tablesOf = (build: LpxBuild) => {
    const [config] = summary(configsFor(aDgd('lpx', [engine('lpu', ['agent', 'conductor'])]), { lpu: build }));
    const byRole = Object.fromEntries((config?.configMaps ?? []).map((m) => [m.name.includes('-decode-') ? 'decode' : 'lpu', m.data]));
    return { servers: (byRole['decode']?.['lpu_servers'] ?? '').split('\n').map((s) => Number(s.slice(s.lastIndexOf('-') + 1))), lpu: byRole['lpu'] };
  };

  it.each([
    { name: 'legacy 14 endpoints', partitions: 14, chains: [], wantOffsets: [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26] },
    { name: 'one chain across all partitions', partitions: 3, chains: [[0, 1, 2]], wantOffsets: [0] },
    { name: 'chain followed by endpoint', partitions: 4, chains: [[1, 2]], wantOffsets: [0, 2, 6] },
    { name: 'two chains followed by endpoint', partitions: 5, chains: [[0, 1], [2, 3]], wantOffsets: [0, 4, 8] },
  ])('TestRenderCyborgConfigMapPreservesProjectedEndpoints "$name": lpu_servers "without compressing their physical Agent offsets"', ({ partitions, chains, wantOffsets }) => {
    const { servers, lpu } = tablesOf(hybridOf(partitions, chains));
    expect(servers).toEqual(wantOffsets);
    // The LPU table lists the same runtime partitions at the same offsets.
    expect(lpu?.['partition_node_offsets']?.split('\n').map(Number)).toEqual(wantOffsets);
  });

  it('"collapsed runtime partitions preserve the sum of their physical scheduler endpoints": chain 1-2 of four 16-chip partitions is one row of 4 nodes with the root\'s topology', () => {
    expect(tablesOf(hybridOf(4, [[1, 2]])).lpu).toEqual({
      nodes_per_partition: '2\n4\n2',
      partition_ids: '0\n1\n3',
      partition_node_offsets: '0\n2\n6',
      partition_paths: 'part-0\npart-1\npart-3',
      topologies: [URSA_16C, URSA_16C, URSA_16C].join('\n'),
      partition_indices: '0\n1\n2',
      partition_models: 'default\ndefault\ndefault',
    });
  });

  it('an LPU-only runtime\'s table is its selected chain without the standalone CPU embedding partition (upstream resolveBuildSettings -> omitStandaloneEmbeddingPartition)', () => {
    const build = aBuild({ partitions: sixteen(4), selectedPropSyncChains: [[0, 1, 2]], standaloneTokenEmbeddings: true, supportsCpuEmbeddings: true });
    const [config] = summary(configsFor(aDgd('lpx', [engine('lpu', ['agent', 'conductor'])]), { lpu: build }));
    expect(config?.configMaps[0]?.data).toEqual({ nodes_per_partition: '2\n2', partition_ids: '1\n2', partition_node_offsets: '0\n2', partition_paths: 'part-1\npart-2', topologies: `${URSA_16C}\n${URSA_16C}` });
  });
});

describe('the runtime table and its name (upstream lpu_configmap_test.go @274172b2)', () => {
  it('TestResolvedPartitionDataOmitsXTModelColumnsBeforeMaterialization: an XT Single projection keeps only five columns', () => {
    const build = aBuild({ partitions: [aPartition({ sourcePartitionId: 7, partPath: 'part-7', topology: { raw: 'topology-7', chipCount: 16, nodeCount: 2 } }), aPartition({ sourcePartitionId: 9, partPath: 'part-9', topology: { raw: 'topology-9', chipCount: 8, nodeCount: 1 } })] });
    expect(resolvedPartitionData([{ model: 'default', build, partitions: build.partitions }], 'single')).toEqual({
      nodes_per_partition: '2\n1',
      partition_ids: '7\n9',
      partition_node_offsets: '0\n2',
      partition_paths: 'part-7\npart-9',
      topologies: 'topology-7\ntopology-9',
    });
  });

  it('TestRenderRuntimeConfigMapSizeLimit: exactly 1 MiB of UTF-8 value bytes is accepted, one more byte refused with a named error', () => {
    const data = { text: 'é'.repeat(1024 * 1024 / 2 - 1), suffix: 'é' };
    expect(renderRuntimeConfigMap('test-lpu', data).ok).toBe(true);
    const over = renderRuntimeConfigMap('test-lpu', { ...data, suffix: 'éx' });
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.error).toMatch(/^rendered LPX ConfigMap "test-lpu-[0-9a-f]{16}" data is 1048577 bytes; maximum is 1048576$/);
  });

  it('TestLPXRuntimeConfigNamesMatchPodIdentity: <root>-lpu-<hash16> and <root>-decode-<hash16> of the same content', () => {
    const lpu = renderRuntimeConfigMap('short-lpu', { runtime: 'config' });
    const decode = renderRuntimeConfigMap('short-decode', { runtime: 'config' });
    const hash = runtimeConfigMapHash({ runtime: 'config' });
    expect([lpu.ok && lpu.configMap.name, decode.ok && decode.configMap.name]).toEqual([`short-lpu-${hash.slice(0, 16)}`, `short-decode-${hash.slice(0, 16)}`]);
  });

  it('runtimeConfigMapHash hashes as Go\'s encoder writes: <, > and & escaped inside strings', () => {
    // sha256(sha256('{"data":{"k":"\\u003ca\\u0026b\\u003e"},"immutable":true}')), as upstream's GetSpecHash then LPUConfigMapHash.
    expect(runtimeConfigMapHash({ k: '<a&b>' })).toBe('aca00780fe243a6acad841c71ab0cab7420aadf57282832bbc77957b675f123b');
  });

  it('cyborgServersData: one Agent endpoint per partition, at the offset of its first endpoint', () => {
    const build = aBuild({ compilationMode: 'lpx', partitions: [aPartition(), aPartition({ sourcePartitionId: 1 }), aPartition({ sourcePartitionId: 2, topology: { raw: URSA_32C, chipCount: 32, nodeCount: 4 } })] });
    expect(cyborgServersData(build.partitions, 'lpx', 'agt')).toEqual({ lpu_servers: 'lpx-${GROVE_PCSG_INDEX}-agt-0\nlpx-${GROVE_PCSG_INDEX}-agt-2\nlpx-${GROVE_PCSG_INDEX}-agt-4' });
  });
});

describe('the ConfigMap objects and their mounts (upstream stampDeploymentIdentity; lpx.md §2.3)', () => {
  const dgd = aDgd('node-local-v2-hybrid', [engine('lpu', ['agent', 'conductor'])]);
  const id = idOf('node-local-v2-hybrid');
  const configs = configsFor(dgd, { lpu: HYBRID });

  it('"The LPXGD owns its one LPX PodCliqueSet, the runtime ConfigMaps": immutable, the fixture\'s labels and annotations, the LPXGD their controller with blockOwnerDeletion', () => {
    const [decode] = renderLpxRuntimeConfigMaps(id, '22222222-2222-4222-8222-222222222222', configs);
    expect(decode).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'node-local-v2-hybrid-9d06-decode-734ce683f6b7ea5f',
        namespace: 'test',
        labels: { 'lpx.nvidia.com/deployment-uid': 'lpx-render-uid' },
        annotations: { 'lpx.nvidia.com/deployment-name': 'node-local-v2-hybrid', 'lpx.nvidia.com/deployment-uid': 'lpx-render-uid', 'scheduling.lpu.nvidia.com/dgd-uid': '22222222-2222-4222-8222-222222222222' },
        ownerReferences: [{ apiVersion: 'nvidia.com/v1alpha1', kind: 'LPXGraphDeployment', name: 'node-local-v2-hybrid', uid: 'lpx-render-uid', controller: true, blockOwnerDeletion: true }],
      },
      immutable: true,
      data: { lpu_servers: 'lpx-${GROVE_PCSG_INDEX}-agt-0' },
    });
  });

  it('node-local-v2-hybrid.yaml: the Agents mount the LPU table and the conductor the Cyborg map at /configs (volume config), each stamped nvidia.com/extra-resources-hash', () => {
    const pcs = renderLpxPodCliqueSet(dgd, id, resolveLpxWorkloads(dgd), new Map(), { terminationDelay: '15m' }, new Map(), configs);
    const cliques = (pcs['spec'] as { template: { cliques: { name: string; annotations: Record<string, string>; spec: { podSpec: { volumes: unknown[]; containers: { volumeMounts: unknown[] }[] } } }[] } }).template.cliques;
    expect(cliques.map((c) => [c.name, c.annotations['nvidia.com/extra-resources-hash'], c.spec.podSpec.volumes.at(-1), c.spec.podSpec.containers[0]?.volumeMounts.at(-1)])).toEqual([
      ['agt', '355e8ac6768c54e3ee778e2044a7498390f64c82034bbc4cc3dafa0ef4031877', { name: 'config', configMap: { name: 'node-local-v2-hybrid-9d06-lpu-355e8ac6768c54e3' } }, { name: 'config', mountPath: '/configs' }],
      ['cond', '734ce683f6b7ea5f7b0c0172b07d5e1ed45773120ab8c7d834967d180c62cea2', { name: 'config', configMap: { name: 'node-local-v2-hybrid-9d06-decode-734ce683f6b7ea5f' } }, { name: 'config', mountPath: '/configs' }],
    ]);
    // Without runtime ConfigMaps the cliques are rendered as before.
    const before = renderLpxPodCliqueSet(dgd, id, resolveLpxWorkloads(dgd), new Map(), { terminationDelay: '15m' });
    expect(JSON.stringify(before)).not.toContain('extra-resources-hash');
  });

  it('an authored config mount (even at another path) and an authored XT config volume are kept, not duplicated', () => {
    const clique = { name: 'agt', annotations: { b: '1' }, spec: { roleName: 'agt', replicas: 1, podSpec: { containers: [{ name: 'main', volumeMounts: [{ name: 'config', mountPath: '/runtime/partitions', readOnly: true }] }], volumes: [{ name: 'config', emptyDir: {} }] } } };
    expect(bindRuntimeConfig(clique, { configMapName: 'x-lpu-0123456789abcdef', hash: 'h' })).toEqual({ ...clique, annotations: { b: '1', 'nvidia.com/extra-resources-hash': 'h' } });
  });

  it('TestLPUConfigVolumeRejectsAuthoredSourceMismatch: an HX template\'s own config volume is refused, naming the generated ConfigMap', () => {
    const hx = aDgd('node-local-v3-hx-hybrid', [{ ...engine('lpu', ['conductor']), roles: [{ name: 'agent', podTemplate: { spec: { ...main().spec, volumes: [{ name: 'config', configMap: { name: 'other-config' } }] } } }, { name: 'conductor', podTemplate: main() }] }]);
    const [workload] = resolveLpxWorkloads(hx);
    const config = configsFor(hx, { lpu: HX_HYBRID }).get('lpx');
    if (workload === undefined || config === undefined) throw new Error('no workload');
    expect(runtimeConfigVolumeIssue(workload, HX_HYBRID, config)).toBe('selected LPX podTemplate volume "config" is reserved for ConfigMap "node-local-v3-hx-hybrid-be18-lpu-f8b027cf29abf6cd"');
    expect(runtimeConfigVolumeIssue(workload, HYBRID, config)).toBeUndefined();
  });
});

describe('creating and pruning (upstream reconcileRuntimeResources, deleteUnusedConfigMaps; lpx.md §5.3 steps 12 and 19)', () => {
  const desired = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p-lpu-aaaaaaaaaaaaaaaa', namespace: 'test' } }];
  const stored = (name: string, extra: Record<string, unknown> = {}, owner = 'lpx-uid') => [name, { metadata: { name, resourceVersion: '3', ownerReferences: [{ uid: owner, controller: true }], ...extra } }] as const;
  it.each([
    { name: 'a missing desired map is created', observed: new Map(), want: { ok: true, create: desired } },
    { name: 'a stored map of ours is immutable: not created or updated again', observed: new Map([stored('p-lpu-aaaaaaaaaaaaaaaa')]), want: { ok: true, create: [] } },
    { name: '"Foreign objects at the expected names are never adopted"', observed: new Map([stored('p-lpu-aaaaaaaaaaaaaaaa', {}, 'other-uid')]), want: { ok: false, error: 'ConfigMap "p-lpu-aaaaaaaaaaaaaaaa" is not controlled by this LPXGraphDeployment' } },
  ])('decideRuntimeConfigMapCreates: $name', ({ observed, want }) => {
    expect(decideRuntimeConfigMapCreates(desired, observed, 'lpx-uid')).toEqual(want);
  });

  it('obsoleteRuntimeConfigMaps: "Discover obsolete ConfigMaps rooted in this exact LPX child": ours, not desired, not already terminating; with their resourceVersion', () => {
    const observed = new Map([
      stored('p-lpu-aaaaaaaaaaaaaaaa'),
      stored('p-lpu-cccccccccccccccc'),
      stored('p-lpu-bbbbbbbbbbbbbbbb'),
      stored('p-lpu-dddddddddddddddd', { deletionTimestamp: '2026-12-01T10:00:00Z' }),
      stored('p-lpu-eeeeeeeeeeeeeeee', {}, 'other-uid'),
    ]);
    expect(obsoleteRuntimeConfigMaps(desired, observed, 'lpx-uid')).toEqual([
      { name: 'p-lpu-bbbbbbbbbbbbbbbb', resourceVersion: '3' },
      { name: 'p-lpu-cccccccccccccccc', resourceVersion: '3' },
    ]);
  });
});
