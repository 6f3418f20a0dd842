/**
 * Reads every function's workload and computes its status row (the I/O half of `status`).
 * @module
 */
import type { KnativeClient } from './client.js';
import { CONTROL_PLANE_FUNCTIONS, deploymentStatus, knativeServiceStatus, notInstalledStatus, progressLine, type ControlPlaneFunction, type FunctionStatus } from './status.js';

/**
 * The status of each function in `namespace`, in CONTROL_PLANE_FUNCTIONS order; a missing
 * object gives a NotInstalled row. Failures: KnativeClientError from the client.
 */
export async function collectStatus(client: KnativeClient, namespace: string, functions: readonly ControlPlaneFunction[] = CONTROL_PLANE_FUNCTIONS): Promise<FunctionStatus[]> {
  return Promise.all(
    functions.map(async (fn) => {
      if (fn.workload === 'Deployment') {
        const deployment = await client.getDeployment(namespace, fn.objectName);
        return deployment === undefined ? notInstalledStatus(fn) : deploymentStatus(fn, deployment);
      }
      const service = await client.getService(namespace, fn.objectName);
      if (service === undefined) return notInstalledStatus(fn);
      return knativeServiceStatus(fn, service, await client.listRevisions(namespace, fn.objectName));
    }),
  );
}

export interface WaitOptions {
  /** Give up after this many seconds. */
  readonly timeoutSeconds: number;
  /** Poll interval in ms (default 2000). */
  readonly intervalMs?: number;
  /** Receives one progress line per function whenever its line changes. */
  readonly write: (line: string) => void;
  readonly functions?: readonly ControlPlaneFunction[];
}

/**
 * Polls until every installed function is Ready=True, writing a progress line per function each
 * time its state changes. Resolves to the last rows and whether all became Ready in time
 * (functions not installed are not waited for). Bounded by `timeoutSeconds`.
 * Failures: KnativeClientError when the API server cannot be read (after the client's retries).
 */
export async function waitForReady(client: KnativeClient, namespace: string, options: WaitOptions): Promise<{ readonly ready: boolean; readonly rows: FunctionStatus[] }> {
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  const printed = new Map<string, string>();
  for (;;) {
    const rows = (await collectStatus(client, namespace, options.functions)).filter((row) => row.installed);
    for (const row of rows) {
      const line = progressLine(row);
      if (printed.get(row.function) !== line) {
        options.write(line);
        printed.set(row.function, line);
      }
    }
    if (rows.every((row) => row.ready === 'True')) return { ready: true, rows };
    if (Date.now() >= deadline) return { ready: false, rows };
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 2000));
  }
}
