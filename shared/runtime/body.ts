/**
 * Reads a request body with a byte limit, without ever holding more than the limit:
 * a declared Content-Length over the limit is refused before reading, and a body that grows
 * past it (chunked) stops being read at the first chunk over.
 * @module
 */
import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  /** Over `maxBytes`; `declaredBytes` when Content-Length said so up front. */
  | { readonly ok: false; readonly reason: 'TooLarge'; readonly declaredBytes: number | undefined }
  /** The client went away before the body ended. */
  | { readonly ok: false; readonly reason: 'Aborted' };

/**
 * Reads the whole body of `request` if it is at most `maxBytes` long.
 * Out: the body, `TooLarge` (the caller answers 413 and closes the connection; the rest of the
 * body is never buffered) or `Aborted`. Never rejects.
 */
export function readBodyWithLimit(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = request.headers['content-length'];
  const declaredBytes = declared === undefined ? undefined : Number(declared);
  if (declaredBytes !== undefined && Number.isFinite(declaredBytes) && declaredBytes > maxBytes) {
    return Promise.resolve({ ok: false, reason: 'TooLarge', declaredBytes });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    const finish = (result: BodyResult): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onAbort);
      request.off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      receivedBytes += chunk.length;
      if (receivedBytes > maxBytes) {
        request.pause();
        chunks.length = 0;
        finish({ ok: false, reason: 'TooLarge', declaredBytes: undefined });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ ok: true, body: Buffer.concat(chunks, receivedBytes) });
    const onAbort = (): void => finish({ ok: false, reason: 'Aborted' });
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onAbort);
    request.on('close', onAbort);
  });
}
