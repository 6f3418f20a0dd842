/**
 * The Model Express client against a real gRPC server on loopback (grpc-js), serving
 * `model_express.model.ModelService` with scripted answers, as the LPX reconcile's `gs://` builds
 * meet it. Upstream's texts are from `internal/dynamo/lpx/model_registry.go` and
 * `model_express.go`.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshotContentId } from '../../shared/domain/index.js';
import { normalizeGbuildManifestV2 } from '../../shared/domain/lpx/manifest-v2.js';
import { TransientError } from '../../shared/runtime/index.js';
import { EXECUTION_V1_FILE, aV3CompilerFixture, deploymentV1Of, encodeGbuildDeploymentV1, encodeGbuildManifestV2 } from '../../test/support/gbuild-manifest.js';
import { fileChunks, startTestModelExpress, type ModelExpressScript, type TestModelExpress } from '../../test/support/model-express.js';
import { acquireBuildSnapshot, modelExpressBuildStore } from './lpx-build.js';
import { MODEL_STATUS, createModelExpressClient, parseModelExpressUrl, type FileChunk, type ModelExpressClient, type ModelStatusUpdate } from './model-express.js';

let mx: TestModelExpress;
let client: ModelExpressClient;
/** What the test Model Express answers; each test sets its own. */
const setScript = (script: ModelExpressScript) => {
  mx.script = script;
  mx.requests.length = 0;
};

beforeAll(async () => {
  mx = await startTestModelExpress({ download: () => [], files: () => [], chunks: () => [] });
  client = await createModelExpressClient(mx.url);
});
afterAll(async () => {
  client.close();
  await mx.stop();
});

const BUILD = 'gs://bucket/registry/llama/b1';
const clock = () => new Date('2026-12-01T10:00:00Z');

describe('parseModelExpressUrl (upstream NewModelExpressClient)', () => {
  it.each([
    { raw: 'http://model-express.dynamo-system:8001', want: { ok: true, target: 'model-express.dynamo-system:8001', isTls: false } },
    { raw: 'https://mx.example:443/', want: { ok: true, target: 'mx.example:443', isTls: true } },
    { raw: 'dns:///model-express:8001', want: { ok: true, target: 'dns:///model-express:8001', isTls: false } },
    { raw: 'http://mx:8001/v1', want: { ok: false, error: 'ModelExpress URL "http://mx:8001/v1" must not include a path' } },
    { raw: 'http://mx:8001?x=1', want: { ok: false, error: 'ModelExpress URL "http://mx:8001?x=1" must not include query or fragment' } },
  ])('$raw', ({ raw, want }) => {
    expect(parseModelExpressUrl(raw)).toEqual(want);
  });
});

describe('ensureModelDownloaded: "calls EnsureModelDownloaded{ModelName: url, Provider: GCS} and reads the first stream message" (lpx.md §4)', () => {
  const update = (status: number, message = ''): ModelStatusUpdate => ({ modelName: BUILD, status, message });
  it.each([
    { name: 'DOWNLOADED: true', answer: [update(MODEL_STATUS.DOWNLOADED)], want: { ok: true, isDownloaded: true } },
    { name: 'DOWNLOADING: false (later messages are not read)', answer: [update(MODEL_STATUS.DOWNLOADING), update(MODEL_STATUS.DOWNLOADED)], want: { ok: true, isDownloaded: false } },
    { name: 'ERROR: "model express download failed for %q: %s"', answer: [update(MODEL_STATUS.ERROR, 'bucket not found')], want: { ok: false, error: `model express download failed for "${BUILD}": bucket not found` } },
    { name: 'ERROR without a message', answer: [update(MODEL_STATUS.ERROR)], want: { ok: false, error: `model express download failed for "${BUILD}": model express reported download error` } },
    { name: 'another status', answer: [update(7)], want: { ok: false, error: `model express returned unexpected status 7 for "${BUILD}"` } },
    { name: 'no message', answer: [], want: { ok: false, error: `model express returned no status for "${BUILD}"` } },
  ])('$name', async ({ answer, want }) => {
    setScript({ download: () => answer, files: () => [], chunks: () => [] });
    expect(await client.ensureModelDownloaded(BUILD, 5_000)).toEqual(want);
    expect(mx.requests).toEqual([{ rpc: 'EnsureModelDownloaded', provider: 2, modelName: BUILD }]);
  });

  it('a gRPC failure is the check\'s failure, with its status', async () => {
    setScript({ download: () => Object.assign(new Error('no such bucket'), { code: grpc.status.NOT_FOUND, details: 'no such bucket', metadata: new grpc.Metadata() }), files: () => [], chunks: () => [] });
    expect(await client.ensureModelDownloaded(BUILD, 5_000)).toMatchObject({ ok: false, error: expect.stringMatching(/^receive model express download status for "gs:\/\/bucket\/registry\/llama\/b1": 5 NOT_FOUND: no such bucket/) });
  });
});

describe('the gs:// build snapshot through ListModelFiles and StreamModelFiles (upstream readBuildFileBounded for gs)', () => {
  // A real compiler manifest (upstream's newV3CompilerFixture), streamed in 7-byte chunks.
  const manifest = encodeGbuildManifestV2(aV3CompilerFixture());
  it('acquires the streamed manifest in chunks, asking for that one path, and decodes it', async () => {
    setScript({ download: () => [], files: () => ['manifest.v2.capnp.bin', 'part-1/chip-0.gas'], chunks: () => fileChunks(manifest, 7) });
    const snapshot = await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock);
    const normalized = normalizeGbuildManifestV2(BUILD, manifest);
    expect(normalized.ok).toBe(true);
    expect(snapshot).toEqual({ ok: true, contentId: buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-1/chip-0.gas'], manifest), build: normalized.ok ? normalized.build : undefined });
    expect(snapshot.ok && snapshot.build?.path).toBe(BUILD);
    // Listed, read, listed and read again (the fences), all for provider GCS and this build.
    expect(mx.requests).toEqual([
      { rpc: 'ListModelFiles', modelName: BUILD, provider: 2 },
      { rpc: 'StreamModelFiles', modelName: BUILD, provider: 2, paths: ['manifest.v2.capnp.bin'] },
      { rpc: 'ListModelFiles', modelName: BUILD, provider: 2 },
      { rpc: 'StreamModelFiles', modelName: BUILD, provider: 2, paths: ['manifest.v2.capnp.bin'] },
    ]);
  });

  it.each([
    { name: 'no chunks', chunks: [], error: `Model Express returned no chunks for manifest.v2.capnp.bin from "${BUILD}"` },
    { name: 'no final chunk', chunks: [{ data: Buffer.from('ab'), offset: 0, totalSize: 4 }], error: `Model Express stream for manifest.v2.capnp.bin from "${BUILD}" ended before final chunk` },
    { name: 'an out-of-order chunk', chunks: [{ data: Buffer.from('ab'), offset: 0 }, { data: Buffer.from('cd'), offset: 3, isLastChunk: true, totalSize: 5 }], error: `received out-of-order chunk for manifest.v2.capnp.bin from "${BUILD}": offset 3, want 2` },
    { name: 'a final size that disagrees', chunks: [{ data: Buffer.from('ab'), offset: 0, isLastChunk: true, totalSize: 3 }], error: `received incomplete manifest.v2.capnp.bin from "${BUILD}": final size 2, want 3` },
    { name: 'a chunk after the final one', chunks: [{ data: Buffer.from('ab'), offset: 0, isLastChunk: true, totalSize: 2 }, { data: Buffer.from('c'), offset: 2 }], error: `received extra chunk for manifest.v2.capnp.bin from "${BUILD}" after final chunk` },
  ])('refuses a malformed stream: $name', async ({ chunks, error }) => {
    setScript({ download: () => [], files: () => ['manifest.v2.capnp.bin'], chunks: () => chunks as Partial<FileChunk>[] });
    expect(await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock)).toEqual({ ok: false, error });
  });

  it('a split deployment.v1 build: only that file is streamed, twice, and decoded to the build of the equivalent manifest', async () => {
    const deployment = encodeGbuildDeploymentV1(deploymentV1Of(aV3CompilerFixture()));
    setScript({ download: () => [], files: () => ['deployment.v1.capnp.bin', EXECUTION_V1_FILE], chunks: () => fileChunks(deployment, 7) });
    const snapshot = await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock);
    const legacy = normalizeGbuildManifestV2(BUILD, manifest);
    expect(snapshot).toEqual({ ok: true, contentId: buildSnapshotContentId(['deployment.v1.capnp.bin', EXECUTION_V1_FILE], deployment, 'deployment.v1.capnp.bin'), build: legacy.ok ? legacy.build : undefined });
    expect(mx.requests.filter((r) => r.rpc === 'StreamModelFiles').map((r) => r.paths)).toEqual([['deployment.v1.capnp.bin'], ['deployment.v1.capnp.bin']]);
  });

  it('"Reject changes between the two bounded reads" (upstream TestDeploymentContractFencesRemoteBytes): the split file changes between its reads', async () => {
    let call = 0;
    setScript({ download: () => [], files: () => ['deployment.v1.capnp.bin', EXECUTION_V1_FILE], chunks: () => fileChunks(Buffer.from(call++ === 0 ? 'first' : 'second'), 7) });
    expect(await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock)).toEqual({
      ok: false,
      error: `immutable build snapshot is inconsistent: compiler metadata deployment.v1.capnp.bin changed while acquiring "${BUILD}"`,
    });
    // "require.Len(t, client.listRequests, 2); require.Len(t, client.filesRequests, 2)", each for the deployment file only.
    expect(mx.requests.map((r) => [r.rpc, r.paths])).toEqual([
      ['ListModelFiles', undefined],
      ['StreamModelFiles', ['deployment.v1.capnp.bin']],
      ['ListModelFiles', undefined],
      ['StreamModelFiles', ['deployment.v1.capnp.bin']],
    ]);
  });

  it('"Require the supported binary compiler manifest" in the listed inventory', async () => {
    setScript({ download: () => [], files: () => ['manifest.capnp.bin'], chunks: () => [] });
    expect(await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock)).toEqual({ ok: false, error: `immutable build snapshot is inconsistent: immutable build "${BUILD}": missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin` });
  });
});

describe('an unreachable Model Express (a closed loopback port)', () => {
  it('a download check fails with the transport\'s status; a snapshot read is a TransientError the broker retries', async () => {
    const gone = await startTestModelExpress({ download: () => [], files: () => [], chunks: () => [] });
    await gone.stop();
    const unreachable = await createModelExpressClient(gone.url);
    try {
      expect(await unreachable.ensureModelDownloaded(BUILD, 2_000)).toMatchObject({ ok: false, error: expect.stringMatching(/^receive model express download status for "gs:\/\/bucket\/registry\/llama\/b1": 14 UNAVAILABLE/) });
      await expect(acquireBuildSnapshot(modelExpressBuildStore(unreachable, 2_000), BUILD, clock)).rejects.toBeInstanceOf(TransientError);
    } finally {
      unreachable.close();
    }
  });
});
