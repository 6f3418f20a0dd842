/**
 * The issue 20 item 2 slow-body flood, run from a worker thread (slow-body-flood-worker.mjs): each
 * of `connections` connections declares `declaredBytes`, sends `burstBytes` at once, then a byte
 * every 500 ms, and reconnects when the server cuts it. The attacker's connections, handshakes
 * and writes run on their own event loop, as a real attacker's run on their own machine; the
 * admission server under test and the valid reviews stay on the test's.
 * @module
 */
import { Worker } from 'node:worker_threads';

export interface FloodOptions {
  readonly port: number;
  /** The request path each flood connection POSTs to. */
  readonly path: string;
  readonly connections: number;
  readonly declaredBytes: number;
  readonly burstBytes: number;
  readonly localAddress?: string;
  /** The CA to trust: set for a TLS server. */
  readonly ca?: string;
}

export interface Flood {
  /** Resolves once every connection has been opened once. */
  readonly allOpened: Promise<void>;
  /** Stops the flood and closes its connections; resolves the most connections open at once. */
  stop(): Promise<{ readonly peakOpen: number }>;
}

/** Starts the flood; `stop()` must be called (it ends the worker). */
export function startSlowBodyFlood(options: FloodOptions): Flood {
  const worker = new Worker(new URL('./slow-body-flood-worker.mjs', import.meta.url), { workerData: { ...options } });
  let exitCode: number | undefined;
  worker.once('exit', (code) => (exitCode = code));
  const allOpened = new Promise<void>((resolve, reject) => {
    const onMessage = (message: { open?: number }): void => {
      if (message.open !== undefined) {
        worker.off('message', onMessage);
        resolve();
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  allOpened.catch(() => undefined);
  return {
    allOpened,
    stop: async () => {
      if (exitCode !== undefined) throw new Error(`the flood worker exited (code ${exitCode}) before it was stopped`);
      const stopped = new Promise<{ peakOpen: number }>((resolve, reject) => {
        worker.on('message', (message: { peakOpen?: number }) => {
          if (message.peakOpen !== undefined) resolve({ peakOpen: message.peakOpen });
        });
        worker.once('error', reject);
        worker.once('exit', () => reject(new Error('the flood worker exited before it reported')));
      });
      worker.postMessage('stop');
      const result = await stopped;
      await worker.terminate();
      return result;
    },
  };
}
