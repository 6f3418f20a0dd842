/**
 * The build snapshot acquisition against real files in a temporary directory (upstream
 * build_snapshot_test.go writes its builds the same way), and against a store whose contents
 * change between reads (upstream's fenced-acquisition cases).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSnapshotContentId, type LpxBuild } from '../../shared/domain/index.js';
import { normalizeGbuildManifestV2 } from '../../shared/domain/lpx/manifest-v2.js';
import { TransientError } from '../../shared/runtime/index.js';
import {
  EXECUTION_V1_BYTES,
  EXECUTION_V1_FILE,
  aV2CompilerFixture,
  deploymentV1Of,
  encodeGbuildDeploymentV1,
  encodeGbuildManifestV2,
} from '../../test/support/gbuild-manifest.js';
import { BuildReadError, acquireBuildSnapshot, fileBuildStore, type BuildStore } from './lpx-build.js';

const clock = () => new Date('2026-12-01T10:00:00Z');
const MANIFEST = 'manifest.v2.capnp.bin';
/** A real compiler manifest (upstream's newV2CompilerFixture, encoded with capnp-es). */
const payload = encodeGbuildManifestV2(aV2CompilerFixture());

/** The build the payload normalizes to at `url` (the decoder's own tests hold its values). */
function buildOf(url: string, bytes: Uint8Array = payload): LpxBuild {
  const normalized = normalizeGbuildManifestV2(url, bytes);
  if (!normalized.ok) throw new Error(normalized.error);
  return normalized.build;
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'lpx-build-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writeBuild(dir: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), content);
  }
}

describe('acquireBuildSnapshot on the filesystem (upstream TestAcquireBuildSnapshotTracksLocalContent)', () => {
  it('"Inventory every file beneath the build root, including metadata, artifacts and weights"', async () => {
    const build = path.join(root, 'build-id');
    await writeBuild(build, { [MANIFEST]: payload, 'extra-metadata.json': '{}', 'part-0/chip-0.gas': '{}', 'weights.bin': '{}' });
    expect((await fileBuildStore().list(`file://${build}`)).sort()).toEqual(['extra-metadata.json', MANIFEST, 'part-0/chip-0.gas', 'weights.bin']);
  });

  it('acquires the exact manifest bytes; the identity follows payload paths and manifest bytes, not the build\'s location', async () => {
    const build = path.join(root, 'build-id');
    await writeBuild(build, { [MANIFEST]: payload, 'part-0/chip-0.gas': 'x' });
    const first = await acquireBuildSnapshot(fileBuildStore(), `file://${build}`, clock);
    expect(first).toEqual({ ok: true, contentId: buildSnapshotContentId([MANIFEST, 'part-0/chip-0.gas'], payload), build: buildOf(`file://${build}`) });

    // The same content elsewhere has the same identity ("independently of build locator"); its build path is where it was read.
    const copy = path.join(root, 'copy');
    await writeBuild(copy, { [MANIFEST]: payload, 'part-0/chip-0.gas': 'other bytes are not read' });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${copy}`, clock)).toEqual({ ok: true, contentId: first.ok ? first.contentId : '', build: buildOf(`file://${copy}`) });

    await rename(path.join(build, 'part-0/chip-0.gas'), path.join(build, 'part-0/chip-1.gas'));
    const second = await acquireBuildSnapshot(fileBuildStore(), `file://${build}`, clock);
    expect(second.ok && second.contentId).not.toBe(first.ok && first.contentId);
  });

  it('"Reject malformed compiler input after successful acquisition": bytes that are no Cap\'n Proto message fail with "parsing manifest.v2.capnp.bin"', async () => {
    const build = path.join(root, 'build-id');
    await writeBuild(build, { [MANIFEST]: 'invalid' });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${build}`, clock)).toEqual({ ok: false, error: `parsing ${MANIFEST}: message is 7 bytes, shorter than a segment table` });
  });

  it('a manifest that decodes but breaks upstream\'s rules fails with upstream\'s text (buildFromGbuildManifestV2)', async () => {
    const build = path.join(root, 'build-id');
    await writeBuild(build, { [MANIFEST]: encodeGbuildManifestV2(aV2CompilerFixture({ numLpuNodes: 3 })) });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${build}`, clock)).toEqual({ ok: false, error: `${MANIFEST} LPU partitions use 4 LPU nodes, want deployment.numLpuNodes 3` });
  });

  it('a symlinked build root is resolved; a child symlink is listed, not followed', async () => {
    const build = path.join(root, 'real');
    await writeBuild(build, { [MANIFEST]: payload });
    await mkdir(path.join(root, 'elsewhere/deep'), { recursive: true });
    await symlink(path.join(root, 'elsewhere'), path.join(build, 'link'));
    await symlink(build, path.join(root, 'alias'));
    expect((await fileBuildStore().list(`file://${path.join(root, 'alias')}`)).sort()).toEqual(['link', MANIFEST]);
  });
});

describe('acquireBuildSnapshot failures are data, with upstream\'s texts', () => {
  it('"Require revision-2 binary compiler metadata without fallback" (TestAcquireBuildSnapshotRejectsLegacyCompilerMetadata)', async () => {
    await writeBuild(root, { 'manifest.capnp.bin': '{}', 'allocation_metadata.json': '{}', 'compile_summary.json': '{}', 'gas_program_layout.json': '{}' });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({
      ok: false,
      error: `immutable build snapshot is inconsistent: immutable build "file://${root}": missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin`,
    });
  });

  it('an absent build directory', async () => {
    const result = await acquireBuildSnapshot(fileBuildStore(), `file://${root}/absent`, clock);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(new RegExp(`^resolving build directory "${root}/absent": ENOENT`)) });
  });

  it('a build root that is a file', async () => {
    await writeFile(path.join(root, 'file'), 'x');
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}/file`, clock)).toEqual({ ok: false, error: `build root "${root}/file" is not a directory` });
  });

  it('"Open nonblocking so a FIFO cannot stall before file-type validation"', async () => {
    execFileSync('mkfifo', [path.join(root, MANIFEST)]);
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({ ok: false, error: `reading file://${root}/${MANIFEST}: not a regular file` });
  });
});

/** A store serving scripted inventories and manifest reads, in call order. */
function scriptedStore(lists: readonly (string[] | Error)[], reads: readonly (Uint8Array | Error)[]): BuildStore {
  let listCall = 0;
  let readCall = 0;
  return {
    list: async () => {
      const next = lists[Math.min(listCall++, lists.length - 1)];
      if (next instanceof Error) throw next;
      return [...(next ?? [])];
    },
    read: async () => {
      const next = reads[Math.min(readCall++, reads.length - 1)];
      if (next instanceof Error || next === undefined) throw next ?? new Error('no read');
      return next;
    },
  };
}

describe('acquireBuildSnapshot fences (upstream build_snapshot.go)', () => {
  const url = 'file:///models/b';
  it.each([
    { name: '"Verify the build inventory did not change after reading compiler metadata"', store: scriptedStore([[MANIFEST], [MANIFEST, 'new.gas']], [payload]), error: 'immutable build snapshot is inconsistent: build inventory changed while acquiring "file:///models/b"' },
    { name: '"Reject compiler metadata that changes during acquisition"', store: scriptedStore([[MANIFEST]], [payload, encodeGbuildManifestV2(aV2CompilerFixture({ numLpuNodes: 5 }))]), error: 'immutable build snapshot is inconsistent: compiler metadata manifest.v2.capnp.bin changed while acquiring "file:///models/b"' },
    { name: 'the manifest disappears after the inventory', store: scriptedStore([[MANIFEST]], [new BuildReadError('reading file:///models/b/manifest.v2.capnp.bin: ENOENT', 'absent', false)]), error: 'immutable build snapshot is inconsistent: compiler metadata manifest.v2.capnp.bin disappeared from "file:///models/b" after inventory: reading file:///models/b/manifest.v2.capnp.bin: ENOENT' },
    { name: 'the manifest exceeds the metadata budget', store: scriptedStore([[MANIFEST]], [new BuildReadError('file:///models/b/manifest.v2.capnp.bin is 104857601 bytes, limit is 104857600', 'tooLarge', false)]), error: 'immutable build snapshot is inconsistent: compiler metadata manifest.v2.capnp.bin in "file:///models/b" exceeds its bounded acquisition budget: file:///models/b/manifest.v2.capnp.bin is 104857601 bytes, limit is 104857600' },
    { name: 'the inventory disappears before its verification', store: scriptedStore([[MANIFEST], new BuildReadError('resolving build directory "/models/b": ENOENT', 'absent', false)], [payload]), error: 'immutable build snapshot is inconsistent: build inventory disappeared from "file:///models/b" while acquiring it: resolving build directory "/models/b": ENOENT' },
    { name: 'an inventory listing a path twice', store: scriptedStore([[MANIFEST, `./${MANIFEST}`]], [payload]), error: 'build inventory repeats relative path "manifest.v2.capnp.bin"' },
  ])('$name', async ({ store, error }) => {
    expect(await acquireBuildSnapshot(store, url, clock)).toEqual({ ok: false, error });
  });

  it('a failure a retry may fix is thrown as TransientError (the broker retries with its bounded backoff)', async () => {
    const store = scriptedStore([new BuildReadError('listing build files under "/models/b": EMFILE: too many open files', 'other', true)], [payload]);
    await expect(acquireBuildSnapshot(store, url, clock)).rejects.toBeInstanceOf(TransientError);
  });

  it('"Bound all metadata RPCs for one snapshot acquisition": past the 30 s budget, TransientError', async () => {
    let t = 0;
    const advancing = () => new Date(Date.parse('2026-12-01T10:00:00Z') + (t++) * 20_000);
    await expect(acquireBuildSnapshot(scriptedStore([[MANIFEST]], [payload]), url, advancing)).rejects.toThrow(/context deadline exceeded/);
  });
});

describe('acquireBuildSnapshot selects exactly one contract (upstream model_deployment_v1_test.go, selectBuildContract)', () => {
  const DEPLOYMENT = 'deployment.v1.capnp.bin';
  /** The split contract with the same facts as the manifest payload (upstream TestDeploymentContractPreservesNormalizedBuild). */
  const deployment = encodeGbuildDeploymentV1(deploymentV1Of(aV2CompilerFixture()));

  it('the legacy contract alone: manifest.v2.capnp.bin is read, fenced and named in the identity', async () => {
    await writeBuild(root, { [MANIFEST]: payload, 'part-7/chip-0.gas': 'x' });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({
      ok: true,
      contentId: buildSnapshotContentId([MANIFEST, 'part-7/chip-0.gas'], payload, MANIFEST),
      build: buildOf(`file://${root}`),
    });
  });

  it('"Acquire and normalize exactly the scheduler contract" (TestDeploymentContractAcquisitionAndRuntimePath): the split contract alone gives the same build, its identity over deployment.v1.capnp.bin', async () => {
    await writeBuild(root, { [DEPLOYMENT]: deployment, [EXECUTION_V1_FILE]: EXECUTION_V1_BYTES });
    const first = await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock);
    expect(first).toEqual({ ok: true, contentId: buildSnapshotContentId([DEPLOYMENT, EXECUTION_V1_FILE], deployment, DEPLOYMENT), build: buildOf(`file://${root}`) });

    // "Bind exact deployment bytes to snapshot identity": another build id changes only the deployment bytes.
    await writeFile(path.join(root, DEPLOYMENT), encodeGbuildDeploymentV1(deploymentV1Of(aV2CompilerFixture(), { buildId: 'different-build' })));
    const second = await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock);
    expect(second.ok && second.contentId).not.toBe(first.ok && first.contentId);
  });

  it('the split contract is validated against the acquired inventory: its execution file must be listed (validateExecutionReference)', async () => {
    await writeBuild(root, { [DEPLOYMENT]: deployment });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({ ok: false, error: `execution.path "${EXECUTION_V1_FILE}" is missing from build inventory` });
  });

  it('"Reject the selected deployment during normalization" (TestDeploymentContractRejectsCorruptNewOnly)', async () => {
    await writeBuild(root, { [DEPLOYMENT]: 'corrupt' });
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({ ok: false, error: `parsing ${DEPLOYMENT}: message is 7 bytes, shorter than a segment table` });
  });

  it.each([
    { name: 'corrupt file', entry: async (at: string) => writeFile(at, 'corrupt') },
    { name: 'directory', entry: async (at: string) => mkdir(at) },
  ])('"Reject ambiguous publication before any legacy decoder can accept it" (TestDeploymentContractCorruptionNeverUsesLegacy): a split entry that is a $name beside a valid legacy manifest', async ({ entry }) => {
    await writeBuild(root, { [MANIFEST]: payload });
    await entry(path.join(root, DEPLOYMENT));
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({
      ok: false,
      error: `immutable build snapshot is inconsistent: immutable build "file://${root}": ambiguous build contracts: both ${MANIFEST} and ${DEPLOYMENT}`,
    });
  });

  it('"Reject changes between the two bounded reads" (TestDeploymentContractFencesRemoteBytes): the split file is the one fenced', async () => {
    const store = scriptedStore([[DEPLOYMENT, EXECUTION_V1_FILE]], [Buffer.from('first'), Buffer.from('second')]);
    expect(await acquireBuildSnapshot(store, 'gs://bucket/registry/model/build', clock)).toEqual({
      ok: false,
      error: 'immutable build snapshot is inconsistent: compiler metadata deployment.v1.capnp.bin changed while acquiring "gs://bucket/registry/model/build"',
    });
  });

  it('"Reject oversized metadata before a decoder or runtime sees it" (TestDeploymentContractBoundsAcquisition: a sparse deployment file one byte beyond the budget)', async () => {
    await writeFile(path.join(root, DEPLOYMENT), '');
    await truncate(path.join(root, DEPLOYMENT), 100 * 1024 * 1024 + 1);
    expect(await acquireBuildSnapshot(fileBuildStore(), `file://${root}`, clock)).toEqual({
      ok: false,
      error: `immutable build snapshot is inconsistent: compiler metadata ${DEPLOYMENT} in "file://${root}" exceeds its bounded acquisition budget: file://${root}/${DEPLOYMENT} is 104857601 bytes, limit is 104857600`,
    });
  });
});
