/**
 * A native v1beta2 DynamoGraphDeploymentRequest and its Runs on the real kube-apiserver, with
 * the DGDR CRD's v1beta2 version served (converted through the v1beta1 hub by the admission
 * function's `/convert`, test/integration/global-setup.ts), the job and garbage-collector
 * controllers, kube-scheduler and kwok (the Run's Job pod keeps running by the pod annotation
 * `kwok.dynamo-fn.dev/outcome: run`, test/harness/kwok/stages.yaml, set through
 * `spec.overrides.profilingJob`).
 *
 * Rules: reference "Trace claim lifecycle" ("The request starts one Run per metadata.generation";
 * "change the request's spec (the Run fails with reason Superseded)"), "v1beta2 DGD Overrides"
 * ("Changing the request's spec stops the old Run and its publisher before starting the
 * replacement Run"); the status fields of upstream-notes/dgdr.md §5. After each change in the
 * world, the test delivers the request, Run and Job events through the profile function's route
 * table (functions/profile/index.ts), as the broker would; it calls the request's own `handle`
 * where one step must be seen alone.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGDR_V1BETA2, DGDR_V1BETA2_KIND, FIELD_MANAGER_CLEANUP, FIELD_MANAGER_PROFILE, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, RUN_KIND, type Condition } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, findRoute, type KubeEvent, type Outcome } from '../../shared/runtime/index.js';
import profile, { depsWithKube as profileDeps } from '../../functions/profile/index.js';
import { depsWithKube as cleanupDeps } from '../../functions/cleanup/index.js';
import { handle as handleRunCleanup } from '../../functions/cleanup/run-retention.js';
import { handle as handleRequest } from '../../functions/profile/request.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const base = { log, now: () => new Date(), config: defaultConfig({ dgdrV1Beta2Enabled: true, aisimulateImage: 'registry.invalid/aisimulate:test' }) };
const runKube = createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN });
const deps = { ...profileDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE })), runKube, publisherKube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_PUBLISHER }) };
const runDeps = { ...deps, kube: runKube };
const cleanup = cleanupDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_CLEANUP }));
const REQUEST = { apiVersion: DGDR_V1BETA2, kind: DGDR_V1BETA2_KIND } as const;
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const TIMEOUT_MS = 60_000;

let namespace = '';
let nodes: string[] = [];

beforeAll(async () => {
  namespace = await createTestNamespace(kubeConfig, 'v1beta2-runs');
  nodes = await createGpuNodes(user, parseGpuFleet('1xNVIDIA-H200:8'), 'v1beta2-runs-node');
});

afterAll(async () => {
  for (const name of nodes) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
});

function event(key: { apiVersion: string; kind: string; name: string }): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { ...key, namespace }, object: undefined };
}

/** Delivers an event through the profile function's route table (functions/profile/index.ts), as the broker would. */
async function deliver(key: { apiVersion: string; kind: string; name: string }): Promise<Outcome> {
  const e = event(key);
  const route = findRoute(profile.routes, e.key);
  if (route === undefined) throw new Error(`profile has no route for ${key.kind}`);
  return route.handle(e, deps);
}

/** What the events of a change would deliver: the request's, then each Run's and its Job's. */
async function reconcile(request: string): Promise<void> {
  await deliver({ apiVersion: 'nvidia.com/v1beta1', kind: DGDR_V1BETA2_KIND, name: request });
  for (const run of await user.list(DGDR_V1BETA2, RUN_KIND, namespace)) {
    await deliver({ ...RUN, name: run.metadata.name });
    await deliver({ apiVersion: 'batch/v1', kind: 'Job', name: `${run.metadata.name}-aisimulate` });
  }
}

function condition(object: KubeObject | undefined, type: string): Condition | undefined {
  return (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

const getRequest = (name: string) => user.get({ ...REQUEST, namespace, name });
const getRun = (name: string) => user.get({ ...RUN, namespace, name });
const getJob = (run: string) => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: `${run}-aisimulate` });
const runNames = async () => (await user.list(DGDR_V1BETA2, RUN_KIND, namespace)).map((r) => r.metadata.name).sort();

/** A static request whose Run's Job pod keeps running (kwok `run`) until the Run is stopped, or fails (`fail`). */
function requestSpec(osl: number, outcome: 'run' | 'fail' = 'run'): Record<string, unknown> {
  return {
    model: { name: 'Qwen/Qwen3-0.6B' },
    image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
    hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
    workload: { static: { isl: 4000, osl, concurrency: 8 } },
    // AISimulate needs the aggregated workers section (as in v1beta2-aisimulate-contract.test.ts), so the merged input is valid.
    aisim: { inputOverrides: { engine: { mode: 'aggregated', workers: { aggregated: {} } }, optimization: { target: 'throughput' } } },
    overrides: { profilingJob: { template: { metadata: { annotations: { 'kwok.dynamo-fn.dev/outcome': outcome } } } } },
  };
}

describe('"The request starts one Run per metadata.generation"', () => {
  it('creates Run <request>-1 with the frozen spec; a metadata-only edit creates no Run; a spec edit stops Run 1 (Superseded, its Job deleted) before Run 2 starts', async () => {
    const created = await user.apply({ ...REQUEST, metadata: { name: 'replay', namespace }, spec: requestSpec(1000) });
    const uid = created.metadata.uid ?? '';

    await reconcile('replay');
    const run1 = await getRun('replay-1');
    expect(run1?.metadata.labels).toEqual({ 'nvidia.com/dgdr-generation': '1' });
    expect(run1?.metadata['ownerReferences']).toEqual([{ ...REQUEST, name: 'replay', uid, controller: true, blockOwnerDeletion: true }]);
    expect((run1?.['spec'] as { workload: unknown }).workload).toEqual({ static: { isl: 4000, osl: 1000, concurrency: 8 } });
    const accepted = await getRequest('replay');
    expect(accepted?.['status']).toMatchObject({ observedGeneration: 1, activeRunRef: { name: 'replay-1', uid: run1?.metadata.uid }, recentRunRefs: [] });
    expect(condition(accepted, 'Accepted')).toMatchObject({ status: 'True', reason: 'RunCreated', observedGeneration: 1 });
    await eventually('Run 1 to evaluate on a running Job pod', async () => {
      await reconcile('replay');
      return condition(await getRun('replay-1'), 'Completed')?.reason === 'EvaluatingCandidates' ? true : undefined;
    }, TIMEOUT_MS, 250);

    // Metadata only: the generation stays 1, so no Run is created.
    const current = await getRequest('replay');
    if (current === undefined) throw new Error('the request is gone');
    const labelled = await user.replace({ ...current, metadata: { ...current.metadata, labels: { team: 'inference' } } });
    expect(labelled.metadata.generation).toBe(1);
    await reconcile('replay');
    expect(await runNames()).toEqual(['replay-1']);

    // A spec change: generation 2. The request first stops Run 1 and creates nothing.
    const edited = await user.apply({ ...REQUEST, metadata: { name: 'replay', namespace }, spec: requestSpec(500) });
    expect(edited.metadata.generation).toBe(2);
    await handleRequest(event({ ...REQUEST, name: 'replay' }), runDeps);
    expect(await runNames()).toEqual(['replay-1']);
    const stopping = await getRequest('replay');
    expect(condition(stopping, 'Accepted')).toMatchObject({ status: 'False', reason: 'StoppingPreviousRun', message: 'waiting for DynamoGraphDeploymentRun replay-1 to stop (Superseded) before starting generation 2', observedGeneration: 2 });
    expect(condition(await getRun('replay-1'), 'Completed')).toMatchObject({ status: 'False', reason: 'Superseded' });

    const started = await eventually('Run 2 to start after Run 1 stopped', async () => {
      await reconcile('replay');
      const run2 = await getRun('replay-2');
      return run2 === undefined ? undefined : run2;
    }, TIMEOUT_MS, 250);
    const stopped = await getRun('replay-1');
    expect(condition(stopped, 'Completed')).toMatchObject({ status: 'True', reason: 'Superseded', message: 'the request\'s spec changed; Job replay-1-aisimulate was stopped' });
    expect(stopped?.['status']).toMatchObject({ phase: 'Failed' });
    // Run 1 finished before Run 2 was created (creationTimestamp has whole seconds).
    const completedAtMs = Date.parse(String((stopped?.['status'] as { completionTime: string }).completionTime));
    expect(Math.floor(completedAtMs / 1000) * 1000).toBeLessThanOrEqual(Date.parse(String(started.metadata['creationTimestamp'])));
    expect(await getJob('replay-1')).toBeUndefined();
    expect(started.metadata.labels).toEqual({ 'nvidia.com/dgdr-generation': '2' });
    expect((started['spec'] as { workload: unknown }).workload).toEqual({ static: { isl: 4000, osl: 500, concurrency: 8 } });

    const request = await eventually('the request to report Run 2 active and Run 1 recent', async () => {
      await reconcile('replay');
      const got = await getRequest('replay');
      return (got?.['status'] as { activeRunRef?: { name: string } } | undefined)?.activeRunRef?.name === 'replay-2' ? got : undefined;
    }, TIMEOUT_MS, 250);
    expect(request['status']).toMatchObject({ observedGeneration: 2, activeRunRef: { name: 'replay-2', uid: started.metadata.uid }, recentRunRefs: [{ name: 'replay-1', uid: stopped?.metadata.uid }] });
    expect(condition(request, 'Accepted')).toMatchObject({ status: 'True', reason: 'RunCreated', message: 'DynamoGraphDeploymentRun replay-2 evaluates generation 2' });
    // The v1beta1 lifecycle left the native v1beta2 request alone: no profiling Job, no v1beta1 status.
    expect((await user.list('batch/v1', 'Job', namespace)).map((j) => j.metadata.name).filter((n) => !n.endsWith('-aisimulate'))).toEqual([]);
    await eventually('Run 2 to evaluate', async () => {
      await reconcile('replay');
      return condition(await getRun('replay-2'), 'Completed')?.reason === 'EvaluatingCandidates' ? true : undefined;
    }, TIMEOUT_MS, 250);
    expect(await runNames()).toEqual(['replay-1', 'replay-2']);
  }, 4 * TIMEOUT_MS);

  it('a Run of the generation\'s name that the request does not control is never adopted: Accepted=False RunConflict, the object untouched', async () => {
    await user.apply({ ...RUN, metadata: { name: 'taken-1', namespace, labels: { owner: 'someone-else' } }, spec: requestSpec(1000) });
    await user.apply({ ...REQUEST, metadata: { name: 'taken', namespace }, spec: requestSpec(1000) });
    await handleRequest(event({ ...REQUEST, name: 'taken' }), runDeps);
    const request = await getRequest('taken');
    expect(condition(request, 'Accepted')).toMatchObject({ status: 'False', reason: 'RunConflict', message: 'taken-1 exists and is not controlled by this request; it is left untouched' });
    const foreign = await getRun('taken-1');
    expect(foreign?.metadata.labels).toEqual({ owner: 'someone-else' });
    expect(foreign?.metadata['ownerReferences']).toBeUndefined();
  });
});

describe('Run retention: "The operator keeps the Runs, Jobs, and pods of a request\'s five most recent finished Runs"', () => {
  it('seven generations, each Run failing on its own: functions/cleanup retires the two oldest with their Jobs; the request lists the five kept, newest first; an unowned Run is untouched', async () => {
    await user.apply({ ...RUN, metadata: { name: 'unowned-1', namespace }, spec: requestSpec(1000, 'fail') });
    for (const generation of [1, 2, 3, 4, 5, 6, 7]) {
      await user.apply({ ...REQUEST, metadata: { name: 'retain', namespace }, spec: requestSpec(100 * generation, 'fail') });
      await eventually(`Run retain-${generation} to fail JobFailed`, async () => {
        await reconcile('retain');
        return condition(await getRun(`retain-${generation}`), 'Completed')?.reason === 'JobFailed' ? true : undefined;
      }, TIMEOUT_MS, 250);
    }
    await handleRunCleanup(event({ ...RUN, name: 'retain-7' }), cleanup);
    const left = (await user.list(DGDR_V1BETA2, RUN_KIND, namespace)).filter((r) => r.metadata.deletionTimestamp === undefined).map((r) => r.metadata.name);
    expect(left.filter((n) => n.startsWith('retain-') || n.startsWith('unowned-')).sort()).toEqual(['retain-3', 'retain-4', 'retain-5', 'retain-6', 'retain-7', 'unowned-1']);
    // The retired Runs' Jobs and pods go with them (garbage collection); the kept ones stay.
    await eventually('the retired Runs\' Jobs to be collected', async () => ((await getJob('retain-1')) === undefined && (await getJob('retain-2')) === undefined ? true : undefined), TIMEOUT_MS);
    expect(await getJob('retain-3')).toBeDefined();
    const request = await eventually('the request to list the kept Runs', async () => {
      await handleRequest(event({ ...REQUEST, name: 'retain' }), runDeps);
      const got = await getRequest('retain');
      return ((got?.['status'] as { recentRunRefs?: unknown[] } | undefined)?.recentRunRefs ?? []).length === 5 ? got : undefined;
    }, TIMEOUT_MS, 250);
    expect((request['status'] as { recentRunRefs: { name: string }[] }).recentRunRefs.map((r) => r.name)).toEqual(['retain-7', 'retain-6', 'retain-5', 'retain-4', 'retain-3']);
    expect((request['status'] as { activeRunRef?: unknown }).activeRunRef).toBeUndefined();
  }, 10 * TIMEOUT_MS);
});

