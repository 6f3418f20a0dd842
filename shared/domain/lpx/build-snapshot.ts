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
 * (`AcquireBuildSnapshot(id)` reads `manifest.v2.capnp.bin` with size limits); the choice between
 * the two compiler contracts (upstream `model_deployment_v1.go` `selectBuildContract`,
 * `buildContractFormat.filename`; `TestDeploymentContractSelectsOneFormat`). The acquisition's
 * reads are the shell's (functions/reconcile/lpx-build.ts); this module holds its pure rules.
 * Decoding the selected contract (upstream `normalizeBuildSnapshot`) is `build-contract.ts`'s.
 * @module
 */
import { createHash } from 'node:crypto';
import path from 'node:path/posix';
import { ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST } from '../../api/index.js';
import type { LpxBuild } from './build.js';

/** The legacy compiler manifest (upstream `gbuildManifestV2CapnpFile`). */
export const GBUILD_MANIFEST_V2_FILE = 'manifest.v2.capnp.bin';
/** The scheduler half of upstream's split build contract (upstream `gbuildDeploymentV1CapnpFile`). */
export const GBUILD_DEPLOYMENT_V1_FILE = 'deployment.v1.capnp.bin';
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

/** The compiler contract a build publishes (upstream `buildContractFormat`): the legacy manifest or the split deployment. */
export type BuildContractFormat = 'manifestV2' | 'deploymentV1';

export type BuildContractSelection =
  | { readonly ok: true; readonly format: BuildContractFormat; readonly file: string }
  | { readonly ok: false; readonly error: string };

/**
 * selectBuildContract (upstream `selectBuildContract` + `buildContractFormat.filename`): exactly
 * one entry point of the canonical inventory, with no preference or fallback: only
 * `manifest.v2.capnp.bin` is `manifestV2`, only `deployment.v1.capnp.bin` is `deploymentV1`; both
 * are "ambiguous build contracts: both manifest.v2.capnp.bin and deployment.v1.capnp.bin",
 * neither is "missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin".
 * In: the canonical inventory ({@link normalizeBuildInventory}). Out: the format and its file. Pure.
 */
export function selectBuildContract(inventory: readonly string[]): BuildContractSelection {
  const legacy = inventory.includes(GBUILD_MANIFEST_V2_FILE);
  const split = inventory.includes(GBUILD_DEPLOYMENT_V1_FILE);
  if (legacy && split) return { ok: false, error: `ambiguous build contracts: both ${GBUILD_MANIFEST_V2_FILE} and ${GBUILD_DEPLOYMENT_V1_FILE}` };
  if (legacy) return { ok: true, format: 'manifestV2', file: GBUILD_MANIFEST_V2_FILE };
  if (split) return { ok: true, format: 'deploymentV1', file: GBUILD_DEPLOYMENT_V1_FILE };
  return { ok: false, error: `missing build contract: require ${GBUILD_MANIFEST_V2_FILE} or ${GBUILD_DEPLOYMENT_V1_FILE}` };
}

/**
 * buildSnapshotContentId: the snapshot identity, `sha256:<hex>` over length-prefixed fields
 * (`<len>:<bytes>` each): the identity version, "inventory", the path count, then per path
 * "inventory-path" and the path, then "compiler-metadata", "1", "metadata-path", the selected
 * contract file, "metadata-bytes" and its bytes. Any change to a listed path or to those bytes
 * changes it; the build's location does not (upstream: "Publish the canonical compiler
 * snapshot identity independently of build locator").
 * In: the canonical inventory ({@link normalizeBuildInventory}), the contract file's bytes and
 * its name ({@link selectBuildContract}; default `manifest.v2.capnp.bin`). Pure.
 */
export function buildSnapshotContentId(inventory: readonly string[], manifestBytes: Uint8Array, metadataPath: string = GBUILD_MANIFEST_V2_FILE): string {
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
  field(metadataPath);
  field('metadata-bytes');
  field(manifestBytes);
  return `sha256:${hash.digest('hex')}`;
}

/** The two inventories of one acquisition are identical (upstream: "Verify the build inventory did not change after reading compiler metadata"). Pure. */
export function isSameInventory(pre: readonly string[], post: readonly string[]): boolean {
  return pre.length === post.length && pre.every((entry, i) => entry === post[i]);
}

/**
 * The upstream texts of the acquisition's failures, each `immutable build snapshot is
 * inconsistent: ...` with the build URL and, where it is read, the selected contract file
 * (upstream `AcquireBuildSnapshot`). Pure.
 */
export const buildSnapshotErrors = {
  noBuildContract: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: immutable build ${JSON.stringify(url)}: ${cause}`,
  manifestTooLarge: (url: string, file: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${file} in ${JSON.stringify(url)} exceeds its bounded acquisition budget: ${cause}`,
  manifestDisappeared: (url: string, file: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${file} disappeared from ${JSON.stringify(url)} after inventory: ${cause}`,
  inventoryDisappeared: (url: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: build inventory disappeared from ${JSON.stringify(url)} while acquiring it: ${cause}`,
  inventoryChanged: (url: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: build inventory changed while acquiring ${JSON.stringify(url)}`,
  manifestGrew: (url: string, file: string, cause: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${file} grew beyond its bounded acquisition budget in ${JSON.stringify(url)}: ${cause}`,
  manifestDisappearedAfterVerification: (url: string, file: string, cause: string) =>
    `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${file} disappeared from ${JSON.stringify(url)} after inventory verification: ${cause}`,
  manifestChanged: (url: string, file: string) => `${BUILD_SNAPSHOT_INCONSISTENT}: compiler metadata ${file} changed while acquiring ${JSON.stringify(url)}`,
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
 * its selected contract decodes to (`build-contract.ts` `normalizeBuildSnapshot`); or why it
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
