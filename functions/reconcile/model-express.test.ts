/**
 * The Model Express client against a real gRPC server on loopback (grpc-js), serving
 * `model_express.model.ModelService` with scripted answers, as the LPX reconcile's `gs://` builds
 * meet it. Upstream's texts are from `internal/dynamo/lpx/model_registry.go` and
 * `model_express.go`.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshotContentId } from '../../shared/domain/index.js';
import { acquireBuildSnapshot } from './lpx-build.js';
import { MODEL_STATUS, codec, createModelExpressClient, modelExpressBuildStore, parseModelExpressUrl, type FileChunk, type ModelExpressClient, type ModelStatusUpdate } from './model-express.js';

interface Script {
  download: (modelName: string) => ModelStatusUpdate[] | grpc.ServiceError;
  files: (modelName: string) => string[];
  chunks: (modelName: string, path: string) => Partial<FileChunk>[];
}
/** What the test Model Express answers; each test sets its own. */
let script: Script;

const service: grpc.ServiceDefinition = {
  EnsureModelDownloaded: { path: '/model_express.model.ModelService/EnsureModelDownloaded', requestStream: false, responseStream: true, ...serverCodec('ModelDownloadRequest', 'ModelStatusUpdate') },
  ListModelFiles: { path: '/model_express.model.ModelService/ListModelFiles', requestStream: false, responseStream: false, ...serverCodec('ModelFilesRequest', 'ModelFileList') },
  StreamModelFiles: { path: '/model_express.model.ModelService/StreamModelFiles', requestStream: false, responseStream: true, ...serverCodec('ModelFilesRequest', 'FileChunk') },
};
function serverCodec(request: string, response: string) {
  const req = codec<Record<string, unknown>>(request);
  const res = codec<Record<string, unknown>>(response);
  return { requestSerialize: req.serialize, requestDeserialize: req.deserialize, responseSerialize: res.serialize, responseDeserialize: res.deserialize };
}

let server: grpc.Server;
let client: ModelExpressClient;
const seen: { provider: unknown; modelName: unknown; paths?: unknown }[] = [];

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(service, {
    EnsureModelDownloaded: (call: grpc.ServerWritableStream<{ modelName: string; provider: number }, ModelStatusUpdate>) => {
      seen.push({ provider: call.request.provider, modelName: call.request.modelName });
      const answer = script.download(call.request.modelName);
      if (!Array.isArray(answer)) return call.emit('error', answer);
      for (const update of answer) call.write(update);
      return call.end();
    },
    ListModelFiles: (call: grpc.ServerUnaryCall<{ modelName: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      callback(null, { modelName: call.request.modelName, files: script.files(call.request.modelName).map((relativePath) => ({ relativePath, size: 1 })) });
    },
    StreamModelFiles: (call: grpc.ServerWritableStream<{ modelName: string; fileSelector?: { paths: string[] } }, FileChunk>) => {
      const path = call.request.fileSelector?.paths[0] ?? '';
      seen.push({ provider: undefined, modelName: call.request.modelName, paths: call.request.fileSelector?.paths });
      for (const chunk of script.chunks(call.request.modelName, path)) call.write({ relativePath: path, data: Buffer.alloc(0), offset: 0, totalSize: 0, isLastChunk: false, ...chunk });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error))));
  client = await createModelExpressClient(`http://127.0.0.1:${port}`);
});
afterAll(async () => {
  client.close();
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
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
    script = { download: () => answer, files: () => [], chunks: () => [] };
    seen.length = 0;
    expect(await client.ensureModelDownloaded(BUILD, 5_000)).toEqual(want);
    expect(seen[0]).toEqual({ provider: 2, modelName: BUILD });
  });

  it('a gRPC failure is the check\'s failure, with its status', async () => {
    script = { download: () => Object.assign(new Error('no such bucket'), { code: grpc.status.NOT_FOUND, details: 'no such bucket', metadata: new grpc.Metadata() }), files: () => [], chunks: () => [] };
    expect(await client.ensureModelDownloaded(BUILD, 5_000)).toMatchObject({ ok: false, error: expect.stringMatching(/^receive model express download status for "gs:\/\/bucket\/registry\/llama\/b1": 5 NOT_FOUND: no such bucket/) });
  });
});

describe('the gs:// build snapshot through ListModelFiles and StreamModelFiles (upstream readBuildFileBounded for gs)', () => {
  const manifest = Buffer.from('compiled LPX manifest v2, streamed');
  const inChunks = (data: Buffer, size: number): Partial<FileChunk>[] => {
    const out: Partial<FileChunk>[] = [];
    for (let offset = 0; offset < data.length; offset += size) out.push({ data: data.subarray(offset, offset + size), offset, totalSize: data.length, isLastChunk: offset + size >= data.length });
    return out;
  };

  it('acquires the streamed manifest in chunks, asking for that one path', async () => {
    script = { download: () => [], files: () => ['manifest.v2.capnp.bin', 'part-0/chip-0.gas'], chunks: () => inChunks(manifest, 7) };
    seen.length = 0;
    const snapshot = await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock);
    expect(snapshot).toEqual({ ok: true, contentId: buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-0.gas'], manifest) });
    expect(seen.map((s) => s.paths)).toEqual([['manifest.v2.capnp.bin'], ['manifest.v2.capnp.bin']]);
  });

  it.each([
    { name: 'no chunks', chunks: [], error: `Model Express returned no chunks for manifest.v2.capnp.bin from "${BUILD}"` },
    { name: 'no final chunk', chunks: [{ data: Buffer.from('ab'), offset: 0, totalSize: 4 }], error: `Model Express stream for manifest.v2.capnp.bin from "${BUILD}" ended before final chunk` },
    { name: 'an out-of-order chunk', chunks: [{ data: Buffer.from('ab'), offset: 0 }, { data: Buffer.from('cd'), offset: 3, isLastChunk: true, totalSize: 5 }], error: `received out-of-order chunk for manifest.v2.capnp.bin from "${BUILD}": offset 3, want 2` },
    { name: 'a final size that disagrees', chunks: [{ data: Buffer.from('ab'), offset: 0, isLastChunk: true, totalSize: 3 }], error: `received incomplete manifest.v2.capnp.bin from "${BUILD}": final size 2, want 3` },
    { name: 'a chunk after the final one', chunks: [{ data: Buffer.from('ab'), offset: 0, isLastChunk: true, totalSize: 2 }, { data: Buffer.from('c'), offset: 2 }], error: `received extra chunk for manifest.v2.capnp.bin from "${BUILD}" after final chunk` },
  ])('refuses a malformed stream: $name', async ({ chunks, error }) => {
    script = { download: () => [], files: () => ['manifest.v2.capnp.bin'], chunks: () => chunks };
    expect(await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock)).toEqual({ ok: false, error });
  });

  it('"Require the supported binary compiler manifest" in the listed inventory', async () => {
    script = { download: () => [], files: () => ['manifest.capnp.bin'], chunks: () => [] };
    expect(await acquireBuildSnapshot(modelExpressBuildStore(client, 5_000), BUILD, clock)).toEqual({ ok: false, error: `immutable build snapshot is inconsistent: immutable build "${BUILD}" is missing manifest.v2.capnp.bin` });
  });
});
