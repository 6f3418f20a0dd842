/**
 * A loopback proxy in front of the real API server whose faults are decided by msw handlers:
 * each request goes to the handlers first (they may answer 409, 429, 500, 504 or
 * `HttpResponse.error()`, a connection reset), and whatever they pass through is forwarded to
 * the API server unchanged. msw decides the faults; the API server answers everything else, so
 * no part of a cluster is pretended.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getResponse, http, HttpResponse, isPassthroughResponse, passthrough, type RequestHandler } from 'msw';
import { Agent, request as undiciRequest } from 'undici';

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Requests seen, and faults injected by kind. */
  readonly stats: { requests: number; faults: Record<string, number> };
  close(): Promise<void>;
}

/** A seeded PRNG (mulberry32), so a fault schedule is the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FAULTS = ['409', '429', '500', '504', 'reset'] as const;
export type Fault = (typeof FAULTS)[number];

function status(code: number, reason: string, message: string): Response {
  return HttpResponse.json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }, { status: code, ...(code === 429 ? { headers: { 'retry-after': '1' } } : {}) });
}

/**
 * msw handlers failing `rate` of all requests, each fault equally likely, from `random`:
 * 409 Conflict (a stale resourceVersion), 429 TooManyRequests (Retry-After 1), 500, 504 after
 * 300 ms (a timed-out request behind a load balancer) and a connection reset.
 */
export function faultHandlers(rate: number, random: () => number, stats: FaultProxy['stats']): RequestHandler[] {
  return [
    http.all('*', async () => {
      if (random() >= rate) return passthrough();
      const fault = FAULTS[Math.floor(random() * FAULTS.length)] ?? '500';
      stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
      switch (fault) {
        case '409':
          return status(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again');
        case '429':
          return status(429, 'TooManyRequests', 'the server has received too many requests and has asked us to try again later');
        case '500':
          return status(500, 'InternalError', 'Internal error occurred: injected by the fault proxy');
        case '504':
          await new Promise((resolve) => setTimeout(resolve, 300));
          return status(504, 'Timeout', 'Timeout: request did not complete within the allowed duration');
        case 'reset':
          return HttpResponse.error();
      }
    }),
  ];
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** One request the API server answered through the proxy: method, path with query, status code, request body. */
export interface ProxiedExchange {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** The request body as sent (empty for GET, DELETE without options, ...). */
  readonly body: Buffer;
}

/**
 * Starts the proxy to `target` (`https://127.0.0.1:<port>`), trusting `caPem`. `observe`, when
 * given, is told of every request the API server answered (not of injected faults); the answer
 * is passed on only once the promise it returns settles, so a client sees its request recorded.
 */
export async function startFaultProxy(options: {
  readonly target: string;
  readonly caPem: string;
  readonly handlers: (stats: FaultProxy['stats']) => RequestHandler[];
  readonly observe?: (exchange: ProxiedExchange) => void | Promise<void>;
}): Promise<FaultProxy> {
  const stats: FaultProxy['stats'] = { requests: 0, faults: {} };
  const handlers = options.handlers(stats);
  const dispatcher = new Agent({ connect: { ca: options.caPem } });
  const forward = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers[name] = value;
    const upstream = await undiciRequest(`${options.target}${req.url ?? '/'}`, {
      method: (req.method ?? 'GET') as 'GET',
      headers,
      ...(body.length > 0 ? { body } : {}),
      dispatcher,
    });
    const responseHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(upstream.headers)) if (typeof value === 'string' && name !== 'transfer-encoding' && name !== 'connection') responseHeaders[name] = value;
    await options.observe?.({ method: req.method ?? 'GET', url: req.url ?? '/', status: upstream.statusCode, body });
    res.writeHead(upstream.statusCode, responseHeaders);
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
  };
  const server = createServer((req, res) => {
    stats.requests += 1;
    void (async () => {
      const body = await readBody(req);
      // No handlers (the request recorder): nothing for msw to decide, so no Request is built.
      if (handlers.length === 0) return forward(req, res, body);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const probe = new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}) });
      const response = await getResponse(handlers, probe);
      if (response === undefined || isPassthroughResponse(response)) return forward(req, res, body);
      if (response.type === 'error') {
        req.socket.destroy();
        return;
      }
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}
