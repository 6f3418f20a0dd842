/**
 * The admission HTTP(S) server: routes webhook paths to ./review.ts and serves health and
 * metrics. Always-on, never behind the CloudEvents host: the API server calls it synchronously.
 *
 * | Path | Method | Answer |
 * | --- | --- | --- |
 * | `/mutate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | POST | AdmissionReview (200), 400, 413 |
 * | `/validate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | POST | AdmissionReview (200), 400, 413 |
 * | same paths | other | 405, `Allow: POST` |
 * | `/healthz`, `/readyz` | GET, HEAD | 200 (503 from `/readyz` once closing) |
 * | `/metrics` | GET | Prometheus text |
 * | anything else | any | 404 |
 *
 * A body over `maxBodyBytes` gets 413 and the connection is closed without buffering the rest.
 * An unexpected failure gets 500 and is logged; the process never crashes on a request.
 *
 * Source: DESIGN.md "Admission" (always-on, TLS, `failurePolicy: Fail`); knative.md §4.
 * @module
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import type { AdmissionConfig } from '../../shared/domain/index.js';
import { answerAdmissionReview, findWebhookRoute } from './review.js';

/**
 * Default request limit: an AdmissionReview carries the object and, on UPDATE, the stored one;
 * each is at most about 3 MiB (the API server's request limit), so 7 MiB covers both plus envelope.
 */
export const DEFAULT_ADMISSION_MAX_BODY_BYTES = 7 * 1024 * 1024;

export interface AdmissionServerOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** Interface to listen on; default all interfaces. Tests and the bench pass `127.0.0.1`. */
  readonly host?: string;
  /** PEM serving certificate (chain) and key; absent means plain HTTP (local tools only). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  readonly config: AdmissionConfig;
  /** Larger request bodies get 413, in bytes. Default {@link DEFAULT_ADMISSION_MAX_BODY_BYTES}. */
  readonly maxBodyBytes?: number;
  readonly log: Logger;
  /** Registry for `/metrics`; default a fresh one. */
  readonly registry?: Registry;
}

export interface AdmissionServer {
  /** `https://host:port` or `http://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly registry: Registry;
  /** Stops listening and closes every connection. Idempotent; never rejects. */
  close(): Promise<void>;
}

type BodyResult = { readonly ok: true; readonly body: string } | { readonly ok: false; readonly reason: 'TooLarge' | 'Aborted' };

/** Reads a body of at most `maxBytes` (a larger declared Content-Length is refused before reading). Never rejects. */
function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ ok: false, reason: 'TooLarge' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: BodyResult): void => {
      request.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        request.pause();
        chunks.length = 0;
        finish({ ok: false, reason: 'TooLarge' });
      } else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ ok: true, body: Buffer.concat(chunks, received).toString('utf8') });
    const onAbort = (): void => finish({ ok: false, reason: 'Aborted' });
    request.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort);
  });
}

function sendText(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

/**
 * Starts the admission server.
 * In: options (port, host, TLS material, config, limits, logger). Out: a running server; call
 * close() to stop. Failures: rejects when the port cannot be bound or the TLS material is invalid.
 */
export async function startAdmissionServer(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const log = options.log.child({ function: 'admission' });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_ADMISSION_MAX_BODY_BYTES;
  const registry = options.registry ?? new Registry();
  const reviews = new Counter({ name: 'dynamo_admission_reviews_total', help: 'AdmissionReviews answered, by webhook, served version and verdict', labelNames: ['webhook', 'version', 'allowed'], registers: [registry] });
  const rejected = new Counter({ name: 'dynamo_admission_rejected_requests_total', help: 'Requests refused before review (bad body, too large, unknown path)', labelNames: ['code'], registers: [registry] });
  const duration = new Histogram({
    name: 'dynamo_admission_review_duration_seconds',
    help: 'Time from request start to answer, by webhook',
    labelNames: ['webhook'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [registry],
  });
  let isClosing = false;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const started = performance.now();
    const url = request.url ?? '/';
    const route = findWebhookRoute(url);
    if (route === undefined) {
      const path = url.split('?')[0];
      if ((path === '/healthz' || path === '/readyz') && (request.method === 'GET' || request.method === 'HEAD')) {
        const isReady = path === '/healthz' || !isClosing;
        sendText(response, isReady ? 200 : 503, isReady ? 'ok\n' : 'closing\n');
        return;
      }
      if (path === '/metrics' && request.method === 'GET') {
        const text = await registry.metrics();
        sendText(response, 200, text, { 'content-type': registry.contentType });
        return;
      }
      rejected.inc({ code: '404' });
      sendText(response, 404, 'not found\n');
      return;
    }
    if (request.method !== 'POST') {
      rejected.inc({ code: '405' });
      sendText(response, 405, 'method not allowed\n', { allow: 'POST' });
      return;
    }
    const body = await readBody(request, maxBodyBytes);
    if (!body.ok) {
      if (body.reason === 'Aborted') return;
      rejected.inc({ code: '413' });
      log.warn({ path: url, maxBodyBytes }, 'Refused oversized admission request');
      sendText(response, 413, `request body exceeds ${maxBodyBytes} bytes\n`, { connection: 'close' });
      response.on('finish', () => request.destroy());
      return;
    }
    const answer = answerAdmissionReview(route, body.body, options.config);
    const durationMs = performance.now() - started;
    if (answer.status === 400) {
      rejected.inc({ code: '400' });
      log.warn({ path: url, reason: answer.message, durationMs }, 'Refused malformed admission request');
      sendText(response, 400, `${answer.message}\n`);
      return;
    }
    const text = JSON.stringify(answer.review);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
    reviews.inc({ webhook: route.kind, version: route.version, allowed: String(answer.summary.allowed) });
    duration.observe({ webhook: route.kind }, durationMs / 1000);
    log.info({ webhook: route.kind, version: route.version, kind: 'DynamoGraphDeployment', ...answer.summary, durationMs }, 'Answered AdmissionReview');
  };

  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch((error: unknown) => {
      log.error({ err: error, path: request.url }, 'Failed to answer admission request');
      if (!response.headersSent) sendText(response, 500, 'internal error\n');
      else response.destroy();
    });
  };
  const server: Server = options.tls === undefined ? createHttpServer(listener) : createHttpsServer({ cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' }, listener);
  // The API server reuses connections; keep them longer than its idle timeout so it never
  // writes into a connection we are closing.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  server.requestTimeout = 30_000;
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `${options.tls === undefined ? 'http' : 'https'}://${host}:${address.port}`;
  log.info({ url, tls: options.tls !== undefined, lpxEnabled: options.config.lpxEnabled, maxBodyBytes }, 'Started admission server');

  let closed: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    registry,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        isClosing = true;
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => log.info({ url }, 'Stopped admission server'));
      return closed;
    },
  };
}
