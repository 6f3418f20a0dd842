/**
 * A readers-writer lock over the run's shared control plane, so integration files run in
 * parallel where they can: a file that keeps to its own namespaces holds it shared, a file that
 * needs the cluster to itself (Nodes, cluster-scoped configuration, a function behind the event
 * bridge or a resync, which watch and list every namespace) holds it exclusive, and a file that
 * does not use the shared plane does not take it. Which file is which: cluster-access.ts.
 *
 * The server runs in vitest's main process (test/integration/global-setup.ts); a test file's
 * worker holds the lock for as long as one HTTP request to it stays open, so a worker that dies
 * releases it with its socket. Grants are first come, first served: a waiting exclusive holder
 * keeps later shared ones waiting, so neither side starves.
 * @module
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ClusterLockMode = 'shared' | 'exclusive';

export interface ClusterLockServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

interface Waiter {
  readonly mode: ClusterLockMode;
  readonly grant: () => void;
}

/** Starts the lock server on loopback. */
export async function startClusterLockServer(): Promise<ClusterLockServer> {
  const queue: Waiter[] = [];
  const holders = new Set<Waiter>();
  const pump = () => {
    for (let next = queue[0]; next !== undefined; next = queue[0]) {
      const free = next.mode === 'exclusive' ? holders.size === 0 : ![...holders].some((h) => h.mode === 'exclusive');
      if (!free) return;
      queue.shift();
      holders.add(next);
      next.grant();
    }
  };
  const server = http.createServer((request, response) => {
    const mode = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('mode');
    if (mode !== 'shared' && mode !== 'exclusive') {
      response.writeHead(400).end('mode must be shared or exclusive\n');
      return;
    }
    const waiter: Waiter = {
      mode,
      grant: () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('granted\n');
      },
    };
    // Released when the holder (or a waiter that gave up) closes its request.
    response.on('close', () => {
      const index = queue.indexOf(waiter);
      if (index >= 0) queue.splice(index, 1);
      holders.delete(waiter);
      pump();
    });
    queue.push(waiter);
    pump();
  });
  // A held lock is one open request for as long as a test file runs.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Waits for the lock in `mode`. Out: a function that releases it. Failures: the server's
 * refusal or a connection error.
 */
export function acquireClusterLock(url: string, mode: ClusterLockMode): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/acquire?mode=${mode}`, { agent: false }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`cluster lock refused: ${response.statusCode ?? 'no status'}`));
        request.destroy();
        return;
      }
      response.once('data', () => resolve(() => request.destroy()));
      response.on('error', () => undefined);
    });
    request.on('error', reject);
  });
}
