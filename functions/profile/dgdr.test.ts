/**
 * The profile function's DGDR handler over an in-memory client (shared/dev/memory-kube.ts, the one
 * `dynamo-fn replay` uses): which events name a request, the answer for each outcome, and the
 * writes it makes. The same paths against the real API server are in test/integration/profile.test.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryKube } from '../../shared/dev/memory-kube.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { PermanentError, TransientError, defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { configMapRoute, handle, jobRoute, type ProfileDeps } from './dgdr.js';

const NOW = new Date('2026-12-01T09:00:00Z');
const OUT3 = readFileSync(resolve(import.meta.dirname, '../../../shared/fixtures/profiler/out3.final_config.yaml'), 'utf8');
const HARDWARE = { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false };

function aDgdr(spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '1' },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', autoApply: true, hardware: HARDWARE, ...spec },
  };
}

function depsWith(objects: readonly KubeObject[]) {
  const kube = createMemoryKube(objects, 'dynamo-profile');
  const deps: ProfileDeps = { kube, log: pino({ level: 'silent' }), now: () => NOW, config: defaultConfig(), profilingJob: { operatorImage: undefined, standardEnv: [] }, instance: 'test' };
  return { kube, deps };
}

function eventFor(kind: string, apiVersion: string, name: string, object?: Record<string, unknown>): KubeEvent {
  return { id: 'e1', type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace: 'ns', name }, object };
}

describe('profile function: DGDR handler', () => {
  it('a request that is gone is Done, with no write', async () => {
    const { kube, deps } = depsWith([]);
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Done' });
    expect(kube.takeWrites()).toEqual([]);
  });

  it('Pending with explicit hardware: the Job, its service account and RoleBinding are created, the status written, Initialized emitted', async () => {
    const { kube, deps } = depsWith([aDgdr()]);
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Done' });
    const stored = await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'profile-qwen' });
    expect(stored?.metadata.labels).toEqual({ app: 'dynamo-profiler', dgdr: 'qwen', 'nvidia.com/managed-by': 'dynamo-operator' });
    expect(await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'ns', name: 'dgdr-profiling-job' })).toBeDefined();
    expect(await kube.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespace: 'ns', name: 'dgdr-profiling-job' })).toBeDefined();
    const dgdr = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' });
    expect((dgdr?.['status'] as { phase: string }).phase).toBe('Pending');
    expect(kube.takeWrites().filter((w) => w.verb === 'createEvent').map((w) => (w.verb === 'createEvent' ? w.event.reason : ''))).toEqual(['Initialized']);
  });

  it('a failed validation is Permanent with the Succeeded reason and message, after the status write', async () => {
    const { kube, deps } = depsWith([aDgdr({ searchStrategy: 'thorough', backend: 'auto' })]);
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({
      kind: 'Permanent',
      reason: 'ValidationFailed',
      message: 'Validation failed: spec.searchStrategy "thorough" is incompatible with spec.backend "auto": set spec.backend to a specific backend (sglang, trtllm, or vllm)',
    });
    const dgdr = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' });
    expect((dgdr?.['status'] as { phase: string }).phase).toBe('Failed');
    expect(await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'profile-qwen' })).toBeUndefined();
  });

  it('a DGD that appears between read and create is a TransientError (decided again, never adopted)', async () => {
    const annotation = 'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: qwen-dgd\nspec:\n  components:\n  - name: Frontend\n    type: frontend\n';
    const dgdr = { ...aDgdr(), metadata: { ...aDgdr().metadata, annotations: { 'nvidia.com/generated-dgd-spec': annotation } }, status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1 } };
    const { kube, deps } = depsWith([dgdr]);
    // Someone else's DGD of that name, created after the handler's read.
    const theirs: KubeObject = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'qwen-dgd', namespace: 'ns' }, spec: {} };
    const get = kube.get.bind(kube);
    let reads = 0;
    kube.get = async (ref) => {
      const found = await get(ref);
      if (ref.kind === 'DynamoGraphDeployment' && (reads += 1) === 1) await kube.create(theirs);
      return ref.kind === 'DynamoGraphDeployment' && reads === 1 ? undefined : found;
    };
    await expect(handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).rejects.toBeInstanceOf(TransientError);
    expect((await get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' }))?.['spec']).toEqual({});
  });

  it('a pass that read the request before another pass failed it creates no DGD: the status write, whose resourceVersion precondition proves the read current, comes before the create', async () => {
    const annotation = 'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: qwen-dgd\nspec:\n  components:\n  - name: Frontend\n    type: frontend\n';
    const deploying = { ...aDgdr(), metadata: { ...aDgdr().metadata, annotations: { 'nvidia.com/generated-dgd-spec': annotation } }, status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1 } };
    const { kube, deps } = depsWith([deploying]);
    const requestRef = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' };
    const stale = await kube.get(requestRef);
    // Another pass failed it meanwhile.
    await kube.applyStatus({ ...requestRef, metadata: { name: 'qwen', namespace: 'ns' }, status: { phase: 'Failed', dgdName: 'qwen-dgd', observedGeneration: 1 } });
    const get = kube.get.bind(kube);
    kube.get = async (ref) => (ref.kind === 'DynamoGraphDeploymentRequest' ? structuredClone(stale) : get(ref));
    await expect(handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).rejects.toBeInstanceOf(TransientError);
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeUndefined();
    // Read as it is, the same pass creates it (a Deploying request whose status already says so: the status write is kept as the precondition).
    kube.get = get;
    await kube.applyStatus({ ...requestRef, metadata: { name: 'qwen', namespace: 'ns' }, status: deploying.status });
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Done' });
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeDefined();
  });

  /** A request whose Job completed and whose output (written by its copier: controller reference to uid-1) holds OUT3, a planner deployment naming ConfigMap planner-config-fb8c. */
  function profiledWorld(): KubeObject[] {
    const dgdr = { ...aDgdr(), status: { phase: 'Profiling', profilingPhase: 'Done', profilingJobName: 'profile-qwen', observedGeneration: 1 } };
    const owner = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'qwen', uid: 'uid-1', controller: true, blockOwnerDeletion: true };
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'profile-qwen', namespace: 'ns', uid: 'job-uid', labels: { dgdr: 'qwen' }, ownerReferences: [owner] }, status: { conditions: [{ type: 'Complete', status: 'True' }] } };
    const output = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dgdr-output-qwen', namespace: 'ns', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns' }, ownerReferences: [owner] }, data: { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT3 } };
    return [dgdr, job, output];
  }
  const plannerRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'planner-config-fb8c' };

  it('issue 20 "names and name-labels alone never prove it": the create of a planner ConfigMap meets a planted one with the request\'s name labels: Permanent PlannerConfigMapConflict naming it, the ConfigMap untouched, no DGD', async () => {
    const planted: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-config-fb8c', namespace: 'ns', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator' } }, data: { 'planner_config.json': '{"planted":true}' } };
    const { kube, deps } = depsWith([...profiledWorld(), planted]);
    const before = await kube.get(plannerRef);
    const message = 'ConfigMap planner-config-fb8c (named by the profiling output) already exists and was not created by this DynamoGraphDeploymentRequest; it is left untouched (neither adopted nor deployed). Delete that ConfigMap and create a new request';
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Permanent', reason: 'PlannerConfigMapConflict', message: `Deployment failed: ${message}` });
    expect(await kube.get(plannerRef)).toEqual(before);
    const dgdr = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' });
    expect((dgdr?.['status'] as { phase: string }).phase).toBe('Failed');
    const events = kube.takeWrites().flatMap((w) => (w.verb === 'createEvent' ? [{ type: w.event.type, reason: w.event.reason, note: w.event.note }] : []));
    expect(events).toEqual([{ type: 'Warning', reason: 'ConfigMapCreationFailed', note: message }]);
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeUndefined();
  });

  it('upstream "Don\'t fail the DGDR, just log the error - ConfigMaps can be created manually": an output ConfigMap the API server refuses for good is a Warning ConfigMapCreationFailed, the request goes on to Deploying, and the refusal is not retried', async () => {
    const { kube, deps } = depsWith(profiledWorld());
    const create = kube.create.bind(kube);
    const refused = 'cannot create ConfigMap ns/planner-config-fb8c: 422 Invalid: metadata.annotations: Too long: must have at most 262144 bytes';
    let attempts = 0;
    kube.create = async (obj, options) => {
      if (obj.kind === 'ConfigMap' && obj.metadata.name === 'planner-config-fb8c') {
        attempts += 1;
        throw new PermanentError(refused, { reason: 'Invalid' });
      }
      return create(obj, options);
    };
    const event = eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen');
    expect(await handle(event, deps)).toEqual({ kind: 'Done' });
    const events = kube.takeWrites().flatMap((w) => (w.verb === 'createEvent' ? [{ type: w.event.type, reason: w.event.reason, note: w.event.note }] : []));
    expect(events).toContainEqual({ type: 'Warning', reason: 'ConfigMapCreationFailed', note: `Failed to create ConfigMaps from profiling output: failed to create ConfigMap planner-config-fb8c: ${refused}` });
    const dgdr = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' });
    // Past the step that creates the output's ConfigMaps: the next pass creates the DGD, not the refused ConfigMap again.
    expect((dgdr?.['status'] as { phase: string }).phase).toBe('Deploying');
    expect(await kube.get(plannerRef)).toBeUndefined();
    expect(attempts).toBe(1);
  });

  it('"nothing is lost or half-written": on PlannerConfigMapConflict the output\'s ConfigMaps this request created (this pass, or stamped with its uid by an earlier one) are deleted; the conflicting one and any other stay untouched', async () => {
    const extra = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  planner_config.json: '{}'\n`;
    // The output names three ConfigMaps: planner-config-fb8c (created by this pass), planner-planted (someone else's), planner-later (created for this request by an earlier pass).
    const world = profiledWorld().map((o) => (o.metadata.name === 'dgdr-output-qwen' ? { ...o, data: { ...(o['data'] as Record<string, string>), 'final_config.yaml': `${OUT3}---\n${extra('planner-planted')}---\n${extra('planner-later')}` } } : o));
    const planted: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-planted', namespace: 'ns', labels: { team: 'other' } }, data: { keep: 'me' } };
    const later: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-later', namespace: 'ns', resourceVersion: '7', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' } }, data: {} };
    const bystander: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ns' }, data: { a: 'b' } };
    const { kube, deps } = depsWith([...world, planted, later, bystander]);
    const [plantedBefore, bystanderBefore] = [await kube.get({ ...plannerRef, name: 'planner-planted' }), await kube.get({ ...plannerRef, name: 'settings' })];
    const result = await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps);
    expect(result).toMatchObject({ kind: 'Permanent', reason: 'PlannerConfigMapConflict' });
    expect((result as { message: string }).message).toContain('ConfigMap planner-planted (named by the profiling output) already exists');
    expect(await kube.get(plannerRef)).toBeUndefined();
    expect(await kube.get({ ...plannerRef, name: 'planner-later' })).toBeUndefined();
    expect(await kube.get({ ...plannerRef, name: 'planner-planted' })).toEqual(plantedBefore);
    expect(await kube.get({ ...plannerRef, name: 'settings' })).toEqual(bystanderBefore);
    const writes = kube.takeWrites();
    expect(writes.filter((w) => w.verb === 'delete').map((w) => (w.verb === 'delete' ? w.ref.name : ''))).toEqual(['planner-config-fb8c', 'planner-later']);
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeUndefined();
  });

  it('"nothing is lost or half-written": Deploying before its DGD, a planner ConfigMap found replaced by a foreign one fails the request; its own ConfigMaps are deleted only after the status write proved the read current (a refused write deletes nothing), and the Failed request deletes one made again later', async () => {
    const extra = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-later\ndata:\n  planner_config.json: '{}'\n`;
    const world = profiledWorld().map((o) => (o.metadata.name === 'dgdr-output-qwen' ? { ...o, data: { ...(o['data'] as Record<string, string>), 'final_config.yaml': `${OUT3}---\n${extra}` } } : o));
    const { kube, deps } = depsWith(world);
    const requestRef = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' };
    const event = eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen');
    expect(await handle(event, deps)).toEqual({ kind: 'Done' });
    expect((((await kube.get(requestRef))?.['status']) as { phase: string }).phase).toBe('Deploying');
    // planner-later replaced before the DGD is created, by an earlier request's of the same name (stamped with its uid).
    const olderLabels = { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-old' };
    await kube.delete({ ...plannerRef, name: 'planner-later' });
    await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-later', namespace: 'ns', labels: olderLabels }, data: {} });
    const applyStatus = kube.applyStatus.bind(kube);
    kube.applyStatus = () => Promise.reject(new TransientError('Operation cannot be fulfilled: the object has been modified'));
    await expect(handle(event, deps)).rejects.toBeInstanceOf(TransientError);
    expect(await kube.get(plannerRef)).toBeDefined();
    kube.applyStatus = applyStatus;
    expect(await handle(event, deps)).toMatchObject({ kind: 'Permanent', reason: 'PlannerConfigMapConflict' });
    expect(await kube.get(plannerRef)).toBeUndefined();
    expect((await kube.get({ ...plannerRef, name: 'planner-later' }))?.metadata.labels).toEqual(olderLabels);
    // A pass that had read the request before it failed creates its own ConfigMap again: the Failed request's next pass deletes it.
    await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-config-fb8c', namespace: 'ns', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' } }, data: {} });
    expect(await configMapRoute.handle(eventFor('ConfigMap', 'v1', 'planner-config-fb8c'), deps)).toEqual({ kind: 'Done' });
    expect(await kube.get(plannerRef)).toBeUndefined();
    expect(await kube.get({ ...plannerRef, name: 'planner-later' })).toBeDefined();
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeUndefined();
  });

  it('"nothing is lost or half-written": a failing pass whose delete of its own ConfigMap is refused after the status write still reports the failure: the Warning ConfigMapCreationFailed is emitted (the next pass, Failed, emits nothing)', async () => {
    const extra = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  planner_config.json: '{}'\n`;
    const world = profiledWorld().map((o) => (o.metadata.name === 'dgdr-output-qwen' ? { ...o, data: { ...(o['data'] as Record<string, string>), 'final_config.yaml': `${OUT3}---\n${extra('planner-planted')}` } } : o));
    const planted: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-planted', namespace: 'ns', labels: { team: 'other' } }, data: { keep: 'me' } };
    const { kube, deps } = depsWith([...world, planted]);
    const remove = kube.delete.bind(kube);
    let refusals = 0;
    kube.delete = async (ref, options) => {
      if (ref.kind === 'ConfigMap' && (refusals += 1) === 1) throw new TransientError('cannot delete ConfigMap ns/planner-config-fb8c: 500 InternalError');
      return remove(ref, options);
    };
    const event = eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen');
    await expect(handle(event, deps)).rejects.toBeInstanceOf(TransientError);
    await handle(event, deps);
    expect(await kube.get(plannerRef)).toBeUndefined();
    const reasons = kube.takeWrites().flatMap((w) => (w.verb === 'createEvent' ? [w.event.reason] : []));
    expect(reasons).toContain('ConfigMapCreationFailed');
  });

  it('a Failed PlannerConfigMapConflict request does not delete again, at every pass, its own ConfigMap that is already being deleted (deletionTimestamp set, held by another finalizer)', async () => {
    const failed = { ...aDgdr(), metadata: { ...aDgdr().metadata, annotations: { 'dgdr.nvidia.com/additional-resources': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-config-fb8c\n` } }, status: { phase: 'Failed', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [{ type: 'DeploymentReady', status: 'False', reason: 'PlannerConfigMapConflict', message: 'm', lastTransitionTime: '2026-12-01T08:00:00Z' }, { type: 'Succeeded', status: 'False', reason: 'PlannerConfigMapConflict', message: 'Deployment failed: m', lastTransitionTime: '2026-12-01T08:00:00Z' }] } };
    const terminating: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-config-fb8c', namespace: 'ns', deletionTimestamp: '2026-12-01T08:30:00Z', finalizers: ['example.com/backup'], labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' } }, data: {} };
    const { kube, deps } = depsWith([failed, terminating]);
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Done' });
    expect(kube.takeWrites().filter((w) => w.verb === 'delete')).toEqual([]);
  });

  it('issue 20: a planner ConfigMap this request created in an earlier pass (uid label, no owner, as upstream creates it) is its own on the retried create; the request goes on to Deploying', async () => {
    const { kube, deps } = depsWith(profiledWorld());
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), deps)).toEqual({ kind: 'Done' });
    const created = await kube.get(plannerRef);
    expect(created?.metadata.labels).toEqual({ 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' });
    expect(created?.metadata['ownerReferences']).toBeUndefined();
    // The same step again (its status write lost): the ConfigMap of that name is the request's own.
    const retry = depsWith([...profiledWorld(), created as KubeObject]);
    expect(await handle(eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen'), retry.deps)).toEqual({ kind: 'Done' });
    const request = await retry.kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', namespace: 'ns', name: 'qwen' });
    expect((request?.['status'] as { phase: string }).phase).toBe('Deploying');
    expect(retry.kube.takeWrites().filter((w) => w.verb === 'createEvent').map((w) => (w.verb === 'createEvent' ? w.event.reason : ''))).toEqual(['SpecGenerated']);
  });

  it('a request whose DGD the API server refuses (DeploymentRejected) does not leave its own planner ConfigMap behind: nothing owns it, and a new request of that name from the same output would fail PlannerConfigMapConflict on it', async () => {
    const { kube, deps } = depsWith(profiledWorld());
    const event = eventFor('DynamoGraphDeploymentRequest', 'nvidia.com/v1beta1', 'qwen');
    expect(await handle(event, deps)).toEqual({ kind: 'Done' }); // Profiling -> Deploying: the planner ConfigMap is created, stamped uid-1, no owner.
    expect((await kube.get(plannerRef))?.metadata.labels?.['dgdr.nvidia.com/uid']).toBe('uid-1');
    const create = kube.create.bind(kube);
    kube.create = async (obj) => {
      if (obj.kind === 'DynamoGraphDeployment') throw new PermanentError('cannot create DynamoGraphDeployment ns/qwen-dgd: 422 Invalid: admission webhook denied the request', { reason: 'Invalid' });
      return create(obj);
    };
    expect(await handle(event, deps)).toMatchObject({ kind: 'Permanent', reason: 'DeploymentRejected' });
    // Level-triggered: the Failed request's next pass (its own status write's event).
    expect(await handle(event, deps)).toEqual({ kind: 'Done' });
    expect(await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'ns', name: 'qwen-dgd' })).toBeUndefined();
    expect(await kube.get(plannerRef)).toBeUndefined();
  });

  it('child events name their request: a profiling Job by its dgdr label, a ConfigMap by its tracking labels; others are Done with no write', async () => {
    const { kube, deps } = depsWith([aDgdr()]);
    const unrelatedJob = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'backup', namespace: 'ns', labels: { app: 'backup' } } };
    expect(await jobRoute.handle(eventFor('Job', 'batch/v1', 'backup', unrelatedJob), deps)).toEqual({ kind: 'Done' });
    const unrelatedConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ns' } };
    expect(await configMapRoute.handle(eventFor('ConfigMap', 'v1', 'settings', unrelatedConfigMap), deps)).toEqual({ kind: 'Done' });
    expect(kube.takeWrites()).toEqual([]);
    const output = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dgdr-output-qwen', namespace: 'ns', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns' } } };
    expect(await configMapRoute.handle(eventFor('ConfigMap', 'v1', 'dgdr-output-qwen', output), deps)).toEqual({ kind: 'Done' });
    expect(await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'profile-qwen' })).toBeDefined();
  });
});
