/**
 * Decoding the LPX compiler manifest `manifest.v2.capnp.bin` (Cap'n Proto, read with capnp-es
 * through `manifest-v2-schema.ts`) and normalizing it into {@link LpxBuild}, with upstream's
 * validation and its exact error texts.
 *
 * Source: upstream `internal/dynamo/lpx/model_manifest_v2.go` (`decodeGbuildManifestV2`,
 * `buildFromGbuildManifestV2`, `runtimeIOFromManifestV2`, `selectedPropSyncChainsFromManifestV2`,
 * `addLPUArtifactsFromManifestV2`, `buildPartitionFromManifestV2`, `validateManifestV2PartSelect`,
 * `runtimeTokenEmbeddingsPathFromManifestV2`), `model_manifest_common.go`
 * (`classifyManifestPartitions`, `buildXTPartition`, `buildHXPartition`, `buildCompilationMode`,
 * `decodePropSyncChain`, `cleanManifestRelativeBuildPath`, `validateManifestPartitionNodeCount`,
 * `positiveManifestUInt32ToInt`) and `build.go` (`Build`, `lpuChipsPerNode`); upstream's
 * `normalizeBuildSnapshot` runs the two in sequence. Upstream's later runtime transformations
 * (`omitStandaloneEmbeddingPartition`, prop-sync collapsing in `resolveBuildSettings`) are not
 * normalization and are not applied here.
 * Errors a malformed message raises inside capnp-es while a field is read are returned as
 * upstream's "reading manifest.v2.capnp.bin <field>: <cause>" (the cause is capnp-es's text, not
 * Go's). Everything here is pure: bytes in, a build or an error string out; nothing throws.
 * @module
 */
import path from 'node:path/posix';
import * as $ from 'capnp-es';
import { GBUILD_MANIFEST_V2_FILE } from './build-snapshot.js';
import type { LpxBuild, LpxBuildCompilationMode, LpxBuildFamily, LpxBuildPartition } from './build.js';
import { LPU_CHIPS_PER_NODE } from './build.js';
import {
  CURRENT_CONTRACT_REVISION,
  DeviceType,
  Manifest,
  PartitionInfo_Detail_Which,
  compilationModeName,
  type ArtifactInfo,
  type DeploymentInfo,
  type LpuPartitionArtifact,
  type PartitionInfo,
} from './manifest-v2-schema.js';
import { goQuote, parseTopology, topologyReplicas } from './topology.js';

const FILE = GBUILD_MANIFEST_V2_FILE;
/** Go's `math.MaxInt32`, the bound of the runtime I/O counts. */
const MAX_INT32 = 2_147_483_647;
/** Upstream `runtimeIOProtocolHost`, `runtimeIOProtocolMultiEndpoint`, `runtimeIOMaxMode`. */
const RUNTIME_IO_PROTOCOL_HOST = 0;
const RUNTIME_IO_PROTOCOL_MULTI_ENDPOINT = 1;
const RUNTIME_IO_MAX_MODE = 2;
/** Upstream `hxTopologyFamily`. */
export const HX_TOPOLOGY_FAMILY = '16x8x2x3';
/** Segments a stream may declare (go-capnp `maxStreamSegments`, as the C++ implementation). */
const MAX_STREAM_SEGMENTS = 512;

type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };
export type ManifestDecoding = { readonly ok: true; readonly manifest: Manifest } | { readonly ok: false; readonly error: string };
export type BuildNormalization = { readonly ok: true; readonly build: LpxBuild } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = (error: string): { readonly ok: false; readonly error: string } => ({ ok: false, error });

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One capnp-es read; a throw becomes `<label>: <cause>` (upstream's "reading ...: %w"). */
function read<T>(label: string, get: () => T): Result<T> {
  try {
    return ok(get());
  } catch (error) {
    return fail(`${label}: ${messageOf(error)}`);
  }
}

/**
 * decodeGbuildManifestV2 (upstream `decodeGbuildManifestV2`): the manifest root of a Cap'n Proto
 * stream message (unpacked, with its segment table).
 * In: the manifest bytes (not retained; decoding works on a copy). Out: the root, read lazily.
 * Failures: "parsing manifest.v2.capnp.bin: <cause>" for bytes that are no stream message (the
 * segment table is checked first, so a hostile table cannot make capnp-es allocate without
 * bound), "reading manifest.v2.capnp.bin root: <cause>" when the root is no struct. Pure.
 */
export function decodeGbuildManifestV2(bytes: Uint8Array): ManifestDecoding {
  const framing = checkStreamFraming(bytes);
  if (framing !== undefined) return fail(`parsing ${FILE}: ${framing}`);
  let message: $.Message;
  try {
    message = new $.Message(bytes.slice(), false, false);
  } catch (error) {
    return fail(`parsing ${FILE}: ${messageOf(error)}`);
  }
  try {
    return { ok: true, manifest: message.getRoot(Manifest) };
  } catch (error) {
    return fail(`reading ${FILE} root: ${messageOf(error)}`);
  }
}

/**
 * The stream framing of a message (Cap'n Proto encoding, "Serialization over a stream"): a
 * little-endian u32 segment count minus one, a u32 word count per segment, padding to 8 bytes,
 * then the segments, all present. Out: why the bytes are not such a message, or undefined.
 */
function checkStreamFraming(bytes: Uint8Array): string | undefined {
  if (bytes.length < 8) return `message is ${bytes.length} bytes, shorter than a segment table`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const segments = view.getUint32(0, true) + 1;
  if (segments > MAX_STREAM_SEGMENTS) return `message declares ${segments} segments, more than ${MAX_STREAM_SEGMENTS}`;
  const header = Math.ceil((4 * (segments + 1)) / 8) * 8;
  if (header > bytes.length) return `message is ${bytes.length} bytes, shorter than its ${segments}-segment table`;
  let words = 0;
  for (let i = 0; i < segments; i += 1) words += view.getUint32(4 * (i + 1), true);
  if (header + words * 8 > bytes.length) return `message is ${bytes.length} bytes, shorter than its ${segments} segments of ${words} words`;
  return undefined;
}

/**
 * buildFromGbuildManifestV2 (upstream `buildFromGbuildManifestV2`): the normalized build of a
 * decoded manifest, checked in upstream's order: the contract revision (2), deployment, its
 * compilation mode and program, a positive batch size, the selected prop-sync chains, the runtime
 * I/O, the batch split across I/O endpoints and fanout, artifacts, the runtime embeddings asset,
 * then the LPU artifacts and the node count.
 * In: `buildRef`, the acquired absolute build URL (the manifest's own build id is not read);
 * the root from {@link decodeGbuildManifestV2}. Out: the build, or upstream's error text. Pure.
 */
export function buildFromGbuildManifestV2(buildRef: string, manifest: Manifest): BuildNormalization {
  try {
    return normalizeManifestV2(buildRef, manifest);
  } catch (error) {
    // A malformed pointer under a field upstream reads without an error result.
    return fail(`reading ${FILE}: ${messageOf(error)}`);
  }
}

function normalizeManifestV2(buildRef: string, manifest: Manifest): BuildNormalization {
  if (manifest.contractRevision !== CURRENT_CONTRACT_REVISION) {
    return fail(`${FILE} contractRevision = ${manifest.contractRevision}, want ${CURRENT_CONTRACT_REVISION}`);
  }
  if (!manifest._hasDeployment()) return fail(`${FILE} is missing deployment`);
  const deployment = read(`reading ${FILE} deployment`, () => manifest.deployment);
  if (!deployment.ok) return deployment;
  const compilationMode = buildCompilationMode(FILE, compilationModeName(deployment.value.compilationMode));
  if (!compilationMode.ok) return compilationMode;
  if (!deployment.value._hasProgram()) return fail(`${FILE} deployment.program is missing`);
  const program = read(`reading ${FILE} deployment.program`, () => deployment.value.program);
  if (!program.ok) return program;
  const batchSize = positiveManifestUInt32(`${FILE} deployment.program.batchSize`, program.value.batchSize);
  if (!batchSize.ok) return batchSize;
  const chains = selectedPropSyncChainsFromManifestV2(deployment.value);
  if (!chains.ok) return chains;
  const runtimeIo = runtimeIoFromManifestV2(deployment.value);
  if (!runtimeIo.ok) return runtimeIo;
  const split = validateRuntimeIoBatchSplit(batchSize.value, runtimeIo.value.ioFpgaCount, runtimeIo.value.fanoutFactor);
  if (split !== undefined) return fail(split);
  if (!manifest._hasArtifacts()) return fail(`${FILE} is missing artifacts`);
  const artifacts = read(`reading ${FILE} artifacts`, () => manifest.artifacts);
  if (!artifacts.ok) return artifacts;
  const tokenEmbeddingsPath = runtimeTokenEmbeddingsPathFromManifestV2(artifacts.value);
  if (!tokenEmbeddingsPath.ok) return tokenEmbeddingsPath;
  const supportsCpuEmbeddings = program.value.supportsCpuEmbeddings;
  const standaloneTokenEmbeddings = program.value.standaloneTokenEmbeddings;
  const embeddings = validateRuntimeEmbeddingsAsset(tokenEmbeddingsPath.value, supportsCpuEmbeddings, standaloneTokenEmbeddings);
  if (embeddings !== undefined) return fail(embeddings);
  const lpu = lpuArtifactsFromManifestV2(artifacts.value, deployment.value, compilationMode.value, supportsCpuEmbeddings && standaloneTokenEmbeddings);
  if (!lpu.ok) return lpu;
  return {
    ok: true,
    build: {
      path: buildRef,
      family: lpu.value.family,
      compilationMode: compilationMode.value,
      partitions: lpu.value.partitions,
      selectedPropSyncChains: chains.value,
      standaloneTokenEmbeddings,
      supportsCpuEmbeddings,
      ioFpgaCount: runtimeIo.value.ioFpgaCount,
      ioFanoutFactor: runtimeIo.value.fanoutFactor,
      batchSize: batchSize.value,
      tokenEmbeddingsPath: tokenEmbeddingsPath.value === '' ? undefined : tokenEmbeddingsPath.value,
    },
  };
}

/**
 * normalizeGbuildManifestV2 (upstream `normalizeBuildSnapshot` for the v2 contract):
 * {@link decodeGbuildManifestV2} then {@link buildFromGbuildManifestV2}. Pure.
 */
export function normalizeGbuildManifestV2(buildRef: string, bytes: Uint8Array): BuildNormalization {
  const decoded = decodeGbuildManifestV2(bytes);
  return decoded.ok ? buildFromGbuildManifestV2(buildRef, decoded.manifest) : decoded;
}

/**
 * buildCompilationMode (upstream): the schema name `lpuOnly` or `lpx` (hybrid); any other,
 * "%s deployment.compilationMode %q is not supported" (an unknown ordinal has the name ""). Pure.
 */
export function buildCompilationMode(filename: string, mode: string): Result<LpxBuildCompilationMode> {
  if (mode === 'lpuOnly' || mode === 'lpx') return ok(mode);
  return fail(`${filename} deployment.compilationMode ${goQuote(mode)} is not supported`);
}

/** positiveManifestUInt32ToInt (upstream): a manifest count must be at least 1 ("%s must be >= 1, got 0"). Pure. */
export function positiveManifestUInt32(field: string, value: number): Result<number> {
  return value === 0 ? fail(`${field} must be >= 1, got 0`) : ok(value);
}

/**
 * selectedPropSyncChainsFromManifestV2 (upstream): absent chains are none; each chain needs its
 * `partitionIds` ("...selectedPropSyncChains[%d].partitionIds is missing") with at least two ids
 * (upstream `decodePropSyncChain`: "...selectedPropSyncChains[%d] must contain at least two
 * partitionIds"). Ids are kept in manifest order.
 */
function selectedPropSyncChainsFromManifestV2(deployment: DeploymentInfo): Result<readonly (readonly number[])[]> {
  if (!deployment._hasSelectedPropSyncChains()) return ok([]);
  const rawChains = read(`reading ${FILE} deployment.selectedPropSyncChains`, () => deployment.selectedPropSyncChains);
  if (!rawChains.ok) return rawChains;
  const chains: number[][] = [];
  for (let chainIndex = 0; chainIndex < rawChains.value.length; chainIndex += 1) {
    const rawChain = rawChains.value.get(chainIndex);
    if (!rawChain._hasPartitionIds()) return fail(`${FILE} deployment.selectedPropSyncChains[${chainIndex}].partitionIds is missing`);
    const rawIds = read(`reading ${FILE} deployment.selectedPropSyncChains[${chainIndex}].partitionIds`, () => [...rawChain.partitionIds]);
    if (!rawIds.ok) return rawIds;
    if (rawIds.value.length < 2) return fail(`${FILE} deployment.selectedPropSyncChains[${chainIndex}] must contain at least two partitionIds`);
    chains.push(rawIds.value);
  }
  return ok(chains);
}

/**
 * runtimeIOFromManifestV2 (upstream): `deployment.runtimeIo` is required; `ioFpgaCount` and
 * `fanoutFactor` in [1, 2147483647]; protocol 0 (host) requires one I/O FPGA, 1 (multi-endpoint)
 * any; another protocol, or a mode (`reserved1`) above 2, is not supported.
 */
function runtimeIoFromManifestV2(deployment: DeploymentInfo): Result<{ ioFpgaCount: number; fanoutFactor: number }> {
  if (!deployment._hasRuntimeIo()) return fail(`${FILE} deployment.runtimeIo is missing`);
  const runtimeIo = read(`reading ${FILE} deployment.runtimeIo`, () => deployment.runtimeIo);
  if (!runtimeIo.ok) return runtimeIo;
  const count = runtimeIo.value.ioFpgaCount;
  if (count === 0 || count > MAX_INT32) return fail(`${FILE} deployment.runtimeIo.ioFpgaCount must be in [1, ${MAX_INT32}], got ${count}`);
  const fanoutFactor = runtimeIo.value.fanoutFactor;
  if (fanoutFactor === 0 || fanoutFactor > MAX_INT32) return fail(`${FILE} deployment.runtimeIo.fanoutFactor must be in [1, ${MAX_INT32}], got ${fanoutFactor}`);
  const protocol = runtimeIo.value.protocol;
  if (protocol === RUNTIME_IO_PROTOCOL_HOST) {
    if (count !== 1) return fail(`${FILE} host runtime I/O requires ioFpgaCount 1, got ${count}`);
  } else if (protocol !== RUNTIME_IO_PROTOCOL_MULTI_ENDPOINT) {
    return fail(`${FILE} deployment.runtimeIo.protocol ${protocol} is not supported`);
  }
  const mode = runtimeIo.value.reserved1;
  if (mode > RUNTIME_IO_MAX_MODE) return fail(`${FILE} deployment.runtimeIo mode ${mode} is not supported`);
  return ok({ ioFpgaCount: count, fanoutFactor });
}

/**
 * The batch splits evenly across the I/O endpoints, and each endpoint's share across its fanout
 * clients (upstream `buildFromGbuildManifestV2`: "Reject an incomplete split-I/O batch", "Reject
 * incomplete client-owned transaction regions"). Out: the error text, or undefined. Pure.
 */
export function validateRuntimeIoBatchSplit(batchSize: number, ioFpgaCount: number, fanoutFactor: number): string | undefined {
  if (batchSize % ioFpgaCount !== 0) {
    return `${FILE} deployment.program.batchSize ${batchSize} must be divisible by deployment.runtimeIo.ioFpgaCount ${ioFpgaCount}`;
  }
  const perEndpoint = batchSize / ioFpgaCount;
  if (perEndpoint % fanoutFactor !== 0) {
    return `${FILE} deployment.program.batchSize per endpoint ${perEndpoint} must be divisible by deployment.runtimeIo.fanoutFactor ${fanoutFactor}`;
  }
  return undefined;
}

/**
 * The runtime embeddings asset is allowed only with CPU embeddings, and required when they are
 * standalone (upstream `buildFromGbuildManifestV2`: "Validate runtime embedding assets"). Pure.
 */
export function validateRuntimeEmbeddingsAsset(tokenEmbeddingsPath: string, supportsCpuEmbeddings: boolean, standaloneTokenEmbeddings: boolean): string | undefined {
  if (tokenEmbeddingsPath !== '' && !supportsCpuEmbeddings) return `${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath requires supportsCpuEmbeddings=true`;
  if (supportsCpuEmbeddings && standaloneTokenEmbeddings && tokenEmbeddingsPath === '') {
    return `${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath is required when standaloneTokenEmbeddings=true`;
  }
  return undefined;
}

/** runtimeTokenEmbeddingsPathFromManifestV2 (upstream): the cleaned asset path, "" when absent. */
function runtimeTokenEmbeddingsPathFromManifestV2(artifacts: ArtifactInfo): Result<string> {
  if (!artifacts._hasRuntimeAssets()) return ok('');
  const runtimeAssets = read(`reading ${FILE} artifacts.runtimeAssets`, () => artifacts.runtimeAssets);
  if (!runtimeAssets.ok) return runtimeAssets;
  if (!runtimeAssets.value._hasTokenEmbeddingsPath()) return ok('');
  const rawPath = read(`reading ${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath`, () => runtimeAssets.value.tokenEmbeddingsPath);
  if (!rawPath.ok) return rawPath;
  return cleanManifestRelativeBuildPath(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath`, rawPath.value);
}

/**
 * cleanManifestRelativeBuildPath (upstream): an asset path must hold no NUL byte or line break
 * ("%s %q must not contain NUL bytes or line breaks"), be nonempty once trimmed ("%s is empty"),
 * and stay relative inside the build once cleaned ("%s %q must be relative and stay within
 * build directory", the raw path quoted). Out: the trimmed, cleaned path. Pure.
 */
export function cleanManifestRelativeBuildPath(field: string, rawPath: string): Result<string> {
  if (/[\0\r\n]/.test(rawPath)) return fail(`${field} ${goQuote(rawPath)} must not contain NUL bytes or line breaks`);
  const assetPath = rawPath.trim();
  if (assetPath === '') return fail(`${field} is empty`);
  const escapes = `${field} ${goQuote(rawPath)} must be relative and stay within build directory`;
  if (assetPath.startsWith('/')) return fail(escapes);
  const cleaned = goClean(assetPath);
  if (cleaned === '.' || cleaned === '..' || cleaned.startsWith('../')) return fail(escapes);
  return ok(cleaned);
}

/** Go's `filepath.Clean` for a relative slash path: normalized, no trailing slash, "." when empty. */
function goClean(value: string): string {
  const normalized = path.normalize(value);
  return normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized;
}

interface LpuArtifacts {
  readonly family: LpxBuildFamily;
  readonly partitions: readonly LpxBuildPartition[];
}

/**
 * addLPUArtifactsFromManifestV2 (upstream): the LPU partitions of `artifacts.partitions` (CUDA
 * and CPU ones are skipped, but refused in an `lpuOnly` build), at least one; their family,
 * order and node counts ({@link classifyManifestPartitions}); an XT `partSelect` checked against
 * them; `deployment.numLpuNodes` positive and matching ({@link validateManifestPartitionNodeCount}).
 */
function lpuArtifactsFromManifestV2(
  artifacts: ArtifactInfo,
  deployment: DeploymentInfo,
  compilationMode: LpxBuildCompilationMode,
  hostEmbeddings: boolean,
): Result<LpuArtifacts> {
  const rawPartitions = read(`reading ${FILE} artifacts.partitions`, () => artifacts.partitions);
  if (!rawPartitions.ok) return rawPartitions;
  const partitions: LpxBuildPartition[] = [];
  let hxDoubleNodeCount = true;
  for (let index = 0; index < rawPartitions.value.length; index += 1) {
    const partition = buildPartitionFromManifestV2(rawPartitions.value.get(index));
    if (!partition.ok) return partition;
    // Only metadata-less HX partitions permit upstream's historical doubled node count.
    if (partition.value !== undefined) {
      partitions.push(partition.value.partition);
      hxDoubleNodeCount = hxDoubleNodeCount && (partition.value.partition.hxExtent === undefined || partition.value.compatible);
    }
  }
  if (compilationMode === 'lpuOnly' && partitions.length !== rawPartitions.value.length) {
    return fail(`${FILE} deployment.compilationMode lpuOnly requires every artifact partition to use deviceType lpu`);
  }
  if (partitions.length === 0) return fail(`${FILE} artifacts contain no LPU partitions`);
  const partialSelection = artifacts._hasPartSelect();
  const classified = classifyManifestPartitions(FILE, partitions, partialSelection);
  if (!classified.ok) return classified;
  if (classified.value.family === 'xt8888') {
    const partSelect = validateManifestV2PartSelect(artifacts, classified.value.partitions);
    if (partSelect !== undefined) return fail(partSelect);
  }
  const want = positiveManifestUInt32(`${FILE} deployment.numLpuNodes`, deployment.numLpuNodes);
  if (!want.ok) return want;
  const nodeCount = validateManifestPartitionNodeCount(FILE, want.value, {
    family: classified.value.family,
    hostEmbeddings,
    partialSelection,
    hxDoubleNodeCount,
    packagedNodes: classified.value.packagedNodes,
    partitionZeroNodes: classified.value.partitionZeroNodes,
  });
  if (nodeCount !== undefined) return fail(nodeCount);
  return ok({ family: classified.value.family, partitions: classified.value.partitions });
}

/**
 * buildPartitionFromManifestV2 (upstream): one artifact partition. Not `deviceType lpu`: skipped
 * (undefined). LPU: it needs its `detail.lpu` ("artifact partition %d has deviceType lpu without
 * LPU detail"), a topology without NUL bytes or line breaks; topology metadata, or 16 chips on
 * 16 devices per node, make it HX ({@link buildHXPartition}), otherwise XT
 * ({@link buildXTPartition}); then its cleaned path (`<subject> path`). `compatible` is true for
 * a metadata-less HX partition. Failures name "manifest.v2.capnp.bin LPU partition <id>". Pure.
 */
export function buildPartitionFromManifestV2(raw: PartitionInfo): Result<{ partition: LpxBuildPartition; compatible: boolean } | undefined> {
  if (!raw._hasPartition()) return fail(`${FILE} artifact partition is missing partition ref`);
  const ref = read(`reading ${FILE} artifact partition ref`, () => raw.partition);
  if (!ref.ok) return ref;
  if (ref.value.deviceType !== DeviceType.LPU) return ok(undefined);
  const id = ref.value.partitionId;
  const detail = raw.detail;
  if (detail.which() !== PartitionInfo_Detail_Which.LPU || !detail._hasLpu()) {
    return fail(`${FILE} artifact partition ${id} has deviceType lpu without LPU detail`);
  }
  const lpu = read(`reading ${FILE} LPU partition ${id} detail`, () => detail.lpu);
  if (!lpu.ok) return lpu;
  const topology = read(`reading ${FILE} LPU partition ${id} topology`, () => lpu.value.topology);
  if (!topology.ok) return topology;
  const rawPath = read(`reading ${FILE} LPU partition ${id} path`, () => lpu.value.path);
  if (!rawPath.ok) return rawPath;

  // Both families require a safe topology string, even when HX treats it as opaque.
  const subject = `${FILE} LPU partition ${id}`;
  if (/[\0\r\n]/.test(topology.value)) return fail(`${subject} topology must not contain NUL bytes or line breaks: ${goQuote(topology.value)}`);
  const isHx = lpu.value._hasTopologyMetadata() || (lpu.value.numChips === 16 && lpu.value.devicesPerNode === 16);
  const geometry = isHx ? buildHXPartition(subject, topology.value, lpu.value) : buildXTPartition(subject, topology.value, lpu.value);
  if (!geometry.ok) return geometry;
  const partPath = cleanManifestRelativeBuildPath(`${subject} path`, rawPath.value);
  if (!partPath.ok) return partPath;
  return ok({
    partition: { sourcePartitionId: id, partPath: partPath.value, topology: geometry.value.topology, hxExtent: geometry.value.hxExtent },
    compatible: geometry.value.compatible,
  });
}

type PartitionGeometry = Pick<LpxBuildPartition, 'topology' | 'hxExtent'> & { readonly compatible: boolean };

/**
 * buildXTPartition (upstream): the topology name parsed ("parsing %s topology %q: ..."), a
 * positive chip count ("topology has invalid chip count %d") that fills whole 8-chip nodes when
 * it spans more than one ("topology has %d chips, not divisible by 8 LPU devices per node"),
 * equal to `numChips` (>= 1; "topology chip count %d does not match numChips %d"), and
 * `devicesPerNode` (>= 1) equal to 8 ("devicesPerNode %d, want 8 for LPU device version 2"). Pure.
 */
export function buildXTPartition(subject: string, value: string, raw: LpuPartitionArtifact): Result<PartitionGeometry> {
  const parsed = parseTopology(value);
  if (!parsed.ok) return fail(`parsing ${subject} topology ${goQuote(value)}: ${parsed.error}`);
  const { chipCount } = parsed.topology;
  if (chipCount <= 0) return fail(`${subject} topology has invalid chip count ${chipCount}`);
  if (chipCount % LPU_CHIPS_PER_NODE !== 0 && chipCount > LPU_CHIPS_PER_NODE) {
    return fail(`${subject} topology has ${chipCount} chips, not divisible by ${LPU_CHIPS_PER_NODE} LPU devices per node`);
  }
  const numChips = positiveManifestUInt32(`${subject} numChips`, raw.numChips);
  if (!numChips.ok) return numChips;
  if (chipCount !== numChips.value) return fail(`${subject} topology chip count ${chipCount} does not match numChips ${numChips.value}`);
  const devicesPerNode = positiveManifestUInt32(`${subject} devicesPerNode`, raw.devicesPerNode);
  if (!devicesPerNode.ok) return devicesPerNode;
  if (devicesPerNode.value !== LPU_CHIPS_PER_NODE) {
    return fail(`${subject} devicesPerNode ${devicesPerNode.value}, want ${LPU_CHIPS_PER_NODE} for LPU device version 2`);
  }
  return ok({ topology: parsed.topology, hxExtent: undefined, compatible: false });
}

/**
 * buildHXPartition (upstream): the topology name is opaque but nonempty once trimmed ("V3 %s
 * topology must not be empty"); without metadata the extent is `[16, 1, 1, 1]` (compatible);
 * with it, `topologyFamily` trimmed must be "16x8x2x3", and `partitionShape` one of
 * `[16, 1..8, 1|2, 1]` or `[16, 8, 2, 2]` ("V3 %s has unsupported HX extent %v"), whose product
 * is `numChips` and first dimension `devicesPerNode`. The node count is the product of
 * dimensions 1..3 (upstream `classifyManifestPartitions`). Pure.
 */
export function buildHXPartition(subject: string, value: string, raw: LpuPartitionArtifact): Result<PartitionGeometry> {
  const name = value.trim();
  if (name === '') return fail(`V3 ${subject} topology must not be empty`);
  const chipCount = raw.numChips;
  if (!raw._hasTopologyMetadata()) return ok(hxGeometry(name, chipCount, [16, 1, 1, 1], true));
  const metadata = read(`reading V3 ${subject} topologyMetadata`, () => raw.topologyMetadata);
  if (!metadata.ok) return metadata;
  const family = read(`reading V3 ${subject} topologyMetadata.topologyFamily`, () => metadata.value.topologyFamily);
  if (!family.ok) return family;
  if (family.value.trim() !== HX_TOPOLOGY_FAMILY) {
    return fail(`V3 ${subject} topologyMetadata.topologyFamily = ${goQuote(family.value.trim())}, want ${goQuote(HX_TOPOLOGY_FAMILY)}`);
  }
  const shape = read(`reading V3 ${subject} topologyMetadata.partitionShape`, () => [...metadata.value.partitionShape]);
  if (!shape.ok) return shape;
  const extent = shape.value;
  if (!isSupportedHxExtent(extent)) return fail(`V3 ${subject} has unsupported HX extent [${extent.join(' ')}]`);
  const count = extent.reduce((product, dimension) => product * dimension, 1);
  if (count !== chipCount) return fail(`V3 ${subject} topologyMetadata.partitionShape contains ${count} chips, want numChips ${chipCount}`);
  if (extent[0] !== raw.devicesPerNode) {
    return fail(`V3 ${subject} topologyMetadata.partitionShape first dimension ${extent[0]} does not match devicesPerNode ${raw.devicesPerNode}`);
  }
  return ok(hxGeometry(name, chipCount, extent, false));
}

/** The HX shapes upstream supports: `[16, 1..8, 1|2, 1]` and the full `[16, 8, 2, 2]`. Pure. */
export function isSupportedHxExtent(extent: readonly number[]): boolean {
  const [devices, trays, pairs, quads] = extent;
  if (extent.length !== 4 || devices !== 16 || trays === undefined || trays < 1 || trays > 8) return false;
  return ((pairs === 1 || pairs === 2) && quads === 1) || (trays === 8 && pairs === 2 && quads === 2);
}

function hxGeometry(raw: string, chipCount: number, extent: readonly number[], compatible: boolean): PartitionGeometry {
  const nodeCount = (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1);
  return { topology: { raw, chipCount, nodeCount }, hxExtent: extent, compatible };
}

interface ClassifiedPartitions {
  readonly family: LpxBuildFamily;
  readonly partitions: readonly LpxBuildPartition[];
  readonly packagedNodes: number;
  readonly partitionZeroNodes: number;
}

/**
 * classifyManifestPartitions (upstream): one family for all LPU partitions ("%s mixes XT and HX
 * LPU partitions"; HX when a partition has an extent), unique source ids ("%s has duplicate LPU
 * partition id %d"; HX: "V3 %s repeats LPU partition ID %d"), the packaged node count and that
 * of partition 0; HX keeps manifest order and refuses `partSelect` ("V3 %s partSelect builds are
 * not supported"); XT is sorted by source id. Out: a new sorted list (the input is not changed). Pure.
 */
export function classifyManifestPartitions(filename: string, partitions: readonly LpxBuildPartition[], partSelect: boolean): Result<ClassifiedPartitions> {
  let family: LpxBuildFamily = 'xt8888';
  let packagedNodes = 0;
  let partitionZeroNodes = 0;
  const seen = new Set<number>();
  for (const partition of partitions) {
    const partitionFamily: LpxBuildFamily = partition.hxExtent !== undefined && partition.hxExtent.length !== 0 ? 'hx16x8x2x3' : 'xt8888';
    if (seen.size !== 0 && family !== partitionFamily) return fail(`${filename} mixes XT and HX LPU partitions`);
    family = partitionFamily;
    if (seen.has(partition.sourcePartitionId)) {
      return fail(family === 'hx16x8x2x3' ? `V3 ${filename} repeats LPU partition ID ${partition.sourcePartitionId}` : `${filename} has duplicate LPU partition id ${partition.sourcePartitionId}`);
    }
    seen.add(partition.sourcePartitionId);
    const nodes = partitionNodeCount(partition);
    packagedNodes += nodes;
    if (partition.sourcePartitionId === 0) partitionZeroNodes += nodes;
  }
  if (family === 'hx16x8x2x3') {
    if (partSelect) return fail(`V3 ${filename} partSelect builds are not supported`);
    return ok({ family, partitions: [...partitions], packagedNodes, partitionZeroNodes });
  }
  const sorted = [...partitions].sort((a, b) => a.sourcePartitionId - b.sourcePartitionId);
  return ok({ family, partitions: sorted, packagedNodes, partitionZeroNodes });
}

/** The nodes a partition occupies: HX the product of extent dimensions 1..3, XT `Topology.Replicas()`. Pure. */
function partitionNodeCount(partition: LpxBuildPartition): number {
  const extent = partition.hxExtent;
  if (extent !== undefined && extent.length === 4) return (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1);
  return topologyReplicas(partition.topology.chipCount);
}

/**
 * validateManifestV2PartSelect (upstream): an XT `artifacts.partSelect` must list partitions
 * ("artifacts.partSelect.partitions is empty"); its LPU refs (others are ignored) must be unique
 * ("has duplicate LPU partition id %d"), packaged ("references unpackaged LPU partition id %d")
 * and cover every packaged LPU partition ("selects %d LPU partitions, but artifacts package %d").
 * In: the sorted packaged partitions. Out: the error text, or undefined.
 */
function validateManifestV2PartSelect(artifacts: ArtifactInfo, partitions: readonly LpxBuildPartition[]): string | undefined {
  if (!artifacts._hasPartSelect()) return undefined;
  const partSelect = read(`reading ${FILE} artifacts.partSelect`, () => artifacts.partSelect);
  if (!partSelect.ok) return partSelect.error;
  const selected = read(`reading ${FILE} artifacts.partSelect.partitions`, () => partSelect.value.partitions);
  if (!selected.ok) return selected.error;
  if (selected.value.length === 0) return `${FILE} artifacts.partSelect.partitions is empty`;
  const packaged = new Set(partitions.map((partition) => partition.sourcePartitionId));
  const selectedLpu = new Set<number>();
  for (let index = 0; index < selected.value.length; index += 1) {
    const ref = selected.value.get(index);
    if (ref.deviceType !== DeviceType.LPU) continue;
    const id = ref.partitionId;
    if (selectedLpu.has(id)) return `${FILE} artifacts.partSelect has duplicate LPU partition id ${id}`;
    if (!packaged.has(id)) return `${FILE} artifacts.partSelect references unpackaged LPU partition id ${id}`;
    selectedLpu.add(id);
  }
  if (selectedLpu.size !== partitions.length) return `${FILE} artifacts.partSelect selects ${selectedLpu.size} LPU partitions, but artifacts package ${partitions.length}`;
  return undefined;
}

/** What {@link validateManifestPartitionNodeCount} compares `deployment.numLpuNodes` with. */
export interface PartitionNodeCounts {
  readonly family: LpxBuildFamily;
  /** CPU embeddings in a standalone partition: partition 0 may run on the host. */
  readonly hostEmbeddings: boolean;
  /** The artifacts carry a `partSelect` (only the selected partitions are packaged). */
  readonly partialSelection: boolean;
  /** Every HX partition is metadata-less (upstream's historical doubled count is accepted). */
  readonly hxDoubleNodeCount: boolean;
  readonly packagedNodes: number;
  readonly partitionZeroNodes: number;
}

/**
 * validateManifestPartitionNodeCount (upstream): `deployment.numLpuNodes` (`want`) against the
 * packaged nodes, or the packaged nodes without partition 0 when embeddings run on the host.
 * HX: equal to the packaged count, or twice it when every partition is metadata-less ("V3 %s
 * deployment.numLpuNodes = %d, but partition extents require %d LPU nodes"). XT: at least one
 * node left with host embeddings ("%s LPU partitions use 0 LPU nodes, want deployment.numLpuNodes
 * %d"); equal to either count, or (with `partSelect`) at least either; otherwise "%s LPU
 * partitions use %d LPU nodes, want deployment.numLpuNodes %d", or, when the two counts differ,
 * "%s LPU partitions use %d packaged LPU nodes or %d with host embeddings, want
 * deployment.numLpuNodes %d". Out: the error text, or undefined. Pure.
 */
export function validateManifestPartitionNodeCount(filename: string, want: number, counts: PartitionNodeCounts): string | undefined {
  const { packagedNodes } = counts;
  const hostEmbeddingNodes = counts.hostEmbeddings ? packagedNodes - counts.partitionZeroNodes : packagedNodes;
  if (counts.family === 'hx16x8x2x3') {
    if (want === packagedNodes || (counts.hxDoubleNodeCount && want === 2 * packagedNodes)) return undefined;
    return `V3 ${filename} deployment.numLpuNodes = ${want}, but partition extents require ${packagedNodes} LPU nodes`;
  }
  if (hostEmbeddingNodes === 0) return `${filename} LPU partitions use 0 LPU nodes, want deployment.numLpuNodes ${want}`;
  if (want === packagedNodes || want === hostEmbeddingNodes) return undefined;
  // partSelect artifacts hold only the selected partitions; numLpuNodes describes the whole deployment.
  if (counts.partialSelection && (want >= packagedNodes || want >= hostEmbeddingNodes)) return undefined;
  if (packagedNodes === hostEmbeddingNodes) return `${filename} LPU partitions use ${packagedNodes} LPU nodes, want deployment.numLpuNodes ${want}`;
  return `${filename} LPU partitions use ${packagedNodes} packaged LPU nodes or ${hostEmbeddingNodes} with host embeddings, want deployment.numLpuNodes ${want}`;
}
