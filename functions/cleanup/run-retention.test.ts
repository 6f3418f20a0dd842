/**
 * The cleanup function's Run retention over an in-memory client (shared/dev/memory-kube.ts):
 * what it may delete when a resync's snapshot is older than the API server, and what one Run it
 * cannot delete does to the others. The same route against the real API server is in
 * test/integration/v1beta2-trace-claim.test.ts ("Run retention").
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryKube } from '../../shared/dev/memory-kube.js';
import type { Kube, KubeObject, KubeReader } from '../../shared/kube/index.js';
import { defaultConfig, PermanentError, TransientError, type KubeEvent } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';
import { handle } from './run-retention.js';

const NAMESPACE = 'inference';
const RUN = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun' } as const;

function requestRef(uid: string) {
  return { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', name: 'qwen3', uid, controller: true };
}

/** Run `qwen3-<generation>` of the request `requestUid`: finished at minute `generation` when `finished`, else open; a trace Run when `claimName` is given. */
function aRun(generation: number, requestUid: string, finished: boolean, resourceVersion: string, claimName?: string): KubeObject {
  return {
    ...RUN,
    metadata: {
      name: `qwen3-${generation}`,
      namespace: NAMESPACE,
      uid: `${requestUid}-run-${generation}`,
      resourceVersion,
      labels: { 'nvidia.com/dgdr-generation': String(generation) },
      ownerReferences: [requestRef(requestUid)],
    },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      ...(claimName === undefined ? {} : { workload: { trace: { source: { persistentVolumeClaim: { claimName, subPath: 'trace.jsonl.gz' } } } } }),
    },
    status: finished
      ? {
          phase: 'Failed',
          completionTime: `2026-12-02T04:0${generation}:00.000Z`,
          conditions: [{ type: 'Completed', status: 'True', reason: 'JobFailed', message: 'failed', lastTransitionTime: `2026-12-02T04:0${generation}:00.000Z` }],
        }
      : { phase: 'Running', conditions: [{ type: 'Completed', status: 'False', reason: 'EvaluatingCandidates', message: 'running', lastTransitionTime: '2026-12-02T05:00:00.000Z' }] },
  };
}

function depsWith(kube: Kube, snapshot?: KubeReader): CleanupDeps {
  return { kube, log: pino({ level: 'silent' }), now: () => new Date('2026-12-02T05:00:00Z'), config: defaultConfig({ dgdrV1Beta2Enabled: true }), ...(snapshot === undefined ? {} : { snapshot }) };
}

function runEvent(name: string): KubeEvent {
  return { id: `resync-${name}`, type: 'dev.dynamo-fn.resync', source: 'test', key: { ...RUN, namespace: NAMESPACE, name }, object: undefined };
}

/** A resync's snapshot taken earlier: answers every read from `objects`, never from the API server. */
function snapshotOf(objects: readonly KubeObject[]): KubeReader {
  const store = createMemoryKube(objects, 'snapshot');
  return { get: (ref) => store.get(ref), list: (apiVersion, kind, namespace, options) => store.list(apiVersion, kind, namespace, options) };
}

async function runNames(kube: KubeReader): Promise<string[]> {
  return (await kube.list(RUN.apiVersion, RUN.kind, NAMESPACE)).map((r) => r.metadata.name).sort();
}

describe('cleanup function: Run retention', () => {
  it('never delete an object it did not create (the wrong generation of a name): a resync snapshot listing a deleted request\'s finished Runs never deletes the open Run a new request of the same name created under one of their names', async () => {
    // Snapshot: the old request (uid old-request) with six finished Runs; the oldest is due for retirement.
    const snapshot = snapshotOf([1, 2, 3, 4, 5, 6].map((g) => aRun(g, 'old-request', true, String(100 + g))));
    // Now: the request was deleted (its Runs collected) and created again; its first Run is open and reads the same name.
    const live = createMemoryKube([aRun(1, 'new-request', false, '900')], 'dynamo-cleanup');
    // The version read is gone: a 409 Conflict, answered as transient (an event is retried on fresh reads; a resync's object waits for the next tick).
    await expect(handle(runEvent('qwen3-3'), depsWith(live, snapshot))).rejects.toBeInstanceOf(TransientError);
    expect(await runNames(live)).toEqual(['qwen3-1']);
    expect((await live.get({ ...RUN, namespace: NAMESPACE, name: 'qwen3-1' }))?.metadata.uid).toBe('new-request-run-1');
  });

  it('one bad object never stalls the others: a retired Run the API server refuses to delete does not keep the request\'s other retired Runs, nor the event\'s Run\'s claim release', async () => {
    // The newest Run read a trace claim and is finished: its finalizer is due for release too.
    const claim: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'request-traces', namespace: NAMESPACE, finalizers: ['nvidia.com/dgdr-run-request-run-8'] }, spec: {}, status: { phase: 'Bound' } };
    const memory = createMemoryKube([...[1, 2, 3, 4, 5, 6, 7].map((g) => aRun(g, 'request', true, String(100 + g))), aRun(8, 'request', true, '108', 'request-traces'), claim], 'dynamo-cleanup');
    const refusing: Kube = {
      ...memory,
      delete: async (ref, options) => {
        if (ref.name === 'qwen3-1') throw new PermanentError('cannot delete DynamoGraphDeploymentRun inference/qwen3-1: 403 Forbidden: denied by a deletion-protection policy', { reason: 'Forbidden' });
        return memory.delete(ref, options);
      },
    };
    await expect(handle(runEvent('qwen3-8'), depsWith(refusing))).rejects.toBeInstanceOf(PermanentError);
    expect(await runNames(memory)).toEqual(['qwen3-1', 'qwen3-4', 'qwen3-5', 'qwen3-6', 'qwen3-7', 'qwen3-8']);
    expect((await memory.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NAMESPACE, name: 'request-traces' }))?.metadata['finalizers']).toEqual([]);
  });

  it('a quiet resync writes nothing: a retired Run already being deleted (held by someone else\'s finalizer) is not deleted again at every pass', async () => {
    const deleting = aRun(1, 'request', true, '101');
    const held = { ...deleting, metadata: { ...deleting.metadata, deletionTimestamp: '2026-12-02T04:30:00Z', finalizers: ['example.com/hold'] } };
    const memory = createMemoryKube([held, ...[2, 3, 4, 5, 6].map((g) => aRun(g, 'request', true, String(100 + g)))], 'dynamo-cleanup');
    expect(await handle(runEvent('qwen3-6'), depsWith(memory))).toEqual({ kind: 'Done' });
    expect(memory.takeWrites()).toEqual([]);
  });
});
