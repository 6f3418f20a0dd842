/**
 * The rules both LPX compiler contracts share: `manifest.v2.capnp.bin` (`manifest-v2.ts`) and
 * upstream's split `deployment.v1.capnp.bin` (`deployment-v1.ts`) normalize their LPU partitions,
 * counts, asset paths and node geometry through the same checks, each error naming its file.
 *
 * Source: upstream `internal/dynamo/lpx/model_manifest_common.go` (`classifyManifestPartitions`,
 * `buildXTPartition`, `buildHXPartition`, `buildCompilationMode`, `decodePropSyncChain`,
 * `cleanManifestRelativeBuildPath`, `validateManifestPartitionNodeCount`,
 * `positiveManifestUInt32ToInt`), and the shared helpers `model_deployment_v1.go` calls
 * (`validateManifestBatchSize`, `validateSelectedLPUPartitions`): their bodies are not in the
 * readable upstream sources, so they keep the texts of the manifest-v2 code they were factored
 * out of (upstream `model_manifest_v2.go` `buildFromGbuildManifestV2`,
 * `validateManifestV2PartSelect`) with the file name as a parameter.
 * Everything here is pure: values in, a value or an error string out; nothing throws.
 * @module
 */
import path from 'node:path/posix';
import * as $ from 'capnp-es';
import type { LpxBuildCompilationMode, LpxBuildFamily, LpxBuildPartition } from './build.js';
import { LPU_CHIPS_PER_NODE } from './build.js';
import { goQuote, parseTopology, topologyReplicas } from './topology.js';

/** Go's `math.MaxInt32`, the bound of the runtime I/O counts. */
export const MAX_INT32 = 2_147_483_647;
/** Upstream `hxTopologyFamily`. */
export const HX_TOPOLOGY_FAMILY = '16x8x2x3';
/** Segments a stream may declare (go-capnp `maxStreamSegments`, as the C++ implementation). */
const MAX_STREAM_SEGMENTS = 512;

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (error: string): { readonly ok: false; readonly error: string } => ({ ok: false, error });

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One capnp-es read; a throw becomes `<label>: <cause>` (upstream's "reading ...: %w"). */
export function read<T>(label: string, get: () => T): Result<T> {
  try {
    return ok(get());
  } catch (error) {
    return fail(`${label}: ${messageOf(error)}`);
  }
}

/** go-capnp's and the C++ reader's default traversal limit (`defaultTraverseLimit`, "Security limits. Matches C++ implementation"): 64 MiB. */
export const TRAVERSAL_LIMIT_BYTES = 64 << 20;

/**
 * checkPartitionTextBudget: whether the text the decoded partitions hold so far (`textBytes`,
 * their topology names and paths, in UTF-16 code units) stays within
 * {@link TRAVERSAL_LIMIT_BYTES}. Why: Cap'n Proto lets many pointers share one object, so a
 * 188 KB manifest whose 1100 partitions all point at one 64 KiB topology decoded to 72 MB of
 * strings, and the same trick at the 100 MiB acquisition limit would exhaust any heap
 * (contract-fuzz.test.ts, "partitions sharing one topology text"). Upstream's go-capnp refuses
 * such a message once its reads pass the traversal limit (Cap'n Proto encoding, "Security
 * Considerations": amplification attack); capnp-es only counts allocations, so the decoders
 * count what they keep. `field` names the partition list. Out: the error text, or undefined. Pure.
 */
export function checkPartitionTextBudget(field: string, textBytes: number): string | undefined {
  if (textBytes <= TRAVERSAL_LIMIT_BYTES) return undefined;
  return `reading ${field}: read traversal limit reached (partition text exceeds ${TRAVERSAL_LIMIT_BYTES} bytes)`;
}

/** The text one decoded partition holds (topology name and path), as {@link checkPartitionTextBudget} counts it. Pure. */
export function partitionTextBytes(partition: LpxBuildPartition): number {
  return partition.topology.raw.length + partition.partPath.length;
}

/**
 * readStructList: one Cap'n Proto struct list (`get` is the schema getter of pointer
 * `pointerIndex` of `parent`; a throw becomes `<label>: <cause>`), after its raw pointer is
 * checked the way go-capnp and the C++ reader check it (Cap'n Proto encoding, "Lists": a
 * composite list's tag gives the element count and struct size, the pointer the words that
 * follow it): a nonempty list must be composite ("<label>: list element size <code>, want a
 * struct list"), its words inside its segment ("<label>: struct list of <w> words at byte <o>
 * exceeds its <b>-byte segment"), its elements inside its words, a zero-size element counted as
 * one word ("<label>: struct list tag claims <n> elements of <s> words, more than its <w> words";
 * go-capnp: "list size exceeds"), and its elements, at the schema's size, within
 * {@link TRAVERSAL_LIMIT_BYTES}. Why: capnp-es copies a list whose tag struct is smaller than the
 * schema's into a new buffer sized from the claimed count before reading it, so a tag claiming
 * 30000000 zero-size partitions allocated 1.1 GiB and spent seconds copying (contract-fuzz.test.ts,
 * "a composite tag claiming 30000000 zero-size partitions"). Out: the list. Pure.
 */
export function readStructList<T>(label: string, parent: $.Struct, pointerIndex: number, element: { readonly _capnp: { readonly size: $.ObjectSize } }, get: () => T): Result<T> {
  const checked = read(label, () => {
    const pointer = $.utils.getPointer(pointerIndex, parent);
    if ($.utils.isNull(pointer)) return;
    const target = $.utils.followFars(pointer);
    if ($.utils.getPointerType(target) !== $.PointerType.LIST) return;
    const elementSize = $.utils.getListElementSize(target);
    if (elementSize !== $.ListElementSize.COMPOSITE) {
      if ($.utils.getListLength(target) === 0) return;
      throw new Error(`list element size ${elementSize}, want a struct list`);
    }
    const words = $.utils.getListLength(target);
    const tag = $.utils.getTargetCompositeListTag(pointer);
    if (tag.byteOffset < 0 || tag.byteOffset + 8 * (words + 1) > tag.segment.byteLength) {
      throw new Error(`struct list of ${words} words at byte ${tag.byteOffset} exceeds its ${tag.segment.byteLength}-byte segment`);
    }
    const count = $.utils.getOffsetWords(tag);
    const elementWords = $.utils.getStructDataWords(tag) + $.utils.getStructPointerLength(tag);
    if (count < 0 || count * Math.max(elementWords, 1) > words) {
      throw new Error(`struct list tag claims ${count} elements of ${elementWords} words, more than its ${words} words`);
    }
    const schemaBytes = element._capnp.size.dataByteLength + 8 * element._capnp.size.pointerLength;
    if (count * schemaBytes > TRAVERSAL_LIMIT_BYTES) throw new Error(`read traversal limit reached (${count} elements of ${schemaBytes} bytes)`);
  });
  if (!checked.ok) return checked;
  return read(label, get);
}

/**
 * readUint32List: the values of one Cap'n Proto `List(UInt32)` (`get` reads its pointer; a throw
 * becomes `<label>: <cause>`), read one index at a time inside its segment.
 * Why not capnp-es's iterator (`[...list]`): it first allocates a JS array of the length the
 * pointer claims (29 bits, up to 536870911) and only then reads, so one hostile pointer exhausted
 * the heap and killed the process (contract-fuzz.test.ts, "a partitionIds pointer claiming
 * 506375249 one-byte elements"). A nonempty list must therefore have 4-byte elements
 * ("<label>: list element size <code>, want 4-byte elements"; Cap'n Proto encoding, "Lists":
 * element size 4 is four bytes; go-capnp refuses a primitive list of a smaller element size) and
 * lie inside its segment ("<label>: list of <n> 4-byte elements at byte <offset> exceeds its
 * <bytes>-byte segment"; C++ `readListPointer`: "Message contained out-of-bounds list pointer").
 * Out: the values in list order. Pure.
 */
export function readUint32List(label: string, get: () => $.List<number>): Result<number[]> {
  const list = read(label, get);
  if (!list.ok) return list;
  return read(label, () => {
    const length = list.value.length;
    if (length === 0) return [];
    const elementSize = $.utils.getTargetListElementSize(list.value);
    if (elementSize !== $.ListElementSize.BYTE_4) throw new Error(`list element size ${elementSize}, want 4-byte elements`);
    const content = $.utils.getContent(list.value);
    if (content.byteOffset < 0 || content.byteOffset + 4 * length > content.segment.byteLength) {
      throw new Error(`list of ${length} 4-byte elements at byte ${content.byteOffset} exceeds its ${content.segment.byteLength}-byte segment`);
    }
    const values: number[] = [];
    for (let index = 0; index < length; index += 1) values.push(list.value.get(index));
    return values;
  });
}

/**
 * The LPU partition fields the geometry rules read, as both contracts' generated
 * `LpuPartitionArtifact` carry them (the same names and meaning in manifest v2 and deployment v1).
 */
export interface LpuPartitionGeometryFields {
  readonly numChips: number;
  readonly devicesPerNode: number;
  _hasTopologyMetadata(): boolean;
  readonly topologyMetadata: { readonly topologyFamily: string; readonly partitionShape: $.List<number> };
}

/**
 * decodePropSyncChain (upstream): one selected chain's ids, in manifest order; fewer than two is
 * "%s must contain at least two partitionIds" (`chainPath` names the chain). Pure.
 */
export function decodePropSyncChain(rawIds: readonly number[], chainPath: string): Result<readonly number[]> {
  if (rawIds.length < 2) return fail(`${chainPath} must contain at least two partitionIds`);
  return ok([...rawIds]);
}

/**
 * validateManifestBatchSize (upstream; the texts of `buildFromGbuildManifestV2`'s "Reject an
 * incomplete split-I/O batch" and "Reject incomplete client-owned transaction regions"): the
 * batch splits evenly across the I/O endpoints, and each endpoint's share across its fanout
 * clients. Out: the error text naming `filename`, or undefined. Pure.
 */
export function validateManifestBatchSize(filename: string, batchSize: number, ioFpgaCount: number, fanoutFactor: number): string | undefined {
  if (batchSize % ioFpgaCount !== 0) {
    return `${filename} deployment.program.batchSize ${batchSize} must be divisible by deployment.runtimeIo.ioFpgaCount ${ioFpgaCount}`;
  }
  const perEndpoint = batchSize / ioFpgaCount;
  if (perEndpoint % fanoutFactor !== 0) {
    return `${filename} deployment.program.batchSize per endpoint ${perEndpoint} must be divisible by deployment.runtimeIo.fanoutFactor ${fanoutFactor}`;
  }
  return undefined;
}

/**
 * validateRuntimeEmbeddingsAsset (upstream: "Validate runtime embedding assets before projecting
 * scheduler-facing artifacts"): the runtime embeddings asset is allowed only with CPU
 * embeddings ("%s requires supportsCpuEmbeddings=true"), and required when they are standalone
 * ("%s is required when standaloneTokenEmbeddings=true"). `field` is the asset's field as its
 * contract names it. Out: the error text, or undefined. Pure.
 */
export function validateRuntimeEmbeddingsAsset(field: string, tokenEmbeddingsPath: string, supportsCpuEmbeddings: boolean, standaloneTokenEmbeddings: boolean): string | undefined {
  if (tokenEmbeddingsPath !== '' && !supportsCpuEmbeddings) return `${field} requires supportsCpuEmbeddings=true`;
  if (supportsCpuEmbeddings && standaloneTokenEmbeddings && tokenEmbeddingsPath === '') return `${field} is required when standaloneTokenEmbeddings=true`;
  return undefined;
}

/**
 * validateSelectedLPUPartitions (upstream; the texts of `validateManifestV2PartSelect`): the
 * selected LPU partition ids (`field`, e.g. `artifacts.partSelect`) must be unique ("%s %s has
 * duplicate LPU partition id %d"), packaged ("%s %s references unpackaged LPU partition id %d")
 * and cover every packaged LPU partition ("%s %s selects %d LPU partitions, but artifacts package
 * %d"). In: the ids in selection order, the packaged partitions. Out: the error text, or undefined. Pure.
 */
export function validateSelectedLPUPartitions(filename: string, field: string, selectedIds: readonly number[], partitions: readonly LpxBuildPartition[]): string | undefined {
  const packaged = new Set(partitions.map((partition) => partition.sourcePartitionId));
  const selected = new Set<number>();
  for (const id of selectedIds) {
    if (selected.has(id)) return `${filename} ${field} has duplicate LPU partition id ${id}`;
    if (!packaged.has(id)) return `${filename} ${field} references unpackaged LPU partition id ${id}`;
    selected.add(id);
  }
  if (selected.size !== partitions.length) return `${filename} ${field} selects ${selected.size} LPU partitions, but artifacts package ${partitions.length}`;
  return undefined;
}

/**
 * checkStreamFraming: the stream framing of a Cap'n Proto message (Cap'n Proto encoding,
 * "Serialization over a stream"): a little-endian u32 segment count minus one, a u32 word count
 * per segment, padding to 8 bytes, then the segments, all present. Checked before capnp-es reads
 * the bytes, so a hostile table cannot make it allocate without bound. Out: why the bytes are not
 * such a message, or undefined. Pure.
 */
export function checkStreamFraming(bytes: Uint8Array): string | undefined {
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

export type PartitionGeometry = Pick<LpxBuildPartition, 'topology' | 'hxExtent'> & { readonly compatible: boolean };

/**
 * buildXTPartition (upstream): the topology name parsed ("parsing %s topology %q: ..."), a
 * positive chip count ("topology has invalid chip count %d") that fills whole 8-chip nodes when
 * it spans more than one ("topology has %d chips, not divisible by 8 LPU devices per node"),
 * equal to `numChips` (>= 1; "topology chip count %d does not match numChips %d"), and
 * `devicesPerNode` (>= 1) equal to 8 ("devicesPerNode %d, want 8 for LPU device version 2"). Pure.
 */
export function buildXTPartition(subject: string, value: string, raw: LpuPartitionGeometryFields): Result<PartitionGeometry> {
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
export function buildHXPartition(subject: string, value: string, raw: LpuPartitionGeometryFields): Result<PartitionGeometry> {
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
  const shape = readUint32List(`reading V3 ${subject} topologyMetadata.partitionShape`, () => metadata.value.partitionShape);
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

/** A contract's LPU artifacts: their family and the normalized partitions. */
export interface LpuArtifacts {
  readonly family: LpxBuildFamily;
  readonly partitions: readonly LpxBuildPartition[];
}

/** What {@link completeLpuArtifacts} reads after a contract's partition loop. */
export interface CollectedLpuPartitions {
  /** The LPU partitions of the loop, in manifest order. */
  readonly partitions: readonly LpxBuildPartition[];
  /** All partitions of the contract, CUDA and CPU ones included. */
  readonly rawCount: number;
  readonly compilationMode: LpxBuildCompilationMode;
  /** The contract carries a `partSelect`. */
  readonly partialSelection: boolean;
  readonly hxDoubleNodeCount: boolean;
  readonly hostEmbeddings: boolean;
  /** The contract's declared `numLpuNodes` (raw). */
  readonly numLpuNodes: number;
}

/**
 * completeLpuArtifacts: the shared end of upstream's `addLPUArtifactsFromManifestV2` and
 * `addLPUArtifactsFromDeploymentV1`: an `lpuOnly` build with a CUDA or CPU partition ("%s
 * <section>.compilationMode lpuOnly requires every artifact partition to use deviceType lpu"),
 * no LPU partition ("%s artifacts contain no LPU partitions"), then
 * {@link classifyManifestPartitions}, an XT build's `partSelect` (`validatePartSelect`, the
 * contract's own), `<section>.numLpuNodes` positive and matching
 * ({@link validateManifestPartitionNodeCount}). `section` is the contract's name of the
 * deployment facts: `deployment` (manifest.v2) or `config` (deployment.v1). Pure.
 */
export function completeLpuArtifacts(
  filename: string,
  section: 'deployment' | 'config',
  collected: CollectedLpuPartitions,
  validatePartSelect: (partitions: readonly LpxBuildPartition[]) => string | undefined,
): Result<LpuArtifacts> {
  if (collected.compilationMode === 'lpuOnly' && collected.partitions.length !== collected.rawCount) {
    return fail(`${filename} ${section}.compilationMode lpuOnly requires every artifact partition to use deviceType lpu`);
  }
  if (collected.partitions.length === 0) return fail(`${filename} artifacts contain no LPU partitions`);
  const classified = classifyManifestPartitions(filename, collected.partitions, collected.partialSelection);
  if (!classified.ok) return classified;
  if (classified.value.family === 'xt8888') {
    const partSelect = validatePartSelect(classified.value.partitions);
    if (partSelect !== undefined) return fail(partSelect);
  }
  const want = positiveManifestUInt32(`${filename} ${section}.numLpuNodes`, collected.numLpuNodes);
  if (!want.ok) return want;
  const nodeCount = validateManifestPartitionNodeCount(filename, want.value, {
    family: classified.value.family,
    hostEmbeddings: collected.hostEmbeddings,
    partialSelection: collected.partialSelection,
    hxDoubleNodeCount: collected.hxDoubleNodeCount,
    packagedNodes: classified.value.packagedNodes,
    partitionZeroNodes: classified.value.partitionZeroNodes,
  });
  if (nodeCount !== undefined) return fail(nodeCount);
  return ok({ family: classified.value.family, partitions: classified.value.partitions });
}
