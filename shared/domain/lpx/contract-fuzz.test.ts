/**
 * Property tests of the LPX compiler-contract decoders on hostile bytes (house rule: "never crash
 * on input"): `normalizeBuildSnapshot` (build-contract.ts), the entry point the build acquisition
 * calls (functions/reconcile/lpx-build.ts), must answer every byte string with an error text or a
 * build that keeps the `LpxBuild` invariants of build.ts; it must never throw, hang or allocate
 * without bound.
 *
 * Inputs, all from fixed fast-check seeds (deterministic): random bytes of 0..4096; the real
 * manifests of test/support/gbuild-manifest.ts (XT LPU-only, XT hybrid, XT prop-sync chain, HX,
 * and their deployment.v1 equivalents) with single-byte flips, truncations, and 8-byte word
 * overwrites (hostile pointers: lists claiming 2^29 elements, far pointers, self-referencing
 * pointers, composite-list tags with huge counts). Work is capped by the case count, not timed:
 * a hang or a runaway allocation shows as vitest's test timeout.
 * Cap'n Proto encoding, "Encoding Spec" (pointers, far pointers, composite lists, "Security
 * Considerations": amplification and the traversal limit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aManifestV2ContractFixture,
  aManifestV2LpuArtifact,
  aV2CompilerFixture,
  aV3CompilerFixture,
  anXtLpuOnlyFixture,
  deploymentV1Of,
  encodeGbuildDeploymentV1,
  encodeGbuildManifestV2,
  EXECUTION_V1_FILE,
  type ManifestFixture,
} from '../../../test/support/gbuild-manifest.js';
import { normalizeBuildSnapshot } from './build-contract.js';
import type { BuildContractFormat } from './build-snapshot.js';
import type { LpxBuild } from './build.js';
import { LPU_CHIPS_PER_NODE } from './build.js';
import { MAX_INT32 } from './manifest-common.js';

const BUILD_URL = 'gs://models/build-1';
const INVENTORY = ['deployment.v1.capnp.bin', EXECUTION_V1_FILE];
/** Cases per property; the whole file stays well under vitest's timeout on a loaded 2-core machine. */
const RUNS = 2000;
const TIMEOUT_MS = 60_000;

/** A hybrid (`lpx`) XT build: one LPU partition beside a CUDA partition (upstream's `newManifestV2ContractFixture` with a GPU partition). */
const xtHybrid = aManifestV2ContractFixture({
  partitions: [aManifestV2LpuArtifact(0), { id: 1, deviceType: 'cuda' }],
});

const FIXTURES: readonly { readonly name: string; readonly fixture: ManifestFixture }[] = [
  { name: 'XT LPU-only', fixture: anXtLpuOnlyFixture() },
  { name: 'XT hybrid', fixture: xtHybrid },
  { name: 'XT prop-sync chain', fixture: aV2CompilerFixture() },
  { name: 'HX', fixture: aV3CompilerFixture() },
];

interface Seed {
  readonly name: string;
  readonly format: BuildContractFormat;
  readonly bytes: Uint8Array;
}

const SEEDS: readonly Seed[] = FIXTURES.flatMap(({ name, fixture }) => [
  { name: `manifest.v2 ${name}`, format: 'manifestV2' as const, bytes: new Uint8Array(encodeGbuildManifestV2(fixture)) },
  { name: `deployment.v1 ${name}`, format: 'deploymentV1' as const, bytes: new Uint8Array(encodeGbuildDeploymentV1(deploymentV1Of(fixture))) },
]);
const FORMATS: readonly BuildContractFormat[] = ['manifestV2', 'deploymentV1'];

/**
 * The `LpxBuild` invariants build.ts documents: the acquired path; a known family and mode; at
 * least one LPU partition, with unique source ids, a nonempty relative clean path, positive chip
 * and node counts; XT partitions sorted by source id without an extent, HX ones with a
 * four-dimensional extent; chains of >= 2 ids; I/O counts in [1, MaxInt32]; a positive batch that
 * splits evenly across the I/O endpoints; a token embeddings path absent or nonempty.
 * Out: the broken invariants (empty when the build keeps them all).
 */
function brokenInvariants(build: LpxBuild): string[] {
  const broken: string[] = [];
  const isPositiveInt = (value: number) => Number.isInteger(value) && value >= 1;
  if (build.path !== BUILD_URL) broken.push(`path ${build.path}`);
  if (build.family !== 'xt8888' && build.family !== 'hx16x8x2x3') broken.push(`family ${String(build.family)}`);
  if (build.compilationMode !== 'lpuOnly' && build.compilationMode !== 'lpx') broken.push(`compilationMode ${String(build.compilationMode)}`);
  if (build.partitions.length === 0) broken.push('no partitions');
  const ids = build.partitions.map((partition) => partition.sourcePartitionId);
  if (new Set(ids).size !== ids.length) broken.push(`duplicate ids ${ids.join(',')}`);
  if (build.family === 'xt8888' && ids.some((id, index) => index > 0 && (ids[index - 1] ?? -1) >= id)) broken.push(`XT ids not sorted ${ids.join(',')}`);
  for (const partition of build.partitions) {
    const { sourcePartitionId: id, partPath, topology, hxExtent } = partition;
    if (!Number.isInteger(id) || id < 0) broken.push(`id ${id}`);
    if (partPath === '' || partPath.startsWith('/') || partPath === '..' || partPath.startsWith('../')) broken.push(`partition ${id} path ${partPath}`);
    if (!isPositiveInt(topology.chipCount) || !isPositiveInt(topology.nodeCount)) broken.push(`partition ${id} counts ${topology.chipCount}/${topology.nodeCount}`);
    if (topology.raw.trim() === '') broken.push(`partition ${id} empty topology`);
    if (build.family === 'xt8888' && hxExtent !== undefined) broken.push(`XT partition ${id} has an extent`);
    if (build.family === 'xt8888' && topology.chipCount > LPU_CHIPS_PER_NODE && topology.chipCount % LPU_CHIPS_PER_NODE !== 0) broken.push(`XT partition ${id} chips ${topology.chipCount}`);
    if (build.family === 'hx16x8x2x3' && (hxExtent?.length !== 4 || hxExtent.some((dimension) => !isPositiveInt(dimension)))) broken.push(`HX partition ${id} extent ${String(hxExtent)}`);
  }
  for (const chain of build.selectedPropSyncChains) if (chain.length < 2) broken.push(`chain ${chain.join(',')}`);
  if (!isPositiveInt(build.ioFpgaCount) || build.ioFpgaCount > MAX_INT32) broken.push(`ioFpgaCount ${build.ioFpgaCount}`);
  if (!isPositiveInt(build.ioFanoutFactor) || build.ioFanoutFactor > MAX_INT32) broken.push(`ioFanoutFactor ${build.ioFanoutFactor}`);
  if (!isPositiveInt(build.batchSize) || build.batchSize % build.ioFpgaCount !== 0) broken.push(`batchSize ${build.batchSize}`);
  if (build.tokenEmbeddingsPath === '') broken.push('empty tokenEmbeddingsPath');
  return broken;
}

/** Decodes one input; fails the property on a throw, an empty error, or a build that breaks an invariant. */
function expectErrorOrSoundBuild(format: BuildContractFormat, bytes: Uint8Array): void {
  let result: ReturnType<typeof normalizeBuildSnapshot>;
  try {
    result = normalizeBuildSnapshot(format, BUILD_URL, bytes, INVENTORY);
  } catch (error) {
    throw new Error(`${format} decoder threw on ${Buffer.from(bytes).toString('hex')}: ${String(error)}`);
  }
  if (result.ok) {
    expect(brokenInvariants(result.build), Buffer.from(bytes).toString('hex')).toEqual([]);
  } else {
    expect(typeof result.error).toBe('string');
    expect(result.error.trim(), Buffer.from(bytes).toString('hex')).not.toBe('');
  }
}

/** Little-endian 8-byte word of two u32 halves. */
function word(lo: number, hi: number): Uint8Array {
  const out = new Uint8Array(8);
  const view = new DataView(out.buffer);
  view.setUint32(0, lo >>> 0, true);
  view.setUint32(4, hi >>> 0, true);
  return out;
}

/** Maximum list element count a list pointer or composite tag can claim (29 bits). */
const MAX_LIST_ELEMENTS = 2 ** 29 - 1;

/** Hostile words (Cap'n Proto encoding spec, pointer layouts): each a pointer a careless reader would follow. */
const hostileWord: fc.Arbitrary<Uint8Array> = fc.oneof(
  // A list pointer (type 1) of any element size claiming up to 2^29 - 1 elements at any offset.
  fc.tuple(fc.integer({ min: -(2 ** 29), max: 2 ** 29 - 1 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: MAX_LIST_ELEMENTS })).map(([offset, size, count]) =>
    word(((offset << 2) | 1) >>> 0, ((count << 3) | size) >>> 0),
  ),
  // A far pointer (type 2), single or double landing pad, to any segment and word.
  fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2 ** 29 - 1 }), fc.oneof(fc.constantFrom(0, 1, 2, 511, 0xffffffff), fc.nat())).map(([double, offset, segment]) =>
    word(((offset << 3) | (double ? 4 : 0) | 2) >>> 0, segment),
  ),
  // A struct pointer to itself (offset -1): a pointer loop.
  fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff })).map(([data, pointers]) => word(((-1 << 2) | 0) >>> 0, ((pointers << 16) | data) >>> 0)),
  // A composite-list tag claiming up to 2^29 - 1 elements of a small (or empty) struct.
  fc.tuple(fc.integer({ min: 0, max: MAX_LIST_ELEMENTS }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })).map(([count, data, pointers]) =>
    word((count << 2) >>> 0, ((pointers << 16) | data) >>> 0),
  ),
  // Anything at all.
  fc.uint8Array({ minLength: 8, maxLength: 8 }),
);

type Mutation =
  | { readonly kind: 'flip'; readonly at: number; readonly mask: number }
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'word'; readonly at: number; readonly value: Uint8Array };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('word' as const), at: fc.nat(), value: hostileWord }),
);

/** A copy of `bytes` with the mutations applied in order (positions taken modulo the current length). */
function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let out = bytes.slice();
  for (const step of mutations) {
    if (out.length === 0) break;
    if (step.kind === 'flip') {
      const at = step.at % out.length;
      out[at] = (out[at] ?? 0) ^ step.mask;
    } else if (step.kind === 'truncate') {
      out = out.slice(0, step.at % out.length);
    } else {
      const words = Math.floor(out.length / 8);
      if (words === 0) continue;
      out.set(step.value, (step.at % words) * 8);
    }
  }
  return out;
}

describe('LPX compiler-contract decoders on hostile bytes ("never crash on input")', () => {
  it.each(FORMATS)('%s: random byte strings of 0..4096 bytes give an error text, never a throw', (format) => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 4096 }), (bytes) => expectErrorOrSoundBuild(format, bytes)),
      { seed: 0x5eed_0001, numRuns: RUNS / 4 },
    );
  }, TIMEOUT_MS);

  it.each(FORMATS)('%s: a random 8-byte-aligned prefix that looks like a segment table gives an error text', (format) => {
    const table = fc.tuple(fc.nat({ max: 600 }), fc.array(fc.nat(), { maxLength: 8 }), fc.uint8Array({ maxLength: 256 })).map(([count, sizes, tail]) => {
      const head = new Uint8Array(4 * (sizes.length + 1));
      const view = new DataView(head.buffer);
      view.setUint32(0, count, true);
      sizes.forEach((size, index) => view.setUint32(4 * (index + 1), size, true));
      return new Uint8Array([...head, ...tail]);
    });
    fc.assert(fc.property(table, (bytes) => expectErrorOrSoundBuild(format, bytes)), { seed: 0x5eed_0002, numRuns: RUNS / 4 });
  }, TIMEOUT_MS);

  it.each(SEEDS)('$name: the unmutated contract decodes to a sound build', ({ format, bytes }) => {
    const result = normalizeBuildSnapshot(format, BUILD_URL, bytes, INVENTORY);
    expect(result.ok ? brokenInvariants(result.build) : result.error).toEqual([]);
  });

  it.each(SEEDS)('$name: byte flips, truncations and hostile pointer words give an error text or a sound build', ({ format, bytes }) => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => expectErrorOrSoundBuild(format, mutate(bytes, mutations))),
      { seed: 0x5eed_0003, numRuns: RUNS / 4 },
    );
  }, TIMEOUT_MS);

  it.each(SEEDS)('$name: every word overwritten in turn by a list pointer claiming up to 2^29 - 1 elements, a far pointer, a self pointer and a huge composite tag', ({ format, bytes }) => {
    const hostile = [
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((size) => word(1, ((MAX_LIST_ELEMENTS << 3) | size) >>> 0)),
      word(2, 0), word(2, 0xffffffff), word(6, 0), word((8 << 3) | 6, 1),
      word(((-1 << 2) | 0) >>> 0, 0x00010001),
      word((MAX_LIST_ELEMENTS << 2) >>> 0, 0), word((MAX_LIST_ELEMENTS << 2) >>> 0, 0x00000001),
      // Counts small enough that capnp-es would allocate for them rather than refuse (its segments stop at 4 GiB).
      word(1, ((3_000_000 << 3) | 2) >>> 0), word((3_000_000 << 2) >>> 0, 0), word((3_000_000 << 2) >>> 0, 0x00010000),
    ];
    for (let at = 0; at + 8 <= bytes.length; at += 8) {
      for (const value of hostile) {
        const out = bytes.slice();
        out.set(value, at);
        expectErrorOrSoundBuild(format, out);
      }
    }
  }, TIMEOUT_MS);
});

/** The segment's byte offset of every list pointer of element size `size` and `length` elements in a one-segment message, with its target. */
function listPointers(bytes: Uint8Array, size: number, length: number): { readonly at: number; readonly target: number }[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(view.getUint32(0, true), 'a one-segment message').toBe(0);
  const found: { at: number; target: number }[] = [];
  for (let at = 8; at + 8 <= bytes.length; at += 8) {
    const lo = view.getInt32(at, true);
    const hi = view.getUint32(at + 4, true);
    if ((lo & 3) === 1 && (hi & 7) === size && hi >>> 3 === length) found.push({ at, target: at + 8 + (lo >> 2) * 8 });
  }
  return found;
}

/** `bytes` with the list pointer at `at` rewritten to `target` (a byte offset), element size `size`, `length` elements. */
function withListPointer(bytes: Uint8Array, at: number, target: number, size: number, length: number): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  view.setInt32(at, (((target - at - 8) / 8) << 2) | 1, true);
  view.setUint32(at + 4, ((length << 3) | size) >>> 0, true);
  return out;
}

/** Cap'n Proto list element size codes (encoding spec, "Lists"). */
const BYTE = 2;
const FOUR_BYTES = 4;

describe('LPX compiler-contract decoders: regressions the fuzzing found', () => {
  // Found by "byte flips, truncations and hostile pointer words" on manifest.v2 XT prop-sync chain: capnp-es's
  // list iterator allocated an array of the claimed length before reading, and the worker died with
  // "FATAL ERROR: invalid table size Allocation failed - JavaScript heap out of memory".
  const chain = aV2CompilerFixture();
  it.each([
    { name: 'manifest.v2', format: 'manifestV2' as const, bytes: new Uint8Array(encodeGbuildManifestV2(chain)), field: 'manifest.v2.capnp.bin deployment' },
    { name: 'deployment.v1', format: 'deploymentV1' as const, bytes: new Uint8Array(encodeGbuildDeploymentV1(deploymentV1Of(chain))), field: 'deployment.v1.capnp.bin config' },
  ])('$name: a partitionIds pointer claiming 506375249 one-byte elements is refused, not iterated', ({ format, bytes, field }) => {
    const [ids] = listPointers(bytes, FOUR_BYTES, 2);
    if (ids === undefined) throw new Error('the chain fixture has no two-id partitionIds list');
    const result = normalizeBuildSnapshot(format, BUILD_URL, withListPointer(bytes, ids.at, ids.target, BYTE, 506_375_249), INVENTORY);
    expect(result).toEqual({ ok: false, error: `reading ${field}.selectedPropSyncChains[0].partitionIds: list element size 2, want 4-byte elements` });
  });

  it('a partitionIds list of 4-byte elements running past its segment is refused before it is read', () => {
    const bytes = new Uint8Array(encodeGbuildManifestV2(chain));
    const [ids] = listPointers(bytes, FOUR_BYTES, 2);
    if (ids === undefined) throw new Error('the chain fixture has no two-id partitionIds list');
    const result = normalizeBuildSnapshot('manifestV2', BUILD_URL, withListPointer(bytes, ids.at, ids.target, FOUR_BYTES, MAX_LIST_ELEMENTS), INVENTORY);
    expect(result).toEqual({
      ok: false,
      error: `reading manifest.v2.capnp.bin deployment.selectedPropSyncChains[0].partitionIds: list of ${MAX_LIST_ELEMENTS} 4-byte elements at byte ${ids.target - 8} exceeds its ${bytes.length - 8}-byte segment`,
    });
  });

  it('an HX partitionShape pointer claiming 2^29 - 1 one-byte elements is refused, not iterated', () => {
    const hx = aV3CompilerFixture({ numLpuNodes: 1, partitions: [{ id: 1, deviceType: 'lpu', path: 'part-1', topology: 'opaque-v3-topology', numChips: 16, devicesPerNode: 16, topologyFamily: '16x8x2x3', partitionShape: [16, 1, 1, 1] }] });
    const bytes = new Uint8Array(encodeGbuildManifestV2(hx));
    expect(normalizeBuildSnapshot('manifestV2', BUILD_URL, bytes, INVENTORY).ok).toBe(true);
    const [shape] = listPointers(bytes, FOUR_BYTES, 4);
    if (shape === undefined) throw new Error('the HX fixture has no four-dimension partitionShape list');
    const result = normalizeBuildSnapshot('manifestV2', BUILD_URL, withListPointer(bytes, shape.at, shape.target, BYTE, MAX_LIST_ELEMENTS), INVENTORY);
    expect(result).toEqual({ ok: false, error: 'reading V3 manifest.v2.capnp.bin LPU partition 1 topologyMetadata.partitionShape: list element size 2, want 4-byte elements' });
  });

  // Found while reading capnp-es's getList (then confirmed by measurement): a composite tag smaller than the
  // schema's struct makes capnp-es copy the list into a buffer sized from the claimed count; 30000000
  // zero-size partitions allocated 1.1 GiB and took seconds before the first element was read.
  it.each([
    { name: 'manifest.v2', format: 'manifestV2' as const, bytes: new Uint8Array(encodeGbuildManifestV2(anXtLpuOnlyFixture())), field: 'manifest.v2.capnp.bin artifacts.partitions' },
    { name: 'deployment.v1', format: 'deploymentV1' as const, bytes: new Uint8Array(encodeGbuildDeploymentV1(deploymentV1Of(anXtLpuOnlyFixture()))), field: 'deployment.v1.capnp.bin partitions' },
  ])('$name: a composite tag claiming 30000000 zero-size partitions is refused before capnp-es copies the list', ({ format, bytes, field }) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const lists: { readonly tag: number; readonly words: number }[] = [];
    for (let at = 8; at + 8 <= bytes.length; at += 8) {
      const lo = view.getInt32(at, true);
      const hi = view.getUint32(at + 4, true);
      const tag = at + 8 + (lo >> 2) * 8;
      if ((lo & 3) === 1 && (hi & 7) === 7 && tag >= 8 && tag + 8 <= bytes.length) lists.push({ tag, words: hi >>> 3 });
    }
    const [partitions] = lists;
    if (partitions === undefined) throw new Error('the fixture has no struct list');
    const out = bytes.slice();
    new DataView(out.buffer).setUint32(partitions.tag, (30_000_000 << 2) >>> 0, true);
    new DataView(out.buffer).setUint32(partitions.tag + 4, 0, true);
    expect(normalizeBuildSnapshot(format, BUILD_URL, out, INVENTORY)).toEqual({
      ok: false,
      error: `reading ${field}: struct list tag claims 30000000 elements of 0 words, more than its ${partitions.words} words`,
    });
  });

  // Cap'n Proto encoding, "Security Considerations" (amplification): 1100 HX partitions whose topology
  // pointers all share one 64 KiB text decode to 72 MB of names from a 188 KB message; go-capnp stops at
  // its 64 MiB traversal limit, and so do the decoders.
  it.each([
    { name: 'manifest.v2', format: 'manifestV2' as const, encode: (fixture: ManifestFixture) => encodeGbuildManifestV2(fixture), field: 'manifest.v2.capnp.bin artifacts.partitions' },
    { name: 'deployment.v1', format: 'deploymentV1' as const, encode: (fixture: ManifestFixture) => encodeGbuildDeploymentV1(deploymentV1Of(fixture)), field: 'deployment.v1.capnp.bin partitions' },
  ])('$name: partitions sharing one topology text stop at the 64 MiB traversal limit ("read traversal limit reached")', ({ format, encode, field }) => {
    const count = 1100;
    const topologyBytes = 64 * 1024;
    const hx = aV3CompilerFixture({
      numLpuNodes: count,
      partitions: Array.from({ length: count }, (_, id) => ({
        id, deviceType: 'lpu' as const, path: `part-${id}`, topology: id === 0 ? 'X'.repeat(topologyBytes) : `t${String(id).padStart(6, '0')}`, numChips: 16, devicesPerNode: 16,
      })),
    });
    const encoded = new Uint8Array(encode(hx));
    const [shared] = listPointers(encoded, BYTE, topologyBytes + 1);
    if (shared === undefined) throw new Error('the fixture has no shared topology text');
    const others = listPointers(encoded, BYTE, 8).filter(({ target }) => encoded[target] === 't'.charCodeAt(0));
    expect(others).toHaveLength(count - 1);
    let bytes: Uint8Array = encoded;
    for (const { at } of others) bytes = withListPointer(bytes, at, shared.target, BYTE, topologyBytes + 1);
    expect(normalizeBuildSnapshot(format, BUILD_URL, bytes, INVENTORY)).toEqual({
      ok: false,
      error: `reading ${field}: read traversal limit reached (partition text exceeds 67108864 bytes)`,
    });
  }, TIMEOUT_MS);
});
