/**
 * The Candidate publisher of a v1beta2 Run against the real kube-apiserver (kwok runs the
 * Run's Job to completion): Candidates from AISimulate's recommendation, strict server-side
 * dry-run of each DGD, `Valid`, `Published`, and the Run's outcome. Source:
 * ../shared/reference/dgdr-reference.txt "v1beta2 DGD Overrides" and "Candidate status".
 *
 * The Job's output step (which leaves `recommendation.json` in the Run's output ConfigMap; it
 * runs for real in v1beta2-aisimulate-contract.test.ts) is played by the test with a real AISimulate output: ../shared/fixtures/aisimulate/
 * rec1.recommendation.first-candidate.json (`aisimulate recommend` over a Dynamo trace,
 * upstream-notes/profiler.md §3.5). The publisher's client impersonates a service account whose
 * Role first lacks `create` on DynamoGraphDeployments (the dry-run needs it), then gets it.
 * The DGD validating webhook is registered for this file's namespace, as the chart registers it
 * ("strict server-side dry-run creation, including DGD defaults, schema, CEL, and validating
 * webhooks"), served by the admission function.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pino from 'pino';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { CANDIDATE_KIND, DGDR_V1BETA2, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, RUN_KIND, type Condition } from '../../shared/api/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube as profileDeps } from '../../functions/profile/index.js';
import { startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { handle as handleRun } from '../../functions/profile/run.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const base = { log, now: () => new Date(), config: defaultConfig({ dgdrV1Beta2Enabled: true, aisimulateImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' }) };
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const RECOMMENDATION = readFileSync(resolve(sharedDir, 'fixtures', 'aisimulate', 'rec1.recommendation.first-candidate.json'), 'utf8');
/** A real disaggregated `aisimulate recommend` output (see shared/domain/v1beta2/recommendation.test.ts). */
const DISAGG_RECOMMENDATION = readFileSync(resolve(import.meta.dirname, '..', 'fixtures', 'aisimulate', 'disagg.recommendation.json'), 'utf8');
const SERVICE_ACCOUNT = 'dynamo-profile-publisher';

let namespace = '';
let nodes: string[] = [];
let admission: AdmissionServer | undefined;
const WEBHOOK_LABEL = 'v1beta2-publisher-dgd-webhook';
const VALIDATING = `v1beta2-publisher-dgd-${randomUUID().slice(0, 8)}`;
let deps: ReturnType<typeof profileDeps> & { publisherKube: Kube };

/** A client acting as the publisher's service account (admin impersonation), under the publisher's field manager. */
function publisherClient(): Kube {
  const impersonating = new KubeConfig();
  impersonating.loadFromString(kubeConfig.exportConfig());
  const current = impersonating.getCurrentUser();
  if (current === null) throw new Error('no current user in the test kubeconfig');
  (current as { impersonateUser?: string }).impersonateUser = `system:serviceaccount:${namespace}:${SERVICE_ACCOUNT}`;
  return createKube(impersonating, { fieldManager: FIELD_MANAGER_PROFILE_PUBLISHER });
}

const PUBLISHER_RULES = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  { apiGroups: ['nvidia.com'], resources: ['dynamographdeploymentcandidates'], verbs: ['get', 'list', 'create'] },
  { apiGroups: ['nvidia.com'], resources: ['dynamographdeploymentcandidates/status', 'dynamographdeploymentruns/status'], verbs: ['patch'] },
  // Candidates are controlled by their Run with blockOwnerDeletion (the harness runs the
  // OwnerReferencesPermissionEnforcement admission plugin).
  { apiGroups: ['nvidia.com'], resources: ['dynamographdeploymentruns/finalizers'], verbs: ['update'] },
];

async function setPublisherRole(canDryRunDgds: boolean, rules: readonly Record<string, unknown>[] = PUBLISHER_RULES): Promise<void> {
  const all = canDryRunDgds ? [...rules, { apiGroups: ['nvidia.com'], resources: ['dynamographdeployments'], verbs: ['create'] }] : rules;
  await user.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: SERVICE_ACCOUNT, namespace }, rules: all }, { force: true });
}

beforeAll(async () => {
  namespace = await createTestNamespace(kubeConfig, 'v1beta2-pub');
  nodes = await createGpuNodes(user, parseGpuFleet('1xNVIDIA-H200:8'), 'v1beta2-pub-node');
  await user.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace } });
  await user.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: SERVICE_ACCOUNT, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SERVICE_ACCOUNT },
    subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace }],
  });
  await setPublisherRole(true);
  deps = { ...profileDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN })), publisherKube: publisherClient() };
  // The DGD validating webhook (the admission function), for this namespace only.
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  admission = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log, shutdownDelaySeconds: 0 });
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [WEBHOOK_LABEL]: 'true' } } }, { force: true });
  await user.apply(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING },
      webhooks: [
        {
          name: 'validate.dynamographdeployments.nvidia.com',
          clientConfig: { url: `https://127.0.0.1:${admission.port}/validate/nvidia.com/v1beta1/dynamographdeployments`, caBundle: Buffer.from(certs.caPem).toString('base64') },
          rules: [{ apiGroups: ['nvidia.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['dynamographdeployments'], scope: 'Namespaced' }],
          namespaceSelector: { matchLabels: { [WEBHOOK_LABEL]: 'true' } },
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
        },
      ],
    } as unknown as Parameters<Kube['apply']>[0],
    { force: true },
  );
  // The API server picks webhook configurations up asynchronously: wait until the webhook refuses a DGD only it refuses.
  await eventually('the DGD validating webhook to be active', async () => {
    try {
      await user.create({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'probe', namespace }, spec: { components: [{ name: 'worker', type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'img:latest' }] } } }] } }, { dryRun: true });
      return undefined;
    } catch {
      return true;
    }
  });
});

afterAll(async () => {
  await user.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: VALIDATING });
  await admission?.close();
  for (const name of nodes) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
});

function event(name: string): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { ...RUN, namespace, name }, object: undefined };
}

async function createRun(name: string, dgdOverride?: Record<string, unknown>): Promise<void> {
  await user.apply({
    ...RUN,
    metadata: { name, namespace },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      workload: { static: { isl: 4000, osl: 1000 } },
      ...(dgdOverride === undefined ? {} : { overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', ...dgdOverride } } }),
    },
  });
}

/**
 * Runs the Run's Job to completion (kwok), then leaves AISimulate's output where the Job's output
 * step would (shared/domain/v1beta2/run-output.ts): the ConfigMap `<run>-aisimulate-output`,
 * labelled with the Run's uid and controller-owned by the Run.
 */
async function completeJob(name: string, recommendation: string = RECOMMENDATION): Promise<void> {
  await eventually(`Job ${name}-aisimulate complete`, async () => {
    await handleRun(event(name), deps).catch(() => undefined);
    const job = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: `${name}-aisimulate` });
    return (job?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? job : undefined;
  });
  const uid = (await getRun(name))?.metadata.uid ?? '';
  await user.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${name}-aisimulate-output`, namespace, labels: { 'nvidia.com/dgdr-run-uid': uid }, ownerReferences: [{ ...RUN, name, uid, controller: true, blockOwnerDeletion: true }] },
    data: { 'recommendation.json': recommendation },
  });
}

/** Handles the Run's events until its Completed condition is True (failed passes are retried); out: the finished Run. */
async function finishedRun(name: string): Promise<KubeObject> {
  return eventually('the Run to finish', async () => {
    await handleRun(event(name), deps).catch(() => undefined);
    const run = await getRun(name);
    return condition(run, 'Completed')?.status === 'True' ? run : undefined;
  });
}

function condition(object: KubeObject | undefined, type: string): Condition | undefined {
  return (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

const getRun = (name: string) => user.get({ ...RUN, namespace, name });
const controllerUid = (object: KubeObject | undefined): unknown => (object?.metadata.ownerReferences as { controller?: boolean; uid?: string }[] | undefined)?.find((o) => o.controller === true)?.uid;
const getCandidate = (run: string) => user.get({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, namespace, name: `${run}-candidate-000001` });

describe('Published: "Retryable Candidate preparation errors are visible on the Run as Published=False, reason PublicationBlocked, with the error"', () => {
  it('an RBAC role that forbids the DGD dry-run blocks publication (HTTP 403) while retrying; once fixed, PublicationSucceeded and the Run succeeds with a Valid Candidate', async () => {
    await setPublisherRole(false);
    await createRun('blocked');
    await completeJob('blocked');
    const blocked = await eventually('Published=False PublicationBlocked', async () => {
      await expect(handleRun(event('blocked'), deps)).rejects.toBeInstanceOf(TransientError);
      const run = await getRun('blocked');
      return condition(run, 'Published')?.reason === 'PublicationBlocked' ? run : undefined;
    });
    const published = condition(blocked, 'Published');
    expect(published).toMatchObject({ status: 'False', observedGeneration: 1 });
    expect(published?.message).toMatch(/^DGD dry-run forbidden: .*dynamographdeployments/);
    // The Run logic owns Completed and keeps the Run open while the publisher retries.
    expect(condition(blocked, 'Completed')).toMatchObject({ status: 'False', reason: 'EvaluatingCandidates' });
    // The Candidate is stored, but not yet checked: no Valid condition (its absence is not success).
    expect(condition(await getCandidate('blocked'), 'Valid')).toBeUndefined();

    await setPublisherRole(true);
    const succeeded = await eventually('the Run to succeed after the RBAC fix', async () => {
      await handleRun(event('blocked'), deps).catch(() => undefined);
      const run = await getRun('blocked');
      return condition(run, 'Completed')?.status === 'True' ? run : undefined;
    });
    expect(condition(succeeded, 'Published')).toMatchObject({ status: 'True', reason: 'PublicationSucceeded' });
    expect(condition(succeeded, 'Completed')).toMatchObject({ reason: 'RunSucceeded', message: '1 of 1 Candidates are Valid' });
    expect(succeeded['status']).toMatchObject({ phase: 'Succeeded', candidateRefs: [{ name: 'blocked-candidate-000001', candidateId: 'candidate-000001' }], progress: { candidates: { published: 1 } } });
    const candidate = await getCandidate('blocked');
    expect(condition(candidate, 'Valid')).toMatchObject({ status: 'True', reason: 'ValidationSucceeded', message: 'Strict DGD dry-run succeeded' });
    expect(candidate?.metadata.labels).toEqual({ 'nvidia.com/dgdr-run-uid': succeeded.metadata.uid, 'nvidia.com/dgdr-candidate-id': 'candidate-000001' });
    expect(candidate?.['status']).toMatchObject({ rank: 1, parameters: { backend: 'vllm', deployment_mode: 'agg', tp: 2, pp: 1, used_gpus: 2 } });
    expect((candidate?.['spec'] as { backendFramework: string }).backendFramework).toBe('vllm');
    // The dry-run stored nothing.
    expect(await user.list('nvidia.com/v1beta1', 'DynamoGraphDeployment', namespace)).toEqual([]);
  });
});

describe('"Own what you read ... never deletes or reads one it cannot prove; a collision is reported on the request\'s status with the name" (issue 20 item 1): a Candidate the Run does not control', () => {
  it('a Candidate created by someone else under the Candidate\'s name and the Run\'s uid label is never validated, written or published: Published=False PublicationBlocked naming it, the Run stays open; once it is removed, the Run\'s own Candidate is published', async () => {
    await createRun('foreign-candidate');
    const uid = (await getRun('foreign-candidate'))?.metadata.uid ?? '';
    const foreignSpec = { components: [{ name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'attacker.example/miner:1.0.0' }] } } }] };
    await user.create({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, metadata: { name: 'foreign-candidate-candidate-000001', namespace, labels: { 'nvidia.com/dgdr-run-uid': uid } }, spec: foreignSpec });
    await completeJob('foreign-candidate');
    const blocked = await eventually('Published=False PublicationBlocked', async () => {
      await handleRun(event('foreign-candidate'), deps).catch(() => undefined);
      const run = await getRun('foreign-candidate');
      return condition(run, 'Published')?.reason === 'PublicationBlocked' ? run : undefined;
    });
    expect(condition(blocked, 'Published')).toMatchObject({
      status: 'False',
      message: `DynamoGraphDeploymentCandidate ${namespace}/foreign-candidate-candidate-000001 already exists and is not controlled by DynamoGraphDeploymentRun ${namespace}/foreign-candidate; it is left untouched`,
    });
    expect(condition(blocked, 'Completed')).toMatchObject({ status: 'False' });
    expect((blocked['status'] as { candidateRefs?: unknown[] }).candidateRefs ?? []).toEqual([]);
    const foreign = await getCandidate('foreign-candidate');
    expect(condition(foreign, 'Valid')).toBeUndefined();
    expect(foreign?.['spec']).toEqual(foreignSpec);
    expect(foreign?.metadata.ownerReferences).toBeUndefined();

    await user.delete({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, namespace, name: 'foreign-candidate-candidate-000001' });
    const succeeded = await eventually('the Run to succeed once the foreign Candidate is gone', async () => {
      await handleRun(event('foreign-candidate'), deps).catch(() => undefined);
      const run = await getRun('foreign-candidate');
      return condition(run, 'Completed')?.status === 'True' ? run : undefined;
    });
    expect(condition(succeeded, 'Completed')).toMatchObject({ reason: 'RunSucceeded', message: '1 of 1 Candidates are Valid' });
    expect(controllerUid(await getCandidate('foreign-candidate'))).toBe(uid);
  });

  it('a labelled Candidate under another name, not controlled by the Run, is not counted: "1 of 1 Candidates are Valid", not 2 of 2', async () => {
    await createRun('extra-candidate');
    const uid = (await getRun('extra-candidate'))?.metadata.uid ?? '';
    await user.create({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, metadata: { name: 'extra-candidate-planted', namespace, labels: { 'nvidia.com/dgdr-run-uid': uid } }, spec: { components: [{ name: 'worker', type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'attacker.example/miner:1.0.0' }] } } }] } });
    await user.applyStatus({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, metadata: { name: 'extra-candidate-planted', namespace }, status: { conditions: [{ type: 'Valid', status: 'True', reason: 'ValidationSucceeded', message: 'planted', lastTransitionTime: new Date().toISOString() }] } }, { force: true });
    await completeJob('extra-candidate');
    const finished = await finishedRun('extra-candidate');
    expect(condition(finished, 'Completed')).toMatchObject({ reason: 'RunSucceeded', message: '1 of 1 Candidates are Valid' });
  });
});

describe('Published: "Retryable Candidate preparation errors are visible on the Run as Published=False, reason PublicationBlocked, with the error in the condition\'s message" (errors other than the dry-run)', () => {
  const rows = [
    {
      name: 'the Candidate create refused (HTTP 403)',
      run: 'create-refused',
      rules: PUBLISHER_RULES.map((rule) => (rule.resources.includes('dynamographdeploymentcandidates') ? { ...rule, verbs: ['get', 'list'] } : rule)),
      want: /^cannot create DynamoGraphDeploymentCandidate [^/]+\/create-refused-candidate-000001: HTTP 403: .*dynamographdeploymentcandidates/,
    },
    {
      name: 'the Candidate status write refused (HTTP 403)',
      run: 'status-refused',
      rules: PUBLISHER_RULES.map((rule) => (rule.resources.includes('dynamographdeploymentcandidates/status') ? { ...rule, resources: ['dynamographdeploymentruns/status'] } : rule)),
      want: /^cannot write the status of DynamoGraphDeploymentCandidate [^/]+\/status-refused-candidate-000001: HTTP 403: .*dynamographdeploymentcandidates/,
    },
    {
      name: 'the output ConfigMap unreadable (HTTP 403)',
      run: 'output-unreadable',
      rules: PUBLISHER_RULES.filter((rule) => !rule.resources.includes('configmaps')),
      want: /^cannot read ConfigMap [^/]+\/output-unreadable-aisimulate-output: HTTP 403: .*configmaps/,
    },
  ];
  it.each(rows)('$name: Published=False PublicationBlocked with the error while retrying; once repaired, PublicationSucceeded', async ({ run: name, rules, want }) => {
    await setPublisherRole(true, rules);
    try {
      await createRun(name);
      await completeJob(name);
      const blocked = await eventually('Published=False PublicationBlocked', async () => {
        await expect(handleRun(event(name), deps)).rejects.toBeInstanceOf(TransientError);
        const run = await getRun(name);
        return condition(run, 'Published')?.reason === 'PublicationBlocked' ? run : undefined;
      });
      expect(condition(blocked, 'Published')).toMatchObject({ status: 'False', observedGeneration: 1 });
      expect(condition(blocked, 'Published')?.message).toMatch(want);
      expect(condition(blocked, 'Completed')).toMatchObject({ status: 'False', reason: 'EvaluatingCandidates' });
    } finally {
      await setPublisherRole(true);
    }
    const succeeded = await eventually('the Run to succeed after the repair', async () => {
      await handleRun(event(name), deps).catch(() => undefined);
      const run = await getRun(name);
      return condition(run, 'Completed')?.status === 'True' ? run : undefined;
    });
    expect(condition(succeeded, 'Published')).toMatchObject({ status: 'True', reason: 'PublicationSucceeded' });
    expect(succeeded['status']).toMatchObject({ phase: 'Succeeded', candidateRefs: [{ name: `${name}-candidate-000001`, candidateId: 'candidate-000001' }], progress: { candidates: { published: 1 } } });
  });
});

describe('Candidate status: Valid reasons and the Run outcome', () => {
  it('"a decode override can fail for an aggregated Candidate": Valid=False OverrideTargetNotFound, the generated spec kept, and a Run with no Valid Candidate fails and keeps it', async () => {
    await createRun('no-decode', { metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'decode', replicas: 2 }] } });
    await completeJob('no-decode');
    const failed = await finishedRun('no-decode');
    expect(condition(failed, 'Completed')).toMatchObject({ reason: 'NoValidCandidates', message: 'none of the 1 Candidates is Valid' });
    expect(failed['status']).toMatchObject({ phase: 'Failed' });
    const candidate = await getCandidate('no-decode');
    expect(condition(candidate, 'Valid')).toMatchObject({ status: 'False', reason: 'OverrideTargetNotFound' });
    expect(candidate?.metadata.labels?.['workload']).toBeUndefined();
    expect((candidate?.['spec'] as { components: { name: string }[] }).components.map((c) => c.name)).toEqual(['Frontend', 'worker']);
  });

  it('"If the merge succeeds but dry-run validation fails, the override\'s labels and annotations remain on the invalid Candidate": a DGD CEL rule refuses the merged DGD (ValidationFailed), the value stays on the Candidate', async () => {
    // The merge applies (restart.id is a DGD field), the CRD's CEL rule refuses it on create: the strict dry-run answers 422.
    await createRun('bad-type', { metadata: { labels: { workload: 'customized' } }, spec: { restart: { id: 'restart-1' } } });
    await completeJob('bad-type');
    await finishedRun('bad-type');
    const candidate = await getCandidate('bad-type');
    const valid = condition(candidate, 'Valid');
    expect(valid).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(valid?.message).toContain('spec.restart must be unset on create');
    expect(candidate?.metadata.labels?.['workload']).toBe('customized');
    expect((candidate?.['spec'] as { restart?: unknown }).restart).toEqual({ id: 'restart-1' });
  });

  it('"Unknown fields and incorrect field types remain visible on invalid Candidates; Valid=False records the failure": a field the DGD schema does not know and a wrongly typed replicas stay on the Candidate, Valid=False ValidationFailed from the strict dry-run', async () => {
    await createRun('unknown-field', { metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'worker', replicas: 'two', notADgdField: { kept: true } }] } });
    await completeJob('unknown-field');
    await finishedRun('unknown-field');
    const candidate = await getCandidate('unknown-field');
    const valid = condition(candidate, 'Valid');
    expect(valid).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(valid?.message).toMatch(/notADgdField|replicas/);
    expect(candidate?.metadata.labels?.['workload']).toBe('customized');
    const worker = ((candidate?.['spec'] as { components: Record<string, unknown>[] }).components).find((c) => c['name'] === 'worker');
    expect(worker).toMatchObject({ replicas: 'two', notADgdField: { kept: true } });
    // "Invalid Candidates ... when all selected Candidates are invalid, the Run fails and keeps them for diagnosis."
    expect(condition(await getRun('unknown-field'), 'Completed')).toMatchObject({ status: 'True', reason: 'NoValidCandidates' });
  });
});

describe('disaggregated Candidates: "applied to every selected Candidate across backends and topologies"', () => {
  it('a real disaggregated search (test/fixtures/aisimulate/disagg.recommendation.json) publishes Candidates with Frontend, decode and prefill that pass the strict dry-run, in views.top_n order; a decode override applies to each of them', async () => {
    await createRun('disagg', { metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'decode', replicas: 2 }] } });
    await completeJob('disagg', DISAGG_RECOMMENDATION);
    const succeeded = await eventually('the disaggregated Run to succeed', async () => {
      await handleRun(event('disagg'), deps).catch(() => undefined);
      const run = await getRun('disagg');
      return condition(run, 'Completed')?.status === 'True' ? run : undefined;
    });
    expect(condition(succeeded, 'Completed')).toMatchObject({ reason: 'RunSucceeded', message: '3 of 3 Candidates are Valid' });
    expect((succeeded['status'] as { candidateRefs: { candidateId: string }[] }).candidateRefs.map((r) => r.candidateId)).toEqual(['candidate-000003', 'candidate-000002', 'candidate-000001']);
    const best = await user.get({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, namespace, name: 'disagg-candidate-000003' });
    expect(condition(best, 'Valid')).toMatchObject({ status: 'True', reason: 'ValidationSucceeded' });
    expect(best?.metadata.labels?.['workload']).toBe('customized');
    const components = (best?.['spec'] as { components: { name: string; type: string; replicas: number }[] }).components;
    // The override set decode's replicas to 2 (AISimulate chose 1); prefill keeps AISimulate's 2 replicas.
    expect(components.map((c) => [c.name, c.type, c.replicas])).toEqual([['Frontend', 'frontend', 1], ['decode', 'decode', 2], ['prefill', 'prefill', 2]]);
    expect(best?.['status']).toMatchObject({ rank: 1, parameters: { deployment_mode: 'disagg', prefill_replicas: 2, prefill_tp: 1, decode_replicas: 1, decode_tp: 4, used_gpus: 6 } });
  });
});

describe('"runtimeVersionOverride ... An overridden runtime image without a parseable semantic-version tag requires runtimeVersionOverride on that component" (dgdr-reference), for Candidates through the strict dry-run\'s DGD validating webhook', () => {
  const latest = (extra: Record<string, unknown> = {}) => ({ spec: { components: [{ name: 'worker', ...extra, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest' }] } } }] } });
  const finish = async (name: string) => {
    await completeJob(name);
    await finishedRun(name);
  };

  it('a worker image tagged latest without runtimeVersionOverride: Valid=False ValidationFailed with DGD admission\'s Required error, the image kept on the Candidate', async () => {
    await createRun('latest-image', latest());
    await finish('latest-image');
    const candidate = await getCandidate('latest-image');
    const valid = condition(candidate, 'Valid');
    expect(valid).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(valid?.message).toContain('spec.components[1].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag');
    const worker = ((candidate?.['spec'] as { components: { name: string; podTemplate?: { spec: { containers: { name: string; image: string }[] } } }[] }).components).find((c) => c.name === 'worker');
    expect(worker?.podTemplate?.spec.containers.find((c) => c.name === 'main')?.image).toBe('nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest');
  });

  it('the same image with runtimeVersionOverride on that component: Valid=True ValidationSucceeded', async () => {
    await createRun('latest-image-pinned', latest({ runtimeVersionOverride: '1.6.1' }));
    await finish('latest-image-pinned');
    expect(condition(await getCandidate('latest-image-pinned'), 'Valid')).toMatchObject({ status: 'True', reason: 'ValidationSucceeded', message: 'Strict DGD dry-run succeeded' });
  });
});
