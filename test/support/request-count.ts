/**
 * Counting a function's API requests: a kubeconfig that sends the harness admin's token through
 * a loopback request recorder (test/support/rbac.ts `startRequestRecorder`), and the recorded
 * requests summed by verb and by `verb resource`.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { RecordedRequest } from './rbac.js';

/** A kubeconfig file in `dir` for the admin `token`, through the recorder at `recorderUrl` (plain HTTP to the recorder; it speaks TLS upstream). */
export async function recordedKubeconfig(dir: string, recorderUrl: string, token: string): Promise<string> {
  const file = path.join(dir, `recorded-${Date.now()}.kubeconfig`);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'recorded', cluster: { server: recorderUrl, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'admin', user: { token } }],
      contexts: [{ name: 'recorded', context: { cluster: 'recorded', user: 'admin' } }],
      'current-context': 'recorded',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** The verbs that change something. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Requests by verb (`{ get: 3, list: 6 }`), sorted by verb. */
export function countByVerb(requests: readonly RecordedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r.verb] = (counts[r.verb] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Requests by `verb group/resource` (`list grove.io/podcliquesets`), sorted. */
export function countByResource(requests: readonly RecordedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.verb} ${r.group === '' ? 'core' : r.group}/${r.resource}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
