/**
 * Reads a request body with a byte limit, without ever holding more than the limit:
 * a declared Content-Length over the limit is refused before reading, and a body that grows
 * past it (chunked) stops being read at the first chunk over. With a timeout, a body that has
 * not ended in time is given up (a client declaring 100 kB and sending a byte a second would
 * otherwise hold the request, and its buffer, for a day).
 *
 * A refused body is left unread, so the answer (413, 408) must be followed by
 * {@link closeAfterAnswer}: the connection cannot carry another request.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  /** Over `maxBytes`; `declaredBytes` when Content-Length said so up front. */
  | { readonly ok: false; readonly reason: 'TooLarge'; readonly declaredBytes: number | undefined }
  /** The client went away before the body ended. */
  | { readonly ok: false; readonly reason: 'Aborted' };

/** The body did not end within `timeoutMs` (the caller answers 408 and closes the connection). */
export interface BodyTimedOut {
  readonly ok: false;
  readonly reason: 'TimedOut';
  readonly receivedBytes: number;
}

export interface ReadBodyOptions {
  /** Give up when the whole body has not arrived this many milliseconds after the call. */
  readonly timeoutMs: number;
}

/**
 * The body length the request declares (Content-Length), or undefined (chunked, or not a
 * number). Lets a server refuse an oversized body before it queues the request. Pure.
 */
export function declaredBodyBytes(request: IncomingMessage): number | undefined {
  const declared = request.headers['content-length'];
  const bytes = declared === undefined ? undefined : Number(declared);
  return bytes !== undefined && Number.isFinite(bytes) ? bytes : undefined;
}

/**
 * Reads the whole body of `request` if it is at most `maxBytes` long (and, with
 * `options.timeoutMs`, arrives in time).
 * Out: the body, `TooLarge` (the caller answers 413; the rest of the body is never buffered),
 * `TimedOut` (only with a timeout; the caller answers 408) or `Aborted`. Never rejects.
 * After `TooLarge` or `TimedOut` the request stream is paused with input left unread: answer,
 * then {@link closeAfterAnswer}.
 */
export function readBodyWithLimit(request: IncomingMessage, maxBytes: number): Promise<BodyResult>;
export function readBodyWithLimit(request: IncomingMessage, maxBytes: number, options: ReadBodyOptions): Promise<BodyResult | BodyTimedOut>;
export function readBodyWithLimit(request: IncomingMessage, maxBytes: number, options?: ReadBodyOptions): Promise<BodyResult | BodyTimedOut> {
  const declaredBytes = declaredBodyBytes(request);
  if (declaredBytes !== undefined && declaredBytes > maxBytes) {
    return Promise.resolve({ ok: false, reason: 'TooLarge', declaredBytes });
  }
  // A request whose client left before we started reading (it waited in a queue) emits nothing more.
  if (request.destroyed) return Promise.resolve({ ok: false, reason: 'Aborted' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    const timer =
      options === undefined
        ? undefined
        : setTimeout(() => {
            request.pause();
            chunks.length = 0;
            finish({ ok: false, reason: 'TimedOut', receivedBytes });
          }, options.timeoutMs);
    const finish = (result: BodyResult | BodyTimedOut): void => {
      clearTimeout(timer);
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

/** How long a connection with an unread body stays half-open after the answer, by default. */
export const UNREAD_BODY_GRACE_MS = 2000;

export interface CloseAfterAnswerOptions {
  /** Milliseconds between the half-close and the destroy; default {@link UNREAD_BODY_GRACE_MS}. */
  readonly graceMs?: number;
  /** Holds the socket while it is half-open, so a draining server can destroy it early. */
  readonly lingering?: Set<Socket>;
}

/**
 * Ends a connection whose request body is left unread, without losing the answer (a lingering
 * close, as nginx and Apache do): marks the answer `Connection: close`; once it is written,
 * half-closes (FIN), discards whatever the client still sends, and destroys the socket only
 * after a grace period. Destroying a socket with unread input sends RST, and a client still
 * uploading then gets "connection reset" (or EPIPE) instead of the 413, 408 or 429.
 * Call before writing the answer (the header is set only if the head is not sent yet).
 */
export function closeAfterAnswer(request: IncomingMessage, response: ServerResponse, options: CloseAfterAnswerOptions = {}): void {
  const socket = request.socket;
  if (!response.headersSent) response.setHeader('connection', 'close');
  response.once('finish', () => {
    // node:http ends a `Connection: close` answer's socket with destroySoon(), which destroys it
    // as soon as the FIN is written (lib/net.js: once('finish', this.destroy)): with input
    // unread that is the RST this function exists to avoid. The grace timer below destroys it.
    socket.removeListener('finish', socket.destroy);
    options.lingering?.add(socket);
    socket.once('close', () => options.lingering?.delete(socket));
    socket.end();
    // Discard the rest of the body so the client's writes keep flowing until it is done.
    request.resume();
    setTimeout(() => socket.destroy(), options.graceMs ?? UNREAD_BODY_GRACE_MS).unref();
  });
}
