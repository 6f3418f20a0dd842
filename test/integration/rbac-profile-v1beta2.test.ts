/**
 * Least privilege, proven for the profile function's v1beta2 part (issue 9 part 4): with
 * dgdrV1Beta2.enabled=true the chart's `dynamo-profile` ClusterRole (infra/chart/templates/profile/rbac.yaml,
 * rendered by `helm template`) gains rules for Runs and Candidates; the function's Run, Job, Pod
 * and claim routes run with a TokenRequest token of a ServiceAccount bound to exactly that role,
 * through a loopback recorder that notes the verb and resource of every request
 * (test/support/rbac.ts). Representative flows run, as test/integration/v1beta2-trace-claim.test.ts,
 * v1beta2-publisher.test.ts and v1beta2-request-runs.test.ts run them: a static Run (its Job server-side applied, run to
 * completion, its Candidate created, dry-run and published); a trace Run whose claim is then
 * deleted (the claim finalizer added, the Job created, then stopped by foreground deletion); a
 * native v1beta2 request (its first Run created, its status written); the Job, Pod, Candidate and claim
 * events; and the resync's listing, and a Run resync read from one LIST per kind (the trace Run's
 * claim among them). Then:
 *
 * - every flow does what it should and the API server refused nothing: the role is enough;
 * - every verb the v1beta2 rules add was used by some request: none is beyond what the function
 *   uses (the rules without v1beta2 are proven by test/integration/rbac-profile.test.ts).
 *
 * What does not run here: AISimulate (kwok completes the Job's pod, test/harness/kwok/stages.yaml,
 * and the test leaves the recommendation in the Run's output ConfigMap as the Job's output step
 * would, under a token of the chart's role of the Job's ServiceAccount), and the PersistentVolume controller (the claim stays Pending, which the Run accepts).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANDIDATE_KIND, DGDR_V1BETA2, RUN_KIND, TRACE_CLAIM_FINALIZER_PREFIX, type Condition } from '../../shared/api/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent, type Outcome } from '../../shared/runtime/index.js';
import profile from '../../functions/profile/index.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';
import { resyncRoute } from '../support/resync.js';
import { chartClusterRoles, forbidden, grants, kubeconfigFor, label, serviceAccountWith, startRequestRecorder, usedGrants, type PolicyRule, type RequestRecorder } from '../support/rbac.js';

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;
const RECOMMENDATION = readFileSync(path.resolve(sharedDir, 'fixtures', 'aisimulate', 'rec1.recommendation.first-candidate.json'), 'utf8');

let namespace = '';
let tmpDir = '';
let withV1beta2: PolicyRule[] = [];
let v1beta2Only: string[] = [];
/** The chart's ClusterRole of the Jobs' ServiceAccount (`dgdr-profiling-job`), with dgdrV1Beta2.enabled. */
let jobRules: PolicyRule[] = [];
let recorder: RequestRecorder;
let nodeNames: string[] = [];

beforeAll(async () => {
  const roles = await chartClusterRoles('templates/profile/rbac.yaml', { 'dgdrV1Beta2.enabled': 'true' });
  withV1beta2 = roles.get('dynamo-profile') ?? [];
  jobRules = roles.get('dynamo-dgdr-profiling-job') ?? [];
  const base = new Set(grants((await chartClusterRoles('templates/profile/rbac.yaml')).get('dynamo-profile') ?? []).map(label));
  v1beta2Only = [...new Set(grants(withV1beta2).map(label))].filter((g) => !base.has(g)).sort();
  namespace = await createTestNamespace(kubeConfig, 'rbac-profile-v1beta2');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-profile-v1beta2-'));
  recorder = await startRequestRecorder(kubeConfig);
  nodeNames = await createGpuNodes(admin, parseGpuFleet('1xNVIDIA-H200:8'), 'rbac-v1beta2-node');
});

afterAll(async () => {
  await recorder?.close();
  for (const name of nodeNames) await admin.delete({ apiVersion: 'v1', kind: 'Node', name });
  await rm(tmpDir, { recursive: true, force: true });
});

function event(apiVersion: string, kind: string, name: string): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace, name }, object: undefined };
}

function aRun(name: string, claim?: string): KubeObject {
  return {
    ...RUN,
    metadata: { name, namespace },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      workload: claim === undefined ? { static: { isl: 4000, osl: 1000 } } : { trace: { source: { persistentVolumeClaim: { claimName: claim, subPath: 'trace.jsonl.gz' } } } },
    },
  };
}

function condition(object: KubeObject | undefined, type: string): Condition | undefined {
  return (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

describe('profile ServiceAccount with dgdrV1Beta2.enabled (chart templates/profile/rbac.yaml)', () => {
  let done = false;

  it('adds no wildcard, no watch or deletecollection (a level-triggered function never sends them)', () => {
    expect(v1beta2Only.length).toBeGreaterThan(0);
    expect(v1beta2Only.filter((g) => g.includes('*') || g.startsWith('watch ') || g.startsWith('deletecollection '))).toEqual([]);
  });

  it('is enough: with a TokenRequest token of the chart role, a static Run publishes a Valid Candidate, a trace Run protects and then stops on its claim, and nothing is refused', async () => {
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'profile-v1beta2', withV1beta2);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir, recorder.url);
    const deps = await profile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath, dgdrV1Beta2Enabled: true }) });
    const route = (kind: string) => {
      const found = profile.routes.find((r) => r.kind === kind);
      if (found === undefined) throw new Error(`no profile route for ${kind}`);
      return found;
    };
    const outcome = (promise: Promise<Outcome>) => promise.then((o) => o.kind, (error: unknown) => `threw ${error instanceof Error ? error.message : String(error)}`);
    const step = (name: string) => outcome(route(RUN_KIND).handle(event(DGDR_V1BETA2, RUN_KIND, name), deps));

    // A static Run: its Job runs to completion (kwok), the output step leaves the recommendation,
    // and the publisher creates, dry-runs and publishes the Candidate.
    await admin.apply(aRun('static'));
    await eventually('Job static-aisimulate complete', async () => {
      await step('static');
      const job = await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'static-aisimulate' });
      return (job?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? job : undefined;
    }, 90_000, 250);
    const [pod] = await admin.list('v1', 'Pod', namespace, { labelSelector: 'job-name=static-aisimulate' });
    const childOutcomes: Record<string, string> = {
      job: await outcome(route('Job').handle(event('batch/v1', 'Job', 'static-aisimulate'), deps)),
      pod: await outcome(route('Pod').handle(event('v1', 'Pod', pod?.metadata.name ?? 'static-aisimulate-pod'), deps)),
    };
    // As the Job's output step writes it (shared/domain/v1beta2/run-output.ts): labelled with the
    // Run's uid, controlled by the Run with blockOwnerDeletion; under a token of the chart's role of
    // the Job's ServiceAccount, as the step runs (its `dynamographdeploymentruns/finalizers` update).
    const staticUid = (await admin.get({ ...RUN, namespace, name: 'static' }))?.metadata.uid ?? '';
    const jobServiceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'run-job', jobRules);
    const jobKubeConfig = new KubeConfig();
    jobKubeConfig.loadFromFile(await kubeconfigFor(kubeConfig, namespace, jobServiceAccount, tmpDir));
    await createKube(jobKubeConfig, { fieldManager: 'aisimulate-output' }).apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'static-aisimulate-output', namespace, labels: { 'nvidia.com/dgdr-run-uid': staticUid }, ownerReferences: [{ ...RUN, name: 'static', uid: staticUid, controller: true, blockOwnerDeletion: true }] },
      data: { 'recommendation.json': RECOMMENDATION },
    });
    const succeeded = await eventually('the static Run to succeed', async () => {
      await step('static');
      const run = await admin.get({ ...RUN, namespace, name: 'static' });
      return condition(run, 'Completed')?.status === 'True' ? run : undefined;
    }, 60_000, 250);
    const candidate = await admin.get({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, namespace, name: 'static-candidate-000001' });
    // A Candidate event wakes the Run that controls it (functions/profile/run.ts): its Candidate read by name.
    childOutcomes['candidate'] = await outcome(route(CANDIDATE_KIND).handle(event(DGDR_V1BETA2, CANDIDATE_KIND, 'static-candidate-000001'), deps));

    // A trace Run on a Pending claim ("A Pending claim ... is accepted"): the finalizer, then the
    // Job; the claim deleted: its Job is stopped by foreground deletion.
    await admin.apply({ ...CLAIM, metadata: { name: 'trace', namespace }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' } });
    const traced = await admin.apply(aRun('traced', 'trace'));
    await eventually('the trace Run\'s Job created', async () => {
      await step('traced');
      return (await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'traced-aisimulate' })) === undefined ? undefined : true;
    }, 30_000, 250);
    const protectedBy = ((await admin.get({ ...CLAIM, namespace, name: 'trace' }))?.metadata['finalizers'] as string[] | undefined) ?? [];
    // A Run resync: the open trace Run's claim is read from the resync's LIST of claims.
    const resynced = await resyncRoute(profile, route(RUN_KIND), deps, namespace);
    await admin.delete({ ...CLAIM, namespace, name: 'trace' });
    childOutcomes['claim'] = await outcome(route('PersistentVolumeClaim').handle(event('v1', 'PersistentVolumeClaim', 'trace'), deps));
    const stopped = await eventually('the trace Run\'s Job stopped', async () => {
      await step('traced');
      const job = await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'traced-aisimulate' });
      return job === undefined || job.metadata.deletionTimestamp !== undefined ? true : undefined;
    }, 30_000, 250);

    // A native v1beta2 request: its event (delivered as the DGDR route takes it) creates Run
    // <request>-1 and writes the request's status; a spec edit supersedes that Run.
    await admin.apply({ apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'replay', namespace }, spec: { ...(aRun('replay')['spec'] as Record<string, unknown>) } });
    const deliverRequest = () => outcome(route('DynamoGraphDeploymentRequest').handle(event('nvidia.com/v1beta1', 'DynamoGraphDeploymentRequest', 'replay'), deps));
    childOutcomes['request'] = await deliverRequest();
    const firstRun = await admin.get({ ...RUN, namespace, name: 'replay-1' });
    const request = await admin.get({ apiVersion: DGDR_V1BETA2, kind: 'DynamoGraphDeploymentRequest', namespace, name: 'replay' });

    const listed = await (route(RUN_KIND).listKeys?.(deps).then(() => true, () => false) ?? Promise.resolve(false));
    expect(forbidden(recorder.requests)).toEqual([]);
    expect({
      childOutcomes,
      completed: condition(succeeded, 'Completed')?.reason,
      published: condition(succeeded, 'Published')?.reason,
      valid: condition(candidate, 'Valid')?.reason,
      protectedBy: protectedBy.filter((f) => f.startsWith(TRACE_CLAIM_FINALIZER_PREFIX)),
      stopped,
      firstRunOwner: (firstRun?.metadata['ownerReferences'] as { kind: string; name: string }[] | undefined)?.[0]?.name,
      activeRun: ((request?.['status'] ?? {}) as { activeRunRef?: { name?: string } }).activeRunRef?.name,
      listed,
      resynced,
    }).toEqual({
      childOutcomes: { job: 'Done', pod: 'Done', candidate: 'Done', claim: 'Done', request: 'Done' },
      // v1beta2-publisher.test.ts: "PublicationSucceeded and the Run succeeds with a Valid Candidate".
      completed: 'RunSucceeded',
      published: 'PublicationSucceeded',
      valid: 'ValidationSucceeded',
      // "Every Run that reads the claim adds its own finalizer" (dgdr-reference "Trace claim lifecycle").
      protectedBy: [`${TRACE_CLAIM_FINALIZER_PREFIX}${traced.metadata.uid ?? ''}`],
      stopped: true,
      // "The request starts one Run per metadata.generation" (dgdr-reference "Trace claim lifecycle").
      firstRunOwner: 'replay',
      activeRun: 'replay-1',
      listed: true,
      resynced: { static: 'Done', traced: 'Done' },
    });
    done = true;
  });

  it('grants no verb beyond what the function uses: every verb the v1beta2 rules add was sent by some request of the flows', () => {
    expect(done).toBe(true);
    const used = usedGrants(recorder.requests);
    expect(v1beta2Only.filter((g) => !used.has(g))).toEqual([]);
  });
});
