/**
 * Real LPX compiler contracts for tests (`manifest.v2.capnp.bin`, and upstream's split
 * `deployment.v1.capnp.bin`): Cap'n Proto stream messages written with capnp-es through the
 * schema classes the decoders read (shared/domain/lpx/manifest-v2-schema.ts,
 * deployment-v1-schema.ts), so every test that writes a build writes bytes upstream's operator
 * would decode too.
 *
 * The fixtures mirror upstream's test writers: {@link aManifestV2ContractFixture} is
 * `newManifestV2ContractFixture` + `setManifestV2LPUArtifact` (model_fixture_test.go),
 * {@link aV3CompilerFixture} is `newV3CompilerFixture` and {@link aV2CompilerFixture}
 * `newV2CompilerFixture` (compiler_fixture_test.go, written by `writeTestV3CapnpManifest`).
 * A fixture is plain data; {@link encodeGbuildManifestV2} writes it, and overrides make the
 * malformed manifests of upstream's `model_manifest_v2_test.go` cases.
 * {@link aDeploymentV1ContractFixture} is upstream's `newDeploymentV1ContractFixture`
 * (model_deployment_v1_test.go), written by {@link encodeGbuildDeploymentV1};
 * {@link deploymentV1Of} is the split contract equivalent to a manifest fixture.
 * @module
 */
import { createHash } from 'node:crypto';
import * as $ from 'capnp-es';
import type { LpxBuild } from '../../shared/domain/index.js';
import * as v1 from '../../shared/domain/lpx/deployment-v1-schema.js';
import * as schema from '../../shared/domain/lpx/manifest-v2-schema.js';
import { normalizeGbuildManifestV2 } from '../../shared/domain/lpx/manifest-v2.js';

/** Upstream `registryTestTopology` (model_fixture_test.go): an 8-chip XT topology name. */
export const REGISTRY_TEST_TOPOLOGY = 'URSA_V2_1__Q8__8C__G_106__KP_FEC__GHZ_1_0__NO_FPGA';
/** The same name spanning two XT nodes (upstream's "multi-node XT" row: `strings.Replace(registryTestTopology, "8C", "16C", 1)`). */
export const REGISTRY_TEST_TOPOLOGY_16C = REGISTRY_TEST_TOPOLOGY.replace('8C', '16C');
/** Upstream `v3OpaqueTopology` and `v3HXTopologyFamily` (compiler_fixture_test.go). */
export const V3_OPAQUE_TOPOLOGY = 'opaque-v3-topology';
export const V3_HX_TOPOLOGY_FAMILY = '16x8x2x3';

export type FixtureDeviceType = 'lpu' | 'cuda' | 'cpu';

export interface ManifestFixturePartition {
  readonly id: number;
  /** `partition.deviceType`. */
  readonly deviceType: FixtureDeviceType;
  /** Which `detail` union member is written (default: the device type's); `none` leaves it unset. */
  readonly detail?: FixtureDeviceType | 'none';
  /** LPU detail (written when `detail` is `lpu`). */
  readonly path?: string;
  readonly topology?: string;
  readonly numChips?: number;
  readonly devicesPerNode?: number;
  /** With either set, `topologyMetadata` is written (as upstream's writer does). */
  readonly topologyFamily?: string;
  readonly partitionShape?: readonly number[];
  /** Leave `partition` (the PartitionRef) unset. */
  readonly omitRef?: boolean;
}

export interface ManifestFixture {
  readonly contractRevision: number;
  /** `deployment` is written unless false. */
  readonly deployment: boolean;
  /** A schema name, or a raw ordinal for an unknown mode. */
  readonly compilationMode: 'lpuOnly' | 'lpx' | number;
  readonly numLpuNodes: number;
  /** `deployment.program` is written unless undefined. */
  readonly program: { readonly batchSize: number; readonly supportsCpuEmbeddings: boolean; readonly standaloneTokenEmbeddings: boolean } | undefined;
  /** `deployment.runtimeIo` (`mode` is the schema's `reserved1`) is written unless undefined. */
  readonly runtimeIo: { readonly protocol: number; readonly mode: number; readonly ioFpgaCount: number; readonly fanoutFactor: number } | undefined;
  /** Each chain's `partitionIds`; `undefined` in the list leaves that chain's ids unset. */
  readonly selectedPropSyncChains: readonly (readonly number[] | undefined)[] | undefined;
  /** `artifacts` is written unless false. */
  readonly artifacts: boolean;
  readonly partitions: readonly ManifestFixturePartition[];
  /** `artifacts.partSelect.partitions` (device type and id per ref). */
  readonly partSelect: readonly { readonly deviceType: FixtureDeviceType; readonly id: number }[] | undefined;
  /** `artifacts.runtimeAssets.tokenEmbeddingsPath`. */
  readonly tokenEmbeddingsPath: string | undefined;
}

const DEVICE: Record<FixtureDeviceType, number> = { lpu: schema.DeviceType.LPU, cuda: schema.DeviceType.CUDA, cpu: schema.DeviceType.CPU };

/** Upstream `setManifestV2LPUArtifact(partition, id)`: an 8-chip XT LPU partition at `part-0`. */
export function aManifestV2LpuArtifact(id: number, overrides: Partial<ManifestFixturePartition> = {}): ManifestFixturePartition {
  return { id, deviceType: 'lpu', path: 'part-0', topology: REGISTRY_TEST_TOPOLOGY, numChips: 8, devicesPerNode: 8, ...overrides };
}

/**
 * Upstream `newManifestV2ContractFixture`: revision 2, hybrid (`lpx`), one LPU node, batch 8,
 * multi-endpoint runtime I/O (mode 2, 4 I/O FPGAs, fanout 2), one 8-chip XT partition 0.
 */
export function aManifestV2ContractFixture(overrides: Partial<ManifestFixture> = {}): ManifestFixture {
  return {
    contractRevision: schema.CURRENT_CONTRACT_REVISION,
    deployment: true,
    compilationMode: 'lpx',
    numLpuNodes: 1,
    program: { batchSize: 8, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false },
    runtimeIo: { protocol: 1, mode: 2, ioFpgaCount: 4, fanoutFactor: 2 },
    selectedPropSyncChains: undefined,
    artifacts: true,
    partitions: [aManifestV2LpuArtifact(0)],
    partSelect: undefined,
    tokenEmbeddingsPath: undefined,
    ...overrides,
  };
}

/**
 * The smallest build the LPX integration tests deploy: {@link aManifestV2ContractFixture} made
 * LPU-only (one 8-chip XT partition on one node, no CUDA or CPU partitions).
 */
export function anXtLpuOnlyFixture(overrides: Partial<ManifestFixture> = {}): ManifestFixture {
  return aManifestV2ContractFixture({ compilationMode: 'lpuOnly', ...overrides });
}

/**
 * Upstream `newV3CompilerFixture` (+ `writeTestV3CapnpManifest`): an LPU-only HX build, two LPU
 * nodes, batch 1, host runtime I/O (one I/O FPGA, fanout 1), one metadata-less 16-chip,
 * 16-device partition 1 with the opaque topology at `part-1`.
 */
export function aV3CompilerFixture(overrides: Partial<ManifestFixture> = {}): ManifestFixture {
  return aManifestV2ContractFixture({
    compilationMode: 'lpuOnly',
    numLpuNodes: 2,
    program: { batchSize: 1, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false },
    runtimeIo: { protocol: 0, mode: 0, ioFpgaCount: 1, fanoutFactor: 1 },
    partitions: [{ id: 1, deviceType: 'lpu', path: 'part-1', topology: V3_OPAQUE_TOPOLOGY, numChips: 16, devicesPerNode: 16 }],
    ...overrides,
  });
}

/**
 * Upstream `newV2CompilerFixture`: an LPU-only XT build of two 16-chip partitions 7 and 8 (at
 * `part-7`, `part-8`) in one selected prop-sync chain, four LPU nodes. Upstream pairs its 8C
 * `registryTestTopology` with `numChips: 16`, which its own `buildXTPartition` refuses; the
 * 16C name is the consistent geometry.
 */
export function aV2CompilerFixture(overrides: Partial<ManifestFixture> = {}): ManifestFixture {
  const xt = (id: number): ManifestFixturePartition => ({ id, deviceType: 'lpu', path: `part-${id}`, topology: REGISTRY_TEST_TOPOLOGY_16C, numChips: 16, devicesPerNode: 8 });
  return aV3CompilerFixture({ numLpuNodes: 4, selectedPropSyncChains: [[7, 8]], partitions: [xt(7), xt(8)], ...overrides });
}

/**
 * The real stream-framed Cap'n Proto bytes of a fixture (capnp-es `Message.toArrayBuffer`).
 * Fields the fixture leaves unset stay null pointers or zeros, as upstream's writers leave them.
 */
export function encodeGbuildManifestV2(fixture: ManifestFixture): Buffer {
  const message = new $.Message();
  const manifest = message.initRoot(schema.Manifest);
  manifest.contractRevision = fixture.contractRevision;
  if (fixture.deployment) writeDeployment(manifest._initDeployment(), fixture);
  if (fixture.artifacts) writeArtifacts(manifest._initArtifacts(), fixture);
  return Buffer.from(message.toArrayBuffer());
}

function writeDeployment(deployment: schema.DeploymentInfo, fixture: ManifestFixture): void {
  const mode = fixture.compilationMode;
  deployment.compilationMode = mode === 'lpuOnly' ? schema.CompilationMode.LPU_ONLY : mode === 'lpx' ? schema.CompilationMode.LPX : mode;
  deployment.numLpuNodes = fixture.numLpuNodes;
  if (fixture.program !== undefined) {
    const program = deployment._initProgram();
    program.batchSize = fixture.program.batchSize;
    program.supportsCpuEmbeddings = fixture.program.supportsCpuEmbeddings;
    program.standaloneTokenEmbeddings = fixture.program.standaloneTokenEmbeddings;
  }
  if (fixture.runtimeIo !== undefined) {
    const runtimeIo = deployment._initRuntimeIo();
    runtimeIo.protocol = fixture.runtimeIo.protocol;
    runtimeIo.reserved1 = fixture.runtimeIo.mode;
    runtimeIo.ioFpgaCount = fixture.runtimeIo.ioFpgaCount;
    runtimeIo.fanoutFactor = fixture.runtimeIo.fanoutFactor;
  }
  if (fixture.selectedPropSyncChains !== undefined) {
    const chains = deployment._initSelectedPropSyncChains(fixture.selectedPropSyncChains.length);
    fixture.selectedPropSyncChains.forEach((partitionIds, index) => {
      if (partitionIds === undefined) return;
      const ids = chains.get(index)._initPartitionIds(partitionIds.length);
      partitionIds.forEach((id, idIndex) => ids.set(idIndex, id));
    });
  }
}

function writeArtifacts(artifacts: schema.ArtifactInfo, fixture: ManifestFixture): void {
  if (fixture.tokenEmbeddingsPath !== undefined) artifacts._initRuntimeAssets().tokenEmbeddingsPath = fixture.tokenEmbeddingsPath;
  if (fixture.partSelect !== undefined) {
    const selected = artifacts._initPartSelect()._initPartitions(fixture.partSelect.length);
    fixture.partSelect.forEach((ref, index) => {
      const at = selected.get(index);
      at.deviceType = DEVICE[ref.deviceType];
      at.partitionId = ref.id;
    });
  }
  const partitions = artifacts._initPartitions(fixture.partitions.length);
  fixture.partitions.forEach((partition, index) => writePartition(partitions.get(index), partition));
}

function writePartition(target: schema.PartitionInfo, partition: ManifestFixturePartition): void {
  if (partition.omitRef !== true) {
    const ref = target._initPartition();
    ref.deviceType = DEVICE[partition.deviceType];
    ref.partitionId = partition.id;
  }
  const detail = partition.detail ?? partition.deviceType;
  if (detail === 'cuda') target.detail._initCuda();
  if (detail === 'cpu') target.detail._initCpu();
  if (detail !== 'lpu') return;
  const lpu = target.detail._initLpu();
  lpu.path = partition.path ?? `part-${partition.id}`;
  lpu.topology = partition.topology ?? REGISTRY_TEST_TOPOLOGY;
  lpu.numChips = partition.numChips ?? 0;
  lpu.devicesPerNode = partition.devicesPerNode ?? 0;
  if (partition.topologyFamily !== undefined || partition.partitionShape !== undefined) {
    const metadata = lpu._initTopologyMetadata();
    metadata.topologyFamily = partition.topologyFamily ?? '';
    const shape = partition.partitionShape ?? [];
    const list = metadata._initPartitionShape(shape.length);
    shape.forEach((extent, dimension) => list.set(dimension, extent));
  }
}

/**
 * The build a real manifest decodes to at `buildUrl` (default {@link anXtLpuOnlyFixture}), for
 * tests that need a snapshot reading's `build`. Throws if the fixture does not normalize.
 */
export function aDecodedLpxBuild(buildUrl: string, fixture: ManifestFixture = anXtLpuOnlyFixture()): LpxBuild {
  const normalized = normalizeGbuildManifestV2(buildUrl, encodeGbuildManifestV2(fixture));
  if (!normalized.ok) throw new Error(`test manifest does not normalize: ${normalized.error}`);
  return normalized.build;
}

/** Upstream's execution contract beside a split deployment (`newDeploymentV1ContractFixture`). */
export const EXECUTION_V1_FILE = 'execution.v1.capnp.bin';
/** The opaque runtime bytes upstream's fixture digests for `execution.sha256`. */
export const EXECUTION_V1_BYTES = Buffer.from('opaque runtime bytes');

export type FixtureArchitecture = 'lp20' | 'lp30';

/**
 * One deployment partition: a manifest fixture partition with its LPU `architecture` (default
 * lp20); a number as `deviceType` or `architecture` writes that raw ordinal (an LPU detail unless
 * `detail` says otherwise).
 */
export type DeploymentFixturePartition = Omit<ManifestFixturePartition, 'deviceType'> & {
  readonly deviceType: FixtureDeviceType | number;
  readonly architecture?: FixtureArchitecture | number;
};

export interface DeploymentV1Fixture {
  readonly contractRevision: number;
  /** `identity.buildId`; undefined leaves `identity` unset. */
  readonly buildId: string | undefined;
  /** `config` is written unless false. */
  readonly config: boolean;
  readonly compilationMode: 'lpuOnly' | 'lpx' | number;
  readonly numLpuNodes: number;
  readonly program: ManifestFixture['program'];
  readonly runtimeIo: { readonly protocol: number; readonly fpgaMode: number; readonly ioFpgaCount: number; readonly fanoutFactor: number } | undefined;
  readonly selectedPropSyncChains: ManifestFixture['selectedPropSyncChains'];
  readonly partitions: readonly DeploymentFixturePartition[];
  readonly partSelect: ManifestFixture['partSelect'];
  readonly tokenEmbeddingsPath: string | undefined;
  /** `execution` (path and SHA-256 bytes) is written unless undefined. */
  readonly execution: { readonly path: string; readonly sha256: Uint8Array } | undefined;
}

/**
 * Upstream `newDeploymentV1ContractFixture`: revision 1, build id "build-id", hybrid (`lpx`), one
 * LPU node, batch 8, `fpgaRoce` runtime I/O in `dibDeb` mode (4 I/O FPGAs, fanout 2), one 8-chip
 * lp20 partition 0 at `part-0`, and the execution contract `execution.v1.capnp.bin` with the
 * SHA-256 of "opaque runtime bytes".
 */
export function aDeploymentV1ContractFixture(overrides: Partial<DeploymentV1Fixture> = {}): DeploymentV1Fixture {
  return {
    contractRevision: v1.CURRENT_CONTRACT_REVISION,
    buildId: 'build-id',
    config: true,
    compilationMode: 'lpx',
    numLpuNodes: 1,
    program: { batchSize: 8, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false },
    runtimeIo: { protocol: v1.RuntimeIoProtocol.FPGA_ROCE, fpgaMode: v1.FpgaIoMode.DIB_DEB, ioFpgaCount: 4, fanoutFactor: 2 },
    selectedPropSyncChains: undefined,
    partitions: [{ ...aManifestV2LpuArtifact(0), architecture: 'lp20' }],
    partSelect: undefined,
    tokenEmbeddingsPath: undefined,
    execution: { path: EXECUTION_V1_FILE, sha256: createHash('sha256').update(EXECUTION_V1_BYTES).digest() },
    ...overrides,
  };
}

/**
 * The split contract equivalent to a manifest fixture (what upstream's
 * `TestDeploymentContractPreservesNormalizedBuild` compares): the same facts, the runtime I/O
 * mode as `fpgaMode`, each LPU partition's architecture from the geometry manifest v2 infers (HX
 * with topology metadata or 16 chips on 16 devices: lp30; otherwise lp20).
 */
export function deploymentV1Of(fixture: ManifestFixture, overrides: Partial<DeploymentV1Fixture> = {}): DeploymentV1Fixture {
  const hx = (partition: ManifestFixturePartition) =>
    partition.topologyFamily !== undefined || partition.partitionShape !== undefined || (partition.numChips === 16 && partition.devicesPerNode === 16);
  return aDeploymentV1ContractFixture({
    config: fixture.deployment,
    compilationMode: fixture.compilationMode,
    numLpuNodes: fixture.numLpuNodes,
    program: fixture.program,
    runtimeIo: fixture.runtimeIo === undefined ? undefined : { protocol: fixture.runtimeIo.protocol, fpgaMode: fixture.runtimeIo.mode, ioFpgaCount: fixture.runtimeIo.ioFpgaCount, fanoutFactor: fixture.runtimeIo.fanoutFactor },
    selectedPropSyncChains: fixture.selectedPropSyncChains,
    partitions: fixture.partitions.map((partition) => ({ ...partition, architecture: hx(partition) ? 'lp30' : 'lp20' })),
    partSelect: fixture.partSelect,
    tokenEmbeddingsPath: fixture.tokenEmbeddingsPath,
    ...overrides,
  });
}

const ARCHITECTURE: Record<FixtureArchitecture, number> = { lp20: v1.LpuArchitecture.LP20, lp30: v1.LpuArchitecture.LP30 };

/** The real stream-framed Cap'n Proto bytes of a `deployment.v1.capnp.bin` fixture; unset fields stay null pointers or zeros. */
export function encodeGbuildDeploymentV1(fixture: DeploymentV1Fixture): Buffer {
  const message = new $.Message();
  const deployment = message.initRoot(v1.Deployment);
  deployment.contractRevision = fixture.contractRevision;
  if (fixture.buildId !== undefined) deployment._initIdentity().buildId = fixture.buildId;
  if (fixture.config) writeDeploymentConfig(deployment._initConfig(), fixture);
  const partitions = deployment._initPartitions(fixture.partitions.length);
  fixture.partitions.forEach((partition, index) => writeDeploymentPartition(partitions.get(index), partition));
  if (fixture.tokenEmbeddingsPath !== undefined) deployment._initRuntimeAssets().tokenEmbeddingsPath = fixture.tokenEmbeddingsPath;
  if (fixture.partSelect !== undefined) {
    const selected = deployment._initPartSelect()._initPartitions(fixture.partSelect.length);
    fixture.partSelect.forEach((ref, index) => {
      const at = selected.get(index);
      at.deviceType = DEVICE[ref.deviceType];
      at.partitionId = ref.id;
    });
  }
  if (fixture.execution !== undefined) {
    const execution = deployment._initExecution();
    execution.path = fixture.execution.path;
    execution.sha256 = fixture.execution.sha256;
  }
  return Buffer.from(message.toArrayBuffer());
}

function writeDeploymentConfig(config: v1.DeploymentInfo, fixture: DeploymentV1Fixture): void {
  const mode = fixture.compilationMode;
  config.compilationMode = mode === 'lpuOnly' ? v1.CompilationMode.LPU_ONLY : mode === 'lpx' ? v1.CompilationMode.LPX : mode;
  config.numLpuNodes = fixture.numLpuNodes;
  if (fixture.program !== undefined) {
    const program = config._initProgram();
    program.batchSize = fixture.program.batchSize;
    program.supportsCpuEmbeddings = fixture.program.supportsCpuEmbeddings;
    program.standaloneTokenEmbeddings = fixture.program.standaloneTokenEmbeddings;
  }
  if (fixture.runtimeIo !== undefined) {
    const runtimeIo = config._initRuntimeIo();
    runtimeIo.protocol = fixture.runtimeIo.protocol;
    runtimeIo.fpgaMode = fixture.runtimeIo.fpgaMode;
    runtimeIo.ioFpgaCount = fixture.runtimeIo.ioFpgaCount;
    runtimeIo.fanoutFactor = fixture.runtimeIo.fanoutFactor;
  }
  if (fixture.selectedPropSyncChains !== undefined) {
    const chains = config._initSelectedPropSyncChains(fixture.selectedPropSyncChains.length);
    fixture.selectedPropSyncChains.forEach((partitionIds, index) => {
      if (partitionIds === undefined) return;
      const ids = chains.get(index)._initPartitionIds(partitionIds.length);
      partitionIds.forEach((id, idIndex) => ids.set(idIndex, id));
    });
  }
}

function writeDeploymentPartition(target: v1.PartitionDeployment, partition: DeploymentFixturePartition): void {
  if (partition.omitRef !== true) {
    const ref = target._initPartition();
    ref.deviceType = typeof partition.deviceType === 'number' ? partition.deviceType : DEVICE[partition.deviceType];
    ref.partitionId = partition.id;
  }
  const detail = partition.detail ?? (typeof partition.deviceType === 'number' ? 'lpu' : partition.deviceType);
  if (detail === 'cuda') target.detail._initCuda();
  if (detail === 'cpu') target.detail._initCpu();
  if (detail !== 'lpu') return;
  const lpu = target.detail._initLpu();
  lpu.path = partition.path ?? `part-${partition.id}`;
  lpu.topology = partition.topology ?? REGISTRY_TEST_TOPOLOGY;
  lpu.numChips = partition.numChips ?? 0;
  lpu.devicesPerNode = partition.devicesPerNode ?? 0;
  const architecture = partition.architecture ?? 'lp20';
  lpu.architecture = typeof architecture === 'number' ? architecture : ARCHITECTURE[architecture];
  if (partition.topologyFamily !== undefined || partition.partitionShape !== undefined) {
    const metadata = lpu._initTopologyMetadata();
    metadata.topologyFamily = partition.topologyFamily ?? '';
    const shape = partition.partitionShape ?? [];
    const list = metadata._initPartitionShape(shape.length);
    shape.forEach((extent, dimension) => list.set(dimension, extent));
  }
}
