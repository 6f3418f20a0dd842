/**
 * The immutable LPX build snapshot: the inventory of a compiled build and its compiler manifest,
 * fenced against change while they are read, and the content identity upstream publishes as the
 * compiler-snapshot digest.
 *
 * Source: upstream `internal/dynamo/lpx/build_snapshot.go` (`AcquireBuildSnapshot`,
 * `writeBuildSnapshotField`, `normalizeBuildFilePaths`, `normalizeModelPath`) and
 * `model_registry.go` (`listBuildFiles`, `readBuildFileBounded`); upstream tests
 * `build_snapshot_test.go` (`TestAcquireBuildSnapshotTracksLocalContent`,
 * `TestAcquireBuildSnapshotRejectsLegacyCompilerMetadata`,
 * `TestNormalizeBuildFilePathsCanonicalizesAndRejectsAmbiguity`); lpx.md §4 "Other functions"
 * (`AcquireBuildSnapshot(id)` reads `manifest.v2.capnp.bin` with size limits). The acquisition's
 * reads are the shell's (functions/reconcile/lpx-build.ts); this module holds its pure rules.
 * Decoding the Cap'n Proto manifest (upstream `normalizeBuildSnapshot`) is `manifest-v2.ts`'s.
 * @module
 */
import { createHash } from 'node:crypto';
import path from 'node:path/posix';
import { ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST } from '../../api/index.js';
import type { LpxBuild } from './build.js';

/** The compiler manifest every build must carry (upstream `gbuildManifestV2CapnpFile`). */
export const GBUILD_MANIFEST_V2_FILE = 'manifest.v2.capnp.bin';
/** Bytes of retained metadata per acquisition: the inventory's path bytes, and each manifest read (upstream `maxBuildSnapshotMetadataBytes` = `modelExpressMaxMessageSize`, 100 MiB). */
export const MAX_BUILD_SNAPSHOT_METADATA_BYTES = 100 * 1024 * 1024;
/** The budget of one acquisition, in milliseconds (upstream `buildSnapshotTimeout`, 30 s). */
export const BUILD_SNAPSHOT_TIMEOUT_MS = 30_000;
/** The versioned digest domain of the snapshot identity (upstream `buildSnapshotIdentityVersion`). */
const BUILD_SNAPSHOT_IDENTITY_VERSION = 'dynamo-lpx-compiler-snapshot/v3';
/** Prefix of every inconsistency error (upstream `ErrBuildSnapshotInconsistent`). */
export const BUILD_SNAPSHOT_INCONSISTENT = 'immutable build snapshot is inconsistent';
/** Prefix of an acquisition failure (upstream `ErrBuildSnapshotAcquisition`). */
export const BUILD_SNAPSHOT_ACQUISITION = 'acquiring immutable LPX build snapshot';

export type InventoryResult = { readonly ok: true; readonly paths: readonly string[] } | { readonly ok: false; readonly error: string };

/**
 * normalizeBuildInventory (upstream `normalizeBuildFilePaths`): every listed path trimmed,
 * cleaned and stripped of a leading `./`, then sorted. Refused: an empty, `.`, absolute or
 * climbing path ("build inventory contains invalid relative path %q", the raw path), and a path
 * listed twice after cleaning ("build inventory repeats relative path %q").
 * In: the listed paths, relative to the build root. Out: the canonical inventory. Pure.
 */
export function normalizeBuildInventory(paths: readonly string[]): InventoryResult {
  const out: string[] = [];
  for (const raw of paths) {
    const cleaned = normalizeModelPath(raw);
    if (cleaned === '' || cleaned === '.' || cleaned.startsWith('/') || cleaned === '..' || cleaned.startsWith('../')) {
      return { ok: false, error: `build inventory contains invalid relative path ${JSON.stringify(raw)}` };
    }
    out.push(cleaned);
  }
  // Code-unit order, as Go's sort.Strings orders bytes for these ASCII paths.
  out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 1; i < out.length; i += 1) {
    if (out[i] === out[i - 1]) return { ok: false, error: `build inventory repeats relative path ${JSON.stringify(out[i])}` };
  }
  return { ok: true, paths: out };
}

/** Upstream `normalizeModelPath`: trimmed, cleaned, without a leading `./`; empty stays empty. */
function normalizeModelPath(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed === '') return '';
  const cleaned = path.normalize(trimmed);
  const noTrailing = cleaned.length > 1 ? cleaned.replace(/\/+$/, '') : cleaned;
  return noTrailing.startsWith('./') ? noTrailing.slice(2) : noTrailing;
}

/**
 * buildSnapshotContentId: the snapshot identity, `sha256:<hex>` over length-prefixed fields
 * (`<len>:<bytes>` each): the identity version, "inventory", the path count, then per path
 * "inventory-path" and the path, then "compiler-metadata", "1", "metadata-path", the manifest
 * path, "metadata-bytes" and the manifest bytes. Any change to a listed path or to the manifest
 * bytes changes it; the build's location does not (upstream: "Publish the canonical compiler
 * snapshot identity independently of build locator").
 * In: the canonical inventory ({@link normalizeBuildInventory}) and the manifest bytes. Pure.
 */
export function buildSnapshotContentId(inventory: readonly string[], manifestBytes: Uint8Array): string {
  const hash = createHash('sha256');
  const field = (value: string | Uint8Array) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  };
  field(BUILD_SNAPSHOT_IDENTITY_VERSION);
  field('inventory');
  field(String(inventory.length));
  for (const entry of inventory) {
    field('inventory-path');
    field(entry);
  }
  field('compiler-metadata');
  field('1');
  field('metadata-path');
  field(GBUILD_MANIFEST_V2_FILE);
  field('metadata-bytes');
  field(manifestBytes);
  return `sha256:${hash.digest('hex')}`;
}

/** The inventory holds the compiler manifest (upstream: "Require the supported binary compiler manifest"). Pure. */
export function hasCompilerManifest(inventory: readonly string[]): boolean {
  return inventory.includes(GBUILD_MANIFEST_V2_FILE);
}

/** The two inventories of one acquisition are identical (upstream: "Verify the build inventory did not change after reading compiler metadata"). Pure. */
export function isSameInventory(pre: readonly string[], post: readonly string[]): boolean {
  return pre.length === post.length && pre.every((entry, i) => entry === post[i]);
}

/**
 * The upstream texts of the acquisition's failures, each `immutable build snapshot is
 * inconsistent: ...` with the build URL (upstream `AcquireBuildSnapshot`). Pure.
 */
export const buildSnapshotErrors = {
  missingManifest: (url: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: immutable build ${JSON.stringify(url)} is missing ${GBUILD_MANIFEST_V2_FILE}`,
  manifestTooLarge: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${GBUILD_MANIFEST_V2_FILE} in ${JSON.stringify(url)} exceeds its bounded acquisition budget: ${cause}`,
  manifestDisappeared: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${GBUILD_MANIFEST_V2_FILE} disappeared from ${JSON.stringify(url)} after inventory: ${cause}`,
  inventoryDisappeared: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: build inventory disappeared from ${JSON.stringify(url)} while acquiring it: ${cause}`,
  inventoryChanged: (url: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: build inventory changed while acquiring ${JSON.stringify(url)}`,
  manifestGrew: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${GBUILD_MANIFEST_V2_FILE} grew beyond its bounded acquisition budget in ${JSON.stringify(url)}: ${cause}`,
  manifestDisappearedAfterVerification: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${GBUILD_MANIFEST_V2_FILE} disappeared from ${JSON.stringify(url)} after inventory verification: ${cause}`,
  manifestChanged: (url: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${GBUILD_MANIFEST_V2_FILE} changed while acquiring ${JSON.stringify(url)}`,
} as const;

/**
 * The acquisition failure as the LPXGD reports it (upstream `ResolveWorkloads`: "%w for model %q
 * build %q: %w" with `ErrBuildSnapshotAcquisition`), naming the component and its `lpx.buildId`
 * as written. Pure.
 */
export function buildSnapshotAcquisitionError(component: string, buildId: string, cause: string): string {
  return `${BUILD_SNAPSHOT_ACQUISITION} for model ${JSON.stringify(component)} build ${JSON.stringify(buildId)}: ${cause}`;
}

/**
 * One build's acquired snapshot as the shell read it: its content id and the normalized build
 * its compiler manifest decodes to (`manifest-v2.ts` `normalizeGbuildManifestV2`); or why it
 * could not be acquired, decoded or normalized. The shell's acquisition always sets `build`
 * (functions/reconcile/lpx-build.ts); it stays optional for readings made without a manifest.
 */
export type BuildSnapshotReading =
  | { readonly ok: true; readonly contentId: string; readonly build?: LpxBuild }
  | { readonly ok: false; readonly error: string };

/** `{scheduling.lpu.nvidia.com/compiler-snapshot-digest: <id>}` for a component whose build snapshot is known, else nothing (lpx.md §3.2). Pure. */
export function snapshotAnnotation(snapshotDigests: ReadonlyMap<string, string>, component: string): Record<string, string> {
  const digest = snapshotDigests.get(component);
  return digest === undefined ? {} : { [ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST]: digest };
}
