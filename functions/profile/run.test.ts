/**
 * The profile function's Run pass over an in-memory client (shared/dev/memory-kube.ts): what a
 * resync's snapshot may and may not decide alone. The Run decisions are in
 * shared/domain/v1beta2/*.test.ts; the same paths against the real API server in
 * test/integration/v1beta2-trace-claim.test.ts and dev-v1beta2.test.ts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryKube } from '../../shared/dev/memory-kube.js';
import type { KubeObject, KubeReader } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { handle, type RunDeps } from './run.js';

const NAMESPACE = 'inference';
const RUN_UID = '7d1f0a52-0000-4000-8000-000000000001';
const RUN = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun' } as const;

const claim: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'request-traces', namespace: NAMESPACE, finalizers: ['kubernetes.io/pvc-protection'] },
  spec: { volumeMode: 'Filesystem' },
  status: { phase: 'Bound' },
};
const run: KubeObject = {
  ...RUN,
  metadata: { name: 'qwen3-trace-replay-1', namespace: NAMESPACE, uid: RUN_UID, generation: 1, resourceVersion: '7' },
  spec: {
    model: { name: 'Qwen/Qwen3-0.6B' },
    hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
    workload: { trace: { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/2026-10-27T10-00.jsonl.gz' } } } },
  },
};

function depsWith(objects: readonly KubeObject[], snapshotOf: (live: KubeReader) => KubeReader) {
  const kube = createMemoryKube(objects, 'dynamo-profile-run');
  const deps: RunDeps = {
    kube,
    publisherKube: kube.as('dynamo-profile-publisher'),
    snapshot: snapshotOf(kube),
    log: pino({ level: 'silent' }),
    now: () => new Date('2026-12-02T05:00:00Z'),
    config: defaultConfig({ dgdrV1Beta2Enabled: true }),
    instance: 'test',
  };
  return { kube, deps };
}

const resync: KubeEvent = { id: 'e1', type: 'dev.dynamo-fn.resync', source: 'test', key: { ...RUN, namespace: NAMESPACE, name: 'qwen3-trace-replay-1' }, object: undefined };

describe('profile function: Runs in a resync', () => {
  it('reference "Before a Run creates its Job, the operator adds the finalizer": a snapshot that still lists a Run deleted since (and no Job: garbage collection took it) adds no finalizer and creates no Job', async () => {
    // Live: the Run is gone (deleted after the snapshot listed it), so is its Job; the claim was released.
    const { kube, deps } = depsWith([claim], () => ({
      get: async (ref) => (ref.kind === RUN.kind ? run : ref.kind === 'PersistentVolumeClaim' ? claim : undefined),
      list: async () => [],
    }));
    expect(await handle(resync, deps)).toEqual({ kind: 'Done' });
    expect(kube.takeWrites()).toEqual([]);
    expect(await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, name: 'qwen3-trace-replay-1-aisimulate' })).toBeUndefined();
  });

  it('the same snapshot while the Run exists: the finalizer first, then the Job', async () => {
    const { kube, deps } = depsWith([claim, run], (live) => live);
    expect(await handle(resync, deps)).toEqual({ kind: 'Done' });
    const stored = await kube.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NAMESPACE, name: 'request-traces' });
    expect(stored?.metadata['finalizers']).toEqual(['kubernetes.io/pvc-protection', `nvidia.com/dgdr-run-${RUN_UID}`]);
    expect(await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, name: 'qwen3-trace-replay-1-aisimulate' })).toBeDefined();
  });
});
