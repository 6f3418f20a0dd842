/**
 * A Model Express `model_express.model.ModelService` on loopback (a real grpc-js server) whose
 * answers a test scripts: what `EnsureModelDownloaded` streams, which files `ListModelFiles`
 * lists, which chunks `StreamModelFiles` streams. It records every request it gets. The messages
 * are the client's own definitions (functions/reconcile/model-express.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { codec, type FileChunk, type ModelStatusUpdate } from '../../functions/reconcile/model-express.js';

export interface ModelExpressScript {
  download: (modelName: string) => ModelStatusUpdate[] | grpc.ServiceError;
  files: (modelName: string) => string[];
  chunks: (modelName: string, path: string) => Partial<FileChunk>[];
}

export interface ModelExpressRequest {
  readonly rpc: 'EnsureModelDownloaded' | 'ListModelFiles' | 'StreamModelFiles';
  readonly modelName: string;
  readonly provider: number;
  readonly paths?: readonly string[];
}

export interface TestModelExpress {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  script: ModelExpressScript;
  readonly requests: ModelExpressRequest[];
  stop(): Promise<void>;
}

function serverCodec(request: string, response: string) {
  const req = codec<Record<string, unknown>>(request);
  const res = codec<Record<string, unknown>>(response);
  return { requestSerialize: req.serialize, requestDeserialize: req.deserialize, responseSerialize: res.serialize, responseDeserialize: res.deserialize };
}
const SERVICE = '/model_express.model.ModelService';
const definition: grpc.ServiceDefinition = {
  EnsureModelDownloaded: { path: `${SERVICE}/EnsureModelDownloaded`, requestStream: false, responseStream: true, ...serverCodec('ModelDownloadRequest', 'ModelStatusUpdate') },
  ListModelFiles: { path: `${SERVICE}/ListModelFiles`, requestStream: false, responseStream: false, ...serverCodec('ModelFilesRequest', 'ModelFileList') },
  StreamModelFiles: { path: `${SERVICE}/StreamModelFiles`, requestStream: false, responseStream: true, ...serverCodec('ModelFilesRequest', 'FileChunk') },
};

interface FilesRequest { modelName: string; provider: number; fileSelector?: { paths: string[] } }

/** Starts the server on a free loopback port. */
export async function startTestModelExpress(script: ModelExpressScript): Promise<TestModelExpress> {
  const server = new grpc.Server();
  const state: TestModelExpress = {
    url: '',
    script,
    requests: [],
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
  server.addService(definition, {
    EnsureModelDownloaded: (call: grpc.ServerWritableStream<{ modelName: string; provider: number }, ModelStatusUpdate>) => {
      state.requests.push({ rpc: 'EnsureModelDownloaded', modelName: call.request.modelName, provider: call.request.provider });
      const answer = state.script.download(call.request.modelName);
      if (!Array.isArray(answer)) {
        call.emit('error', answer);
        return;
      }
      for (const update of answer) call.write(update);
      call.end();
    },
    ListModelFiles: (call: grpc.ServerUnaryCall<FilesRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      state.requests.push({ rpc: 'ListModelFiles', modelName: call.request.modelName, provider: call.request.provider });
      callback(null, { modelName: call.request.modelName, files: state.script.files(call.request.modelName).map((relativePath) => ({ relativePath, size: 1 })) });
    },
    StreamModelFiles: (call: grpc.ServerWritableStream<FilesRequest, FileChunk>) => {
      const paths = call.request.fileSelector?.paths ?? [];
      state.requests.push({ rpc: 'StreamModelFiles', modelName: call.request.modelName, provider: call.request.provider, paths });
      for (const chunk of state.script.chunks(call.request.modelName, paths[0] ?? '')) {
        call.write({ relativePath: paths[0] ?? '', data: Buffer.alloc(0), offset: 0, totalSize: 0, isLastChunk: false, ...chunk });
      }
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error))));
  return Object.assign(state, { url: `http://127.0.0.1:${port}` });
}

/** A file as `StreamModelFiles` chunks of `size` bytes, the last one marked, with its total size. */
export function fileChunks(data: Buffer, size: number): Partial<FileChunk>[] {
  const out: Partial<FileChunk>[] = [];
  for (let offset = 0; offset < data.length; offset += size) out.push({ data: data.subarray(offset, offset + size), offset, totalSize: data.length, isLastChunk: offset + size >= data.length });
  return out;
}
