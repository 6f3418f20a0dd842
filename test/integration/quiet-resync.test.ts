/**
 * A quiet resync writes nothing and reads in bulk (issue 17 item 3: "The same for profile's DGDR
 * and Run passes and cleanup's: a quiet resync writes nothing and reads in bulk"; "An integration
 * test on the real API server that counts the requests of a resync over unchanged DGDs, DGDRs and
 * Runs ... and asserts zero writes").
 *
 * On a control plane of its own (so a cluster-wide LIST sees only this world; our CRDs, DGDR
 * conversion through the admission function's `/convert`, no controllers), the world of
 * test/support/quiet-world.ts: DGDR v1beta1 requests at Deployed, Failed, Ready and Profiling (a
 * running Job), native v1beta2 requests with their Runs, trace Runs holding their claims, finished
 * Runs. The profile and cleanup functions run as real hosts behind a recorder of every request;
 * each resync is the PingSource's CloudEvent. The functions' own passes bring the world to rest;
 * then one more resync of each kind is counted:
 *
 * - no create, update, patch or delete (no apply, no status write, no Event);
 * - no GET: every object of the resync is read from the resync's LISTs;
 * - at most one LIST (one page here) per kind and version.
 *
 * Grove, the job controller and kwok do not run: a Job stays active and the DGD keeps the
 * successful status the test writes, as the reconcile function would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGDR_KIND, DGDR_V1BETA1, DGDR_V1BETA2, DGDR_V1BETA2_KIND, RUN_KIND } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { converge, RESYNCS, seedQuietWorld, startQuietPlane, startRecordedFunctions, summarize, type QuietPlane, type QuietWorld, type RecordedFunctions } from '../support/quiet-world.js';

const N = 3;

let quiet: QuietPlane;
let functions: RecordedFunctions;
let world: QuietWorld;
let settleWrites: number[] = [];

beforeAll(async () => {
  quiet = await startQuietPlane();
  world = await seedQuietWorld(quiet.admin, 'quiet', N);
  functions = await startRecordedFunctions(quiet);
  settleWrites = await converge(functions);
}, 600_000);

afterAll(async () => {
  await functions?.close();
  await quiet?.stop();
});

const statusOf = (object: KubeObject | undefined) => (object?.['status'] ?? {}) as { phase?: string; conditions?: { type: string; status: string; reason: string }[] };

describe('the world at rest (brought there by the functions\' own passes)', () => {
  it('the first resyncs wrote (the counting sees writes), a later round wrote nothing', () => {
    expect(settleWrites[0]).toBeGreaterThan(0);
    expect(settleWrites.at(-1)).toBe(0);
  });

  it('each request and Run is in the state the world set up: DGDRs Deployed, Failed, Ready, Profiling; v1beta2 Runs and trace Runs Running; finished Runs Failed', async () => {
    const phase = async (apiVersion: string, kind: string, name: string) => statusOf(await quiet.admin.get({ apiVersion, kind, namespace: world.namespace, name })).phase;
    const phases = async (apiVersion: string, kind: string, names: readonly string[]) => Promise.all(names.map((name) => phase(apiVersion, kind, name)));
    const runsOfRequests = (await quiet.admin.list(DGDR_V1BETA2, RUN_KIND, world.namespace)).filter((r) => world.v1beta2Requests.some((q) => r.metadata.name.startsWith(`${q}-`)));
    expect({
      deployed: await phases(DGDR_V1BETA1, DGDR_KIND, world.deployed),
      failed: await phases(DGDR_V1BETA1, DGDR_KIND, world.failed),
      ready: await phases(DGDR_V1BETA1, DGDR_KIND, world.ready),
      profiling: await phases(DGDR_V1BETA1, DGDR_KIND, world.profiling),
      requestRuns: runsOfRequests.map((r) => statusOf(r).phase),
      traceRuns: await phases(DGDR_V1BETA2, RUN_KIND, world.traceRuns),
      finishedRuns: await phases(DGDR_V1BETA2, RUN_KIND, world.finishedRuns),
      accepted: (await Promise.all(world.v1beta2Requests.map((name) => quiet.admin.get({ apiVersion: DGDR_V1BETA2, kind: DGDR_V1BETA2_KIND, namespace: world.namespace, name })))).map((r) => statusOf(r).conditions?.find((c) => c.type === 'Accepted')?.reason),
    }).toEqual({
      deployed: Array(N).fill('Deployed'),
      failed: Array(N).fill('Failed'),
      ready: Array(N).fill('Ready'),
      profiling: Array(N).fill('Profiling'),
      requestRuns: Array(N).fill('Running'),
      traceRuns: Array(N).fill('Running'),
      finishedRuns: Array(N).fill('Failed'),
      accepted: Array(N).fill('RunCreated'),
    });
  });
});

describe('"a quiet resync writes nothing and reads in bulk"', () => {
  it.each(RESYNCS)('$function resync of $kind: no write, no GET, at most one LIST per kind', async (resync) => {
    const summary = summarize(await functions.resync(resync));
    expect(summary.writes).toBe(0);
    expect(summary.byVerb['get'] ?? 0).toBe(0);
    expect(Object.entries(summary.listsByKind).filter(([, count]) => count > 1)).toEqual([]);
    expect(summary.byVerb['list'] ?? 0).toBeGreaterThan(0);
  });

  it('the reads a profile DGDR resync makes, by kind: the requests (at v1beta1, and at v1beta2 for the native v1beta2 ones), the DGDs, ConfigMaps and Jobs their phases read, the v1beta2 requests\' Runs', async () => {
    const summary = summarize(await functions.resync({ function: 'profile', kind: DGDR_KIND, apiVersion: DGDR_V1BETA1 }));
    expect(summary.listsByKind).toEqual({
      'nvidia.com/v1beta1/dynamographdeploymentrequests': 1,
      'nvidia.com/v1beta2/dynamographdeploymentrequests': 1,
      'nvidia.com/v1beta1/dynamographdeployments': 1,
      'core/v1/configmaps': 1,
      'batch/v1/jobs': 1,
      'nvidia.com/v1beta2/dynamographdeploymentruns': 1,
    });
  });
});
