/**
 * Decoding upstream's split LPX build contract `deployment.v1.capnp.bin` (Cap'n Proto, read with
 * capnp-es through `deployment-v1-schema.ts`) and normalizing it into {@link LpxBuild}, with
 * upstream's validation and its exact error texts. The execution contract the deployment names
 * (`execution.path`, `execution.sha256`) is checked as association metadata only; its bytes are
 * never read (upstream: "validateExecutionReference checks association metadata without reading
 * runtime bytes").
 *
 * Source: upstream `internal/dynamo/lpx/model_deployment_v1.go` (`decodeGbuildDeploymentV1`,
 * `validateExecutionReference`, `buildFromGbuildDeploymentV1`, `runtimeIOFromDeploymentV1`,
 * `selectedPropSyncChainsFromDeploymentV1`, `addLPUArtifactsFromDeploymentV1`,
 * `buildPartitionFromDeploymentV1`, `validateDeploymentV1PartSelect`,
 * `runtimeTokenEmbeddingsPathFromDeploymentV1`) and the shared rules of `manifest-common.ts`.
 * Upstream's `buildLPUArtifact` is called there but its body is not in the readable sources: here
 * it is manifest v2's partition rule (`buildPartitionFromManifestV2`) with the family taken from
 * `architecture` (lp20 → XT, lp30 → HX) instead of inferred from the geometry.
 * Errors capnp-es raises while a field is read are returned as upstream's "reading ...: <cause>"
 * (the cause is capnp-es's text, not Go's). Pure: bytes in, a build or an error string out.
 * @module
 */
import * as $ from 'capnp-es';
import { GBUILD_DEPLOYMENT_V1_FILE, GBUILD_MANIFEST_V2_FILE, MAX_BUILD_SNAPSHOT_METADATA_BYTES } from './build-snapshot.js';
import type { LpxBuild, LpxBuildCompilationMode, LpxBuildFamily, LpxBuildPartition } from './build.js';
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
  Deployment,
  DeviceType,
  FpgaIoMode,
  LpuArchitecture,
  PartitionDeployment,
  PartitionDeployment_Detail_Which,
  PartitionRef,
  PropSyncChain,
  RuntimeIoProtocol,
  compilationModeName,
  lpuArchitectureName,
  type DeploymentInfo,
  type LpuPartitionArtifact,
} from './deployment-v1-schema.js';
import { goQuote } from './topology.js';

const FILE = GBUILD_DEPLOYMENT_V1_FILE;
/** SHA-256 digest bytes (Go's `sha256.Size`). */
const SHA256_SIZE = 32;
/** The split build's report, which must not stand in for the execution contract (upstream `validateExecutionReference`). */
const BUILD_REPORT_V1_FILE = 'build-report.v1.capnp.bin';
/** Upstream `errBuildFileTooLarge`. */
const BUILD_FILE_TOO_LARGE = 'build metadata file exceeds its acquisition limit';

export type DeploymentDecoding = { readonly ok: true; readonly deployment: Deployment } | { readonly ok: false; readonly error: string };
export type DeploymentNormalization = { readonly ok: true; readonly build: LpxBuild } | { readonly ok: false; readonly error: string };

/**
 * decodeGbuildDeploymentV1 (upstream): the deployment root of a Cap'n Proto stream message,
 * without the execution or report schemas.
 * In: the file's bytes (not retained; decoding works on a copy). Out: the root, read lazily.
 * Failures: beyond the 100 MiB metadata budget, "deployment.v1.capnp.bin: build metadata file
 * exceeds its acquisition limit"; bytes that are no stream message, "parsing
 * deployment.v1.capnp.bin: <cause>"; a root that is no struct, "reading deployment.v1.capnp.bin
 * root: <cause>". Pure.
 */
export function decodeGbuildDeploymentV1(bytes: Uint8Array): DeploymentDecoding {
  if (bytes.length > MAX_BUILD_SNAPSHOT_METADATA_BYTES) return fail(`${FILE}: ${BUILD_FILE_TOO_LARGE}`);
  const framing = checkStreamFraming(bytes);
  if (framing !== undefined) return fail(`parsing ${FILE}: ${framing}`);
  let message: $.Message;
  try {
    message = new $.Message(bytes.slice(), false, false);
  } catch (error) {
    return fail(`parsing ${FILE}: ${messageOf(error)}`);
  }
  try {
    return { ok: true, deployment: message.getRoot(Deployment) };
  } catch (error) {
    return fail(`reading ${FILE} root: ${messageOf(error)}`);
  }
}

/**
 * validateExecutionReference (upstream): the deployment must name its execution contract
 * ("deployment.v1.capnp.bin is missing execution") by a safe relative path
 * (`cleanManifestRelativeBuildPath("execution.path", ...)`) that is already canonical, without
 * `\` or `:` ("execution.path %q must be a canonical bundle-relative path"), is none of the
 * contract entry files or the build report ("execution.path %q must name the execution
 * contract"), carries a 32-byte SHA-256 ("execution.sha256 must contain 32 bytes, got %d") and is
 * listed in the inventory ("execution.path %q is missing from build inventory").
 * In: the root and the canonical inventory. Out: the error text, or undefined. Pure.
 */
export function validateExecutionReference(deployment: Deployment, inventory: readonly string[]): string | undefined {
  if (!deployment._hasExecution()) return `${FILE} is missing execution`;
  const execution = read('reading execution', () => deployment.execution);
  if (!execution.ok) return execution.error;
  const rawPath = read('reading execution.path', () => execution.value.path);
  if (!rawPath.ok) return rawPath.error;
  const cleaned = cleanManifestRelativeBuildPath('execution.path', rawPath.value);
  if (!cleaned.ok) return cleaned.error;
  const executionPath = cleaned.value;
  if (executionPath !== rawPath.value || rawPath.value.includes('\\') || rawPath.value.includes(':')) {
    return `execution.path ${goQuote(rawPath.value)} must be a canonical bundle-relative path`;
  }
  if (executionPath === GBUILD_DEPLOYMENT_V1_FILE || executionPath === GBUILD_MANIFEST_V2_FILE || executionPath === BUILD_REPORT_V1_FILE) {
    return `execution.path ${goQuote(executionPath)} must name the execution contract`;
  }
  const digest = read('reading execution.sha256', () => execution.value.sha256);
  if (!digest.ok) return digest.error;
  if (digest.value.length !== SHA256_SIZE) return `execution.sha256 must contain ${SHA256_SIZE} bytes, got ${digest.value.length}`;
  if (!inventory.includes(executionPath)) return `execution.path ${goQuote(executionPath)} is missing from build inventory`;
  return undefined;
}

/**
 * buildFromGbuildDeploymentV1 (upstream): the normalized build of a decoded deployment, checked
 * in upstream's order: the contract revision (1), a nonblank `identity.buildId`, `config`, its
 * compilation mode and program, a positive batch size, the selected prop-sync chains, the
 * runtime I/O, the batch split across I/O endpoints and fanout, the execution reference, the
 * runtime embeddings asset, then the LPU artifacts and the node count. A deployment equivalent to
 * a manifest v2 normalizes to the same build (upstream
 * `TestDeploymentContractPreservesNormalizedBuild`).
 * In: `buildRef`, the acquired absolute build URL (the deployment's own build id is checked, not
 * used); the root from {@link decodeGbuildDeploymentV1}; the canonical inventory. Pure.
 */
export function buildFromGbuildDeploymentV1(buildRef: string, deployment: Deployment, inventory: readonly string[]): DeploymentNormalization {
  try {
    return normalizeDeploymentV1(buildRef, deployment, inventory);
  } catch (error) {
    // A malformed pointer under a field upstream reads without an error result.
    return fail(`reading ${FILE}: ${messageOf(error)}`);
  }
}

function normalizeDeploymentV1(buildRef: string, deployment: Deployment, inventory: readonly string[]): DeploymentNormalization {
  if (deployment.contractRevision !== CURRENT_CONTRACT_REVISION) {
    return fail(`${FILE} contractRevision = ${deployment.contractRevision}, want ${CURRENT_CONTRACT_REVISION}`);
  }
  // A split deployment must identify its build before scheduling (an absent identity reads as empty, as in Go).
  const buildId = deployment._hasIdentity() ? read(`reading ${FILE} identity.buildId`, () => deployment.identity.buildId) : ok('');
  if (!buildId.ok) return buildId;
  if (buildId.value.trim() === '') return fail(`${FILE} identity.buildId is required`);
  if (!deployment._hasConfig()) return fail(`${FILE} is missing config`);
  const config = read(`reading ${FILE} config`, () => deployment.config);
  if (!config.ok) return config;
  const compilationMode = buildCompilationMode(FILE, compilationModeName(config.value.compilationMode));
  if (!compilationMode.ok) return compilationMode;
  if (!config.value._hasProgram()) return fail(`${FILE} config.program is missing`);
  const program = read(`reading ${FILE} config.program`, () => config.value.program);
  if (!program.ok) return program;
  const batchSize = positiveManifestUInt32(`${FILE} config.program.batchSize`, program.value.batchSize);
  if (!batchSize.ok) return batchSize;
  const chains = selectedPropSyncChainsFromDeploymentV1(config.value);
  if (!chains.ok) return chains;
  const runtimeIo = runtimeIoFromDeploymentV1(config.value);
  if (!runtimeIo.ok) return runtimeIo;
  const split = validateManifestBatchSize(FILE, batchSize.value, runtimeIo.value.ioFpgaCount, runtimeIo.value.fanoutFactor);
  if (split !== undefined) return fail(split);
  const execution = validateExecutionReference(deployment, inventory);
  if (execution !== undefined) return fail(execution);
  const tokenEmbeddingsPath = runtimeTokenEmbeddingsPathFromDeploymentV1(deployment);
  if (!tokenEmbeddingsPath.ok) return tokenEmbeddingsPath;
  const supportsCpuEmbeddings = program.value.supportsCpuEmbeddings;
  const standaloneTokenEmbeddings = program.value.standaloneTokenEmbeddings;
  const embeddings = validateRuntimeEmbeddingsAsset(`${FILE} runtimeAssets.tokenEmbeddingsPath`, tokenEmbeddingsPath.value, supportsCpuEmbeddings, standaloneTokenEmbeddings);
  if (embeddings !== undefined) return fail(embeddings);
  const lpu = lpuArtifactsFromDeploymentV1(deployment, config.value, compilationMode.value, supportsCpuEmbeddings && standaloneTokenEmbeddings);
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
 * normalizeGbuildDeploymentV1 (upstream `normalizeBuildSnapshot` for the split contract):
 * {@link decodeGbuildDeploymentV1} then {@link buildFromGbuildDeploymentV1}. Pure.
 */
export function normalizeGbuildDeploymentV1(buildRef: string, bytes: Uint8Array, inventory: readonly string[]): DeploymentNormalization {
  const decoded = decodeGbuildDeploymentV1(bytes);
  return decoded.ok ? buildFromGbuildDeploymentV1(buildRef, decoded.deployment, inventory) : decoded;
}

/**
 * runtimeIOFromDeploymentV1 (upstream): `config.runtimeIo` is required; `ioFpgaCount` and
 * `fanoutFactor` in [1, 2147483647]; `host` requires one I/O FPGA, `fpgaRoce` any; another
 * protocol is not supported, nor an `fpgaMode` beyond `dibDeb`.
 */
function runtimeIoFromDeploymentV1(config: DeploymentInfo): Result<{ ioFpgaCount: number; fanoutFactor: number }> {
  if (!config._hasRuntimeIo()) return fail(`${FILE} config.runtimeIo is missing`);
  const runtimeIo = read(`reading ${FILE} config.runtimeIo`, () => config.runtimeIo);
  if (!runtimeIo.ok) return runtimeIo;
  const count = runtimeIo.value.ioFpgaCount;
  if (count === 0 || count > MAX_INT32) return fail(`${FILE} config.runtimeIo.ioFpgaCount must be in [1, ${MAX_INT32}], got ${count}`);
  const fanoutFactor = runtimeIo.value.fanoutFactor;
  if (fanoutFactor === 0 || fanoutFactor > MAX_INT32) return fail(`${FILE} config.runtimeIo.fanoutFactor must be in [1, ${MAX_INT32}], got ${fanoutFactor}`);
  const protocol = runtimeIo.value.protocol;
  if (protocol === RuntimeIoProtocol.HOST) {
    if (count !== 1) return fail(`${FILE} host runtime I/O requires ioFpgaCount 1, got ${count}`);
  } else if (protocol !== RuntimeIoProtocol.FPGA_ROCE) {
    return fail(`${FILE} config.runtimeIo.protocol ${protocol} is not supported`);
  }
  const mode = runtimeIo.value.fpgaMode;
  if (mode > FpgaIoMode.DIB_DEB) return fail(`${FILE} config.runtimeIo.fpgaMode ${mode} is not supported`);
  return ok({ ioFpgaCount: count, fanoutFactor });
}

/**
 * selectedPropSyncChainsFromDeploymentV1 (upstream): absent chains are none; each chain needs its
 * `partitionIds` ("...config.selectedPropSyncChains[%d].partitionIds is missing") with at least
 * two ids (`decodePropSyncChain`). Ids are kept in manifest order.
 */
function selectedPropSyncChainsFromDeploymentV1(config: DeploymentInfo): Result<readonly (readonly number[])[]> {
  if (!config._hasSelectedPropSyncChains()) return ok([]);
  const rawChains = readStructList(`reading ${FILE} config.selectedPropSyncChains`, config, 1, PropSyncChain, () => config.selectedPropSyncChains);
  if (!rawChains.ok) return rawChains;
  const chains: (readonly number[])[] = [];
  for (let chainIndex = 0; chainIndex < rawChains.value.length; chainIndex += 1) {
    const rawChain = rawChains.value.get(chainIndex);
    if (!rawChain._hasPartitionIds()) return fail(`${FILE} config.selectedPropSyncChains[${chainIndex}].partitionIds is missing`);
    const rawIds = readUint32List(`reading ${FILE} config.selectedPropSyncChains[${chainIndex}].partitionIds`, () => rawChain.partitionIds);
    if (!rawIds.ok) return rawIds;
    const chain = decodePropSyncChain(rawIds.value, `${FILE} config.selectedPropSyncChains[${chainIndex}]`);
    if (!chain.ok) return chain;
    chains.push(chain.value);
  }
  return ok(chains);
}

/** runtimeTokenEmbeddingsPathFromDeploymentV1 (upstream): the cleaned root `runtimeAssets.tokenEmbeddingsPath`, "" when absent. */
function runtimeTokenEmbeddingsPathFromDeploymentV1(deployment: Deployment): Result<string> {
  if (!deployment._hasRuntimeAssets()) return ok('');
  const runtimeAssets = read(`reading ${FILE} runtimeAssets`, () => deployment.runtimeAssets);
  if (!runtimeAssets.ok) return runtimeAssets;
  if (!runtimeAssets.value._hasTokenEmbeddingsPath()) return ok('');
  const rawPath = read(`reading ${FILE} runtimeAssets.tokenEmbeddingsPath`, () => runtimeAssets.value.tokenEmbeddingsPath);
  if (!rawPath.ok) return rawPath;
  return cleanManifestRelativeBuildPath(`${FILE} runtimeAssets.tokenEmbeddingsPath`, rawPath.value);
}

/**
 * addLPUArtifactsFromDeploymentV1 (upstream): the LPU partitions of the root's `partitions`
 * (CUDA and CPU ones are skipped, but refused in an `lpuOnly` build: "config.compilationMode
 * lpuOnly requires every artifact partition to use deviceType lpu"), at least one ("artifacts
 * contain no LPU partitions"); their family, order and node counts
 * (`classifyManifestPartitions`); an XT `partSelect` checked against them; `config.numLpuNodes`
 * positive and matching (`validateManifestPartitionNodeCount`).
 * The checks after the partition loop are the shared {@link completeLpuArtifacts}.
 * The partitions' text is bounded by the traversal limit ({@link checkPartitionTextBudget}).
 */
function lpuArtifactsFromDeploymentV1(deployment: Deployment, config: DeploymentInfo, compilationMode: LpxBuildCompilationMode, hostEmbeddings: boolean): Result<LpuArtifacts> {
  const rawPartitions = deployment._hasPartitions() ? readStructList(`reading ${FILE} partitions`, deployment, 2, PartitionDeployment, () => deployment.partitions) : ok(undefined);
  if (!rawPartitions.ok) return rawPartitions;
  const count = rawPartitions.value?.length ?? 0;
  const partitions: LpxBuildPartition[] = [];
  let hxDoubleNodeCount = true;
  let textBytes = 0;
  for (let index = 0; index < count; index += 1) {
    const partition = buildPartitionFromDeploymentV1((rawPartitions.value as $.List<PartitionDeployment>).get(index));
    if (!partition.ok) return partition;
    // Only metadata-less HX partitions permit upstream's historical doubled node count.
    if (partition.value !== undefined) {
      partitions.push(partition.value.partition);
      textBytes += partitionTextBytes(partition.value.partition);
      const budget = checkPartitionTextBudget(`${FILE} partitions`, textBytes);
      if (budget !== undefined) return fail(budget);
      hxDoubleNodeCount = hxDoubleNodeCount && partition.value.compatible;
    }
  }
  return completeLpuArtifacts(
    FILE,
    'config',
    { partitions, rawCount: count, compilationMode, partialSelection: deployment._hasPartSelect(), hxDoubleNodeCount, hostEmbeddings, numLpuNodes: config.numLpuNodes },
    (sorted) => validateDeploymentV1PartSelect(deployment, sorted),
  );
}

/**
 * buildPartitionFromDeploymentV1 (upstream): one deployment partition. The device kind and the
 * `detail` member must agree for every kind ("CUDA partition %d has mismatched detail", "CPU
 * partition %d has mismatched detail", "LPU partition %d has mismatched detail"); another
 * device is "partition %d has unsupported deviceType %d". CUDA and CPU partitions are skipped
 * (undefined). An LPU partition's `architecture` chooses its family: `lp20` XT, `lp30` HX
 * ({@link buildLPUArtifact}); another is "%s LPU partition %d unsupported chip architecture %s"
 * (the schema name, `unspecified` or "" for an unknown ordinal). Pure.
 */
export function buildPartitionFromDeploymentV1(raw: PartitionDeployment): Result<{ partition: LpxBuildPartition; compatible: boolean } | undefined> {
  if (!raw._hasPartition()) return fail(`${FILE} artifact partition is missing partition ref`);
  const ref = read(`reading ${FILE} artifact partition ref`, () => raw.partition);
  if (!ref.ok) return ref;
  const id = ref.value.partitionId;
  const detail = raw.detail;
  switch (ref.value.deviceType) {
    case DeviceType.CUDA:
      if (detail.which() !== PartitionDeployment_Detail_Which.CUDA || !detail._hasCuda()) return fail(`CUDA partition ${id} has mismatched detail`);
      return ok(undefined);
    case DeviceType.CPU:
      if (detail.which() !== PartitionDeployment_Detail_Which.CPU || !detail._hasCpu()) return fail(`CPU partition ${id} has mismatched detail`);
      return ok(undefined);
    case DeviceType.LPU:
      if (detail.which() !== PartitionDeployment_Detail_Which.LPU || !detail._hasLpu()) return fail(`LPU partition ${id} has mismatched detail`);
      break;
    default:
      return fail(`partition ${id} has unsupported deviceType ${ref.value.deviceType}`);
  }
  const lpu = read(`reading ${FILE} LPU partition ${id} detail`, () => detail.lpu);
  if (!lpu.ok) return lpu;
  const architecture = lpu.value.architecture;
  if (architecture === LpuArchitecture.LP20) return buildLPUArtifact(FILE, id, lpu.value, 'xt8888');
  if (architecture === LpuArchitecture.LP30) return buildLPUArtifact(FILE, id, lpu.value, 'hx16x8x2x3');
  return fail(`${FILE} LPU partition ${id} unsupported chip architecture ${lpuArchitectureName(architecture)}`);
}

/**
 * buildLPUArtifact (upstream name; body reconstructed, see the module docstring): the topology
 * and path read ("reading %s LPU partition %d topology|path: ..."), a topology without NUL bytes
 * or line breaks, the family's geometry (XT `buildXTPartition`, HX `buildHXPartition`), then the
 * cleaned path ("%s LPU partition %d path"). `compatible` is true for a metadata-less HX partition.
 */
function buildLPUArtifact(filename: string, id: number, raw: LpuPartitionArtifact, family: LpxBuildFamily): Result<{ partition: LpxBuildPartition; compatible: boolean }> {
  const topology = read(`reading ${filename} LPU partition ${id} topology`, () => raw.topology);
  if (!topology.ok) return topology;
  const rawPath = read(`reading ${filename} LPU partition ${id} path`, () => raw.path);
  if (!rawPath.ok) return rawPath;
  const subject = `${filename} LPU partition ${id}`;
  if (/[\0\r\n]/.test(topology.value)) return fail(`${subject} topology must not contain NUL bytes or line breaks: ${goQuote(topology.value)}`);
  const geometry = family === 'hx16x8x2x3' ? buildHXPartition(subject, topology.value, raw) : buildXTPartition(subject, topology.value, raw);
  if (!geometry.ok) return geometry;
  const partPath = cleanManifestRelativeBuildPath(`${subject} path`, rawPath.value);
  if (!partPath.ok) return partPath;
  return ok({
    partition: { sourcePartitionId: id, partPath: partPath.value, topology: geometry.value.topology, hxExtent: geometry.value.hxExtent },
    compatible: geometry.value.compatible,
  });
}

/**
 * validateDeploymentV1PartSelect (upstream): an XT root `partSelect` must list partitions
 * ("partSelect.partitions is empty"); its LPU refs (others are ignored) are checked by
 * `validateSelectedLPUPartitions(file, "partSelect", ...)`. Out: the error text, or undefined.
 */
function validateDeploymentV1PartSelect(deployment: Deployment, partitions: readonly LpxBuildPartition[]): string | undefined {
  if (!deployment._hasPartSelect()) return undefined;
  const partSelect = read(`reading ${FILE} partSelect`, () => deployment.partSelect);
  if (!partSelect.ok) return partSelect.error;
  const selected = readStructList(`reading ${FILE} partSelect.partitions`, partSelect.value, 0, PartitionRef, () => partSelect.value.partitions);
  if (!selected.ok) return selected.error;
  if (selected.value.length === 0) return `${FILE} partSelect.partitions is empty`;
  const selectedIds: number[] = [];
  for (let index = 0; index < selected.value.length; index += 1) {
    const ref = selected.value.get(index);
    if (ref.deviceType === DeviceType.LPU) selectedIds.push(ref.partitionId);
  }
  return validateSelectedLPUPartitions(FILE, 'partSelect', selectedIds, partitions);
}
