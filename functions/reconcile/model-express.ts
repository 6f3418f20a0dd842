/**
 * The Model Express client of the LPX reconcile: `gs://` builds are downloaded, listed and read
 * through Model Express's gRPC `ModelService`, as upstream's operator does.
 *
 * Calls (service `model_express.model.ModelService`, provider `GCS`, the build URL as model name):
 * `EnsureModelDownloaded` (server stream; its first `ModelStatusUpdate` classifies the build),
 * `ListModelFiles` (unary) and `StreamModelFiles` (server stream of `FileChunk`s, one selected
 * path). Messages and limits: 100 MiB per message (upstream `modelExpressMaxMessageSize`).
 * The URL (`MODEL_EXPRESS_URL`, upstream `infrastructure.modelExpressURL`): `http://host:port`
 * (plain text) or `https://host:port` (TLS 1.2+), no path, query or fragment; another value is a
 * gRPC target as is.
 * Source: upstream `internal/dynamo/lpx/model_express.go` (`NewModelExpressClient`),
 * `model_registry.go` (`EnsureDownloaded`, `readBuildFileBounded` and `listBuildFiles` for `gs`);
 * lpx.md §4 `EnsureDownloaded`; the Model Express `model.proto` message and field numbers.
 * This module (protobufjs) and grpc-js are loaded only when a Model Express URL is configured
 * (./index.ts `init`).
 * @module
 */
import protobuf from 'protobufjs';
import type { DownloadCheck } from '../../shared/domain/index.js';
import { BuildReadError } from './lpx-build.js';

/** Upstream `modelExpressMaxMessageSize`. */
export const MODEL_EXPRESS_MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
const SERVICE = '/model_express.model.ModelService';
/** `ModelStatus` and `ModelProvider` enum values (Model Express model.proto). */
export const MODEL_STATUS = { DOWNLOADING: 0, DOWNLOADED: 1, ERROR: 2 } as const;
const PROVIDER_GCS = 2;

/** The Model Express messages the client uses, with their proto3 field numbers. */
export const MODEL_EXPRESS_MESSAGES = protobuf.Root.fromJSON({
  nested: {
    model_express: {
      nested: {
        model: {
          nested: {
            ModelDownloadRequest: { fields: { modelName: { type: 'string', id: 1 }, provider: { type: 'int32', id: 2 }, ignoreWeights: { type: 'bool', id: 3 } } },
            ModelStatusUpdate: { fields: { modelName: { type: 'string', id: 1 }, status: { type: 'int32', id: 2 }, message: { type: 'string', id: 3 }, provider: { type: 'int32', id: 4 } } },
            ModelFileSelector: { fields: { paths: { rule: 'repeated', type: 'string', id: 1 } } },
            ModelFilesRequest: { fields: { modelName: { type: 'string', id: 1 }, provider: { type: 'int32', id: 2 }, chunkSize: { type: 'uint32', id: 3 }, fileSelector: { type: 'ModelFileSelector', id: 4 } } },
            FileChunk: { fields: { relativePath: { type: 'string', id: 1 }, data: { type: 'bytes', id: 2 }, offset: { type: 'uint64', id: 3 }, totalSize: { type: 'uint64', id: 4 }, isLastChunk: { type: 'bool', id: 5 }, isLastFile: { type: 'bool', id: 6 }, commitHash: { type: 'string', id: 7 } } },
            ModelFileInfo: { fields: { relativePath: { type: 'string', id: 1 }, size: { type: 'uint64', id: 2 } } },
            ModelFileList: { fields: { modelName: { type: 'string', id: 1 }, files: { rule: 'repeated', type: 'ModelFileInfo', id: 2 }, totalSize: { type: 'uint64', id: 3 } } },
          },
        },
      },
    },
  },
});
const type = (name: string) => MODEL_EXPRESS_MESSAGES.lookupType(`model_express.model.${name}`);

/** Encodes and decodes one message type for grpc-js. */
export function codec<T extends object>(name: string): { serialize: (value: T) => Buffer; deserialize: (bytes: Buffer) => T } {
  const messageType = type(name);
  return {
    serialize: (value: T) => Buffer.from(messageType.encode(messageType.fromObject(value as Record<string, unknown>)).finish()),
    deserialize: (bytes: Buffer) => messageType.toObject(messageType.decode(bytes), { longs: Number, defaults: true, bytes: Buffer }) as T,
  };
}

export interface ModelStatusUpdate { readonly modelName: string; readonly status: number; readonly message: string }
export interface FileChunk { readonly relativePath: string; readonly data: Buffer; readonly offset: number; readonly totalSize: number; readonly isLastChunk: boolean }
interface ModelFileList { readonly files: readonly { readonly relativePath: string }[] }

export type ModelExpressTarget = { readonly ok: true; readonly target: string; readonly isTls: boolean } | { readonly ok: false; readonly error: string };

/**
 * parseModelExpressUrl (upstream `NewModelExpressClient`): `http`/`https` URLs must have a host
 * ("ModelExpress URL %q must include a host") and no path ("... must not include a path"), query
 * or fragment ("... must not include query or fragment"); they dial the host, with TLS for
 * `https`. Any other value is passed to gRPC as a target, in plain text. Pure.
 */
export function parseModelExpressUrl(raw: string): ModelExpressTarget {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return { ok: true, target: raw, isTls: false };
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    return { ok: false, error: `parse ModelExpress URL ${JSON.stringify(raw)}: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (url.host === '') return { ok: false, error: `ModelExpress URL ${JSON.stringify(raw)} must include a host` };
  if (url.pathname !== '' && url.pathname !== '/') return { ok: false, error: `ModelExpress URL ${JSON.stringify(raw)} must not include a path` };
  if (url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#')) return { ok: false, error: `ModelExpress URL ${JSON.stringify(raw)} must not include query or fragment` };
  const port = url.port === '' ? (scheme === 'https' ? '443' : '80') : url.port;
  return { ok: true, target: `${url.hostname}:${port}`, isTls: scheme === 'https' };
}

/** What the LPX reconcile asks of Model Express. */
export interface ModelExpressClient {
  /** Upstream `EnsureDownloaded` for a `gs://` build: the first status, or the failure text. Never throws. */
  ensureModelDownloaded(modelName: string, timeoutMs: number): Promise<DownloadCheck>;
  /** The build's files (`ListModelFiles`). Throws {@link BuildReadError}. */
  listModelFiles(modelName: string, timeoutMs: number): Promise<string[]>;
  /** One file's bytes (`StreamModelFiles` with one selected path), at most `maxBytes`. Throws {@link BuildReadError}. */
  readModelFile(modelName: string, relativePath: string, maxBytes: number, timeoutMs: number): Promise<Uint8Array>;
  close(): void;
}

/** gRPC status codes after which a retry may pass, and the one that says the file is not there. */
const TRANSIENT_GRPC_CODES = new Set([1, 4, 8, 10, 14]); // CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE
const GRPC_NOT_FOUND = 5;

function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
function readError(message: string, error: unknown): BuildReadError {
  const code = grpcCode(error);
  return new BuildReadError(message, code === GRPC_NOT_FOUND ? 'absent' : 'other', code !== undefined && TRANSIENT_GRPC_CODES.has(code), error);
}

/** Connects to Model Express (grpc-js, loaded now). Throws Error on a bad URL (a configuration error). */
export async function createModelExpressClient(url: string): Promise<ModelExpressClient> {
  const parsed = parseModelExpressUrl(url);
  if (!parsed.ok) throw new Error(parsed.error);
  const grpc = await import('@grpc/grpc-js');
  const credentials = parsed.isTls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
  const client = new grpc.Client(parsed.target, credentials, {
    'grpc.max_receive_message_length': MODEL_EXPRESS_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MODEL_EXPRESS_MAX_MESSAGE_BYTES,
  });
  const download = codec<{ modelName: string; provider: number }>('ModelDownloadRequest');
  const update = codec<ModelStatusUpdate>('ModelStatusUpdate');
  const files = codec<{ modelName: string; provider: number; fileSelector?: { paths: string[] } }>('ModelFilesRequest');
  const chunk = codec<FileChunk>('FileChunk');
  const list = codec<ModelFileList>('ModelFileList');
  const deadline = (timeoutMs: number) => ({ deadline: new Date(Date.now() + timeoutMs) });

  return {
    ensureModelDownloaded(modelName, timeoutMs) {
      return new Promise<DownloadCheck>((resolve) => {
        const call = client.makeServerStreamRequest(`${SERVICE}/EnsureModelDownloaded`, download.serialize, update.deserialize, { modelName, provider: PROVIDER_GCS }, new grpc.Metadata(), deadline(timeoutMs));
        let isSettled = false;
        const settle = (result: DownloadCheck) => {
          if (isSettled) return;
          isSettled = true;
          call.cancel();
          resolve(result);
        };
        call.on('data', (message: ModelStatusUpdate) => {
          if (message.status === MODEL_STATUS.DOWNLOADED) settle({ ok: true, isDownloaded: true });
          else if (message.status === MODEL_STATUS.DOWNLOADING) settle({ ok: true, isDownloaded: false });
          else if (message.status === MODEL_STATUS.ERROR) settle({ ok: false, error: `model express download failed for ${JSON.stringify(modelName)}: ${message.message === '' ? 'model express reported download error' : message.message}` });
          else settle({ ok: false, error: `model express returned unexpected status ${message.status} for ${JSON.stringify(modelName)}` });
        });
        call.on('error', (error: unknown) => settle({ ok: false, error: `receive model express download status for ${JSON.stringify(modelName)}: ${messageOf(error)}` }));
        call.on('end', () => settle({ ok: false, error: `model express returned no status for ${JSON.stringify(modelName)}` }));
      });
    },

    listModelFiles(modelName, timeoutMs) {
      return new Promise<string[]>((resolve, reject) => {
        client.makeUnaryRequest(`${SERVICE}/ListModelFiles`, files.serialize, list.deserialize, { modelName, provider: PROVIDER_GCS }, new grpc.Metadata(), deadline(timeoutMs), (error, value) => {
          if (error !== null || value === undefined) reject(readError(`listing files from ${JSON.stringify(modelName)} with Model Express: ${messageOf(error)}`, error));
          else resolve(value.files.map((f) => f.relativePath).filter((p) => p !== ''));
        });
      });
    },

    readModelFile(modelName, relativePath, maxBytes, timeoutMs) {
      return new Promise<Uint8Array>((resolve, reject) => {
        const call = client.makeServerStreamRequest(`${SERVICE}/StreamModelFiles`, files.serialize, chunk.deserialize, { modelName, provider: PROVIDER_GCS, fileSelector: { paths: [relativePath] } }, new grpc.Metadata(), deadline(timeoutMs));
        const parts: Buffer[] = [];
        let length = 0;
        let hasChunk = false;
        let isComplete = false;
        let isSettled = false;
        const fail = (error: BuildReadError) => {
          if (isSettled) return;
          isSettled = true;
          call.cancel();
          reject(error);
        };
        const from = `${relativePath} from ${JSON.stringify(modelName)}`;
        call.on('data', (next: FileChunk) => {
          if (isComplete) return fail(new BuildReadError(`received extra chunk for ${from} after final chunk`, 'other', false));
          if (next.relativePath !== relativePath) return fail(new BuildReadError(`received unexpected file ${JSON.stringify(next.relativePath)} for ${from}`, 'other', false));
          if (next.offset !== length) return fail(new BuildReadError(`received out-of-order chunk for ${from}: offset ${next.offset}, want ${length}`, 'other', false));
          hasChunk = true;
          if (next.data.length > maxBytes - length) return fail(new BuildReadError(`${from} is larger than ${maxBytes} bytes`, 'tooLarge', false));
          parts.push(next.data);
          length += next.data.length;
          if (next.isLastChunk) {
            isComplete = true;
            if (next.totalSize !== length) return fail(new BuildReadError(`received incomplete ${from}: final size ${length}, want ${next.totalSize}`, 'other', false));
          }
          return undefined;
        });
        call.on('error', (error: unknown) => fail(readError(`receiving ${from} with Model Express: ${messageOf(error)}`, error)));
        call.on('end', () => {
          if (isSettled) return;
          if (!hasChunk) return fail(new BuildReadError(`Model Express returned no chunks for ${from}`, 'other', false));
          if (!isComplete) return fail(new BuildReadError(`Model Express stream for ${from} ended before final chunk`, 'other', false));
          isSettled = true;
          resolve(Buffer.concat(parts));
          return undefined;
        });
      });
    },

    close() {
      client.close();
    },
  };
}
