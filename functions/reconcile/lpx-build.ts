/**
 * Reads the immutable snapshot of a compiled LPX build: its inventory and its one compiler
 * contract (`manifest.v2.capnp.bin`, or the split `deployment.v1.capnp.bin`), fenced against
 * change while they are read, as upstream's `AcquireBuildSnapshot` does for `file://` builds.
 *
 * Reads: the build directory on this pod's filesystem (the model registry mounted where
 * `lpx.modelRegistryURL` or an absolute `lpx.buildId` says). Writes nothing.
 * Sequence (upstream `build_snapshot.go`): list the inventory; select exactly one contract file
 * (shared/domain `selectBuildContract`); read it (bounded); list again and require the same
 * inventory; read it again and require the same bytes; the content id over both, naming the
 * selected file (shared/domain `buildSnapshotContentId`); only the selected contract decoded and
 * normalized into the build (shared/domain `normalizeBuildSnapshot`, upstream
 * `normalizeBuildSnapshot`). One 30 s budget per build.
 * Failures: a definite one (absent, not a directory, not a regular file, too large, changed
 * while read, an invalid inventory, no or both contract files, a contract that does not decode
 * or normalize, with upstream's "parsing manifest.v2.capnp.bin: ..." or validation text) is returned as data,
 * reported by the LPXGD as `Ready=False` reason `Failed` and never retried by the broker (the
 * periodic resync reads the build again);
 * a passing one (too many open files, I/O error, the budget spent) throws {@link TransientError}
 * so the broker retries with its bounded backoff.
 * The same sequence reads a `gs://` build through Model Express (./model-express.ts
 * `modelExpressBuildStore`).
 * Source: upstream `internal/dynamo/lpx/build_snapshot.go`, `model_registry.go`
 * (`readBuildFileBounded`: opened non-blocking so a FIFO cannot stall, the opened file checked;
 * `localBuildFilePaths`: the root's symlinks resolved, child symlinks not followed, directories
 * walked one at a time, path bytes charged against the budget).
 * @module
 */
import { constants } from 'node:fs';
import { open, opendir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  BUILD_SNAPSHOT_TIMEOUT_MS,
  GBUILD_DEPLOYMENT_V1_FILE,
  GBUILD_MANIFEST_V2_FILE,
  MAX_BUILD_SNAPSHOT_METADATA_BYTES,
  buildSnapshotContentId,
  buildSnapshotErrors,
  isSameInventory,
  normalizeBuildInventory,
  selectBuildContract,
  type BuildSnapshotReading,
} from '../../shared/domain/index.js';
import { TransientError } from '../../shared/runtime/index.js';
import type { ModelExpressClient } from './model-express.js';

/** Why a build read failed: the member is definitely absent, it is over budget, or another cause. */
export type BuildReadFailure = 'absent' | 'tooLarge' | 'other';

/** A failed read of a build, classified as upstream classifies it (`isDefinitiveBuildMemberAbsence`, `errBuildFileTooLarge`). */
export class BuildReadError extends Error {
  override readonly name = 'BuildReadError';
  readonly failure: BuildReadFailure;
  /** True when a retry may pass (the error says nothing about the build itself). */
  readonly isTransient: boolean;

  constructor(message: string, failure: BuildReadFailure, isTransient: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.failure = failure;
    this.isTransient = isTransient;
  }
}

/** Where a build is read from: the filesystem for `file://` ({@link fileBuildStore}), Model Express for `gs://` (./model-express.ts). */
export interface BuildStore {
  /** Every file path under the build root, relative to it. Throws {@link BuildReadError}. */
  list(buildUrl: string): Promise<string[]>;
  /** One file's bytes, at most `maxBytes`. Throws {@link BuildReadError}. */
  read(buildUrl: string, relativePath: string, maxBytes: number): Promise<Uint8Array>;
}

/** The filesystem path of a `file://` build URL. */
function pathOf(buildUrl: string): string {
  return decodeURIComponent(new URL(buildUrl).pathname);
}

/** Error codes that say nothing about the build: a retry may pass. */
const TRANSIENT_CODES = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'EIO', 'EBUSY', 'EINTR', 'ETIMEDOUT', 'ENOMEM']);
/** Error codes that say the member is definitely not there (upstream: `os.ErrNotExist`, `ENOTDIR`). */
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR']);

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : '';
}
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
function classified(message: string, error: unknown): BuildReadError {
  const code = codeOf(error);
  return new BuildReadError(message, ABSENT_CODES.has(code) ? 'absent' : 'other', TRANSIENT_CODES.has(code), error);
}

/**
 * The filesystem store (upstream `localBuildFilePaths` and `readBuildFileBounded` for `file`).
 * `list`: the root's symlinks resolved ("resolving build directory %q: ..."), the root must be a
 * directory ("build root %q is not a directory"); directories are walked, not listed themselves
 * (except one named like a contract file, so that it counts for the contract selection and its
 * read fails, as upstream's `TestDeploymentContractCorruptionNeverUsesLegacy`), child symlinks are listed and not
 * followed; the path bytes are charged against the budget ("build inventory exceeds its %d-byte
 * path limit"); any other failure is "listing build files under %q: ...".
 * `read`: opened non-blocking; not a regular file, "reading <url>: not a regular file"; over the
 * limit, "<url> is %d bytes, limit is %d".
 */
export function fileBuildStore(): BuildStore {
  return {
    async list(buildUrl: string): Promise<string[]> {
      const root = pathOf(buildUrl);
      let resolved: string;
      try {
        resolved = await realpath(path.normalize(root));
      } catch (error) {
        throw classified(`resolving build directory ${JSON.stringify(root)}: ${messageOf(error)}`, error);
      }
      let info;
      try {
        info = await stat(resolved);
      } catch (error) {
        throw classified(`checking build directory ${JSON.stringify(root)}: ${messageOf(error)}`, error);
      }
      if (!info.isDirectory()) throw new BuildReadError(`build root ${JSON.stringify(root)} is not a directory`, 'other', false);
      const paths: string[] = [];
      const pending: string[] = [''];
      let remaining = MAX_BUILD_SNAPSHOT_METADATA_BYTES;
      while (pending.length > 0) {
        const relativeDir = pending.pop() ?? '';
        try {
          const dir = await opendir(path.join(resolved, relativeDir));
          for await (const entry of dir) {
            const relativePath = relativeDir === '' ? entry.name : path.join(relativeDir, entry.name);
            if (Buffer.byteLength(relativePath) > remaining) {
              throw new BuildReadError(`build inventory exceeds its ${MAX_BUILD_SNAPSHOT_METADATA_BYTES}-byte path limit`, 'tooLarge', false);
            }
            remaining -= Buffer.byteLength(relativePath);
            if (entry.isDirectory()) {
              pending.push(relativePath);
              if (relativePath !== GBUILD_MANIFEST_V2_FILE && relativePath !== GBUILD_DEPLOYMENT_V1_FILE) continue;
            }
            paths.push(relativePath.split(path.sep).join('/'));
          }
        } catch (error) {
          if (error instanceof BuildReadError) throw error;
          throw classified(`listing build files under ${JSON.stringify(root)}: ${messageOf(error)}`, error);
        }
      }
      return paths;
    },

    async read(buildUrl: string, relativePath: string, maxBytes: number): Promise<Uint8Array> {
      const filePath = path.join(pathOf(buildUrl), relativePath);
      const url = `file://${filePath}`;
      let handle;
      try {
        // Non-blocking, so a FIFO at the manifest's path cannot stall before its type is checked.
        handle = await open(filePath, constants.O_RDONLY | constants.O_NONBLOCK);
      } catch (error) {
        throw classified(`reading ${url}: ${messageOf(error)}`, error);
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw new BuildReadError(`reading ${url}: not a regular file`, 'other', false);
        if (info.size > maxBytes) throw new BuildReadError(`${url} is ${info.size} bytes, limit is ${maxBytes}`, 'tooLarge', false);
        const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
        let length = 0;
        for (;;) {
          const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
          if (bytesRead === 0) break;
          length += bytesRead;
          if (length > maxBytes) throw new BuildReadError(`${url} is larger than ${maxBytes} bytes`, 'tooLarge', false);
          if (length === buffer.length) break;
        }
        return buffer.subarray(0, length);
      } catch (error) {
        if (error instanceof BuildReadError) throw error;
        throw classified(`reading ${url}: ${messageOf(error)}`, error);
      } finally {
        await handle.close();
      }
    },
  };
}

/**
 * acquireBuildSnapshot: the snapshot of the build at `buildUrl`, as upstream's
 * `AcquireBuildSnapshot` (see the module docstring for the sequence and the failure texts).
 * In: the store for the URL's scheme, the build URL, the clock. Out: the content id and the
 * normalized build of the selected contract (its `path` the build URL), or the definite failure as data. Throws
 * {@link TransientError} on a failure a retry may fix, and when the 30 s budget is spent
 * ("acquiring <url>: context deadline exceeded").
 */
export async function acquireBuildSnapshot(store: BuildStore, buildUrl: string, now: () => Date): Promise<BuildSnapshotReading> {
  const deadline = now().getTime() + BUILD_SNAPSHOT_TIMEOUT_MS;
  const step = async <T>(run: () => Promise<T>): Promise<T> => {
    if (now().getTime() > deadline) throw new TransientError(`acquiring ${buildUrl}: context deadline exceeded`);
    try {
      return await run();
    } catch (error) {
      if (error instanceof BuildReadError && error.isTransient) throw new TransientError(error.message, { cause: error });
      throw error;
    }
  };
  const inventory = async (): Promise<readonly string[]> => {
    const normalized = normalizeBuildInventory(await store.list(buildUrl));
    if (!normalized.ok) throw new BuildReadError(normalized.error, 'other', false);
    return normalized.paths;
  };
  type FileTexts = { tooLarge: (u: string, f: string, c: string) => string; absent: (u: string, f: string, c: string) => string };
  const failure = (error: unknown, file: string, texts: FileTexts | undefined): BuildSnapshotReading => {
    if (!(error instanceof BuildReadError)) throw error;
    if (texts !== undefined && error.failure === 'tooLarge') return { ok: false, error: texts.tooLarge(buildUrl, file, error.message) };
    if (texts !== undefined && error.failure === 'absent') return { ok: false, error: texts.absent(buildUrl, file, error.message) };
    return { ok: false, error: error.message };
  };

  let pre: readonly string[];
  try {
    pre = await step(inventory);
  } catch (error) {
    return failure(error, '', undefined);
  }
  // Upstream: "Select the unique binary entry point before either bounded read."
  const contract = selectBuildContract(pre);
  if (!contract.ok) return { ok: false, error: buildSnapshotErrors.noBuildContract(buildUrl, contract.error) };
  const { file } = contract;
  const read = () => store.read(buildUrl, file, MAX_BUILD_SNAPSHOT_METADATA_BYTES);
  let first: Uint8Array;
  try {
    first = await step(read);
  } catch (error) {
    return failure(error, file, { tooLarge: buildSnapshotErrors.manifestTooLarge, absent: buildSnapshotErrors.manifestDisappeared });
  }
  let post: readonly string[];
  try {
    post = await step(inventory);
  } catch (error) {
    if (error instanceof BuildReadError && error.failure === 'absent') return { ok: false, error: buildSnapshotErrors.inventoryDisappeared(buildUrl, error.message) };
    return failure(error, file, undefined);
  }
  if (!isSameInventory(pre, post)) return { ok: false, error: buildSnapshotErrors.inventoryChanged(buildUrl) };
  let second: Uint8Array;
  try {
    second = await step(read);
  } catch (error) {
    return failure(error, file, { tooLarge: buildSnapshotErrors.manifestGrew, absent: buildSnapshotErrors.manifestDisappearedAfterVerification });
  }
  if (Buffer.compare(first, second) !== 0) return { ok: false, error: buildSnapshotErrors.manifestChanged(buildUrl, file) };
  // Upstream normalizeBuildSnapshot: only the selected contract's fenced bytes are decoded and normalized.
  // The decoders (capnp-es and the two contracts' schemas) load here, on an LPX build's first
  // read: a reconcile without lpx.enabled never evaluates them (issue 17 item 1), and its
  // snapshot leaves them out (scripts/build.mjs SNAPSHOT_SEPARATE).
  const { normalizeBuildSnapshot } = await import('../../shared/domain/lpx/build-contract.js');
  const normalized = normalizeBuildSnapshot(contract.format, buildUrl, first, pre);
  if (!normalized.ok) return { ok: false, error: normalized.error };
  return { ok: true, contentId: buildSnapshotContentId(pre, first, file), build: normalized.build };
}

/**
 * The `gs://` build store over Model Express (upstream `listBuildFiles` / `readBuildFileBounded`
 * for `gs`): the inventory from `ListModelFiles`, files from `StreamModelFiles`; the build URL is
 * the model name. Each call gets `timeoutMs`.
 */
export function modelExpressBuildStore(client: ModelExpressClient, timeoutMs: number): BuildStore {
  return {
    list: (buildUrl) => client.listModelFiles(buildUrl, timeoutMs),
    read: (buildUrl, relativePath, maxBytes) => client.readModelFile(buildUrl, relativePath, maxBytes, timeoutMs),
  };
}
