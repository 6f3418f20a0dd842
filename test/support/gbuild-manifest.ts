/**
 * Real LPX compiler manifests (`manifest.v2.capnp.bin`) for tests: Cap'n Proto stream messages
 * written with capnp-es through the schema classes the decoder reads
 * (shared/domain/lpx/manifest-v2-schema.ts), so every test that writes a build writes bytes
 * upstream's operator would decode too.
 *
 * The fixtures mirror upstream's test writers: {@link aManifestV2ContractFixture} is
 * `newManifestV2ContractFixture` + `setManifestV2LPUArtifact` (model_fixture_test.go),
 * {@link aV3CompilerFixture} is `newV3CompilerFixture` and {@link aV2CompilerFixture}
 * `newV2CompilerFixture` (compiler_fixture_test.go, written by `writeTestV3CapnpManifest`).
 * A fixture is plain data; {@link encodeGbuildManifestV2} writes it, and overrides make the
 * malformed manifests of upstream's `model_manifest_v2_test.go` cases.
 * @module
 */
import * as $ from 'capnp-es';
import { gbuildManifestV2 as schema, normalizeGbuildManifestV2, type LpxBuild } from '../../shared/domain/index.js';

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
