/**
 * Least privilege, proven for the profile function's DGDR v1beta1 part (issue 9 part 4): its
 * handlers run with a TokenRequest token of a ServiceAccount bound to exactly the chart's
 * `dynamo-profile` ClusterRole (infra/chart/templates/profile/rbac.yaml, rendered by `helm
 * template` with the default values, dgdrV1Beta2.enabled=false), through a loopback recorder that
 * notes the verb and resource of every request (test/support/rbac.ts). Representative flows run,
 * as test/integration/profile.test.ts runs them: a request whose hardware is discovered from the
 * GPU nodes (the spec persisted, the profiling Job's ServiceAccount, RoleBinding and Job
 * created, a stale output deleted); its output (the generated
 * DGD and a planner ConfigMap created, the ConfigMap adopted by the DGD, the DGD's pods read while
 * it deploys); a request whose Job fails (its pods read); a request whose model cache claim is
 * missing (the claim read, validation failed); the child events of a Job, ConfigMap and
 * DGD; and the resync's listing, and two resyncs read from one LIST per kind (one while the
 * request profiles, one once it is deployed and the others failed). Then:
 *
 * - every flow does what it should and the API server refused nothing: the role is enough;
 * - every verb the role grants was used by some request: no verb is beyond what the function uses
 *   (`bind` is no request verb; without it the API server's escalation check refuses the
 *   profiling Job's RoleBinding, which the last test shows; a `<resource>/finalizers` update is
 *   used by an accepted write that set `blockOwnerDeletion` on an owner of that kind, which the
 *   API server's OwnerReferencesPermissionEnforcement admission plugin checks);
 * - without `dynamographdeploymentrequests/finalizers` the profiling Job is refused with the
 *   plugin's message.
 *
 * What does not run here, said where it matters: the profiler (kwok completes or fails the Job's
 * pod, test/harness/kwok/stages.yaml, and the test writes the output ConfigMap as the Job's
 * output-copier sidecar would, under a token of the chart's profiling Job role), the admission webhooks (the request is created with the values
 * they would default), and the reconcile function and Grove (the test writes the DGD status they
 * would write). The v1beta2 rules (Runs and Candidates, behind dgdrV1Beta2.enabled) are proven
 * by test/integration/rbac-profile-v1beta2.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

type Obj = Record<string, unknown>;

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
const DGDR = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' } as const;
const DGD = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } as const;
const OUT3 = readFileSync(path.resolve(sharedDir, 'fixtures', 'profiler', 'out3.final_config.yaml'), 'utf8');
const NODE_PREFIX = 'rbac-profile-gpu';
/** The granted `bind` on the profiling Job's ClusterRole: not a request verb, see below. */
const BIND = 'bind rbac.authorization.k8s.io/clusterroles';
const PROFILING_JOB_ROLE = 'dynamo-dgdr-profiling-job';

let namespace = '';
let tmpDir = '';
let rules: PolicyRule[] = [];
/** The chart's ClusterRole for the profiling Job's ServiceAccount (`dynamo-dgdr-profiling-job`). */
let jobRules: PolicyRule[] = [];
let recorder: RequestRecorder;
let nodeNames: string[] = [];

beforeAll(async () => {
  const roles = await chartClusterRoles('templates/profile/rbac.yaml');
  rules = roles.get('dynamo-profile') ?? [];
  jobRules = roles.get(PROFILING_JOB_ROLE) ?? [];
  namespace = await createTestNamespace(kubeConfig, 'rbac-profile');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-profile-'));
  recorder = await startRequestRecorder(kubeConfig);
  nodeNames = await createGpuNodes(admin, parseGpuFleet('2xNVIDIA-H100-80GB-HBM3-SXM:8:81559'), NODE_PREFIX);
});

afterAll(async () => {
  await recorder?.close();
  for (const name of nodeNames) await admin.delete({ apiVersion: 'v1', kind: 'Node', name });
  await rm(tmpDir, { recursive: true, force: true });
});

function event(apiVersion: string, kind: string, name: string, inNamespace = namespace): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace: inNamespace, name }, object: undefined };
}

/** A request as `kubectl create` stores it after the defaulting webhook (the planner image set). */
function aDgdr(name: string, spec: Obj, inNamespace = namespace): KubeObject {
  return { ...DGDR, metadata: { name, namespace: inNamespace }, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', ...spec } };
}

/** Pod annotations for the kwok Stages, through the request's own `overrides.profilingJob`. */
const podAnnotations = (annotations: Record<string, string>): Obj => ({ overrides: { profilingJob: { template: { metadata: { annotations } } } } });

/**
 * Writes `dgdr-output-<name>` as the output-copier sidecar does (profiler.md §1.3), as `writer`
 * (the profiling Job's ServiceAccount): controlled by the request with blockOwnerDeletion.
 */
async function writeOutput(writer: Kube, dgdr: KubeObject, data: Record<string, string>): Promise<void> {
  const name = dgdr.metadata.name;
  await writer.apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `dgdr-output-${name}`,
        namespace,
        labels: { 'dgdr.nvidia.com/name': name, 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' },
        ownerReferences: [{ ...DGDR, name, uid: dgdr.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      data,
    },
    { force: true },
  );
}

const phaseOf = (dgdr: KubeObject | undefined) => ((dgdr?.['status'] ?? {}) as { phase?: string }).phase;

describe('profile ServiceAccount (chart templates/profile/rbac.yaml, dgdrV1Beta2.enabled=false)', () => {
  let done = false;

  it('has no wildcard, no watch or deletecollection (a level-triggered function never sends them)', () => {
    const all = grants(rules);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((g) => g.group === '*' || g.resource === '*' || g.verb === '*' || ['watch', 'deletecollection'].includes(g.verb)).map(label)).toEqual([]);
  });

  it('is enough: with a TokenRequest token of the chart role, the DGDR flows reach Deployed and Failed and nothing is refused', async () => {
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'profile', rules);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir, recorder.url);
    const deps = await profile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
    const route = (kind: string) => {
      const found = profile.routes.find((r) => r.kind === kind);
      if (found === undefined) throw new Error(`no profile route for ${kind}`);
      return found;
    };
    const outcome = (promise: Promise<Outcome>) => promise.then((o) => o.kind, (error: unknown) => `threw ${error instanceof Error ? error.message : String(error)}`);
    const step = (name: string) => outcome(route(DGDR.kind).handle(event(DGDR.apiVersion, DGDR.kind, name), deps));
    /** Handles the request's events until its phase is `phase` (bounded), as the events would. */
    const settle = (name: string, phase: string) =>
      eventually(`DGDR ${name} phase ${phase}`, async () => {
        await step(name);
        const stored = await admin.get({ ...DGDR, namespace, name });
        return phaseOf(stored) === phase ? stored : undefined;
      }, 90_000, 250);

    // A request whose GPU shape is discovered from the nodes.
    const created = await admin.apply(aDgdr('ok', { hardware: { gpuSku: 'h100_sxm' }, ...podAnnotations({ 'kwok.dynamo-fn.dev/run-duration': '1s' }) }));
    const profiling = await settle('ok', 'Profiling');
    // A resync while the request profiles: its Job is read from the resync's LIST of Jobs.
    const resynced: Record<string, Record<string, string>> = { profiling: await resyncRoute(profile, route(DGDR.kind), deps, namespace) };
    const hardware = ((profiling['spec'] as Obj)['hardware'] as Obj | undefined)?.['numGpusPerNode'];
    const job = await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-ok' });
    const binding = await admin.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespace, name: 'dgdr-profiling-job' });

    // kwok completes the profiler pod; the sidecar's output names the generated DGD (with a planner
    // ConfigMap), written under a token of the chart's profiling Job role, as the sidecar runs:
    // its `dynamographdeploymentrequests/finalizers` update lets it set blockOwnerDeletion.
    const jobServiceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'profiling-job', jobRules);
    const jobKubeConfig = new KubeConfig();
    jobKubeConfig.loadFromFile(await kubeconfigFor(kubeConfig, namespace, jobServiceAccount, tmpDir));
    await writeOutput(createKube(jobKubeConfig, { fieldManager: 'kubectl' }), created, {
      phase: 'Done',
      message: 'Profiler completed successfully',
      profiler_status: 'success',
      'final_config.yaml': OUT3,
      'profiler_status.yaml': "status: success\ntimestamp: '2026-12-01T06:55:15Z'\nmessage: Profiler completed successfully\noutputs:\n  final_config: final_config.yaml\nphase: Done\n",
    });
    const deploying = await settle('ok', 'Deploying');
    const dgdName = ((deploying['status'] ?? {}) as { dgdName?: string }).dgdName ?? '';
    // The child events: each is followed to its request.
    const childOutcomes = {
      job: await outcome(route('Job').handle(event('batch/v1', 'Job', 'profile-ok'), deps)),
      configMap: await outcome(route('ConfigMap').handle(event('v1', 'ConfigMap', 'dgdr-output-ok'), deps)),
      dgd: await outcome(route(DGD.kind).handle(event(DGD.apiVersion, DGD.kind, dgdName), deps)),
    };
    const planner = await eventually('the planner ConfigMap adopted by the DGD', async () => {
      await step('ok');
      const cm = (await admin.list('v1', 'ConfigMap', namespace, { labelSelector: 'dgdr.nvidia.com/name=ok' })).find((c) => c.metadata.name.startsWith('planner-config'));
      return Array.isArray(cm?.metadata['ownerReferences']) ? cm : undefined;
    });
    // The reconcile function and Grove do not run here: the DGD status they would write.
    await admin.applyStatus({ ...DGD, metadata: { name: dgdName, namespace }, status: { state: 'successful', components: { Frontend: { replicas: 1, availableReplicas: 1 }, decode: { replicas: 1, availableReplicas: 1 } } } }, { force: true });
    await settle('ok', 'Deployed');

    // A request whose profiling Job fails with no output: its pods are read for the message.
    await admin.apply(aDgdr('fails', { hardware: { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 }, ...podAnnotations({ 'kwok.dynamo-fn.dev/outcome': 'fail', 'kwok.dynamo-fn.dev/container-name': 'profiler', 'kwok.dynamo-fn.dev/exit-code': '137', 'kwok.dynamo-fn.dev/reason': 'OOMKilled', 'kwok.dynamo-fn.dev/run-duration': '1s' }) }));
    const failed = await settle('fails', 'Failed');
    const failedMessage = (((failed['status'] ?? {}) as { conditions?: { type: string; message: string }[] }).conditions ?? []).find((c) => c.type === 'Profiling')?.message ?? '';

    // A request whose model cache claim does not exist fails validation before any Job.
    await admin.apply(aDgdr('no-cache', { hardware: { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 }, modelCache: { pvcName: 'missing-cache', pvcModelPath: 'qwen' } }));
    const noCache = await settle('no-cache', 'Failed');
    const noCacheMessage = (((noCache['status'] ?? {}) as { conditions?: { type: string; message: string }[] }).conditions ?? []).find((c) => c.type === 'Validation')?.message ?? '';

    // A request with a stale output of its own (an earlier attempt's, controlled by the request):
    // deleted, at the version read, before the Job is created (the only ConfigMap delete it sends).
    const stale = await admin.apply(aDgdr('stale', { hardware: { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 } }));
    await writeOutput(admin, stale, { phase: 'Done' });
    await settle('stale', 'Profiling');
    expect(await admin.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-stale' })).toBeUndefined();

    const listed = await (route(DGDR.kind).listKeys?.(deps).then(() => true, () => false) ?? Promise.resolve(false));
    // A resync at rest: the Deployed request's DGD and ConfigMaps read from the resync's LISTs.
    resynced['atRest'] = await resyncRoute(profile, route(DGDR.kind), deps, namespace);
    expect(forbidden(recorder.requests)).toEqual([]);
    expect({
      discoveredGpusPerNode: hardware,
      jobOwner: (job?.metadata['ownerReferences'] as { kind: string }[] | undefined)?.[0]?.kind,
      roleRef: binding?.['roleRef'],
      childOutcomes,
      plannerOwner: (planner.metadata['ownerReferences'] as { kind: string; name: string }[])[0],
      generatedDgd: (await admin.get({ ...DGD, namespace, name: dgdName })) !== undefined,
      failedWithPod: /Pod: profile-fails-[a-z0-9]+, Container: profiler, ExitCode: 137, Reason: OOMKilled/.test(failedMessage),
      noCacheMessage,
      listed,
      resynced,
    }).toEqual({
      // "hardware discovery from the GPU nodes" (profile.test.ts): the H100 nodes' 8 GPUs.
      discoveredGpusPerNode: 8,
      jobOwner: DGDR.kind,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'dynamo-dgdr-profiling-job' },
      childOutcomes: { job: 'Done', configMap: 'Done', dgd: 'Done' },
      // "once the DGD exists it owns them" (profile.test.ts, the planner ConfigMap).
      plannerOwner: expect.objectContaining({ kind: DGD.kind, name: dgdName }) as unknown,
      generatedDgd: true,
      failedWithPod: true,
      noCacheMessage: `model cache PVC missing-cache not found in namespace ${namespace}`,
      listed: true,
      resynced: { profiling: { ok: 'Done' }, atRest: { ok: 'Done', fails: 'Done', 'no-cache': 'Done', stale: 'Done' } },
    });
    done = true;
  });

  it('grants no verb beyond what the function uses: every granted verb was sent by some request of the flows', () => {
    expect(done).toBe(true);
    const used = usedGrants(recorder.requests);
    // `bind` is no request verb: the API server checks it when a RoleBinding is created to a
    // role whose permissions the creator does not hold itself (the profiling Job's role grants
    // pods create, this one does not; Kubernetes RBAC "Restrictions on role binding creation").
    // It was used when the function's RoleBinding create succeeded.
    if (used.has('create rbac.authorization.k8s.io/rolebindings')) used.add(BIND);
    expect(grants(rules).map(label).filter((g) => !used.has(g))).toEqual([]);
  });

  it('"only users with update permission to the finalizers subresource of the referenced owner" may set blockOwnerDeletion (OwnerReferencesPermissionEnforcement): without update on dynamographdeploymentrequests/finalizers the profiling Job the request controls is refused with the plugin\'s message', async () => {
    const drop = 'update nvidia.com/dynamographdeploymentrequests/finalizers';
    const all = grants(rules);
    expect(all.map(label)).toContain(drop);
    const withoutFinalizers = all.filter((g) => label(g) !== drop).map((g) => ({ apiGroups: [g.group], resources: [g.resource], verbs: [g.verb] }));
    const other = await createTestNamespace(kubeConfig, 'rbac-profile-nofin');
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, other, 'profile-nofin', withoutFinalizers);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, other, serviceAccount, tmpDir);
    const deps = await profile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
    await admin.apply(aDgdr('nofin', { hardware: { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 } }, other));
    const route = profile.routes.find((r) => r.kind === DGDR.kind);
    const failure = await route?.handle(event(DGDR.apiVersion, DGDR.kind, 'nofin', other), deps).then(
      (o) => `outcome ${o.kind}`,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: other, name: 'profile-nofin' })).toBeUndefined();
    // The plugin's denial (k8s.io/kubernetes plugin/pkg/admission/gc/gc_admission.go).
    expect(failure).toContain("is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on");
  });

  it('needs bind: without it, the profiling Job\'s RoleBinding is refused by the RBAC escalation check and no Job is created', async () => {
    // A namespace of its own, so the binding does not exist yet.
    const other = await createTestNamespace(kubeConfig, 'rbac-profile-nobind');
    const withoutBind = rules.filter((r) => !r.verbs.includes('bind'));
    expect(withoutBind.length).toBe(rules.length - 1);
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, other, 'profile', withoutBind);
    const refused = await startRequestRecorder(kubeConfig);
    // The escalation check compares the bound role's rules with the creator's, so the role must
    // exist, as the chart installs it; held only for this test (chart.test.ts installs the chart's own).
    const jobRole = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: PROFILING_JOB_ROLE };
    await admin.apply({ apiVersion: jobRole.apiVersion, kind: jobRole.kind, metadata: { name: PROFILING_JOB_ROLE }, rules: jobRules } as unknown as KubeObject);
    try {
      const kubeconfigPath = await kubeconfigFor(kubeConfig, other, serviceAccount, tmpDir, refused.url);
      const deps = await profile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
      await admin.apply(aDgdr('nobind', { hardware: { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 } }, other));
      const route = profile.routes.find((r) => r.kind === DGDR.kind);
      const outcome = await route?.handle(event(DGDR.apiVersion, DGDR.kind, 'nobind', other), deps).then((o) => o.kind, (error: unknown) => (error instanceof Error ? error.name : 'Error'));
      expect({ outcome, forbidden: forbidden(refused.requests), job: await admin.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: other, name: 'profile-nobind' }) }).toEqual({
        outcome: 'PermanentError',
        forbidden: ['create rbac.authorization.k8s.io/rolebindings'],
        job: undefined,
      });
    } finally {
      await refused.close();
      await admin.delete(jobRole);
    }
  });
});
