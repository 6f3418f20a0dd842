import { describe, expect, it } from 'vitest';
import {
  REGISTRY_TEST_TOPOLOGY,
  REGISTRY_TEST_TOPOLOGY_16C,
  V3_HX_TOPOLOGY_FAMILY,
  V3_OPAQUE_TOPOLOGY,
  aManifestV2ContractFixture,
  aManifestV2LpuArtifact,
  aV2CompilerFixture,
  aV3CompilerFixture,
  encodeGbuildManifestV2,
  type ManifestFixture,
  type ManifestFixturePartition,
} from '../../../test/support/gbuild-manifest.js';
import type { LpxBuild, LpxBuildPartition } from './build.js';
import { classifyManifestPartitions } from './manifest-common.js';
import { buildPartitionFromManifestV2, decodeGbuildManifestV2, normalizeGbuildManifestV2 } from './manifest-v2.js';
import { Manifest } from './manifest-v2-schema.js';

const FILE = 'manifest.v2.capnp.bin';
const REF = 'gs://models/build';
/** `compatibilityKey` of upstream's `registryTestTopology` family: the name without its chip count. */
const REGISTRY_KEY = 'URSA_V2_1__Q8__C__G_106__KP_FEC__GHZ_1_0__NO_FPGA';

const normalize = (fixture: ManifestFixture, ref = REF) => normalizeGbuildManifestV2(ref, encodeGbuildManifestV2(fixture));
const failure = (error: string) => ({ ok: false, error });
const xtPartition = (id: number, partPath: string, chipCount = 8, raw = chipCount === 8 ? REGISTRY_TEST_TOPOLOGY : REGISTRY_TEST_TOPOLOGY_16C): LpxBuildPartition => ({
  sourcePartitionId: id,
  partPath,
  topology: { raw, chipCount, nodeCount: Math.max(1, Math.trunc(chipCount / 8)), compatibilityKey: REGISTRY_KEY },
  hxExtent: undefined,
});
/** The build of upstream's `newManifestV2ContractFixture`, as `buildFromGbuildManifestV2` projects it. */
const contractBuild = (overrides: Partial<LpxBuild> = {}): LpxBuild => ({
  path: REF,
  family: 'xt8888',
  compilationMode: 'lpx',
  partitions: [xtPartition(0, 'part-0')],
  selectedPropSyncChains: [],
  standaloneTokenEmbeddings: false,
  supportsCpuEmbeddings: false,
  ioFpgaCount: 4,
  ioFanoutFactor: 2,
  batchSize: 8,
  tokenEmbeddingsPath: undefined,
  ...overrides,
});

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: ManifestFixture;
  readonly want: ReturnType<typeof failure> | { ok: true; build: LpxBuild };
}

describe('buildFromGbuildManifestV2 (upstream model_manifest_v2.go)', () => {
  const contract = aManifestV2ContractFixture();
  const rows: Row[] = [
    {
      name: 'the revision 2 contract fixture projects its runtime I/O (4 I/O FPGAs, fanout 2) and one partition',
      reason: 'upstream TestBuildFromGbuildManifestV2ProjectsRuntimeIO',
      input: contract,
      want: { ok: true, build: contractBuild() },
    },
    {
      name: 'the compat FPGA I/O mode 1 does not change the normalized build',
      reason: 'upstream TestBuildFromGbuildManifestV2ProjectsRuntimeIO ("Accept compat FPGA I/O mode without changing the normalized build contract")',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 1, mode: 1, ioFpgaCount: 4, fanoutFactor: 2 } }),
      want: { ok: true, build: contractBuild() },
    },
    {
      name: 'an unsupported contract revision is refused before lowering',
      reason: 'upstream TestBuildFromGbuildManifestV2ProjectsRuntimeIO ("Reject an unsupported contract revision"); model_manifest_v2.go "%s contractRevision = %d, want %d"',
      input: aManifestV2ContractFixture({ contractRevision: 3 }),
      want: failure(`${FILE} contractRevision = 3, want 2`),
    },
    ...(
      [
        ['valid', [1, 0], undefined],
        ['duplicate', [0, 0], `${FILE} artifacts.partSelect has duplicate LPU partition id 0`],
        ['unpackaged', [0, 2], `${FILE} artifacts.partSelect references unpackaged LPU partition id 2`],
        ['incomplete', [0], `${FILE} artifacts.partSelect selects 1 LPU partitions, but artifacts package 2`],
        ['empty (model_manifest_v2.go "%s artifacts.partSelect.partitions is empty")', [], `${FILE} artifacts.partSelect.partitions is empty`],
      ] as const
    ).map(([name, ids, error]): Row => ({
      name: `partSelect ${name}: validated against the sorted unique XT inventory`,
      reason: 'upstream TestBuildFromGbuildManifestV2ValidatesPartSelect (an unsorted two-partition inventory 1, 0 and an explicit selector)',
      input: aManifestV2ContractFixture({
        numLpuNodes: 2,
        partitions: [aManifestV2LpuArtifact(1), aManifestV2LpuArtifact(0)],
        partSelect: ids.map((id) => ({ deviceType: 'lpu' as const, id })),
      }),
      want: error === undefined ? { ok: true, build: contractBuild({ partitions: [xtPartition(0, 'part-0'), xtPartition(1, 'part-0')] }) } : failure(error),
    })),
    ...(
      [
        ['positive batch size', 0, 4, 2, `${FILE} deployment.program.batchSize must be >= 1, got 0`],
        ['batch divisibility', 3, 4, 2, `${FILE} deployment.program.batchSize 3 must be divisible by deployment.runtimeIo.ioFpgaCount 4`],
        ['fanout divisibility', 8, 4, 3, `${FILE} deployment.program.batchSize per endpoint 2 must be divisible by deployment.runtimeIo.fanoutFactor 3`],
      ] as const
    ).map(([name, batchSize, ioFpgaCount, fanoutFactor, error]): Row => ({
      name: `runtime invariant: ${name}`,
      reason: 'upstream TestBuildFromGbuildManifestV2ValidatesRuntimeInvariants',
      input: aManifestV2ContractFixture({
        program: { batchSize, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false },
        runtimeIo: { protocol: 1, mode: 2, ioFpgaCount, fanoutFactor },
      }),
      want: failure(error),
    })),
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(normalize(input)).toEqual(want);
  });

  it('the same bytes give the same build, twice', () => {
    const bytes = encodeGbuildManifestV2(contract);
    expect(normalizeGbuildManifestV2(REF, bytes)).toEqual(normalizeGbuildManifestV2(REF, bytes));
  });
});

describe('revision-2 path, XT geometry, node-count and embedding contracts (upstream TestBuildFromGbuildManifestV2ValidatesV2OnlyContracts)', () => {
  const geometry = (numChips: number, devicesPerNode: number, numLpuNodes: number) =>
    aManifestV2ContractFixture({ numLpuNodes, partitions: [aManifestV2LpuArtifact(0, { numChips, devicesPerNode })] });
  const embedding = (tokenEmbeddingsPath: string | undefined, supportsCpuEmbeddings: boolean, standaloneTokenEmbeddings: boolean) =>
    aManifestV2ContractFixture({
      numLpuNodes: 2,
      program: { batchSize: 8, supportsCpuEmbeddings, standaloneTokenEmbeddings },
      partitions: [aManifestV2LpuArtifact(0), aManifestV2LpuArtifact(1)],
      tokenEmbeddingsPath,
    });
  const rows: Row[] = [
    {
      name: 'partition traversal',
      reason: 'upstream row "partition traversal" (wantErr "LPU partition 0 path"); cleanManifestRelativeBuildPath',
      input: aManifestV2ContractFixture({ partitions: [aManifestV2LpuArtifact(0, { path: '../outside' })] }),
      want: failure(`${FILE} LPU partition 0 path "../outside" must be relative and stay within build directory`),
    },
    {
      name: 'runtime asset line break',
      reason: 'upstream row "runtime asset line break"; cleanManifestRelativeBuildPath "%s %q must not contain NUL bytes or line breaks"',
      input: embedding('runtime\nasset', true, false),
      want: failure(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath "runtime\\nasset" must not contain NUL bytes or line breaks`),
    },
    { name: 'missing numChips', reason: 'upstream row "missing numChips"', input: geometry(0, 8, 1), want: failure(`${FILE} LPU partition 0 numChips must be >= 1, got 0`) },
    {
      name: 'topology and numChips mismatch',
      reason: 'upstream row "topology and numChips mismatch"',
      input: geometry(16, 8, 2),
      want: failure(`${FILE} LPU partition 0 topology chip count 8 does not match numChips 16`),
    },
    { name: 'missing devicesPerNode', reason: 'upstream row "missing devicesPerNode"', input: geometry(8, 0, 1), want: failure(`${FILE} LPU partition 0 devicesPerNode must be >= 1, got 0`) },
    {
      name: 'deployment node count mismatch',
      reason: 'upstream row "deployment node count mismatch"',
      input: geometry(8, 8, 2),
      want: failure(`${FILE} LPU partitions use 1 LPU nodes, want deployment.numLpuNodes 2`),
    },
    {
      name: 'asset without CPU embeddings',
      reason: 'upstream row "asset without CPU embeddings"',
      input: embedding('runtime/text_embeddings.npz', false, false),
      want: failure(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath requires supportsCpuEmbeddings=true`),
    },
    {
      name: 'missing standalone asset',
      reason: 'upstream row "missing standalone asset"',
      input: embedding(undefined, true, true),
      want: failure(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath is required when standaloneTokenEmbeddings=true`),
    },
    {
      name: 'valid standalone asset: both partitions kept (omitStandaloneEmbeddingPartition is a runtime step, not normalization)',
      reason: 'upstream row "valid standalone asset"; build.go omitStandaloneEmbeddingPartition runs in resolveBuildSettings',
      input: embedding('runtime/text_embeddings.npz', true, true),
      want: {
        ok: true,
        build: contractBuild({
          partitions: [xtPartition(0, 'part-0'), xtPartition(1, 'part-0')],
          supportsCpuEmbeddings: true,
          standaloneTokenEmbeddings: true,
          tokenEmbeddingsPath: 'runtime/text_embeddings.npz',
        }),
      },
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(normalize(input)).toEqual(want);
  });
});

describe('the build reference and device types (upstream model_manifest_v2_test.go)', () => {
  it.each(['file:///models/copied-build', 'gs://new-bucket/relocated/renamed-build', 'file:///models/build-without-producer-id'])(
    'the acquired locator %s is the build path (upstream TestNormalizedV2BuildTreatsManifestBuildIDAsOpaque)',
    (ref) => {
      const normalized = normalize(aManifestV2ContractFixture(), ref);
      expect(normalized).toEqual({ ok: true, build: contractBuild({ path: ref }) });
    },
  );

  it('"deployment.compilationMode lpuOnly requires every artifact partition to use deviceType lpu" (upstream TestBuildFromGbuildManifestV2RejectsNonLPUArtifactForLPUOnly)', () => {
    const fixture = aManifestV2ContractFixture({ compilationMode: 'lpuOnly', partitions: [aManifestV2LpuArtifact(0), { id: 1, deviceType: 'cuda', detail: 'none' }] });
    expect(normalize(fixture)).toEqual(failure(`${FILE} deployment.compilationMode lpuOnly requires every artifact partition to use deviceType lpu`));
  });
});

describe('HX artifacts (upstream TestNormalizeBuildSnapshotRejectsInvalidHXArtifacts, over newV3CompilerFixture)', () => {
  const [first] = aV3CompilerFixture().partitions;
  if (first === undefined) throw new Error('the V3 fixture has a partition');
  const rows: Row[] = [
    {
      name: 'duplicate LPU partition ID',
      reason: 'upstream row "duplicate LPU partition ID" (wantErr "repeats LPU partition ID 1"); classifyManifestPartitions',
      input: aV3CompilerFixture({ partitions: [first, first] }),
      want: failure(`V3 ${FILE} repeats LPU partition ID 1`),
    },
    {
      name: 'topology metadata node-count mismatch',
      reason: 'upstream row "topology metadata node-count mismatch"; validateManifestPartitionNodeCount (metadata forbids the doubled count)',
      input: aV3CompilerFixture({ partitions: [{ ...first, topology: V3_HX_TOPOLOGY_FAMILY, topologyFamily: V3_HX_TOPOLOGY_FAMILY, partitionShape: [16, 1, 1, 1] }] }),
      want: failure(`V3 ${FILE} deployment.numLpuNodes = 2, but partition extents require 1 LPU nodes`),
    },
    {
      name: 'partial build',
      reason: 'upstream row "partial build" (partSelect of partition 1)',
      input: aV3CompilerFixture({ partSelect: [{ deviceType: 'lpu', id: 1 }] }),
      want: failure(`V3 ${FILE} partSelect builds are not supported`),
    },
    {
      name: 'the metadata-less fixture itself: 2 LPU nodes for one 16-device partition (the historical doubled count)',
      reason: 'validateManifestPartitionNodeCount: "only metadata-less HX partitions permit the historical doubled node count"',
      input: aV3CompilerFixture(),
      want: {
        ok: true,
        build: {
          path: REF,
          family: 'hx16x8x2x3',
          compilationMode: 'lpuOnly',
          partitions: [{ sourcePartitionId: 1, partPath: 'part-1', topology: { raw: V3_OPAQUE_TOPOLOGY, chipCount: 16, nodeCount: 1 }, hxExtent: [16, 1, 1, 1] }],
          selectedPropSyncChains: [],
          standaloneTokenEmbeddings: false,
          supportsCpuEmbeddings: false,
          ioFpgaCount: 1,
          ioFanoutFactor: 1,
          batchSize: 1,
          tokenEmbeddingsPath: undefined,
        },
      },
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(normalize(input)).toEqual(want);
  });
});

describe('buildPartitionFromManifestV2 selects the family (upstream TestBuildPartitionFromManifestV2SelectsFamily)', () => {
  interface PartitionRow {
    readonly name: string;
    readonly topology: string;
    readonly numChips: number;
    readonly devicesPerNode: number;
    readonly family?: string;
    readonly extent?: readonly number[];
    readonly want: { readonly extent: readonly number[] | undefined; readonly compatible: boolean; readonly nodeCount: number } | string;
  }
  const subject = `${FILE} LPU partition 7`;
  const rows: PartitionRow[] = [
    { name: 'standard XT', topology: REGISTRY_TEST_TOPOLOGY, numChips: 8, devicesPerNode: 8, want: { extent: undefined, compatible: false, nodeCount: 1 } },
    { name: 'multi-node XT', topology: REGISTRY_TEST_TOPOLOGY_16C, numChips: 16, devicesPerNode: 8, want: { extent: undefined, compatible: false, nodeCount: 2 } },
    { name: 'metadata-less HX opaque topology', topology: ` ${V3_OPAQUE_TOPOLOGY} `, numChips: 16, devicesPerNode: 16, want: { extent: [16, 1, 1, 1], compatible: true, nodeCount: 1 } },
    { name: 'metadata-less HX XT-looking topology', topology: REGISTRY_TEST_TOPOLOGY, numChips: 16, devicesPerNode: 16, want: { extent: [16, 1, 1, 1], compatible: true, nodeCount: 1 } },
    { name: 'metadata HX opaque topology', topology: V3_OPAQUE_TOPOLOGY, numChips: 16, devicesPerNode: 16, family: ` ${V3_HX_TOPOLOGY_FAMILY} `, extent: [16, 1, 1, 1], want: { extent: [16, 1, 1, 1], compatible: false, nodeCount: 1 } },
    { name: 'metadata HX XT-looking topology', topology: REGISTRY_TEST_TOPOLOGY, numChips: 16, devicesPerNode: 16, family: V3_HX_TOPOLOGY_FAMILY, extent: [16, 1, 1, 1], want: { extent: [16, 1, 1, 1], compatible: false, nodeCount: 1 } },
    { name: 'full HX geometry', topology: V3_OPAQUE_TOPOLOGY, numChips: 512, devicesPerNode: 16, family: V3_HX_TOPOLOGY_FAMILY, extent: [16, 8, 2, 2], want: { extent: [16, 8, 2, 2], compatible: false, nodeCount: 32 } },
    {
      name: 'metadata forbids XT fallback',
      topology: REGISTRY_TEST_TOPOLOGY,
      numChips: 8,
      devicesPerNode: 8,
      family: V3_HX_TOPOLOGY_FAMILY,
      extent: [16, 1, 1, 1],
      want: `V3 ${subject} topologyMetadata.partitionShape contains 16 chips, want numChips 8`,
    },
    { name: 'unknown HX family', topology: V3_OPAQUE_TOPOLOGY, numChips: 16, devicesPerNode: 16, family: 'unknown', extent: [16, 1, 1, 1], want: `V3 ${subject} topologyMetadata.topologyFamily = "unknown", want "16x8x2x3"` },
    { name: 'missing HX extent', topology: V3_OPAQUE_TOPOLOGY, numChips: 16, devicesPerNode: 16, family: V3_HX_TOPOLOGY_FAMILY, extent: [], want: `V3 ${subject} has unsupported HX extent []` },
    { name: 'unsupported HX extent', topology: V3_OPAQUE_TOPOLOGY, numChips: 64, devicesPerNode: 16, family: V3_HX_TOPOLOGY_FAMILY, extent: [16, 1, 2, 2], want: `V3 ${subject} has unsupported HX extent [16 1 2 2]` },
    {
      name: 'HX devices per node mismatch',
      topology: V3_OPAQUE_TOPOLOGY,
      numChips: 16,
      devicesPerNode: 8,
      family: V3_HX_TOPOLOGY_FAMILY,
      extent: [16, 1, 1, 1],
      want: `V3 ${subject} topologyMetadata.partitionShape first dimension 16 does not match devicesPerNode 8`,
    },
    {
      name: 'opaque topology needs HX geometry',
      topology: V3_OPAQUE_TOPOLOGY,
      numChips: 16,
      devicesPerNode: 8,
      want: `parsing ${subject} topology "opaque-v3-topology": topology "opaque-v3-topology" does not match expected pattern`,
    },
    {
      name: 'metadata-less HX wrong chip count',
      topology: V3_OPAQUE_TOPOLOGY,
      numChips: 8,
      devicesPerNode: 16,
      want: `parsing ${subject} topology "opaque-v3-topology": topology "opaque-v3-topology" does not match expected pattern`,
    },
    { name: 'metadata-less HX empty topology', topology: ' ', numChips: 16, devicesPerNode: 16, want: `V3 ${subject} topology must not be empty` },
    { name: 'metadata-less HX unsafe topology', topology: `${V3_OPAQUE_TOPOLOGY}\n`, numChips: 16, devicesPerNode: 16, want: `${subject} topology must not contain NUL bytes or line breaks: "opaque-v3-topology\\n"` },
    {
      name: 'metadata HX NUL topology',
      topology: `${V3_HX_TOPOLOGY_FAMILY}\x00other`,
      numChips: 16,
      devicesPerNode: 16,
      family: V3_HX_TOPOLOGY_FAMILY,
      extent: [16, 1, 1, 1],
      want: `${subject} topology must not contain NUL bytes or line breaks: "16x8x2x3\\x00other"`,
    },
  ];

  /** The first artifact partition of a decoded contract fixture whose partition 7 has the row's geometry. */
  const decodedPartition = (row: PartitionRow, path = 'part-0') => {
    const partition: ManifestFixturePartition = {
      ...aManifestV2LpuArtifact(7, { path, topology: row.topology, numChips: row.numChips, devicesPerNode: row.devicesPerNode }),
      ...(row.family === undefined ? {} : { topologyFamily: row.family, partitionShape: row.extent ?? [] }),
    };
    const decoded = decodeGbuildManifestV2(encodeGbuildManifestV2(aManifestV2ContractFixture({ partitions: [partition] })));
    if (!decoded.ok) throw new Error(decoded.error);
    return decoded.manifest.artifacts.partitions.get(0);
  };

  it.each(rows)('$name', (row) => {
    const got = buildPartitionFromManifestV2(decodedPartition(row));
    if (typeof row.want === 'string') {
      expect(got).toEqual(failure(row.want));
      return;
    }
    const isXt = row.want.extent === undefined;
    expect(got).toEqual({
      ok: true,
      value: {
        partition: {
          sourcePartitionId: 7,
          partPath: 'part-0',
          topology: { raw: row.topology.trim(), chipCount: row.numChips, nodeCount: row.want.nodeCount, ...(isXt ? { compatibilityKey: REGISTRY_KEY } : {}) },
          hxExtent: row.want.extent,
        },
        compatible: row.want.compatible,
      },
    });
    // "Reject unsafe paths for every supported partition family"
    expect(buildPartitionFromManifestV2(decodedPartition(row, '../outside'))).toEqual(failure(`${subject} path "../outside" must be relative and stay within build directory`));
  });
});

describe('classifyManifestPartitions orders by family (upstream TestManifestPartitionFamilyOrdering)', () => {
  const partition = (sourcePartitionId: number, hxExtent: readonly number[] | undefined): LpxBuildPartition => ({
    sourcePartitionId,
    partPath: 'part-0',
    topology: { raw: 't', chipCount: 16, nodeCount: 1 },
    hxExtent,
  });

  it('HX partitions keep manifest order', () => {
    const got = classifyManifestPartitions(FILE, [partition(7, [16, 1, 1, 1]), partition(3, [16, 1, 1, 1])], false);
    expect(got.ok && got.value.family).toBe('hx16x8x2x3');
    expect(got.ok && got.value.partitions.map((p) => p.sourcePartitionId)).toEqual([7, 3]);
  });

  it('XT partitions are sorted by source partition id', () => {
    const got = classifyManifestPartitions(FILE, [partition(7, undefined), partition(3, undefined)], false);
    expect(got.ok && got.value.family).toBe('xt8888');
    expect(got.ok && got.value.partitions.map((p) => p.sourcePartitionId)).toEqual([3, 7]);
  });
});

describe('the other rules of model_manifest_v2.go and model_manifest_common.go, with their texts', () => {
  const hybrid = (partitions: readonly ManifestFixturePartition[], overrides: Partial<ManifestFixture> = {}) => aManifestV2ContractFixture({ partitions, ...overrides });
  const rows: Row[] = [
    { name: 'no deployment', reason: 'model_manifest_v2.go "%s is missing deployment"', input: aManifestV2ContractFixture({ deployment: false }), want: failure(`${FILE} is missing deployment`) },
    {
      name: 'an unknown compilation mode (its ordinal has no name)',
      reason: 'model_manifest_common.go buildCompilationMode "%s deployment.compilationMode %q is not supported"; CompilationMode.String() of an unknown ordinal is ""',
      input: aManifestV2ContractFixture({ compilationMode: 7 }),
      want: failure(`${FILE} deployment.compilationMode "" is not supported`),
    },
    { name: 'no program', reason: 'model_manifest_v2.go "%s deployment.program is missing"', input: aManifestV2ContractFixture({ program: undefined }), want: failure(`${FILE} deployment.program is missing`) },
    { name: 'no runtime I/O', reason: 'runtimeIOFromManifestV2 "%s deployment.runtimeIo is missing"', input: aManifestV2ContractFixture({ runtimeIo: undefined }), want: failure(`${FILE} deployment.runtimeIo is missing`) },
    {
      name: 'no I/O FPGA',
      reason: 'runtimeIOFromManifestV2 "ioFpgaCount must be in [1, %d], got %d" (math.MaxInt32)',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 1, mode: 2, ioFpgaCount: 0, fanoutFactor: 2 } }),
      want: failure(`${FILE} deployment.runtimeIo.ioFpgaCount must be in [1, 2147483647], got 0`),
    },
    {
      name: 'an I/O FPGA count beyond int32',
      reason: 'runtimeIOFromManifestV2 (count > math.MaxInt32)',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 1, mode: 2, ioFpgaCount: 2_147_483_648, fanoutFactor: 2 } }),
      want: failure(`${FILE} deployment.runtimeIo.ioFpgaCount must be in [1, 2147483647], got 2147483648`),
    },
    {
      name: 'no fanout',
      reason: 'runtimeIOFromManifestV2 "fanoutFactor must be in [1, %d], got %d"',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 1, mode: 2, ioFpgaCount: 4, fanoutFactor: 0 } }),
      want: failure(`${FILE} deployment.runtimeIo.fanoutFactor must be in [1, 2147483647], got 0`),
    },
    {
      name: 'host runtime I/O with four I/O FPGAs',
      reason: 'runtimeIOFromManifestV2 "%s host runtime I/O requires ioFpgaCount 1, got %d"',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 0, mode: 0, ioFpgaCount: 4, fanoutFactor: 2 } }),
      want: failure(`${FILE} host runtime I/O requires ioFpgaCount 1, got 4`),
    },
    {
      name: 'an unknown runtime I/O protocol',
      reason: 'runtimeIOFromManifestV2 "%s deployment.runtimeIo.protocol %d is not supported"',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 2, mode: 0, ioFpgaCount: 4, fanoutFactor: 2 } }),
      want: failure(`${FILE} deployment.runtimeIo.protocol 2 is not supported`),
    },
    {
      name: 'a runtime I/O mode above 2',
      reason: 'runtimeIOFromManifestV2 "%s deployment.runtimeIo mode %d is not supported" (runtimeIOMaxMode 2)',
      input: aManifestV2ContractFixture({ runtimeIo: { protocol: 1, mode: 3, ioFpgaCount: 4, fanoutFactor: 2 } }),
      want: failure(`${FILE} deployment.runtimeIo mode 3 is not supported`),
    },
    {
      name: 'a prop-sync chain of one partition',
      reason: 'decodePropSyncChain "%s must contain at least two partitionIds"',
      input: aManifestV2ContractFixture({ selectedPropSyncChains: [[0, 1], [2]] }),
      want: failure(`${FILE} deployment.selectedPropSyncChains[1] must contain at least two partitionIds`),
    },
    {
      name: 'a prop-sync chain without partition ids',
      reason: 'selectedPropSyncChainsFromManifestV2 "%s deployment.selectedPropSyncChains[%d].partitionIds is missing"',
      input: aManifestV2ContractFixture({ selectedPropSyncChains: [undefined] }),
      want: failure(`${FILE} deployment.selectedPropSyncChains[0].partitionIds is missing`),
    },
    { name: 'no artifacts', reason: 'model_manifest_v2.go "%s is missing artifacts"', input: aManifestV2ContractFixture({ artifacts: false }), want: failure(`${FILE} is missing artifacts`) },
    {
      name: 'an empty runtime embeddings path',
      reason: 'cleanManifestRelativeBuildPath "%s is empty"',
      input: aManifestV2ContractFixture({ tokenEmbeddingsPath: '  ', program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: false } }),
      want: failure(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath is empty`),
    },
    {
      name: 'an absolute partition path',
      reason: 'cleanManifestRelativeBuildPath (filepath.IsAbs)',
      input: hybrid([aManifestV2LpuArtifact(0, { path: '/etc/part-0' })]),
      want: failure(`${FILE} LPU partition 0 path "/etc/part-0" must be relative and stay within build directory`),
    },
    {
      name: 'a hybrid build of CUDA and CPU partitions only',
      reason: 'addLPUArtifactsFromManifestV2 "%s artifacts contain no LPU partitions"',
      input: hybrid([{ id: 0, deviceType: 'cuda' }, { id: 1, deviceType: 'cpu' }]),
      want: failure(`${FILE} artifacts contain no LPU partitions`),
    },
    {
      name: 'an LPU partition without LPU detail',
      reason: 'buildPartitionFromManifestV2 "%s artifact partition %d has deviceType lpu without LPU detail"',
      input: hybrid([{ id: 4, deviceType: 'lpu', detail: 'cuda' }]),
      want: failure(`${FILE} artifact partition 4 has deviceType lpu without LPU detail`),
    },
    {
      name: 'an artifact partition without its ref',
      reason: 'buildPartitionFromManifestV2 "%s artifact partition is missing partition ref"',
      input: hybrid([{ ...aManifestV2LpuArtifact(0), omitRef: true }]),
      want: failure(`${FILE} artifact partition is missing partition ref`),
    },
    {
      name: 'XT and HX partitions mixed',
      reason: 'classifyManifestPartitions "%s mixes XT and HX LPU partitions"',
      input: hybrid([aManifestV2LpuArtifact(0), aManifestV2LpuArtifact(1, { topology: V3_OPAQUE_TOPOLOGY, numChips: 16, devicesPerNode: 16 })]),
      want: failure(`${FILE} mixes XT and HX LPU partitions`),
    },
    {
      name: 'an XT partition id packaged twice',
      reason: 'classifyManifestPartitions "%s has duplicate LPU partition id %d"',
      input: hybrid([aManifestV2LpuArtifact(0), aManifestV2LpuArtifact(0)], { numLpuNodes: 2 }),
      want: failure(`${FILE} has duplicate LPU partition id 0`),
    },
    {
      name: 'a negative legacy chip count',
      reason: 'buildXTPartition "%s topology has invalid chip count %d"; parse legacyTopologyRe `(^|_)(-?\\d+)_CHIP(_|$)`',
      input: hybrid([aManifestV2LpuArtifact(0, { topology: 'LEGACY_-8_CHIP' })]),
      want: failure(`${FILE} LPU partition 0 topology has invalid chip count -8`),
    },
    {
      name: 'a multi-node XT topology of partial nodes',
      reason: 'buildXTPartition "%s topology has %d chips, not divisible by %d LPU devices per node"',
      input: hybrid([aManifestV2LpuArtifact(0, { topology: REGISTRY_TEST_TOPOLOGY.replace('8C', '12C'), numChips: 12 })]),
      want: failure(`${FILE} LPU partition 0 topology has 12 chips, not divisible by 8 LPU devices per node`),
    },
    {
      name: 'an XT partition on 4 devices per node (XT LPU device version 2 has 8)',
      reason: 'buildXTPartition "%s devicesPerNode %d, want %d for LPU device version 2"',
      input: hybrid([aManifestV2LpuArtifact(0, { devicesPerNode: 4 })]),
      want: failure(`${FILE} LPU partition 0 devicesPerNode 4, want 8 for LPU device version 2`),
    },
    {
      name: 'no LPU node declared',
      reason: 'addLPUArtifactsFromManifestV2 positiveManifestUInt32ToInt("%s deployment.numLpuNodes")',
      input: aManifestV2ContractFixture({ numLpuNodes: 0 }),
      want: failure(`${FILE} deployment.numLpuNodes must be >= 1, got 0`),
    },
    {
      name: 'host embeddings leaving no model partition',
      reason: 'validateManifestPartitionNodeCount "A host-embedding deployment must retain at least one model partition"',
      input: aManifestV2ContractFixture({ program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true }, tokenEmbeddingsPath: 'emb.npz' }),
      want: failure(`${FILE} LPU partitions use 0 LPU nodes, want deployment.numLpuNodes 1`),
    },
    {
      name: 'host embeddings: a node count matching neither mode names both',
      reason: 'validateManifestPartitionNodeCount "%s LPU partitions use %d packaged LPU nodes or %d with host embeddings, want deployment.numLpuNodes %d"',
      input: hybrid([aManifestV2LpuArtifact(0), aManifestV2LpuArtifact(1)], {
        numLpuNodes: 5,
        program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true },
        tokenEmbeddingsPath: 'emb.npz',
      }),
      want: failure(`${FILE} LPU partitions use 2 packaged LPU nodes or 1 with host embeddings, want deployment.numLpuNodes 5`),
    },
    {
      name: 'host embeddings: the count without partition 0 is accepted',
      reason: 'validateManifestPartitionNodeCount "Accept either supported deployment mode"',
      input: hybrid([aManifestV2LpuArtifact(0), aManifestV2LpuArtifact(1)], {
        numLpuNodes: 1,
        program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true },
        tokenEmbeddingsPath: './emb.npz',
      }),
      want: {
        ok: true,
        build: contractBuild({ partitions: [xtPartition(0, 'part-0'), xtPartition(1, 'part-0')], supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true, tokenEmbeddingsPath: 'emb.npz' }),
      },
    },
    {
      name: 'partSelect: numLpuNodes describes the whole deployment, so a larger count is accepted',
      reason: 'validateManifestPartitionNodeCount "partSelect artifacts contain only the selected partitions"',
      input: hybrid([aManifestV2LpuArtifact(0)], { numLpuNodes: 3, partSelect: [{ deviceType: 'lpu', id: 0 }, { deviceType: 'cuda', id: 9 }] }),
      want: { ok: true, build: contractBuild() },
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(normalize(input)).toEqual(want);
  });
});

describe('decodeGbuildManifestV2 (upstream decodeGbuildManifestV2: "parsing %s: %w", "reading %s root: %w")', () => {
  it('bytes that are not a Cap\'n Proto stream are refused before capnp-es allocates for their segment table', () => {
    const bytes = Buffer.from('compiled LPX manifest v2');
    const declared = bytes.readUInt32LE(0) + 1;
    expect(decodeGbuildManifestV2(bytes)).toEqual(failure(`parsing ${FILE}: message declares ${declared} segments, more than 512`));
  });

  it('an empty file and a truncated message are parse failures', () => {
    expect(decodeGbuildManifestV2(new Uint8Array(0))).toEqual(failure(`parsing ${FILE}: message is 0 bytes, shorter than a segment table`));
    const whole = encodeGbuildManifestV2(aManifestV2ContractFixture());
    const words = whole.readUInt32LE(4);
    expect(decodeGbuildManifestV2(whole.subarray(0, whole.length - 8))).toEqual(failure(`parsing ${FILE}: message is ${whole.length - 8} bytes, shorter than its 1 segments of ${words} words`));
  });

  it('a root that is not a struct is a root failure (the cause is capnp-es\'s text)', () => {
    // A one-segment message whose root pointer is a list pointer (pointer type 1).
    const bytes = Buffer.alloc(16);
    bytes.writeUInt32LE(0, 0);
    bytes.writeUInt32LE(1, 4);
    bytes.writeUInt32LE(1, 8);
    expect(decodeGbuildManifestV2(bytes)).toEqual({ ok: false, error: expect.stringMatching(/^reading manifest\.v2\.capnp\.bin root: CAPNP-TS\d+ /) });
  });

  it('a root struct pointing outside its segment is refused when read, not thrown', () => {
    const bytes = Buffer.alloc(16);
    bytes.writeUInt32LE(0, 0);
    bytes.writeUInt32LE(1, 4);
    bytes.writeUInt32LE(100 << 2, 8); // struct pointer, offset 100 words
    bytes.writeUInt32LE(1 | (5 << 16), 12); // 1 data word, 5 pointers
    expect(normalizeGbuildManifestV2(REF, bytes)).toEqual({ ok: false, error: expect.stringMatching(/^reading manifest\.v2\.capnp\.bin: CAPNP-TS\d+ /) });
  });

  it('the decoded root is the Manifest struct (contractRevision at data byte 0)', () => {
    const decoded = decodeGbuildManifestV2(encodeGbuildManifestV2(aManifestV2ContractFixture({ contractRevision: 9 })));
    expect(decoded.ok && decoded.manifest instanceof Manifest && decoded.manifest.contractRevision).toBe(9);
  });
});

describe('round trips: encoder -> decoder', () => {
  it('an XT LPU-only build (upstream newV2CompilerFixture): two 16-chip partitions in one prop-sync chain on four nodes', () => {
    expect(normalize(aV2CompilerFixture(), 'file:///models/v2-test-build')).toEqual({
      ok: true,
      build: {
        path: 'file:///models/v2-test-build',
        family: 'xt8888',
        compilationMode: 'lpuOnly',
        partitions: [xtPartition(7, 'part-7', 16), xtPartition(8, 'part-8', 16)],
        selectedPropSyncChains: [[7, 8]],
        standaloneTokenEmbeddings: false,
        supportsCpuEmbeddings: false,
        ioFpgaCount: 1,
        ioFanoutFactor: 1,
        batchSize: 1,
        tokenEmbeddingsPath: undefined,
      },
    });
  });

  it('an XT hybrid build: CUDA and CPU partitions are not listed, LPU partitions are sorted by source id', () => {
    const fixture = aManifestV2ContractFixture({
      numLpuNodes: 3,
      partitions: [
        { id: 5, deviceType: 'cuda' },
        aManifestV2LpuArtifact(2, { path: 'lpu/part-2/', topology: REGISTRY_TEST_TOPOLOGY_16C, numChips: 16 }),
        { id: 6, deviceType: 'cpu' },
        aManifestV2LpuArtifact(0, { path: './lpu/part-0' }),
      ],
      selectedPropSyncChains: [[0, 2]],
    });
    expect(normalize(fixture)).toEqual({
      ok: true,
      build: contractBuild({ partitions: [xtPartition(0, 'lpu/part-0'), xtPartition(2, 'lpu/part-2', 16)], selectedPropSyncChains: [[0, 2]] }),
    });
  });

  it('an HX build with topology metadata: manifest order kept, nodes from the extents (2 trays + 1)', () => {
    const hx = (id: number, trays: number): ManifestFixturePartition => ({
      id,
      deviceType: 'lpu',
      path: `part-${id}`,
      topology: ` ${V3_OPAQUE_TOPOLOGY}-${id} `,
      numChips: 16 * trays,
      devicesPerNode: 16,
      topologyFamily: V3_HX_TOPOLOGY_FAMILY,
      partitionShape: [16, trays, 1, 1],
    });
    expect(normalize(aV3CompilerFixture({ numLpuNodes: 3, partitions: [hx(3, 2), hx(1, 1)] }))).toEqual({
      ok: true,
      build: {
        path: REF,
        family: 'hx16x8x2x3',
        compilationMode: 'lpuOnly',
        partitions: [
          { sourcePartitionId: 3, partPath: 'part-3', topology: { raw: `${V3_OPAQUE_TOPOLOGY}-3`, chipCount: 32, nodeCount: 2 }, hxExtent: [16, 2, 1, 1] },
          { sourcePartitionId: 1, partPath: 'part-1', topology: { raw: `${V3_OPAQUE_TOPOLOGY}-1`, chipCount: 16, nodeCount: 1 }, hxExtent: [16, 1, 1, 1] },
        ],
        selectedPropSyncChains: [],
        standaloneTokenEmbeddings: false,
        supportsCpuEmbeddings: false,
        ioFpgaCount: 1,
        ioFanoutFactor: 1,
        batchSize: 1,
        tokenEmbeddingsPath: undefined,
      },
    });
  });
});
