/**
 * Serves msw request handlers over a real HTTP server on 127.0.0.1, for clients msw cannot
 * intercept in-process (@kubernetes/client-node calls undici's fetch directly). The handlers
 * decide every answer, so a test can inject any HTTP fault; an unmatched request gets 501.
 * @module
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getResponse, type RequestHandler } from 'msw';

export interface MswHttpServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Prepends handlers (they win over the initial ones) until {@link reset}. */
  use(...handlers: RequestHandler[]): void;
  /** Back to the initial handlers. */
  reset(): void;
  /** Requests no handler matched, as `METHOD path`. */
  readonly unhandled: string[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startMswHttpServer(initial: RequestHandler[]): Promise<MswHttpServer> {
  let extra: RequestHandler[] = [];
  const unhandled: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
      });
      const response = await getResponse([...extra, ...initial], request);
      if (response === undefined) {
        unhandled.push(`${req.method ?? ''} ${req.url ?? ''}`);
        res.writeHead(501).end('no msw handler');
        return;
      }
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    use: (...handlers) => {
      extra = [...handlers, ...extra];
    },
    reset: () => {
      extra = [];
    },
    unhandled,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
