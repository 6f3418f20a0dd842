/**
 * Least privilege, proven for the cleanup function (issue 9 part 4): its handlers run with a
 * TokenRequest token of a ServiceAccount bound to exactly the chart's `dynamo-cleanup`
 * ClusterRole (infra/chart/templates/cleanup/rbac.yaml, rendered by `helm template` with
 * lpx.enabled and dgdrV1Beta2.enabled set to true), through a loopback recorder that notes the
 * verb and resource of every request (test/support/rbac.ts). Representative flows of each
 * concern run: trace claims (a Job event followed to its Run's claim, a Job stopped by
 * foreground deletion, a gone Run's finalizer released), Run retention (a request's sixth
 * finished Run retired) and LPX scheduling deadlines (a status record, a scale-down, expired
 * requests deleted), and the resync's listings and ticks (each read from one LIST per kind). Then:
 *
 * - every flow does what it should and the API server refused nothing: the role is enough;
 * - every verb the role grants was used by some request: no verb is beyond what the function uses.
 *
 * What does not run here, said where it matters: the profile function's Run handler (the test
 * writes the Completed condition it would write; test/integration/v1beta2-trace-claim.test.ts
 * drives it for real), Grove and the LPX scheduler (the test writes what they would, as
 * test/integration/lpx.test.ts does), and the reconcile function that builds the LPX graph runs
 * under the admin token (its own role is proven by rbac.test.ts and rbac-lpx.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGDR_V1BETA2, LABEL_DGDR_GENERATION, LABEL_DGDR_RUN_UID, LPR_API_VERSION, LPR_KIND, LPXGD_API_VERSION, LPXGD_KIND, RUN_KIND, TRACE_CLAIM_FINALIZER_PREFIX } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent, type Outcome } from '../../shared/runtime/index.js';
import cleanup from '../../functions/cleanup/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { lpxGraphWithExpiringRequests, ordinalOf, prepareLpxBuild, removeLpxBuild } from '../support/lpx-world.js';
import { resyncRoute } from '../support/resync.js';
import { chartClusterRoles, forbidden, grants, kubeconfigFor, label, serviceAccountWith, startRequestRecorder, usedGrants, type PolicyRule, type RequestRecorder } from '../support/rbac.js';

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;
const DEADLINE_SECONDS = 60;

let namespace = '';
let tmpDir = '';
let rules: PolicyRule[] = [];
let recorder: RequestRecorder;

beforeAll(async () => {
  const roles = await chartClusterRoles('templates/cleanup/rbac.yaml', { 'lpx.enabled': 'true', 'dgdrV1Beta2.enabled': 'true' });
  rules = roles.get('dynamo-cleanup') ?? [];
  namespace = await createTestNamespace(kubeConfig, 'rbac-cleanup');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-cleanup-'));
  recorder = await startRequestRecorder(kubeConfig);
  await prepareLpxBuild();
});

afterAll(async () => {
  await recorder?.close();
  await removeLpxBuild();
  await rm(tmpDir, { recursive: true, force: true });
});

function event(apiVersion: string, kind: string, name: string, object?: KubeObject): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace, name }, object };
}

/** A Run that reads `claim` (trace workload), or none (static), controlled by `owner` when given. */
function aRun(name: string, claim: string | undefined, owner?: { readonly uid: string; readonly generation: number }) {
  return {
    ...RUN,
    metadata: {
      name,
      namespace,
      ...(owner === undefined
        ? {}
        : { ownerReferences: [{ apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', name: 'retain', uid: owner.uid, controller: true }], labels: { [LABEL_DGDR_GENERATION]: String(owner.generation) } }),
    },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      workload: claim === undefined ? { static: { isl: 4000, osl: 1000 } } : { trace: { source: { persistentVolumeClaim: { claimName: claim, subPath: 'trace.jsonl.gz' } } } },
    },
  };
}

/** What the flows did, as stored on the API server afterwards. */
interface FlowResult {
  readonly outcomes: Record<string, string>;
  /** The claim's Run finalizers left (the gone Run's released, the open Run's kept). */
  readonly claimRunFinalizers: string[];
  /** The open Run's Job, stopped (gone or under foreground deletion). */
  readonly jobStopped: boolean;
  /** The request's Runs left, by generation label. */
  readonly retainedGenerations: string[];
  readonly schedulingFailed: string | undefined;
  readonly scalingGroupReplicas: number | undefined;
  readonly requestOrdinals: number[];
  readonly listed: { readonly claims: boolean; readonly runs: boolean; readonly lpxGraphDeployments: boolean };
  /** The resync ticks' outcomes, by object (their reads from one LIST per kind). */
  readonly ticks: { readonly lpx: Record<string, string> };
}

describe('cleanup ServiceAccount (chart templates/cleanup/rbac.yaml, lpx.enabled and dgdrV1Beta2.enabled)', () => {
  let result: FlowResult;

  it('has no wildcard, no watch or deletecollection (a level-triggered function never sends them)', () => {
    const all = grants(rules);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((g) => g.group === '*' || g.resource === '*' || g.verb === '*' || ['watch', 'deletecollection'].includes(g.verb)).map(label)).toEqual([]);
  });

  it('is enough: with a TokenRequest token of the chart role, trace-claim, retention and LPX deadline flows do their writes and nothing is refused', async () => {
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'cleanup', rules);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir, recorder.url);
    const config = defaultConfig({ port: 0, kubeconfigPath, lpxEnabled: true, dgdrV1Beta2Enabled: true });
    const deps = await cleanup.init({ log, now: () => new Date(), config });
    const afterDeadline = await cleanup.init({ log, now: () => new Date(Date.now() + (DEADLINE_SECONDS + 60) * 1000), config });
    const route = (kind: string) => {
      const found = cleanup.routes.find((r) => r.kind === kind);
      if (found === undefined) throw new Error(`no cleanup route for ${kind}`);
      return found;
    };
    const outcome = (promise: Promise<Outcome>) => promise.then((o) => o.kind, (error: unknown) => `threw ${error instanceof Error ? error.message : String(error)}`);

    // Trace claims. An open Run reads the claim; its Job is active (suspended, so no pod is
    // made); the claim also carries the finalizer of a Run that is gone. The claim is deleted
    // (Terminating: the finalizers hold it).
    const open = await admin.apply(aRun('open', 'trace'));
    const goneFinalizer = `${TRACE_CLAIM_FINALIZER_PREFIX}${randomUUID()}`;
    const openFinalizer = `${TRACE_CLAIM_FINALIZER_PREFIX}${open.metadata.uid ?? ''}`;
    await admin.apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'open-aisimulate', namespace, labels: { [LABEL_DGDR_RUN_UID]: open.metadata.uid ?? '' }, ownerReferences: [{ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, name: 'open', uid: open.metadata.uid, controller: true }] },
      spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'aisimulate', image: 'registry.invalid/aisimulate:test' }] } } },
    });
    await admin.apply({
      ...CLAIM,
      metadata: { name: 'trace', namespace, finalizers: [openFinalizer, goneFinalizer] },
      spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
    });
    await admin.delete({ ...CLAIM, namespace, name: 'trace' });
    // The Job's event: followed to its Run's claim, which is reconciled.
    const outcomes: Record<string, string> = {};
    outcomes['job'] = await outcome(route('Job').handle(event('batch/v1', 'Job', 'open-aisimulate'), deps));
    const claim = await admin.get({ ...CLAIM, namespace, name: 'trace' });
    const job = await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'open-aisimulate' });

    // Run retention: six finished Runs of one request. The request is a real object (its uid is
    // the same in every served version), so the garbage collector never finds the Runs' owner
    // missing; the owner reference is all retention reads. Completed=True is written as the
    // profile function's Run handler writes it.
    const owner = await admin.apply({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'retain', namespace }, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' } });
    const request = owner.metadata.uid ?? '';
    for (const generation of [1, 2, 3, 4, 5, 6]) {
      await admin.apply(aRun(`retain-${generation}`, undefined, { uid: request, generation }));
      const at = new Date(Date.now() - (10 - generation) * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await admin.applyStatus(
        { ...RUN, metadata: { name: `retain-${generation}`, namespace }, status: { phase: 'Failed', completionTime: at, conditions: [{ type: 'Completed', status: 'True', reason: 'JobFailed', message: 'aisimulate exited 2', lastTransitionTime: at }] } },
        { force: true },
      );
    }
    outcomes['run'] = await outcome(route(RUN_KIND).handle(event(DGDR_V1BETA2, RUN_KIND, 'retain-6'), deps));
    const retainedGenerations = (await admin.list(DGDR_V1BETA2, RUN_KIND, namespace))
      .filter((r) => r.metadata.deletionTimestamp === undefined && r.metadata.name.startsWith('retain-'))
      .map((r) => r.metadata.labels?.[LABEL_DGDR_GENERATION] ?? '')
      .sort();

    // LPX scheduling deadlines: three requests of an explicit-replicas engine, only ordinal 0
    // bound, past their deadline: recorded, capacity reduced, the trailing two deleted.
    const lpx = await lpxGraphWithExpiringRequests(namespace, 'deadline', { replicas: 3 }, DEADLINE_SECONDS, [0]);
    outcomes['lpx'] = await outcome(route(LPXGD_KIND).handle(event(LPXGD_API_VERSION, LPXGD_KIND, 'deadline'), afterDeadline));
    const lpxgd = await admin.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name: 'deadline' });
    const group = await admin.get({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace, name: `${lpx.pcsName}-0-lpx` });
    const requestOrdinals = await eventually('the expired requests deleted', async () => {
      const ordinals = (await admin.list(LPR_API_VERSION, LPR_KIND, namespace)).filter((r) => r.metadata.deletionTimestamp === undefined).map(ordinalOf);
      return ordinals.length < 3 ? ordinals.sort() : undefined;
    });

    // The resync's listings of each route.
    const lists = async (kind: string) => (await route(kind).listKeys?.(deps).then(() => true, () => false)) ?? false;
    result = {
      outcomes,
      claimRunFinalizers: ((claim?.metadata['finalizers'] as string[] | undefined) ?? []).filter((f) => f.startsWith(TRACE_CLAIM_FINALIZER_PREFIX)),
      jobStopped: job === undefined || job.metadata.deletionTimestamp !== undefined,
      retainedGenerations,
      schedulingFailed: ((lpxgd?.['status'] as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'SchedulingFailed')?.reason,
      scalingGroupReplicas: (group?.['spec'] as { replicas?: number } | undefined)?.replicas,
      requestOrdinals,
      listed: { claims: await lists('PersistentVolumeClaim'), runs: await lists(RUN_KIND), lpxGraphDeployments: await lists(LPXGD_KIND) },
      ticks: { lpx: await resyncRoute(cleanup, route(LPXGD_KIND), deps, namespace) },
    };
    expect(forbidden(recorder.requests)).toEqual([]);
    expect(result).toEqual({
      outcomes: { job: 'Done', run: 'Done', lpx: 'Done' },
      // "the finalizer is removed once the Run and its Jobs are deleted" (dgdr-reference "Trace claim lifecycle"): the gone Run's only.
      claimRunFinalizers: [openFinalizer],
      // "Deleting the claim cancels its Runs": the open Run's active Job is stopped.
      jobStopped: true,
      // "keeps the Runs ... of a request's five most recent finished Runs".
      retainedGenerations: ['2', '3', '4', '5', '6'],
      schedulingFailed: 'LPXSchedulingDeadlineExceeded',
      scalingGroupReplicas: 1,
      requestOrdinals: [0],
      listed: { claims: true, runs: true, lpxGraphDeployments: true },
      ticks: { lpx: { deadline: 'Done' } },
    });
  });

  it('grants no verb beyond what the function uses: every granted verb was sent by some request of the flows', () => {
    expect(result).toBeDefined();
    const used = usedGrants(recorder.requests.filter((r) => r.namespace === namespace || r.namespace === undefined));
    expect(grants(rules).map(label).filter((g) => !used.has(g))).toEqual([]);
  });
});
