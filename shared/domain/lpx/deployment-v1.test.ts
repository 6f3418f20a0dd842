import { describe, expect, it } from 'vitest';
import {
  EXECUTION_V1_FILE,
  V3_HX_TOPOLOGY_FAMILY,
  aDeploymentV1ContractFixture,
  aManifestV2ContractFixture,
  aManifestV2LpuArtifact,
  aV2CompilerFixture,
  aV3CompilerFixture,
  anXtLpuOnlyFixture,
  deploymentV1Of,
  encodeGbuildDeploymentV1,
  encodeGbuildManifestV2,
  type DeploymentFixturePartition,
  type DeploymentV1Fixture,
  type ManifestFixture,
} from '../../../test/support/gbuild-manifest.js';
import { normalizeBuildSnapshot } from './build-contract.js';
import { normalizeGbuildDeploymentV1 } from './deployment-v1.js';
import { normalizeGbuildManifestV2 } from './manifest-v2.js';

// Upstream model_deployment_v1_test.go: every case normalizes "gs://models/build" with the inventory of the deployment and its execution file.
const REF = 'gs://models/build';
const INVENTORY = ['deployment.v1.capnp.bin', EXECUTION_V1_FILE];
const FILE = 'deployment.v1.capnp.bin';

const normalize = (fixture: DeploymentV1Fixture, inventory: readonly string[] = INVENTORY) => normalizeGbuildDeploymentV1(REF, encodeGbuildDeploymentV1(fixture), inventory);
const withPartition = (overrides: Partial<DeploymentFixturePartition>): Partial<DeploymentV1Fixture> => ({ partitions: [{ ...aManifestV2LpuArtifact(0), architecture: 'lp20', ...overrides }] });
const withRuntimeIo = (overrides: Partial<NonNullable<DeploymentV1Fixture['runtimeIo']>>): Partial<DeploymentV1Fixture> => ({
  runtimeIo: { ...(aDeploymentV1ContractFixture().runtimeIo as NonNullable<DeploymentV1Fixture['runtimeIo']>), ...overrides },
});
const withExecution = (overrides: Partial<NonNullable<DeploymentV1Fixture['execution']>>): Partial<DeploymentV1Fixture> => ({
  execution: { ...(aDeploymentV1ContractFixture().execution as NonNullable<DeploymentV1Fixture['execution']>), ...overrides },
});

describe('the split contract normalizes to the legacy build (upstream TestDeploymentContractPreservesNormalizedBuild: "Create equivalent legacy and deployment-only scheduler contracts")', () => {
  it('newDeploymentV1ContractFixture decodes to exactly the build of newManifestV2ContractFixture', () => {
    const legacy = normalizeGbuildManifestV2(REF, encodeGbuildManifestV2(aManifestV2ContractFixture()));
    expect(legacy.ok).toBe(true);
    expect(normalize(aDeploymentV1ContractFixture())).toEqual(legacy);
  });

  it.each<{ name: string; fixture: ManifestFixture }>([
    { name: 'newV3CompilerFixture (HX, host I/O)', fixture: aV3CompilerFixture() },
    { name: 'newV2CompilerFixture (XT, a selected prop-sync chain)', fixture: aV2CompilerFixture() },
    { name: 'the integration tests\' LPU-only XT build', fixture: anXtLpuOnlyFixture() },
  ])('the same facts as $name give the same build', ({ fixture }) => {
    const legacy = normalizeGbuildManifestV2(REF, encodeGbuildManifestV2(fixture));
    expect(legacy.ok).toBe(true);
    expect(normalize(deploymentV1Of(fixture))).toEqual(legacy);
  });
});

describe('buildFromGbuildDeploymentV1 rejects invalid facts (upstream TestDeploymentContractRejectsInvalidFacts: "Reject the malformed scheduler input before producing a build")', () => {
  // `want` is the whole text where model_deployment_v1.go spells it; upstream's own assertion (ErrorContains) is `contains`.
  it.each<{ name: string; contains: string; overrides: Partial<DeploymentV1Fixture>; inventory?: readonly string[]; want?: string }>([
    { name: 'revision', contains: 'contractRevision', overrides: { contractRevision: 0 }, want: `${FILE} contractRevision = 0, want 1` },
    { name: 'future revision', contains: 'contractRevision', overrides: { contractRevision: 99 }, want: `${FILE} contractRevision = 99, want 1` },
    { name: 'build ID', contains: 'identity.buildId', overrides: { buildId: '' }, want: `${FILE} identity.buildId is required` },
    { name: 'I/O protocol', contains: 'protocol', overrides: withRuntimeIo({ protocol: 99 }), want: `${FILE} config.runtimeIo.protocol 99 is not supported` },
    { name: 'FPGA mode', contains: 'fpgaMode', overrides: withRuntimeIo({ fpgaMode: 99 }), want: `${FILE} config.runtimeIo.fpgaMode 99 is not supported` },
    { name: 'zero endpoints', contains: 'ioFpgaCount', overrides: withRuntimeIo({ ioFpgaCount: 0 }), want: `${FILE} config.runtimeIo.ioFpgaCount must be in [1, 2147483647], got 0` },
    { name: 'zero fanout', contains: 'fanoutFactor', overrides: withRuntimeIo({ fanoutFactor: 0 }), want: `${FILE} config.runtimeIo.fanoutFactor must be in [1, 2147483647], got 0` },
    { name: 'host endpoints', contains: 'host runtime I/O', overrides: withRuntimeIo({ protocol: 0 }), want: `${FILE} host runtime I/O requires ioFpgaCount 1, got 4` },
    { name: 'batch splitting', contains: 'divisible', overrides: { program: { batchSize: 7, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false } } },
    { name: 'execution path', contains: 'execution', overrides: withExecution({ path: '../execution.v1.capnp.bin' }), want: 'execution.path "../execution.v1.capnp.bin" must be relative and stay within build directory' },
    { name: 'execution self-reference', contains: 'execution', overrides: withExecution({ path: FILE }), want: `execution.path "${FILE}" must name the execution contract` },
    { name: 'execution digest', contains: 'execution', overrides: withExecution({ sha256: Buffer.from('short') }), want: 'execution.sha256 must contain 32 bytes, got 5' },
    { name: 'execution inventory', contains: 'execution', overrides: {}, inventory: [FILE], want: `execution.path "${EXECUTION_V1_FILE}" is missing from build inventory` },
    { name: 'unknown device', contains: 'deviceType', overrides: withPartition({ deviceType: 99, detail: 'lpu' }), want: 'partition 0 has unsupported deviceType 99' },
    { name: 'mismatched detail', contains: 'mismatched detail', overrides: withPartition({ deviceType: 'cuda', detail: 'lpu' }), want: 'CUDA partition 0 has mismatched detail' },
    { name: 'embedding support', contains: 'requires supportsCpuEmbeddings', overrides: { tokenEmbeddingsPath: 'runtime/embeddings.npz' }, want: `${FILE} runtimeAssets.tokenEmbeddingsPath requires supportsCpuEmbeddings=true` },
    {
      name: 'missing embeddings',
      contains: 'tokenEmbeddingsPath is required',
      overrides: { program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: true } },
      want: `${FILE} runtimeAssets.tokenEmbeddingsPath is required when standaloneTokenEmbeddings=true`,
    },
    { name: 'missing architecture', contains: 'unsupported chip architecture', overrides: withPartition({ architecture: 0 }), want: `${FILE} LPU partition 0 unsupported chip architecture unspecified` },
    { name: 'unknown architecture', contains: 'unsupported chip architecture', overrides: withPartition({ architecture: 99 }), want: `${FILE} LPU partition 0 unsupported chip architecture ` },
  ])('$name', ({ contains, overrides, inventory, want }) => {
    const result = normalize(aDeploymentV1ContractFixture(overrides), inventory);
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining(contains) });
    if (want !== undefined) expect(result).toEqual({ ok: false, error: want });
  });

  it.each<{ name: string; overrides: Partial<DeploymentV1Fixture>; want: string }>([
    { name: 'no config (model_deployment_v1.go "%s is missing config")', overrides: { config: false }, want: `${FILE} is missing config` },
    { name: 'no execution (validateExecutionReference "%s is missing execution")', overrides: { execution: undefined }, want: `${FILE} is missing execution` },
    { name: 'no identity reads as an empty build id (Go reads a null struct as empty)', overrides: { buildId: undefined }, want: `${FILE} identity.buildId is required` },
    {
      name: 'a non-canonical execution path (validateExecutionReference "%q must be a canonical bundle-relative path")',
      overrides: withExecution({ path: './execution.v1.capnp.bin' }),
      want: 'execution.path "./execution.v1.capnp.bin" must be a canonical bundle-relative path',
    },
    { name: 'the build report as execution (validateExecutionReference)', overrides: withExecution({ path: 'build-report.v1.capnp.bin' }), want: 'execution.path "build-report.v1.capnp.bin" must name the execution contract' },
    {
      name: 'an lpuOnly build with a CPU partition ("An LPU-only build cannot silently discard packaged CUDA or CPU partitions")',
      overrides: { compilationMode: 'lpuOnly', partitions: [{ ...aManifestV2LpuArtifact(0), architecture: 'lp20' }, { id: 1, deviceType: 'cpu' }] },
      want: `${FILE} config.compilationMode lpuOnly requires every artifact partition to use deviceType lpu`,
    },
    { name: 'a CPU ref with an LPU detail (buildPartitionFromDeploymentV1)', overrides: withPartition({ deviceType: 'cpu', detail: 'lpu' }), want: 'CPU partition 0 has mismatched detail' },
    { name: 'an LPU ref without detail (buildPartitionFromDeploymentV1)', overrides: withPartition({ detail: 'none' }), want: 'LPU partition 0 has mismatched detail' },
    { name: 'a short chain (decodePropSyncChain)', overrides: { selectedPropSyncChains: [[0]] }, want: `${FILE} config.selectedPropSyncChains[0] must contain at least two partitionIds` },
  ])('$name', ({ overrides, want }) => {
    expect(normalize(aDeploymentV1ContractFixture(overrides))).toEqual({ ok: false, error: want });
  });
});

describe('buildFromGbuildDeploymentV1 keeps the supported geometry (upstream TestDeploymentContractSupportedGeometry: "Preserve scheduler geometry while excluding non-LPU execution details")', () => {
  const hx = (overrides: Partial<DeploymentFixturePartition>): Partial<DeploymentV1Fixture> =>
    withPartition({ architecture: 'lp30', topology: V3_HX_TOPOLOGY_FAMILY, numChips: 16, devicesPerNode: 16, ...overrides });
  it.each<{ name: string; overrides: Partial<DeploymentV1Fixture>; family: string; io: number; extent?: number[] }>([
    { name: 'host XT', overrides: withRuntimeIo({ protocol: 0, fpgaMode: 0, ioFpgaCount: 1 }), family: 'xt8888', io: 1 },
    { name: 'HX metadata', overrides: { ...hx({ numChips: 32, topologyFamily: V3_HX_TOPOLOGY_FAMILY, partitionShape: [16, 2, 1, 1] }), numLpuNodes: 2 }, family: 'hx16x8x2x3', io: 4, extent: [16, 2, 1, 1] },
    { name: 'HX legacy geometry', overrides: hx({}), family: 'hx16x8x2x3', io: 4, extent: [16, 1, 1, 1] },
    { name: 'HX subnode', overrides: hx({ numChips: 8 }), family: 'hx16x8x2x3', io: 4, extent: [16, 1, 1, 1] },
    { name: 'partial XT', overrides: { ...withPartition({ id: 3 }), numLpuNodes: 4, partSelect: [{ deviceType: 'lpu', id: 3 }] }, family: 'xt8888', io: 4 },
    { name: 'hybrid CPU', overrides: { partitions: [{ ...aManifestV2LpuArtifact(0), architecture: 'lp20' }, { id: 0, deviceType: 'cpu' }] }, family: 'xt8888', io: 4 },
    { name: 'CPU embedding asset', overrides: { program: { batchSize: 8, supportsCpuEmbeddings: true, standaloneTokenEmbeddings: false }, tokenEmbeddingsPath: 'runtime/embeddings.npz' }, family: 'xt8888', io: 4 },
  ])('$name', ({ overrides, family, io, extent }) => {
    const result = normalize(aDeploymentV1ContractFixture(overrides));
    if (!result.ok) throw new Error(result.error);
    expect(result.build.family).toBe(family);
    expect(result.build.ioFpgaCount).toBe(io);
    expect(result.build.partitions).toHaveLength(1);
    if (extent !== undefined) expect(result.build.partitions[0]?.hxExtent).toEqual(extent);
    else expect(result.build.partitions[0]?.topology.nodeCount).toBe(1);
  });
});

describe('normalizeBuildSnapshot decodes only the selected contract (upstream normalizeBuildSnapshot: "malformed split data cannot reach the legacy reader")', () => {
  it('"Reject the selected deployment during normalization" (TestDeploymentContractRejectsCorruptNewOnly): corrupt split bytes', () => {
    expect(normalizeBuildSnapshot('deploymentV1', REF, Buffer.from('corrupt'), [FILE])).toMatchObject({ ok: false, error: expect.stringMatching(/^parsing deployment\.v1\.capnp\.bin: /) });
  });

  it('a legacy manifest read as the split contract is refused, and read as the legacy one is accepted', () => {
    const legacy = encodeGbuildManifestV2(aManifestV2ContractFixture());
    expect(normalizeBuildSnapshot('deploymentV1', REF, legacy, [FILE]).ok).toBe(false);
    expect(normalizeBuildSnapshot('manifestV2', REF, legacy, ['manifest.v2.capnp.bin'])).toEqual(normalizeGbuildManifestV2(REF, legacy));
  });
});
