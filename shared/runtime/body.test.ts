// Tests for ./body.ts over real loopback sockets: the byte limit, the timeout, and the lingering
// close that lets a client still uploading read the refusal.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAfterAnswer, readBodyWithLimit, type BodyResult, type BodyTimedOut } from './body.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server whose handler is `handle`; resolves to its port. */
async function serveWith(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<number> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function head(bodyBytes: number): string {
  return `POST / HTTP/1.1\r\nhost: test\r\ncontent-length: ${bodyBytes}\r\n\r\n`;
}

/** Starts a server that reads one body with `read` and hands the result out. */
async function readOne(
  read: (request: IncomingMessage) => Promise<BodyResult | BodyTimedOut>,
): Promise<{ port: number; result: Promise<BodyResult | BodyTimedOut> }> {
  let deliver: (result: BodyResult | BodyTimedOut) => void = () => undefined;
  const result = new Promise<BodyResult | BodyTimedOut>((resolve) => (deliver = resolve));
  const port = await serveWith((request, response) => {
    void read(request).then((outcome) => {
      deliver(outcome);
      response.end();
    });
  });
  return { port, result };
}

describe('readBodyWithLimit', () => {
  it.each<{ name: string; maxBytes: number; declared: number; send: string; timeoutMs?: number; want: BodyResult | BodyTimedOut }>([
    { name: 'a body within the limit', maxBytes: 10, declared: 5, send: 'hello', want: { ok: true, body: Buffer.from('hello') } },
    { name: 'a declared length over the limit, refused before reading', maxBytes: 4, declared: 5, send: '', want: { ok: false, reason: 'TooLarge', declaredBytes: 5 } },
    { name: 'a body within the limit and the timeout', maxBytes: 10, declared: 5, send: 'hello', timeoutMs: 1000, want: { ok: true, body: Buffer.from('hello') } },
    { name: 'a body that has not ended when the timeout passes', maxBytes: 100_000, declared: 100_000, send: 'x', timeoutMs: 200, want: { ok: false, reason: 'TimedOut', receivedBytes: 1 } },
  ])('$name', async ({ maxBytes, declared, send, timeoutMs, want }) => {
    const { port, result } = await readOne((request) =>
      timeoutMs === undefined ? readBodyWithLimit(request, maxBytes) : readBodyWithLimit(request, maxBytes, { timeoutMs }),
    );
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(head(declared) + send);
    try {
      expect(await result).toEqual(want);
    } finally {
      socket.destroy();
    }
  });

  it('has no timeout unless asked: a body sent after a pause is read whole', async () => {
    const { port, result } = await readOne((request) => readBodyWithLimit(request, 10));
    const socket = connect(port, '127.0.0.1');
    socket.write(`${head(5)}he`);
    await sleep(300);
    socket.write('llo');
    try {
      expect(await result).toEqual({ ok: true, body: Buffer.from('hello') });
    } finally {
      socket.destroy();
    }
  });
});

describe('closeAfterAnswer', () => {
  it('lets a client that uploads its whole body first read the answer: FIN after it, no reset', async () => {
    const port = await serveWith((request, response) => {
      void readBodyWithLimit(request, 1024).then(() => {
        closeAfterAnswer(request, response, { graceMs: 2000 });
        response.writeHead(413, { 'content-length': 4 });
        response.end('big\n');
      });
    });
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code));
    const ended = new Promise<void>((resolve) => {
      socket.once('end', resolve);
      socket.once('close', resolve);
    });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const bodyBytes = 8 * 1024 * 1024;
    socket.write(head(bodyBytes));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let written = 0; written < bodyBytes && !socket.destroyed; written += chunk.length) {
      if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), ended]);
    }
    await ended;
    socket.destroy();

    expect({ error, statusLine: received.split('\r\n', 1)[0], hasConnectionClose: /\r\nconnection: close\r\n/i.test(received) }).toEqual({
      error: undefined,
      statusLine: 'HTTP/1.1 413 Payload Too Large',
      hasConnectionClose: true,
    });
  });
});
