/**
 * The trace-claim lifecycle of ../shared/reference/dgdr-reference.txt ("Trace claim lifecycle"),
 * bullet by bullet, against the real kube-apiserver with kube-scheduler, the job and
 * garbage-collector controllers and kwok (fake nodes; Job pods that complete, fail, run or
 * wait by the pod annotations of test/harness/kwok/stages.yaml, set here through
 * `spec.overrides.profilingJob`). Also Run retention (five most recent finished Runs).
 *
 * The real `handle` of functions/profile (Runs) and functions/cleanup (claims, Runs) run with
 * the v1beta2 gate on; the test calls them after each change in the world, as events would
 * (level-triggered, so each call reads everything again). No PersistentVolume controller runs
 * here: a test binds its claim to a hostPath PersistentVolume and writes the Bound phase to
 * both, as that controller would. No pvc-protection controller runs either, so a deleted claim
 * stays Terminating (kubernetes.io/pvc-protection), which is what the rules read.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGDR_V1BETA2, FIELD_MANAGER_CLEANUP, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, RUN_KIND, type Condition } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject, type KubeReader } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube as profileDeps } from '../../functions/profile/index.js';
import { handle as handleRun } from '../../functions/profile/run.js';
import { depsWithKube as cleanupDeps } from '../../functions/cleanup/index.js';
import * as cleanupRoutes from '../../functions/cleanup/trace-claim.js';
import { handle as handleClaim, listKeys as listClaimKeys, reconcileClaim } from '../../functions/cleanup/trace-claim.js';
import { handle as handleRunCleanup } from '../../functions/cleanup/run-retention.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const base = { log, now: () => new Date(), config: defaultConfig({ dgdrV1Beta2Enabled: true, aisimulateImage: 'registry.invalid/aisimulate:test' }) };
const profile = { ...profileDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN })), publisherKube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_PUBLISHER }) };
const cleanup = cleanupDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_CLEANUP }));
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;
const NODE_PREFIX = 'v1beta2-node';
const TRACE = 'windows/2026-10-27T10-00.jsonl.gz';

let namespace = '';
let nodes: string[] = [];

beforeAll(async () => {
  namespace = await createTestNamespace(kubeConfig, 'v1beta2');
  nodes = await createGpuNodes(user, parseGpuFleet('1xNVIDIA-H200:8'), NODE_PREFIX);
});

afterAll(async () => {
  for (const name of nodes) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
});

function event(kind: string, apiVersion: string, name: string, object?: KubeObject): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace, name }, object };
}

/** One round of what the events would trigger: the Run in profile, then the claim in cleanup. */
async function reconcile(run: string, claim?: string): Promise<void> {
  await handleRun(event(RUN_KIND, DGDR_V1BETA2, run), profile);
  if (claim !== undefined) await reconcileClaim(cleanup, namespace, claim);
}

/**
 * Removes the test's hold from a pod, as a kubelet finishing would: read it and write it without
 * finalizers, again on a conflict (the garbage collector, kwok and the job controller write the
 * pod meanwhile, so the copy read a moment ago can be stale: a 409 under load).
 */
async function removeFinalizers(pod: KubeObject): Promise<void> {
  await eventually(`pod ${pod.metadata.name} without finalizers`, async () => {
    const current = await user.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: pod.metadata.name });
    if (current === undefined) return true;
    try {
      await user.replace({ ...current, metadata: { ...current.metadata, finalizers: [] } });
      return true;
    } catch (error) {
      if (error instanceof TransientError) return undefined;
      throw error;
    }
  });
}

/** Reconciles until `check` holds (bounded). */
async function settle<T>(what: string, run: string, claim: string | undefined, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  return eventually(what, async () => {
    await reconcile(run, claim);
    return check();
  }, timeoutMs, 250);
}

/** A filesystem claim bound to a hostPath PersistentVolume (Bound written as the PV controller would). */
async function createClaim(name: string, options: { bound?: boolean; volumeMode?: 'Block' | 'Filesystem' } = {}): Promise<void> {
  const bound = options.bound ?? true;
  const pv = `${namespace}-${name}`;
  if (bound) {
    await user.apply({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pv },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany'], hostPath: { path: `/tmp/${pv}` }, storageClassName: '', volumeMode: options.volumeMode ?? 'Filesystem', claimRef: { namespace, name } },
    });
  }
  await user.apply({
    ...CLAIM,
    // The PV controller's bind annotation: the scheduler treats only such a claim as bound.
    metadata: { name, namespace, ...(bound ? { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } } : {}) },
    spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeMode: options.volumeMode ?? 'Filesystem', ...(bound ? { volumeName: pv } : {}) },
  });
  if (bound) {
    await user.applyStatus({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv }, status: { phase: 'Bound' } }, { force: true });
    await user.applyStatus({ ...CLAIM, metadata: { name, namespace }, status: { phase: 'Bound', accessModes: ['ReadWriteMany'], capacity: { storage: '1Gi' } } }, { force: true });
  }
}

/** A Run reading `claim`; `outcome` is the kwok pod annotation (see test/harness/kwok/stages.yaml). */
async function createRun(name: string, claim: string | undefined, outcome?: { outcome: 'fail' | 'run' | 'wait'; reason?: string; message?: string }, owner?: { readonly ref: Record<string, unknown>; readonly generation: number }): Promise<KubeObject> {
  const annotations: Record<string, string> = {};
  if (outcome !== undefined) {
    annotations['kwok.dynamo-fn.dev/outcome'] = outcome.outcome;
    if (outcome.reason !== undefined) annotations['kwok.dynamo-fn.dev/reason'] = outcome.reason;
    if (outcome.message !== undefined) annotations['kwok.dynamo-fn.dev/message'] = outcome.message;
  }
  return user.apply({
    ...RUN,
    metadata: { name, namespace, ...(owner === undefined ? {} : { ownerReferences: [owner.ref], labels: { 'nvidia.com/dgdr-generation': String(owner.generation) } }) },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      workload: claim === undefined ? { static: { isl: 4000, osl: 1000 } } : { trace: { source: { persistentVolumeClaim: { claimName: claim, subPath: TRACE } } } },
      ...(outcome === undefined ? {} : { overrides: { profilingJob: { template: { metadata: { annotations } } } } }),
    },
  });
}

const getRun = (name: string) => user.get({ ...RUN, namespace, name });
const getClaim = (name: string) => user.get({ ...CLAIM, namespace, name });
const getJob = (name: string) => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: `${name}-aisimulate` });

function completed(run: KubeObject | undefined): Condition | undefined {
  return (run?.['status'] as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === 'Completed');
}

function finalizersOf(object: KubeObject | undefined): string[] {
  return (object?.metadata['finalizers'] as string[] | undefined) ?? [];
}

const runFinalizer = (run: KubeObject) => `nvidia.com/dgdr-run-${run.metadata.uid ?? ''}`;

/** Waits for the Run's Completed reason (and status, when given), reconciling meanwhile. */
function reasonOf(run: string, claim: string | undefined, reason: string, status?: 'True' | 'False'): Promise<KubeObject> {
  return settle(`Run ${run} reason ${reason}`, run, claim, async () => {
    const got = await getRun(run);
    const condition = completed(got);
    return condition?.reason === reason && (status === undefined || condition.status === status) ? got : undefined;
  });
}

async function setPodAnnotation(run: string, outcome: string): Promise<void> {
  const [pod] = await user.list('v1', 'Pod', namespace, { labelSelector: `job-name=${run}-aisimulate` });
  if (pod === undefined) throw new Error(`no pod for ${run}`);
  await user.replace({ ...pod, metadata: { ...pod.metadata, annotations: { ...(pod.metadata.annotations ?? {}), 'kwok.dynamo-fn.dev/outcome': outcome } } });
}

describe('Protection: "Before a Run creates its Job, the operator adds the finalizer nvidia.com/dgdr-run-<run-uid> to the claim"', () => {
  it('adds the finalizer, then creates the Job mounting only the trace file read-only into the AISimulate container; releases it once the Run is complete and its Job no longer runs', async () => {
    await createClaim('protect');
    const run = await createRun('protect-1', 'protect', { outcome: 'fail', reason: 'Error', message: 'aisimulate exited 2' });
    await reconcile('protect-1', 'protect');
    expect(finalizersOf(await getClaim('protect'))).toContain(runFinalizer(run));
    const job = await getJob('protect-1');
    const podSpec = (job?.['spec'] as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(podSpec['securityContext']).toEqual({ supplementalGroups: [65532] });
    expect(podSpec['volumes']).toContainEqual({ name: 'trace', persistentVolumeClaim: { claimName: 'protect', readOnly: true } });
    expect((podSpec['containers'] as { name: string; volumeMounts: unknown[] }[]).map((c) => [c.name, c.volumeMounts[0]])).toEqual([
      ['aisimulate', { name: 'trace', mountPath: '/var/run/aisimulate/trace/trace.jsonl.gz', subPath: TRACE, readOnly: true }],
    ]);
    const failed = await reasonOf('protect-1', 'protect', 'JobFailed');
    expect(failed['status']).toMatchObject({ phase: 'Failed', jobRef: { name: 'protect-1-aisimulate' } });
    await reconcileClaim(cleanup, namespace, 'protect');
    expect(finalizersOf(await getClaim('protect'))).not.toContain(runFinalizer(run));
  });

  it('"Every Run that reads the claim adds its own finalizer, so Runs ... can share a claim"; each is released on its own', async () => {
    await createClaim('shared');
    const first = await createRun('shared-1', 'shared', { outcome: 'fail' });
    const second = await createRun('shared-2', 'shared', { outcome: 'run' });
    await reconcile('shared-1', 'shared');
    await reconcile('shared-2', 'shared');
    expect(finalizersOf(await getClaim('shared'))).toEqual(expect.arrayContaining([runFinalizer(first), runFinalizer(second)]));
    await reasonOf('shared-1', 'shared', 'JobFailed');
    await reconcileClaim(cleanup, namespace, 'shared');
    const claim = await getClaim('shared');
    expect(finalizersOf(claim)).not.toContain(runFinalizer(first));
    expect(finalizersOf(claim)).toContain(runFinalizer(second));
  });

  it('"or once the Run and its Jobs are deleted": a Run deleted before it completed is released once garbage collection removed its Job', async () => {
    await createClaim('deleted-run');
    const run = await createRun('deleted-run-1', 'deleted-run', { outcome: 'run' });
    await reconcile('deleted-run-1', 'deleted-run');
    expect(await getJob('deleted-run-1')).toBeDefined();
    await user.delete({ ...RUN, namespace, name: 'deleted-run-1' });
    // What the chart delivers (DESIGN.md "Events in": Reference mode, no object): the Run's delete
    // event, then the resync tick over every claim carrying a Run finalizer.
    await eventually('the finalizer of the deleted Run to be removed', async () => {
      await handleRunCleanup({ id: randomUUID(), type: 'dev.knative.apiserver.ref.delete', source: 'test', key: { ...RUN, namespace, name: 'deleted-run-1' }, object: undefined }, cleanup);
      for (const key of await listClaimKeys(cleanup)) if (key.namespace === namespace) await handleClaim({ id: randomUUID(), type: 'dev.dynamo-fn.resync', source: 'test', key, object: undefined }, cleanup);
      return finalizersOf(await getClaim('deleted-run')).includes(runFinalizer(run)) ? undefined : true;
    });
    expect(await getJob('deleted-run-1')).toBeUndefined();
  });
});

describe('Protection with Reference-mode events only (the chart\'s cleanup source): "or once the Run and its Jobs are deleted"', () => {
  it('a Run deleted before it completed is released on its own delete event without the object (every claim of the namespace with a Run finalizer is decided), once its Job is gone', async () => {
    await createClaim('ref-deleted');
    const run = await createRun('ref-deleted-1', 'ref-deleted', { outcome: 'run' });
    await reconcile('ref-deleted-1', 'ref-deleted');
    expect(await getJob('ref-deleted-1')).toBeDefined();
    await user.delete({ ...RUN, namespace, name: 'ref-deleted-1' });
    await eventually('the finalizer of the deleted Run to be removed', async () => {
      // Reference mode: the event names the Run, carries no object, and the Run is gone.
      await handleRunCleanup(event(RUN_KIND, DGDR_V1BETA2, 'ref-deleted-1'), cleanup);
      return finalizersOf(await getClaim('ref-deleted')).includes(runFinalizer(run)) ? undefined : true;
    });
    expect(await getJob('ref-deleted-1')).toBeUndefined();
  });

  it('the delete event of the deleted Run\'s Job, without the object, releases it too', async () => {
    await createClaim('ref-job');
    const run = await createRun('ref-job-1', 'ref-job', { outcome: 'run' });
    await reconcile('ref-job-1', 'ref-job');
    await user.delete({ ...RUN, namespace, name: 'ref-job-1' });
    await eventually('the finalizer of the deleted Run to be removed', async () => {
      await cleanupRoutes.jobRoute.handle(event('Job', 'batch/v1', 'ref-job-1-aisimulate'), cleanup);
      return finalizersOf(await getClaim('ref-job')).includes(runFinalizer(run)) ? undefined : true;
    });
  });
});

describe('Deleting the claim cancels its Runs', () => {
  it('stops an active Job by foreground deletion; once the Job and its pod are gone the Run fails TraceSourceDeleted and the finalizer is removed', async () => {
    await createClaim('cancel');
    const run = await createRun('cancel-1', 'cancel', { outcome: 'run' });
    await settle('the Job pod to run', 'cancel-1', 'cancel', async () => {
      const [pod] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=cancel-1-aisimulate' });
      return (pod?.['status'] as { phase?: string } | undefined)?.phase === 'Running' ? pod : undefined;
    });
    // Hold the pod in deletion, as a slow kubelet would, so the Job's foreground deletion is observable.
    const pod = await eventually('the hold finalizer on the Job\'s pod', async () => {
      const [current] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=cancel-1-aisimulate' });
      if (current === undefined) throw new Error('no pod for cancel-1');
      try {
        return await user.replace({ ...current, metadata: { ...current.metadata, finalizers: ['test.dynamo-fn.dev/hold'] } });
      } catch (error) {
        if (error instanceof TransientError) return undefined;
        throw error;
      }
    });
    await user.delete({ ...CLAIM, namespace, name: 'cancel' });
    await reconcileClaim(cleanup, namespace, 'cancel');
    // Reference "stops the Job of every Run that reads it through foreground deletion": the Job is
    // being deleted and waits for its pod (the garbage collector's foregroundDeletion finalizer).
    const stopping = await getJob('cancel-1');
    expect(stopping?.metadata['deletionTimestamp']).toBeDefined();
    expect(finalizersOf(stopping)).toContain('foregroundDeletion');
    const held = await eventually('the garbage collector to delete the Job\'s pod first', async () => {
      const got = await user.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: pod.metadata.name });
      return got?.metadata['deletionTimestamp'] !== undefined ? got : undefined;
    });
    expect(await getJob('cancel-1')).toBeDefined();
    await removeFinalizers(held);
    const failed = await reasonOf('cancel-1', 'cancel', 'TraceSourceDeleted', 'True');
    expect(failed['status']).toMatchObject({ phase: 'Failed' });
    expect(completed(failed)).toMatchObject({ status: 'True', message: 'PersistentVolumeClaim "cancel" was deleted; Job cancel-1-aisimulate was stopped' });
    await settle('the finalizer to be removed', 'cancel-1', 'cancel', async () => (finalizersOf(await getClaim('cancel')).includes(runFinalizer(run)) ? undefined : true));
    expect(await getJob('cancel-1')).toBeUndefined();
  });

  it('"fails with TraceSourceDeleted even if the Job is marked failed while its pod is removed"', async () => {
    await createClaim('marked');
    await createRun('marked-1', 'marked', { outcome: 'run' });
    const pod = await settle('the Job pod to run', 'marked-1', 'marked', async () => {
      const [got] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=marked-1-aisimulate' });
      return (got?.['status'] as { phase?: string } | undefined)?.phase === 'Running' ? got : undefined;
    });
    // Hold the pod in deletion, as a slow kubelet would, so the Job is seen being stopped.
    await user.replace({ ...pod, metadata: { ...pod.metadata, finalizers: ['test.dynamo-fn.dev/hold'] } });
    await user.delete({ ...CLAIM, namespace, name: 'marked' });
    await reconcileClaim(cleanup, namespace, 'marked');
    // The container is killed: the pod fails (as the kubelet reports it), and the job controller may mark the Job failed.
    await user.applyStatus({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace }, status: { phase: 'Failed' } }, { force: true });
    // While the held pod keeps the Job in foreground deletion, the Run stays open.
    const open = await reasonOf('marked-1', 'marked', 'TraceSourceDeleted', 'False');
    expect(completed(open)?.message).toBe('stopping Job marked-1-aisimulate: PersistentVolumeClaim "marked" is being deleted');
    const held = await user.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: pod.metadata.name });
    if (held !== undefined) await removeFinalizers(held);
    const failed = await settle('the Run to fail', 'marked-1', 'marked', async () => {
      const got = await getRun('marked-1');
      return completed(got)?.status === 'True' ? got : undefined;
    });
    expect(completed(failed)?.reason).toBe('TraceSourceDeleted');
  });

  it('"A Job that already completed ... before the claim\'s deletion, and is not itself being deleted, is not stopped; its own outcome decides the Run"', async () => {
    await createClaim('finished');
    await createRun('finished-1', 'finished');
    await settle('the Job to complete', 'finished-1', 'finished', async () => {
      const job = await getJob('finished-1');
      return (job?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? job : undefined;
    });
    await user.delete({ ...CLAIM, namespace, name: 'finished' });
    await reconcile('finished-1', 'finished');
    await reconcile('finished-1', 'finished');
    const job = await getJob('finished-1');
    expect(job?.metadata['deletionTimestamp']).toBeUndefined();
    // Complete, waiting for its Candidates: the claim's deletion did not fail it.
    expect(completed(await getRun('finished-1'))).toMatchObject({ status: 'False', reason: 'EvaluatingCandidates' });
  });

  it('"Own what you read ... the same rule everywhere a function reads what a Job or a user could also write" (issue 20 item 1): a Job someone else labelled with the Run\'s uid is neither stopped nor waited for when the claim is deleted', async () => {
    await createClaim('planted');
    const run = await createRun('planted-1', 'planted');
    await settle('the Job to complete', 'planted-1', 'planted', async () => {
      const job = await getJob('planted-1');
      return (job?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? job : undefined;
    });
    // Suspended, so it stays active (no pod) for as long as the test needs.
    await user.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'planted-by-user', namespace, labels: { 'nvidia.com/dgdr-run-uid': run.metadata.uid ?? '' } },
      spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/user:1' }] } } },
    });
    await user.delete({ ...CLAIM, namespace, name: 'planted' });
    await reconcile('planted-1', 'planted');
    await reconcile('planted-1', 'planted');
    const planted = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'planted-by-user' });
    expect(planted).toBeDefined();
    expect(planted?.metadata['deletionTimestamp']).toBeUndefined();
  });

  it('"Own what you read ... the same rule everywhere a function reads what a Job or a user could also write" (issue 20 item 1): a Run\'s finalizer planted on a claim the Run does not read never stops the Run\'s Job when that claim is deleted, and is released from it', async () => {
    await createClaim('read-by-victim');
    const run = await createRun('victim-1', 'read-by-victim', { outcome: 'run' });
    await settle('the Job pod to run', 'victim-1', 'read-by-victim', async () => {
      const [pod] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=victim-1-aisimulate' });
      return (pod?.['status'] as { phase?: string } | undefined)?.phase === 'Running' ? pod : undefined;
    });
    // Someone else's claim, carrying the Run's finalizer (anyone who can write claims can add it), then deleted.
    await user.apply({
      ...CLAIM,
      metadata: { name: 'decoy', namespace, finalizers: [runFinalizer(run)] },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
    });
    await user.delete({ ...CLAIM, namespace, name: 'decoy' });
    await reconcileClaim(cleanup, namespace, 'decoy');
    expect((await getJob('victim-1'))?.metadata['deletionTimestamp']).toBeUndefined();
    expect(finalizersOf(await getClaim('decoy'))).not.toContain(runFinalizer(run));
    // The claim the Run reads keeps its finalizer: the Run is open.
    expect(finalizersOf(await getClaim('read-by-victim'))).toContain(runFinalizer(run));
  });

  it('"A Run whose claim is already being deleted before it creates its Job fails with TraceSourceDeleted without creating anything"', async () => {
    await createClaim('gone-first');
    await user.delete({ ...CLAIM, namespace, name: 'gone-first' });
    const run = await createRun('gone-first-1', 'gone-first');
    await reconcile('gone-first-1', 'gone-first');
    expect(completed(await getRun('gone-first-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceDeleted' });
    expect(await getJob('gone-first-1')).toBeUndefined();
    expect(finalizersOf(await getClaim('gone-first'))).not.toContain(runFinalizer(run));
  });
});

describe('Deleting the claim cancels its Runs, whatever the order the passes see it in (issue 18: "1 of 2 runs" ended JobDeleted in dev)', () => {
  /** Reads through the live API server; the first read of the Run's Job runs `beforeJobRead` first (the world moves on between the pass's reads). */
  function readerMovingOnAtJobRead(jobName: string, beforeJobRead: () => Promise<void>): KubeReader {
    let isMoved = false;
    return {
      list: (...args) => user.list(...args),
      async get(ref) {
        if (ref.kind === 'Job' && ref.name === jobName && !isMoved) {
          isMoved = true;
          await beforeJobRead();
        }
        return user.get(ref);
      },
    };
  }

  it('"Once the Job and its pod are gone, the Run fails with reason TraceSourceDeleted": a pass whose claim read could come before the deletion and its Job read after the Job is gone still fails the Run TraceSourceDeleted (the claim is read after the Job)', async () => {
    await createClaim('ordered');
    const run = await createRun('ordered-1', 'ordered', { outcome: 'run' });
    await settle('the Job pod to run', 'ordered-1', 'ordered', async () => {
      const [pod] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=ordered-1-aisimulate' });
      return (pod?.['status'] as { phase?: string } | undefined)?.phase === 'Running' ? pod : undefined;
    });
    expect(completed(await getRun('ordered-1'))).toMatchObject({ status: 'False' });
    // Between the pass's start and its Job read: the claim is deleted and another component (the
    // cleanup function) stops the Job, which the garbage collector removes with its pod.
    const read = readerMovingOnAtJobRead('ordered-1-aisimulate', async () => {
      await user.delete({ ...CLAIM, namespace, name: 'ordered' });
      await user.delete({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'ordered-1-aisimulate' }, { propagationPolicy: 'Foreground' });
      await eventually('the stopped Job to be gone', async () => ((await getJob('ordered-1')) === undefined ? true : undefined), 30_000, 100);
    });
    await handleRun(event(RUN_KIND, DGDR_V1BETA2, 'ordered-1'), { ...profile, snapshot: read });
    expect(completed(await getRun('ordered-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceDeleted', message: 'PersistentVolumeClaim "ordered" was deleted; Job ordered-1-aisimulate was stopped' });
    // "... and the operator then removes the Run's finalizer", so the claim goes away.
    await reconcileClaim(cleanup, namespace, 'ordered');
    expect(finalizersOf(await getClaim('ordered'))).not.toContain(runFinalizer(run));
  });

  it('a pass that read the Run before another pass finished it never writes its older verdict over the final one (the Run\'s resourceVersion is the status write\'s precondition): the Run stays TraceSourceDeleted', async () => {
    await createClaim('stale');
    await createRun('stale-1', 'stale', { outcome: 'run' });
    await settle('the Job pod to run', 'stale-1', 'stale', async () => {
      const [pod] = await user.list('v1', 'Pod', namespace, { labelSelector: 'job-name=stale-1-aisimulate' });
      return (pod?.['status'] as { phase?: string } | undefined)?.phase === 'Running' ? pod : undefined;
    });
    // The slow pass has read the Run (Running); before its Job read, the claim is deleted, a
    // quicker pass stops the Job and, once it is gone, fails the Run TraceSourceDeleted, and
    // cleanup releases the finalizer, so the claim is gone too.
    const read = readerMovingOnAtJobRead('stale-1-aisimulate', async () => {
      await user.delete({ ...CLAIM, namespace, name: 'stale' });
      await reasonOf('stale-1', 'stale', 'TraceSourceDeleted', 'True');
      const released = await eventually('the Run\'s finalizer to be released', async () => {
        await reconcileClaim(cleanup, namespace, 'stale');
        const claim = await getClaim('stale');
        return claim !== undefined && !finalizersOf(claim).some((f) => f.startsWith('nvidia.com/dgdr-run-')) ? claim : undefined;
      }, 30_000, 100);
      // As the pvc-protection controller would once no pod uses the claim (it does not run here).
      await user.replace({ ...released, metadata: { ...released.metadata, finalizers: [] } });
      await eventually('the claim to be gone', async () => ((await getClaim('stale')) === undefined ? true : undefined), 30_000, 100);
    });
    const outcome = await handleRun(event(RUN_KIND, DGDR_V1BETA2, 'stale-1'), { ...profile, snapshot: read }).then(
      (o) => o.kind,
      (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : 'thrown'),
    );
    // The slow pass saw the Job and the claim gone: on its own it would say JobDeleted. Its write
    // is refused (409 on the Run's resourceVersion), and it decides again from the stored, finished Run.
    expect(outcome).toBe('Done');
    expect(completed(await getRun('stale-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceDeleted' });
    await handleRun(event(RUN_KIND, DGDR_V1BETA2, 'stale-1'), profile);
    expect(completed(await getRun('stale-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceDeleted' });
  });
});

describe('"A missing claim keeps the Run open"', () => {
  it('stays Pending with Completed=False TraceSourceMissing and starts once the claim is created', async () => {
    const run = await createRun('missing-1', 'missing');
    await reconcile('missing-1');
    const pending = await getRun('missing-1');
    expect(pending?.['status']).toMatchObject({ phase: 'Pending' });
    expect(completed(pending)).toMatchObject({ status: 'False', reason: 'TraceSourceMissing' });
    expect(await getJob('missing-1')).toBeUndefined();
    await createClaim('missing');
    await reconcile('missing-1', 'missing');
    expect(await getJob('missing-1')).toBeDefined();
    expect(finalizersOf(await getClaim('missing'))).toContain(runFinalizer(run));
  });
});

describe('"A claim no Job can mount fails the Run before it starts"', () => {
  it('volumeMode: Block fails the Run with TraceSourceUnavailable and creates no Job', async () => {
    await createClaim('block', { volumeMode: 'Block' });
    await createRun('block-1', 'block');
    await reconcile('block-1', 'block');
    expect(completed(await getRun('block-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceUnavailable' });
    expect(await getJob('block-1')).toBeUndefined();
  });

  it('phase Lost fails the Run with TraceSourceUnavailable and creates no Job', async () => {
    await createClaim('lost');
    await user.applyStatus({ ...CLAIM, metadata: { name: 'lost', namespace }, status: { phase: 'Lost' } }, { force: true });
    await createRun('lost-1', 'lost');
    await reconcile('lost-1', 'lost');
    expect(completed(await getRun('lost-1'))).toMatchObject({ status: 'True', reason: 'TraceSourceUnavailable', message: 'PersistentVolumeClaim "lost" is Lost' });
    expect(await getJob('lost-1')).toBeUndefined();
  });

  it('"A Pending claim, such as one that waits for its first consumer, is accepted"', async () => {
    await createClaim('pending', { bound: false });
    const run = await createRun('pending-1', 'pending');
    await reconcile('pending-1', 'pending');
    expect(await getJob('pending-1')).toBeDefined();
    expect(finalizersOf(await getClaim('pending'))).toContain(runFinalizer(run));
    expect(completed(await getRun('pending-1'))?.status).toBe('False');
  });
});

describe('"A waiting container is a diagnostic, not a failure"', () => {
  it.each([
    { name: 'a trace file the kubelet cannot mount', reason: 'CreateContainerConfigError', message: 'failed to prepare subPath for volumeMount "trace" of container "aisimulate"' },
    { name: 'an image it cannot pull', reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.invalid/aisimulate:test"' },
  ])('$name: Completed=False ContainerWaiting with container "<name>" is waiting: <reason>: <message>; the Job is kept and fixing the cause lets the same Run continue', async ({ reason, message }) => {
    const name = reason.toLowerCase();
    await createClaim(name);
    await createRun(`${name}-1`, name, { outcome: 'wait', reason, message });
    const waiting = await reasonOf(`${name}-1`, name, 'ContainerWaiting');
    expect(completed(waiting)).toMatchObject({ status: 'False', message: `container "aisimulate" is waiting: ${reason}: ${message}` });
    expect(waiting['status']).toMatchObject({ phase: 'Running' });
    expect((await getJob(`${name}-1`))?.metadata['deletionTimestamp']).toBeUndefined();
    await setPodAnnotation(`${name}-1`, 'run');
    await reasonOf(`${name}-1`, name, 'EvaluatingCandidates');
  });
});

describe('Run retention: "The operator keeps the Runs, Jobs, and pods of a request\'s five most recent finished Runs"', () => {
  it('retires the finished Runs of one request beyond the five most recent; Runs of other owners and unowned Runs are untouched', async () => {
    // The owning request exists: DGDR v1beta2 is served, so the garbage collector collects Runs
    // owned by a request that does not, and a Run of an older generation than its request's is
    // Superseded. So, as the request controller does, each Run evaluates the request's current
    // generation, and the request moves on (a new spec, a new generation) once it finished.
    const owner = await user.create({ apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'retain', namespace }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } }, recommendation: { maxCandidates: 1 } } });
    if (owner === undefined) throw new Error('DGDR retain already exists');
    const request = { apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', name: 'retain', uid: String(owner.metadata['uid']), controller: true };
    const names = [1, 2, 3, 4, 5, 6, 7].map((g) => `retain-${g}`);
    for (const [index, name] of names.entries()) {
      const current = await user.get({ apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', namespace, name: 'retain' });
      if (current === undefined) throw new Error('DGDR retain is gone');
      await createRun(name, undefined, { outcome: 'fail' }, { ref: request, generation: Number(current.metadata['generation']) });
      await reasonOf(name, undefined, 'JobFailed');
      await user.replace({ ...current, spec: { ...(current['spec'] as Record<string, unknown>), recommendation: { maxCandidates: index + 2 } } });
    }
    await createRun('unowned-1', undefined, { outcome: 'fail' });
    await reasonOf('unowned-1', undefined, 'JobFailed');
    await handleRunCleanup(event(RUN_KIND, DGDR_V1BETA2, 'retain-7'), cleanup);
    const left = (await user.list(DGDR_V1BETA2, RUN_KIND, namespace)).filter((r) => r.metadata.deletionTimestamp === undefined).map((r) => r.metadata.name);
    expect(left.filter((n) => n.startsWith('retain-') || n.startsWith('unowned-')).sort()).toEqual(['retain-3', 'retain-4', 'retain-5', 'retain-6', 'retain-7', 'unowned-1']);
    // The retired Runs' Jobs and pods go with them (garbage collection); the kept ones stay.
    await eventually('the retired Runs\' Jobs to be collected', async () => ((await getJob('retain-1')) === undefined && (await getJob('retain-2')) === undefined ? true : undefined));
    expect(await getJob('retain-3')).toBeDefined();
  }, 240_000);
});
