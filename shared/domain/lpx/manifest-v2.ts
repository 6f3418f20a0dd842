/**
 * Decoding the LPX compiler manifest `manifest.v2.capnp.bin` (Cap'n Proto, read with capnp-es
 * through `manifest-v2-schema.ts`) and normalizing it into {@link LpxBuild}, with upstream's
 * validation and its exact error texts.
 *
 * Source: upstream `internal/dynamo/lpx/model_manifest_v2.go` (`decodeGbuildManifestV2`,
 * `buildFromGbuildManifestV2`, `runtimeIOFromManifestV2`, `selectedPropSyncChainsFromManifestV2`,
 * `addLPUArtifactsFromManifestV2`, `buildPartitionFromManifestV2`, `validateManifestV2PartSelect`,
 * `runtimeTokenEmbeddingsPathFromManifestV2`) and `build.go` (`Build`); the rules it shares with
 * the split `deployment.v1.capnp.bin` contract (upstream `model_manifest_common.go`) are in
 * `manifest-common.ts`. Upstream's
 * `normalizeBuildSnapshot` runs the two in sequence. Upstream's later runtime transformations
 * (the LPU-only chain and `omitStandaloneEmbeddingPartition` in `resolveBuildSettings`, the
 * hybrid prop-sync collapse in the V2 projection) are not normalization: derive.ts applies them
 * (`lpxRuntimePartitions`).
 * Errors a malformed message raises inside capnp-es while a field is read are returned as
 * upstream's "reading manifest.v2.capnp.bin <field>: <cause>" (the cause is capnp-es's text, not
 * Go's). Everything here is pure: bytes in, a build or an error string out; nothing throws.
 * @module
 */
import * as $ from 'capnp-es';
import { GBUILD_MANIFEST_V2_FILE } from './build-snapshot.js';
import type { LpxBuild, LpxBuildCompilationMode, LpxBuildPartition } from './build.js';
import {
  buildCompilationMode,
  buildHXPartition,
  buildXTPartition,
  checkPartitionTextBudget,
  checkStreamFraming,
  cleanManifestRelativeBuildPath,
  completeLpuArtifacts,
  decodePropSyncChain,
  fail,
  type LpuArtifacts,
  MAX_INT32,
  messageOf,
  ok,
  partitionTextBytes,
  positiveManifestUInt32,
  read,
  readStructList,
  readUint32List,
  type Result,
  validateManifestBatchSize,
  validateRuntimeEmbeddingsAsset,
  validateSelectedLPUPartitions,
} from './manifest-common.js';
import {
  CURRENT_CONTRACT_REVISION,
  DeviceType,
  Manifest,
  PartitionInfo,
  PartitionInfo_Detail_Which,
  PartitionRef,
  PropSyncChain,
  compilationModeName,
  type ArtifactInfo,
  type DeploymentInfo,
} from './manifest-v2-schema.js';
import { goQuote } from './topology.js';

const FILE = GBUILD_MANIFEST_V2_FILE;
/** Upstream `runtimeIOProtocolHost`, `runtimeIOProtocolMultiEndpoint`, `runtimeIOMaxMode`. */
const RUNTIME_IO_PROTOCOL_HOST = 0;
const RUNTIME_IO_PROTOCOL_MULTI_ENDPOINT = 1;
const RUNTIME_IO_MAX_MODE = 2;

export type ManifestDecoding = { readonly ok: true; readonly manifest: Manifest } | { readonly ok: false; readonly error: string };
export type BuildNormalization = { readonly ok: true; readonly build: LpxBuild } | { readonly ok: false; readonly error: string };

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
  const split = validateManifestBatchSize(FILE, batchSize.value, runtimeIo.value.ioFpgaCount, runtimeIo.value.fanoutFactor);
  if (split !== undefined) return fail(split);
  if (!manifest._hasArtifacts()) return fail(`${FILE} is missing artifacts`);
  const artifacts = read(`reading ${FILE} artifacts`, () => manifest.artifacts);
  if (!artifacts.ok) return artifacts;
  const tokenEmbeddingsPath = runtimeTokenEmbeddingsPathFromManifestV2(artifacts.value);
  if (!tokenEmbeddingsPath.ok) return tokenEmbeddingsPath;
  const supportsCpuEmbeddings = program.value.supportsCpuEmbeddings;
  const standaloneTokenEmbeddings = program.value.standaloneTokenEmbeddings;
  const embeddings = validateRuntimeEmbeddingsAsset(`${FILE} artifacts.runtimeAssets.tokenEmbeddingsPath`, tokenEmbeddingsPath.value, supportsCpuEmbeddings, standaloneTokenEmbeddings);
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
 * selectedPropSyncChainsFromManifestV2 (upstream): absent chains are none; each chain needs its
 * `partitionIds` ("...selectedPropSyncChains[%d].partitionIds is missing") with at least two ids
 * (upstream `decodePropSyncChain`: "...selectedPropSyncChains[%d] must contain at least two
 * partitionIds"). Ids are kept in manifest order.
 */
function selectedPropSyncChainsFromManifestV2(deployment: DeploymentInfo): Result<readonly (readonly number[])[]> {
  if (!deployment._hasSelectedPropSyncChains()) return ok([]);
  const rawChains = readStructList(`reading ${FILE} deployment.selectedPropSyncChains`, deployment, 1, PropSyncChain, () => deployment.selectedPropSyncChains);
  if (!rawChains.ok) return rawChains;
  const chains: (readonly number[])[] = [];
  for (let chainIndex = 0; chainIndex < rawChains.value.length; chainIndex += 1) {
    const rawChain = rawChains.value.get(chainIndex);
    if (!rawChain._hasPartitionIds()) return fail(`${FILE} deployment.selectedPropSyncChains[${chainIndex}].partitionIds is missing`);
    const rawIds = readUint32List(`reading ${FILE} deployment.selectedPropSyncChains[${chainIndex}].partitionIds`, () => rawChain.partitionIds);
    if (!rawIds.ok) return rawIds;
    const chain = decodePropSyncChain(rawIds.value, `${FILE} deployment.selectedPropSyncChains[${chainIndex}]`);
    if (!chain.ok) return chain;
    chains.push(chain.value);
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
 * addLPUArtifactsFromManifestV2 (upstream): the LPU partitions of `artifacts.partitions` (CUDA
 * and CPU ones are skipped, but refused in an `lpuOnly` build), at least one; their family,
 * order and node counts (`classifyManifestPartitions`); an XT `partSelect` checked against
 * them; `deployment.numLpuNodes` positive and matching (`validateManifestPartitionNodeCount`).
 * The checks after the partition loop are the shared {@link completeLpuArtifacts}.
 * The partitions' text is bounded by the traversal limit ({@link checkPartitionTextBudget}).
 */
function lpuArtifactsFromManifestV2(
  artifacts: ArtifactInfo,
  deployment: DeploymentInfo,
  compilationMode: LpxBuildCompilationMode,
  hostEmbeddings: boolean,
): Result<LpuArtifacts> {
  const rawPartitions = readStructList(`reading ${FILE} artifacts.partitions`, artifacts, 0, PartitionInfo, () => artifacts.partitions);
  if (!rawPartitions.ok) return rawPartitions;
  const partitions: LpxBuildPartition[] = [];
  let hxDoubleNodeCount = true;
  let textBytes = 0;
  for (let index = 0; index < rawPartitions.value.length; index += 1) {
    const partition = buildPartitionFromManifestV2(rawPartitions.value.get(index));
    if (!partition.ok) return partition;
    // Only metadata-less HX partitions permit upstream's historical doubled node count.
    if (partition.value !== undefined) {
      partitions.push(partition.value.partition);
      textBytes += partitionTextBytes(partition.value.partition);
      const budget = checkPartitionTextBudget(`${FILE} artifacts.partitions`, textBytes);
      if (budget !== undefined) return fail(budget);
      hxDoubleNodeCount = hxDoubleNodeCount && (partition.value.partition.hxExtent === undefined || partition.value.compatible);
    }
  }
  return completeLpuArtifacts(
    FILE,
    'deployment',
    { partitions, rawCount: rawPartitions.value.length, compilationMode, partialSelection: artifacts._hasPartSelect(), hxDoubleNodeCount, hostEmbeddings, numLpuNodes: deployment.numLpuNodes },
    (sorted) => validateManifestV2PartSelect(artifacts, sorted),
  );
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

/**
 * validateManifestV2PartSelect (upstream): an XT `artifacts.partSelect` must list partitions
 * ("artifacts.partSelect.partitions is empty"); its LPU refs (others are ignored) are checked by
 * {@link validateSelectedLPUPartitions} (unique, packaged, covering every packaged partition).
 * In: the sorted packaged partitions. Out: the error text, or undefined.
 */
function validateManifestV2PartSelect(artifacts: ArtifactInfo, partitions: readonly LpxBuildPartition[]): string | undefined {
  if (!artifacts._hasPartSelect()) return undefined;
  const partSelect = read(`reading ${FILE} artifacts.partSelect`, () => artifacts.partSelect);
  if (!partSelect.ok) return partSelect.error;
  const selected = readStructList(`reading ${FILE} artifacts.partSelect.partitions`, partSelect.value, 0, PartitionRef, () => partSelect.value.partitions);
  if (!selected.ok) return selected.error;
  if (selected.value.length === 0) return `${FILE} artifacts.partSelect.partitions is empty`;
  const selectedIds: number[] = [];
  for (let index = 0; index < selected.value.length; index += 1) {
    const ref = selected.value.get(index);
    if (ref.deviceType === DeviceType.LPU) selectedIds.push(ref.partitionId);
  }
  return validateSelectedLPUPartitions(FILE, 'artifacts.partSelect', selectedIds, partitions);
}
