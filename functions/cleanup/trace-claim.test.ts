/**
 * The cleanup function's trace-claim pass over an in-memory client (shared/dev/memory-kube.ts):
 * what a resync's snapshot may and may not decide alone. The decisions themselves are in
 * shared/domain/v1beta2/trace-claim.test.ts; the same paths against the real API server in
 * test/integration/v1beta2-trace-claim.test.ts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryKube } from '../../shared/dev/memory-kube.js';
import type { KubeObject, KubeReader } from '../../shared/kube/index.js';
import { defaultConfig, PermanentError, TransientError } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';
import { reconcileClaim, reconcileClaimsWithRunFinalizers } from './trace-claim.js';

const NAMESPACE = 'inference';
const RUN_UID = '7d1f0a52-0000-4000-8000-000000000001';
const FINALIZER = `nvidia.com/dgdr-run-${RUN_UID}`;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;

const claim: KubeObject = {
  ...CLAIM,
  metadata: { name: 'request-traces', namespace: NAMESPACE, finalizers: ['kubernetes.io/pvc-protection', FINALIZER] },
  spec: { volumeMode: 'Filesystem' },
  status: { phase: 'Bound' },
};
const run: KubeObject = {
  apiVersion: 'nvidia.com/v1beta2',
  kind: 'DynamoGraphDeploymentRun',
  metadata: { name: 'qwen3-trace-replay-1', namespace: NAMESPACE, uid: RUN_UID, generation: 1 },
  spec: {
    model: { name: 'Qwen/Qwen3-0.6B' },
    hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
    workload: { trace: { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/2026-10-27T10-00.jsonl.gz' } } } },
  },
};
const job: KubeObject = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: {
    name: 'qwen3-trace-replay-1-aisimulate',
    namespace: NAMESPACE,
    labels: { 'nvidia.com/dgdr-run-uid': RUN_UID },
    ownerReferences: [{ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', name: 'qwen3-trace-replay-1', uid: RUN_UID, controller: true }],
  },
  spec: {},
  status: { active: 1 },
};

function depsWith(objects: readonly KubeObject[]) {
  const kube = createMemoryKube(objects, 'dynamo-cleanup');
  const deps: CleanupDeps = { kube, log: pino({ level: 'silent' }), now: () => new Date('2026-12-02T05:00:00Z'), config: defaultConfig({ dgdrV1Beta2Enabled: true }) };
  return { kube, deps };
}

/**
 * A resync's snapshot whose kinds were listed at different moments: the claim after the Run
 * added its finalizer, the Runs and Jobs before that Run and its Job were created.
 */
function snapshotListingRunsAndJobsEarlier(live: KubeReader): KubeReader {
  return {
    get: (ref) => live.get(ref),
    list: async (apiVersion, kind, namespace, options) => (kind === 'PersistentVolumeClaim' ? live.list(apiVersion, kind, namespace, options) : []),
  };
}

async function claimFinalizers(kube: KubeReader): Promise<unknown> {
  return (await kube.get({ ...CLAIM, namespace: NAMESPACE, name: 'request-traces' }))?.metadata['finalizers'];
}

describe('cleanup function: trace claims in a resync', () => {
  it('reference "removes a Run\'s finalizer ... once the Run and its Jobs are deleted": a snapshot that lists neither the Run nor its Job (listed before they existed) releases nothing while both exist', async () => {
    const { kube, deps } = depsWith([claim, run, job]);
    expect(await reconcileClaim(deps, NAMESPACE, 'request-traces', snapshotListingRunsAndJobsEarlier(kube))).toEqual({ kind: 'Done' });
    expect(await claimFinalizers(kube)).toEqual(['kubernetes.io/pvc-protection', FINALIZER]);
    expect(kube.takeWrites()).toEqual([]);
  });

  it('the same snapshot when the Run and its Job are gone: the finalizer is released (and only ours)', async () => {
    const { kube, deps } = depsWith([claim]);
    expect(await reconcileClaim(deps, NAMESPACE, 'request-traces', snapshotListingRunsAndJobsEarlier(kube))).toEqual({ kind: 'Done' });
    expect(await claimFinalizers(kube)).toEqual(['kubernetes.io/pvc-protection']);
  });

  it('a Run deleted while its Job still runs (garbage collection not yet done) keeps its finalizer, from live reads too', async () => {
    const { kube, deps } = depsWith([claim, job]);
    expect(await reconcileClaim(deps, NAMESPACE, 'request-traces')).toEqual({ kind: 'Done' });
    expect(await claimFinalizers(kube)).toEqual(['kubernetes.io/pvc-protection', FINALIZER]);
  });
});

const FORBIDDEN = new PermanentError('cannot update PersistentVolumeClaim inference/request-traces: 403 Forbidden', { reason: 'Forbidden' });

/** Two claims with the Run finalizer, `request-traces` and `other-traces`; the API server refuses the update of each claim `refusals` names with its error. */
function twoClaimsRefusing(refusals: Readonly<Record<string, Error>>) {
  const other: KubeObject = { ...claim, metadata: { ...claim.metadata, name: 'other-traces' } };
  const world = depsWith([claim, other]);
  const replace = world.kube.replace.bind(world.kube);
  world.kube.replace = async (object) => {
    const refusal = refusals[object.metadata.name];
    if (refusal !== undefined) throw refusal;
    return replace(object);
  };
  return world;
}

describe('cleanup function: trace-claim writes', () => {
  const deleting: KubeObject = { ...claim, metadata: { ...claim.metadata, deletionTimestamp: '2026-12-02T04:59:00Z' } };
  const jobRef = { apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, name: 'qwen3-trace-replay-1-aisimulate' };

  it('reference "Deleting the claim cancels every Run that reads it": the Run\'s active Job is stopped, and only the Job read: one deleted and created again under its name since (another uid) is a 409, decided again, not deleted', async () => {
    const read = { ...job, metadata: { ...job.metadata, uid: 'job-uid-read' } };
    const { kube, deps } = depsWith([deleting, run, { ...job, metadata: { ...job.metadata, uid: 'job-uid-now' } }]);
    // The pass reads the Job as it was; the store holds its successor.
    const list = kube.list.bind(kube);
    kube.list = async (apiVersion, kind, namespace, options) => (kind === 'Job' ? [read] : list(apiVersion, kind, namespace, options));
    await expect(reconcileClaim(deps, NAMESPACE, 'request-traces')).rejects.toBeInstanceOf(TransientError);
    expect((await kube.get(jobRef))?.metadata.uid).toBe('job-uid-now');
    kube.list = list;
    expect(await reconcileClaim(deps, NAMESPACE, 'request-traces')).toEqual({ kind: 'Done' });
    expect(await kube.get(jobRef)).toBeUndefined();
  });

  it('a Job or Run deleted by reference decides every claim with a Run finalizer, each on its own: one whose write is refused does not keep the others\' finalizers, and its error is reported after', async () => {
    const { kube, deps } = twoClaimsRefusing({ 'request-traces': FORBIDDEN });
    await expect(reconcileClaimsWithRunFinalizers(deps, NAMESPACE)).rejects.toThrow('403 Forbidden');
    expect(await claimFinalizers(kube)).toEqual(['kubernetes.io/pvc-protection', FINALIZER]);
    expect((await kube.get({ ...CLAIM, namespace: NAMESPACE, name: 'other-traces' }))?.metadata['finalizers']).toEqual(['kubernetes.io/pvc-protection']);
  });

  it('a claim refused for good (403) ahead of one refused for now (409) does not turn the retryable failure into a permanent one: the pass is Transient, so the second claim is decided again', async () => {
    const { deps } = twoClaimsRefusing({ 'request-traces': FORBIDDEN, 'other-traces': new TransientError('Operation cannot be fulfilled on persistentvolumeclaims "other-traces": the object has been modified') });
    await expect(reconcileClaimsWithRunFinalizers(deps, NAMESPACE)).rejects.toBeInstanceOf(TransientError);
  });
});
