/**
 * Profile and cleanup resync benchmark (not a test): a quiet world of `n` objects per state
 * (test/support/quiet-world.ts: DGDR v1beta1 requests at Deployed, Failed, Ready and Profiling,
 * native v1beta2 requests with their Runs, trace Runs holding their claims, finished Runs) on a
 * real API server of its own, brought to rest by the functions' own resyncs; then one resync per
 * PingSource (profile: DGDRs, Runs; cleanup: claims, Runs), each counted by the loopback
 * recorder in front of the API server: calls by verb, writes, the most LISTs of one kind, and the
 * resync's time beside the bare LISTs of the same kinds, measured in the same run.
 * Aims (issue 17 item 3, "a quiet resync writes nothing and reads in bulk"): 0 writes, at most
 * one LIST (plus its pages) per kind, and no GET per object.
 *
 * Usage: npm run bench:profile-resync [-- --n 25]
 * @module
 */
import { parseArgs } from 'node:util';
import { converge, RESYNCS, seedQuietWorld, startQuietPlane, startRecordedFunctions, summarize, type RecordedCall } from '../test/support/quiet-world.js';
import { renderTable, type BenchRow } from './table.js';

const KIND_OF_RESOURCE: Readonly<Record<string, string>> = {
  dynamographdeploymentrequests: 'DynamoGraphDeploymentRequest',
  dynamographdeployments: 'DynamoGraphDeployment',
  dynamographdeploymentruns: 'DynamoGraphDeploymentRun',
  dynamographdeploymentcandidates: 'DynamoGraphDeploymentCandidate',
  configmaps: 'ConfigMap',
  jobs: 'Job',
  pods: 'Pod',
  persistentvolumeclaims: 'PersistentVolumeClaim',
};

/** The kinds a resync listed, for the bare baseline. */
function listedKinds(calls: readonly RecordedCall[]): { readonly apiVersion: string; readonly kind: string }[] {
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const call of calls) {
    const kind = KIND_OF_RESOURCE[call.resource];
    if (call.verb !== 'list' || kind === undefined) continue;
    const apiVersion = call.group === '' ? call.version : `${call.group}/${call.version}`;
    seen.set(`${apiVersion}/${kind}`, { apiVersion, kind });
  }
  return [...seen.values()];
}

export async function runProfileResyncBench(n: number): Promise<string> {
  const quiet = await startQuietPlane();
  try {
    await seedQuietWorld(quiet.admin, 'quiet', n);
    const functions = await startRecordedFunctions(quiet);
    try {
      const settle = await converge(functions);
      const rows: BenchRow[] = [];
      const objects = { DynamoGraphDeploymentRequest: 5 * n, DynamoGraphDeploymentRun: 3 * n, PersistentVolumeClaim: n } as Record<string, number>;
      for (const resync of RESYNCS) {
        const started = performance.now();
        const calls = await functions.resync(resync);
        const seconds = (performance.now() - started) / 1000;
        const summary = summarize(calls);
        // Baseline: the same LISTs, bare (one client, in turn), in the same run.
        const bareStarted = performance.now();
        for (const { apiVersion, kind } of listedKinds(calls)) await quiet.admin.list(apiVersion, kind);
        const bareSeconds = (performance.now() - bareStarted) / 1000;
        const verbs = Object.entries(summary.byVerb)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([verb, count]) => `${verb} ${count}`)
          .join(', ');
        const label = `${resync.function} resync of ${resync.kind} (${objects[resync.kind] ?? 0} objects)`;
        const maxLists = Math.max(0, ...Object.values(summary.listsByKind));
        rows.push(
          { name: `${label}: calls [${verbs === '' ? 'none' : verbs}]`, value: calls.length, unit: 'calls' },
          { name: `${label}: writes`, value: summary.writes, unit: 'calls', aim: { text: '= 0', isMet: summary.writes === 0 } },
          { name: `${label}: GETs`, value: summary.byVerb['get'] ?? 0, unit: 'calls', aim: { text: '= 0', isMet: (summary.byVerb['get'] ?? 0) === 0 } },
          { name: `${label}: most LISTs of one kind`, value: maxLists, unit: 'calls', aim: { text: '<= 1', isMet: maxLists <= 1 } },
          { name: `${label}: time`, value: seconds * 1000, unit: 'ms', baseline: { name: `${listedKinds(calls).length} bare LISTs of the same kinds`, value: bareSeconds * 1000 } },
        );
      }
      return renderTable(`Profile and cleanup resync (quiet world, ${n} objects per state, settled in ${settle.length} rounds; real API server on loopback)`, rows);
    } finally {
      await functions.close();
    }
  } finally {
    await quiet.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { n: { type: 'string', default: '25' } } });
  process.stdout.write(await runProfileResyncBench(Number(values.n)));
}
