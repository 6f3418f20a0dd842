/**
 * The DGDR lifecycle on the real control plane: kube-apiserver with our CRDs, the admission
 * webhooks for DynamoGraphDeploymentRequests over TLS, the profile function behind the local event
 * bridge, kube-scheduler, the job controller and kwok with simulated GPU nodes
 * (test/harness/kwok/stages.yaml moves the profiling pods to Succeeded or Failed).
 *
 * What does not run here, said where it matters:
 * - the profiler itself (its contract test belongs to the real-profiler suite): kwok completes or
 *   fails the profiler pod, and each test writes the output ConfigMap `dgdr-output-<name>` exactly
 *   as the Job's output-copier sidecar would (labels, owner reference, data keys);
 * - the reconcile function and Grove: a test that needs a Ready DGD writes the DGD status they
 *   would write (`state: successful`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import profile from '../../functions/profile/index.js';
import { renderOutputCopierScript } from '../../shared/domain/index.js';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

type Obj = Record<string, unknown>;

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const LABEL = 'dynamo-fn.test/dgdr-admission';
const MUTATING = 'dgdr-defaulting-test';
const VALIDATING = 'dgdr-validation-test';
const DGDR = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' };
const DGD = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' };
const OUT3 = readFileSync(resolve(sharedDir, 'fixtures', 'profiler', 'out3.final_config.yaml'), 'utf8');
const OUT1 = readFileSync(resolve(sharedDir, 'fixtures', 'profiler', 'out1.final_config.yaml'), 'utf8');
const OUT8_FAILED_STATUS = readFileSync(resolve(sharedDir, 'fixtures', 'profiler', 'out8-without-tool.profiler_status.yaml'), 'utf8');
const HARDWARE = { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 };
const NODE_PREFIX = 'profile-test-gpu';

let admission: AdmissionServer;
let server: FunctionServer;
let bridge: EventBridge;
let namespace = '';
let nodeNames: string[] = [];
/** The CA bundle of this file's admission server (for webhook configurations a test adds). */
let caBundleOfThisFile = '';

function webhookConfiguration(kind: 'Mutating' | 'Validating', name: string, url: string, caBundle: string): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name: `${kind === 'Mutating' ? 'default' : 'validate'}.dynamographdeploymentrequests.nvidia.com`,
        clientConfig: { url, caBundle },
        rules: [{ apiGroups: ['nvidia.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['dynamographdeploymentrequests'], scope: 'Namespaced' }],
        namespaceSelector: { matchLabels: { [LABEL]: 'true' } },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
      },
    ],
  };
}

beforeAll(async () => {
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  admission = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log, shutdownDelaySeconds: 0 });
  namespace = await createTestNamespace(kubeConfig, 'profile');
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [LABEL]: 'true' } } }, { force: true });
  const caBundle = Buffer.from(certs.caPem).toString('base64');
  caBundleOfThisFile = caBundle;
  const base = `https://127.0.0.1:${admission.port}`;
  await user.apply(webhookConfiguration('Mutating', MUTATING, `${base}/mutate/nvidia.com/v1beta1/dynamographdeploymentrequests`, caBundle) as Parameters<Kube['apply']>[0], { force: true });
  await user.apply(webhookConfiguration('Validating', VALIDATING, `${base}/validate/nvidia.com/v1beta1/dynamographdeploymentrequests`, caBundle) as Parameters<Kube['apply']>[0], { force: true });
  nodeNames = await createGpuNodes(user, parseGpuFleet('2xNVIDIA-H100-80GB-HBM3-SXM:8:81559'), NODE_PREFIX);
  server = await startFunctionServer(profile, { config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] }), log, host: '127.0.0.1' });
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 0,
    retry: { retries: 5, backoffDelayMs: 100 },
    subscriptions: [{ name: 'profile', url: server.url, kinds: [DGDR, { apiVersion: 'batch/v1', kind: 'Job' }, { apiVersion: 'v1', kind: 'ConfigMap' }, DGD], mode: 'Reference' }],
  });
  // The API server picks webhook configurations up asynchronously: wait until a bad request is refused.
  await eventually('the DGDR validating webhook to be active', async () => {
    try {
      await user.create({ ...DGDR, metadata: { name: 'probe', namespace }, spec: { model: ' ' } });
      await user.delete({ ...DGDR, namespace, name: 'probe' });
      return undefined;
    } catch {
      return true;
    }
  });
});

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
  await user.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: VALIDATING });
  await user.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', name: MUTATING });
  await admission?.close();
  for (const name of nodeNames) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
});

/** Creates a DGDR as `kubectl create` would (through both webhooks). */
async function createDgdr(name: string, spec: Obj): Promise<KubeObject> {
  const created = await user.create({ ...DGDR, metadata: { name, namespace }, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', ...spec } });
  if (created === undefined) throw new Error(`DGDR ${name} already exists`);
  return created;
}

async function getDgdr(name: string): Promise<KubeObject | undefined> {
  return user.get({ ...DGDR, namespace, name });
}

function statusOf(dgdr: KubeObject | undefined): { phase?: string; profilingPhase?: string; dgdName?: string; profilingJobName?: string; conditions?: { type: string; status: string; reason: string; message: string }[]; profilingResults?: { selectedConfig?: Obj }; deploymentInfo?: Obj; observedGeneration?: number } {
  return (dgdr?.['status'] ?? {}) as ReturnType<typeof statusOf>;
}

/** Edits the spec as `kubectl edit` does: on the latest version, again after a 409 from the function's own status writes. */
async function replaceLatest(name: string, edit: (spec: Obj) => Obj): Promise<KubeObject> {
  for (let attempt = 0; ; attempt += 1) {
    const latest = await getDgdr(name);
    if (latest === undefined) throw new Error(`DGDR ${name} not found`);
    try {
      return await user.replace({ ...latest, spec: edit(latest['spec'] as Obj) });
    } catch (error) {
      if (!(error instanceof TransientError) || attempt >= 20) throw error;
    }
  }
}

const condition = (dgdr: KubeObject | undefined, type: string) => statusOf(dgdr).conditions?.find((c) => c.type === type);

async function waitForPhase(name: string, phase: string, timeoutMs = 60_000): Promise<KubeObject> {
  return eventually(`DGDR ${name} phase ${phase}`, async () => {
    const dgdr = await getDgdr(name);
    return statusOf(dgdr).phase === phase ? dgdr : undefined;
  }, timeoutMs);
}

/** Writes `dgdr-output-<name>` as the output-copier sidecar does (profiler.md §1.3): tracking labels, controller owner reference to the DGDR. */
async function writeOutput(dgdr: KubeObject, data: Record<string, string>): Promise<void> {
  const name = dgdr.metadata.name;
  await user.apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `dgdr-output-${name}`,
        namespace,
        labels: { 'dgdr.nvidia.com/name': name, 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' },
        ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name, uid: dgdr.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      data,
    },
    { force: true },
  );
}

const SUCCESS = (finalConfig: string): Record<string, string> => ({
  phase: 'Done',
  message: 'Profiler completed successfully',
  profiler_status: 'success',
  'final_config.yaml': finalConfig,
  'profiler_status.yaml': "status: success\ntimestamp: '2026-12-01T06:55:15Z'\nmessage: Profiler completed successfully\noutputs:\n  final_config: final_config.yaml\nphase: Done\n",
});

/** Pod annotations for the kwok Stages, set through the request's own `overrides.profilingJob` (upstream merges template annotations). */
const podAnnotations = (annotations: Record<string, string>): Obj => ({ overrides: { profilingJob: { template: { metadata: { annotations } } } } });

describe('DGDR lifecycle with kwok', () => {
  it('success: Pending -> Profiling (profilingPhase from the output ConfigMap) -> Deploying -> Deployed, the DGD labelled and without an owner reference', async () => {
    const created = await createDgdr('ok', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/run-duration': '2s' }) });
    expect((created['spec'] as Obj)['image']).toBe('nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1');
    const profiling = await waitForPhase('ok', 'Profiling');
    expect(statusOf(profiling).profilingJobName).toBe('profile-ok');
    expect(condition(profiling, 'Validation')).toMatchObject({ status: 'True', reason: 'ValidationPassed', message: 'DGDR spec validation passed' });
    const job = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-ok' });
    expect((job?.['spec'] as Obj)['backoffLimit']).toBe(0);
    // The Job's service account and its binding, created by the function in the request's namespace.
    expect(await user.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: 'dgdr-profiling-job' })).toBeDefined();
    expect((await user.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespace, name: 'dgdr-profiling-job' }))?.['roleRef']).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'dynamo-dgdr-profiling-job' });
    expect(job?.metadata['ownerReferences']).toEqual([{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'ok', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    await writeOutput(created, { phase: 'SweepingPrefill', message: 'Sweeping parallelization strategies' });
    const sweeping = await eventually('profilingPhase SweepingPrefill', async () => {
      const dgdr = await getDgdr('ok');
      return statusOf(dgdr).profilingPhase === 'SweepingPrefill' ? dgdr : undefined;
    });
    expect(condition(sweeping, 'Profiling')).toMatchObject({ status: 'False', reason: 'SweepingPrefill', message: 'Sweeping parallelization strategies' });
    // kwok completes the pod (2 s); the job controller marks the Job Complete.
    await eventually('Job profile-ok Complete', async () => {
      const j = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-ok' });
      return ((j?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True') ? true : undefined;
    });
    // A planner deployment: final_config.yaml carries the planner ConfigMap before the DGD.
    await writeOutput(created, SUCCESS(OUT3));
    const deploying = await waitForPhase('ok', 'Deploying');
    expect(statusOf(deploying).dgdName).toBe('ok-dgd');
    expect(statusOf(deploying).profilingPhase).toBeUndefined();
    expect(condition(deploying, 'Profiling')).toMatchObject({ status: 'True', reason: 'ProfilingCompleted', message: 'Profiling job completed successfully' });
    const dgd = await eventually('DGD ok-dgd', () => user.get({ ...DGD, namespace, name: 'ok-dgd' }));
    expect(dgd.metadata.labels).toMatchObject({ 'dgdr.nvidia.com/name': 'ok', 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' });
    expect(dgd.metadata['ownerReferences']).toBeUndefined();
    // Issue 20 "the same rule everywhere": stamped with the request's uid at creation, the proof read before it is followed.
    expect(dgd.metadata.labels?.['dgdr.nvidia.com/uid']).toBe(created.metadata.uid);
    // "Additional resources (planner ConfigMaps) are created in the same namespace and labeled with dgdr.nvidia.com/name";
    // once the DGD exists it owns them, so they go with it.
    const planner = await eventually('planner ConfigMap owned by the DGD', async () => {
      const cm = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'planner-config-fb8c' });
      return Array.isArray(cm?.metadata['ownerReferences']) ? cm : undefined;
    });
    expect(planner.metadata.labels).toMatchObject({ 'dgdr.nvidia.com/name': 'ok', 'dgdr.nvidia.com/namespace': namespace, 'dgdr.nvidia.com/uid': created.metadata.uid });
    expect(planner.metadata['ownerReferences']).toEqual([{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'ok-dgd', uid: dgd.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect((statusOf(deploying).profilingResults?.selectedConfig?.['spec'] as Obj)).toEqual(dgd['spec']);
    // The reconcile function and Grove do not run in this file: write the status they would write.
    await user.applyStatus({ ...DGD, metadata: { name: 'ok-dgd', namespace }, status: { state: 'successful', components: { Frontend: { replicas: 1, availableReplicas: 1 }, decode: { replicas: 1, availableReplicas: 1 } } } }, { force: true });
    const deployed = await waitForPhase('ok', 'Deployed');
    expect(condition(deployed, 'DeploymentReady')).toMatchObject({ status: 'True', reason: 'DeploymentReady', message: 'DynamoGraphDeployment ok-dgd is ready' });
    expect(condition(deployed, 'Succeeded')).toMatchObject({ status: 'True', reason: 'Deployed', message: 'Deployment is healthy' });
    expect(statusOf(deployed).deploymentInfo).toEqual({ replicas: 2, availableReplicas: 2 });
    expect(deployed.metadata.annotations?.['nvidia.com/generated-dgd-spec']).toBeUndefined();
    // Deleting the request leaves the DGD serving ("Deleting a DGDR does not delete the DGD").
    await user.delete({ ...DGDR, namespace, name: 'ok' });
    await eventually('DGDR ok gone', async () => ((await getDgdr('ok')) === undefined ? true : undefined));
    expect(await user.get({ ...DGD, namespace, name: 'ok-dgd' })).toBeDefined();
  });

  it('hardware discovery from the GPU nodes: gpuSku restricts discovery, the budget is persisted in the spec', async () => {
    await createDgdr('discover', { hardware: { gpuSku: 'h100_sxm' } });
    const profiling = await waitForPhase('discover', 'Profiling');
    expect((profiling['spec'] as Obj)['hardware']).toEqual({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 16, rdma: false });
    const job = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-discover' });
    const args = ((((job?.['spec'] as Obj)['template'] as Obj)['spec'] as { containers: { args: string[] }[] }).containers[0]?.args ?? []);
    expect(JSON.parse(args[1] ?? '{}').hardware).toEqual({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 16, rdma: false });
  });

  it('"every mismatch ... moves the DGDR to Failed before any Job exists": numGpusPerNode differs from the nodes without totalGpus', async () => {
    await createDgdr('mismatch', { hardware: { gpuSku: 'h100_sxm', numGpusPerNode: 4 } });
    const failed = await waitForPhase('mismatch', 'Failed');
    expect(condition(failed, 'Validation')).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(condition(failed, 'Validation')?.message).toContain('spec.hardware.numGpusPerNode 4 differs from the 8 GPUs per node of the auto-selected h100_sxm shape');
    expect(await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-mismatch' })).toBeUndefined();
  });

  it('profiler failure: the profiler container fails and the output names the whole error; reference "status.profilingPhase ... cleared when profiling completes or fails": no profilingPhase on the Failed request', async () => {
    const created = await createDgdr('profiler-fails', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/outcome': 'fail', 'kwok.dynamo-fn.dev/container-name': 'profiler', 'kwok.dynamo-fn.dev/run-duration': '2s' }) });
    await waitForPhase('profiler-fails', 'Profiling');
    // As the sidecar relays a failed status file (it exits 0; the profiler container exits 1).
    await writeOutput(created, { phase: 'GeneratingDGD', message: 'Profiler failed with exception: DGDOverrideError', profiler_status: 'failed', profiler_error: "could not find dgd-apply-overrides; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or", 'profiler_status.yaml': OUT8_FAILED_STATUS });
    const failed = await waitForPhase('profiler-fails', 'Failed');
    expect(condition(failed, 'Profiling')).toMatchObject({ status: 'False', reason: 'GeneratingDGDFailed', message: "profiling failed: could not find 'dgd-apply-overrides'; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or add it to PATH" });
    expect(statusOf(failed).phase).toBe('Failed');
    expect(statusOf(failed)).not.toHaveProperty('profilingPhase');
    expect(condition(failed, 'Succeeded')).toMatchObject({ status: 'False', reason: 'GeneratingDGDFailed' });
  });

  it('Job failure: the pod fails with no output; the message carries the pod, exit code and reason', async () => {
    await createDgdr('job-fails', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/outcome': 'fail', 'kwok.dynamo-fn.dev/container-name': 'profiler', 'kwok.dynamo-fn.dev/exit-code': '137', 'kwok.dynamo-fn.dev/reason': 'OOMKilled', 'kwok.dynamo-fn.dev/message': 'out of memory', 'kwok.dynamo-fn.dev/run-duration': '1s' }) });
    const failed = await waitForPhase('job-fails', 'Failed');
    const message = condition(failed, 'Profiling')?.message ?? '';
    expect(condition(failed, 'Profiling')?.reason).toBe('InitializingFailed');
    expect(message).toMatch(/^profiling job failed: .+\. Details: Pod: profile-job-fails-[a-z0-9]+, Container: profiler, ExitCode: 137, Reason: OOMKilled, Message: out of memory$/);
  });

  it('reference "deploymentInfo ... Populated once a DGD has been created (via autoApply or manually)": a DGD the user creates by hand from the stored spec while the request is Ready is followed, and the request stays Ready', async () => {
    const created = await createDgdr('by-hand', { hardware: HARDWARE, autoApply: false });
    await waitForPhase('by-hand', 'Profiling');
    await writeOutput(created, SUCCESS(OUT1));
    const ready = await waitForPhase('by-hand', 'Ready');
    expect(statusOf(ready).deploymentInfo).toBeUndefined();
    // "View generated DGD spec (when autoApply: false)" and apply it by hand: no tracking labels.
    const stored = parseYaml(ready.metadata.annotations?.['nvidia.com/generated-dgd-spec'] ?? '') as { metadata: Obj; spec: Obj };
    await user.create({ ...DGD, metadata: { name: statusOf(ready).dgdName ?? '', namespace }, spec: stored.spec });
    // The reconcile function and Grove do not run in this file: write the status they would write.
    await user.applyStatus({ ...DGD, metadata: { name: 'by-hand-dgd', namespace }, status: { state: 'pending', components: { Frontend: { replicas: 1, availableReplicas: 1 }, worker: { replicas: 2, availableReplicas: 1 } } } }, { force: true });
    // A DGD without the tracking labels names no request: the request's next pass (the resync tick; here an edit of its labels) picks it up.
    await eventually('the request\'s labels edited', async () => {
      const latest = await getDgdr('by-hand');
      if (latest === undefined) throw new Error('DGDR by-hand not found');
      return user.replace({ ...latest, metadata: { ...latest.metadata, labels: { ...(latest.metadata.labels ?? {}), team: 'inference' } } }).then(() => true, (error: unknown) => (error instanceof TransientError ? undefined : Promise.reject(error)));
    });
    // A pass that read the DGD between its create and the status write above reports what it saw,
    // {replicas: 0, availableReplicas: 0}, as upstream would; wait for the pass that read the status.
    const want = { replicas: 3, availableReplicas: 2 };
    const followed = await eventually('deploymentInfo from the hand-made DGD\'s status', async () => {
      const dgdr = await getDgdr('by-hand');
      return isDeepStrictEqual(statusOf(dgdr).deploymentInfo, want) ? dgdr : undefined;
    });
    expect(statusOf(followed).deploymentInfo).toEqual(want);
    expect(statusOf(followed).phase).toBe('Ready');
  });

  it('"When false, the generated spec is stored in status": autoApply false -> Ready, no DGD; enabling it later creates the DGD with the current runtimeVersionOverride', async () => {
    const created = await createDgdr('review', { hardware: HARDWARE, autoApply: false });
    await waitForPhase('review', 'Profiling');
    await writeOutput(created, SUCCESS(OUT1));
    const ready = await waitForPhase('review', 'Ready');
    expect(condition(ready, 'SpecGenerated')?.message).toBe('Generated spec is available in annotation nvidia.com/generated-dgd-spec');
    expect(parseYaml(ready.metadata.annotations?.['nvidia.com/generated-dgd-spec'] ?? '')).toEqual(statusOf(ready).profilingResults?.selectedConfig);
    expect(await user.get({ ...DGD, namespace, name: 'review-dgd' })).toBeUndefined();
    await replaceLatest('review', (spec) => ({ ...spec, autoApply: true, runtimeVersionOverride: '1.6.1' }));
    const dgd = await eventually('DGD review-dgd', () => user.get({ ...DGD, namespace, name: 'review-dgd' }));
    const components = (dgd['spec'] as { components: Obj[] }).components;
    expect(components.map((c) => c['runtimeVersionOverride'])).toEqual(components.map(() => '1.6.1'));
    expect(statusOf(await getDgdr('review')).phase).toBe('Deploying');
    // A worker pod of that DGD whose image cannot be pulled (kwok's waiting Stage holds it in
    // ImagePullBackOff); Grove would create it, the test does. The DGD status the reconcile
    // function would write next brings the request's next pass.
    await user.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'review-dgd-0-worker', namespace, labels: { 'nvidia.com/dynamo-graph-deployment-name': 'review-dgd' }, annotations: { 'kwok.dynamo-fn.dev/outcome': 'wait', 'kwok.dynamo-fn.dev/message': 'Back-off pulling image "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1"' } },
      spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' }] },
    });
    await eventually('the pod waiting in ImagePullBackOff', async () => {
      const pod = await user.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: 'review-dgd-0-worker' });
      return JSON.stringify(pod?.['status'] ?? {}).includes('ImagePullBackOff') ? true : undefined;
    });
    await user.applyStatus({ ...DGD, metadata: { name: 'review-dgd', namespace }, status: { state: 'pending' } }, { force: true });
    const event = await eventually('Warning ImagePullFailed on the request', async () => {
      const events = await user.list('events.k8s.io/v1', 'Event', namespace);
      return events.find((e) => e['reason'] === 'ImagePullFailed' && (e['regarding'] as Obj)['name'] === 'review');
    });
    expect(event['note']).toBe('pod review-dgd-0-worker container main: ImagePullBackOff: Back-off pulling image "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1"');
    expect(event['type']).toBe('Warning');
  });

  it('override errors: an override of another kind is refused at admission; an override with no dgd-apply-overrides image to install fails the request with upstream\'s message', async () => {
    await expect(createDgdr('bad-override', { overrides: { dgd: { apiVersion: 'apps/v1', kind: 'Deployment', spec: {} } } })).rejects.toThrow(
      /spec\.overrides\.dgd\.apiVersion: Unsupported value: "apps\/v1": supported values: "nvidia\.com\/v1beta1", "nvidia\.com\/v1alpha1"/,
    );
    // With an override the Job needs the operator image for dgd-apply-overrides; none is configured in this file.
    await createDgdr('override-no-tool', { hardware: HARDWARE, overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'decode' }] } } } });
    const failed = await waitForPhase('override-no-tool', 'Failed');
    expect(condition(failed, 'Profiling')).toMatchObject({ reason: 'JobCreationFailed', message: 'operator image must be configured when a DGD override is present' });
  });

  it('"An overridden runtime image without a parseable semantic-version tag requires runtimeVersionOverride on that component" (dgdr-reference): the generated DGD is refused by the DGD validating webhook on the real API server, and the request is Failed with DeploymentRejected naming the refusal', async () => {
    // The DGD validating webhook of this file's admission server, for the DGD this request creates
    // only (its tracking label): the other tests' hand-made DGDs are not DGD admission's subject here.
    const name = 'unpinned';
    const webhook = webhookConfiguration('Validating', 'dgd-validation-unpinned', `https://127.0.0.1:${admission.port}/validate/nvidia.com/v1beta1/dynamographdeployments`, caBundleOfThisFile);
    const hooks = webhook['webhooks'] as Obj[];
    hooks[0] = { ...hooks[0], name: 'validate.dynamographdeployments.nvidia.com', rules: [{ apiGroups: ['nvidia.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['dynamographdeployments'], scope: 'Namespaced' }], objectSelector: { matchLabels: { 'dgdr.nvidia.com/name': name } } };
    await user.apply(webhook as Parameters<Kube['apply']>[0], { force: true });
    try {
      await eventually('the DGD validating webhook to be active', async () => {
        const probe = { ...DGD, metadata: { name: 'unpinned-probe', namespace, labels: { 'dgdr.nvidia.com/name': name } }, spec: { components: [{ name: 'worker', type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest' }] } } }] } };
        try {
          await user.create(probe);
          await user.delete({ ...DGD, namespace, name: 'unpinned-probe' });
          return undefined;
        } catch {
          return true;
        }
      });
      const created = await createDgdr(name, { hardware: HARDWARE });
      await waitForPhase(name, 'Profiling');
      // The generated spec with its runtime images replaced by :latest, as an overrides.dgd image
      // replacement leaves the profiler's final config.
      const latest = OUT1.replaceAll('vllm-runtime:1.6.1', 'vllm-runtime:latest');
      expect(latest).toContain('vllm-runtime:latest');
      await writeOutput(created, SUCCESS(latest));
      const failed = await waitForPhase(name, 'Failed');
      const deployment = condition(failed, 'DeploymentReady');
      expect(deployment).toMatchObject({ status: 'False', reason: 'DeploymentRejected' });
      expect(deployment?.message).toContain('spec.components[0].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag');
      expect(await user.get({ ...DGD, namespace, name: `${name}-dgd` })).toBeUndefined();
    } finally {
      await user.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'dgd-validation-unpinned' });
    }
  });

  it('a name collision is reported, not adopted: an existing DGD named <dgdr>-dgd stays untouched', async () => {
    const theirs = await user.create({ ...DGD, metadata: { name: 'taken-dgd', namespace, labels: { owner: 'someone-else' } }, spec: { components: [{ name: 'Frontend', type: 'frontend' }] } });
    const created = await createDgdr('taken', { hardware: HARDWARE });
    await waitForPhase('taken', 'Profiling');
    await writeOutput(created, SUCCESS(OUT1));
    const failed = await waitForPhase('taken', 'Failed');
    expect(condition(failed, 'DeploymentReady')).toMatchObject({ status: 'False', reason: 'DeploymentNameConflict' });
    const after = await user.get({ ...DGD, namespace, name: 'taken-dgd' });
    expect(after?.metadata.resourceVersion).toBe(theirs?.metadata.resourceVersion);
    expect(after?.metadata.labels).toEqual({ owner: 'someone-else' });
  });

  it('issue 20 "Own what you read": a foreign dgdr-output-<name> made before the request is neither deleted nor deployed; the request fails naming it', async () => {
    // The attack: anyone who can write ConfigMaps in the namespace plants the "profiling output" first.
    const planted = await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dgdr-output-planted', namespace }, data: SUCCESS(OUT1) });
    await createDgdr('planted', { hardware: HARDWARE });
    const failed = await waitForPhase('planted', 'Failed');
    const message = 'ConfigMap dgdr-output-planted already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name';
    expect(condition(failed, 'Profiling')).toMatchObject({ status: 'False', reason: 'OutputConfigMapConflict', message });
    expect(condition(failed, 'Succeeded')).toMatchObject({ status: 'False', reason: 'OutputConfigMapConflict', message: `Profiling failed: ${message}` });
    const after = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-planted' });
    expect(after?.metadata.resourceVersion).toBe(planted?.metadata.resourceVersion);
    expect(after?.metadata['ownerReferences']).toBeUndefined();
    expect(await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'profile-planted' })).toBeUndefined();
    expect(await user.get({ ...DGD, namespace, name: 'planted-dgd' })).toBeUndefined();
  });

  it('issue 20 "Own what you read": an unlabelled, ownerless dgdr-output-<name> written during profiling is not deployed; the request fails naming it', async () => {
    await createDgdr('swapped', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/run-duration': '2s' }) });
    await waitForPhase('swapped', 'Profiling');
    const planted = await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dgdr-output-swapped', namespace }, data: SUCCESS(OUT1) });
    // kwok completes the pod; the Job's events bring the request to read its output.
    const failed = await waitForPhase('swapped', 'Failed');
    expect(condition(failed, 'Profiling')).toMatchObject({
      status: 'False',
      reason: 'OutputConfigMapConflict',
      message: 'ConfigMap dgdr-output-swapped already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name',
    });
    expect(statusOf(failed).dgdName).toBeUndefined();
    expect(statusOf(failed).profilingResults).toBeUndefined();
    expect(failed.metadata.annotations?.['nvidia.com/generated-dgd-spec']).toBeUndefined();
    expect(await user.get({ ...DGD, namespace, name: 'swapped-dgd' })).toBeUndefined();
    expect((await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-swapped' }))?.metadata.resourceVersion).toBe(planted?.metadata.resourceVersion);
  });

  it('issue 20 "the same rule everywhere": a ConfigMap in one request\'s profiling output (its author\'s to write through overrides.profilingJob) that carries a controller reference to another request is created without it: the other request does not read it as its output, fails naming it, and deploys nothing', async () => {
    const victim = await createDgdr('forge-victim', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/run-duration': '6s' }) });
    await createDgdr('forge-author', { hardware: HARDWARE });
    const author = await waitForPhase('forge-author', 'Profiling');
    // The author's profiler writes the victim's output name, "controlled" by the victim, holding the DGD the author chose.
    const forged = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dgdr-output-forge-victim', ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'forge-victim', uid: victim.metadata.uid, controller: true }] },
      data: SUCCESS(OUT1),
    };
    // Its own planner ConfigMap under a name no other test here uses (the success test creates planner-config-fb8c).
    await writeOutput(author, SUCCESS(`${OUT3.replaceAll('planner-config-fb8c', 'planner-config-forg')}---\n${stringifyYaml(forged)}`));
    await waitForPhase('forge-author', 'Deploying');
    const created = await eventually('ConfigMap dgdr-output-forge-victim', () => user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-forge-victim' }));
    expect(created.metadata['ownerReferences']).toBeUndefined();
    expect(created.metadata.labels).toMatchObject({ 'dgdr.nvidia.com/name': 'forge-author', 'dgdr.nvidia.com/uid': author.metadata.uid });
    // kwok completes the victim's pod (6 s): an output it cannot prove its own is neither read nor deployed.
    const failed = await waitForPhase('forge-victim', 'Failed');
    expect(condition(failed, 'Profiling')).toMatchObject({ status: 'False', reason: 'OutputConfigMapConflict' });
    expect(await user.get({ ...DGD, namespace, name: 'forge-victim-dgd' })).toBeUndefined();
  });

  it('issue 20 "names and name-labels alone never prove it": a planner ConfigMap planted with the request\'s name labels before it deploys is neither adopted nor deployed; the request fails naming it, and "nothing is half-written": the ConfigMap it had created goes', async () => {
    // The profiler names its planner ConfigMap (random per run in the wheel); here the output names
    // planner-config-plno, which the request creates, then planner-config-plnt, planted.
    const own = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-config-plno\ndata:\n  planner_config.json: '{}'\n";
    const finalConfig = `${own}---\n${OUT3.replaceAll('planner-config-fb8c', 'planner-config-plnt')}`;
    const labels = { 'dgdr.nvidia.com/name': 'planner-planted', 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' };
    const data = { 'planner_config.json': '{"environment":"kubernetes","planted":true}' };
    const planted = await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-config-plnt', namespace, labels }, data });
    const created = await createDgdr('planner-planted', { hardware: HARDWARE });
    await waitForPhase('planner-planted', 'Profiling');
    await writeOutput(created, SUCCESS(finalConfig));
    const failed = await waitForPhase('planner-planted', 'Failed');
    const message = 'ConfigMap planner-config-plnt (named by the profiling output) already exists and was not created by this DynamoGraphDeploymentRequest; it is left untouched (neither adopted nor deployed). Delete that ConfigMap and create a new request';
    expect(condition(failed, 'DeploymentReady')).toMatchObject({ status: 'False', reason: 'PlannerConfigMapConflict', message });
    expect(condition(failed, 'Succeeded')).toMatchObject({ status: 'False', reason: 'PlannerConfigMapConflict', message: `Deployment failed: ${message}` });
    const event = await eventually('Warning ConfigMapCreationFailed on the request', async () => {
      const events = await user.list('events.k8s.io/v1', 'Event', namespace);
      return events.find((e) => e['reason'] === 'ConfigMapCreationFailed' && (e['regarding'] as Obj)['name'] === 'planner-planted');
    });
    expect(event).toMatchObject({ type: 'Warning', note: message });
    // No DGD whose planner would read it; the planted ConfigMap untouched: no owner added, same content, same version.
    expect(await user.get({ ...DGD, namespace, name: 'planner-planted-dgd' })).toBeUndefined();
    const after = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'planner-config-plnt' });
    expect(after?.metadata.resourceVersion).toBe(planted?.metadata.resourceVersion);
    expect(after?.metadata['ownerReferences']).toBeUndefined();
    expect(after?.metadata.labels).toEqual(labels);
    expect(after?.['data']).toEqual(data);
    // The ConfigMap the request created before it met the planted one goes: no DGD will mount it, and nothing owns it. The
    // failing pass deletes it; a pass that read the request before it failed (its own ConfigMap's event) may create it again,
    // and the Failed request's next pass (that ConfigMap's event) deletes it then: level-triggered, so awaited here.
    await eventually('planner-config-plno gone', async () => ((await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'planner-config-plno' })) === undefined ? true : undefined));
  });

  it('issue 20 "names and name-labels alone never prove it": a DGD <dgdr>-dgd planted with the request\'s name labels is not the request\'s: not followed, not reported Deployed, its planner ConfigMap not handed to it', async () => {
    const labels = { 'dgdr.nvidia.com/name': 'dgd-planted', 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' };
    const theirs = await user.create({ ...DGD, metadata: { name: 'dgd-planted-dgd', namespace, labels }, spec: { components: [{ name: 'Frontend', type: 'frontend' }] } });
    // As Grove and reconcile would report it: a successful deployment the request must not claim.
    const reported = await user.applyStatus({ ...DGD, metadata: { name: 'dgd-planted-dgd', namespace }, status: { state: 'successful', components: { Frontend: { replicas: 5, availableReplicas: 5 } } } }, { force: true });
    const created = await createDgdr('dgd-planted', { hardware: HARDWARE });
    await waitForPhase('dgd-planted', 'Profiling');
    await writeOutput(created, SUCCESS(OUT3.replaceAll('planner-config-fb8c', 'planner-config-dgdp')));
    const failed = await waitForPhase('dgd-planted', 'Failed');
    expect(condition(failed, 'DeploymentReady')).toMatchObject({
      status: 'False',
      reason: 'DeploymentNameConflict',
      message: "DynamoGraphDeployment dgd-planted-dgd already exists and was not created by this DynamoGraphDeploymentRequest (its label dgdr.nvidia.com/uid does not carry this request's uid); it is left untouched. Delete it, or create a new request with another spec.overrides.dgd.metadata.name",
    });
    expect(statusOf(failed).deploymentInfo).toBeUndefined();
    // The generated spec stays on the request (cleared only once the request observed its own DGD).
    expect(failed.metadata.annotations?.['nvidia.com/generated-dgd-spec']).toContain('kind: DynamoGraphDeployment');
    const after = await user.get({ ...DGD, namespace, name: 'dgd-planted-dgd' });
    expect(after?.metadata.resourceVersion).toBe(reported.metadata.resourceVersion);
    expect(after?.['spec']).toEqual(theirs?.['spec']);
    expect(after?.metadata.labels).toEqual(labels);
    // The request's own planner ConfigMap (stamped with its uid) exists and was not handed to the planted DGD.
    const planner = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'planner-config-dgdp' });
    expect(planner?.metadata.labels?.['dgdr.nvidia.com/uid']).toBe(created.metadata.uid);
    expect(planner?.metadata['ownerReferences']).toBeUndefined();
  });

  it('issue 20 "the request\'s message names the copier\'s error, not the profiler\'s successful exit": the output-copier exits 1 (no kubectl), the profiler 0', async () => {
    const copierError = 'ERROR: kubectl not found in the output-copier image. The image set for the output-copier container through spec.overrides.profilingJob must contain kubectl.';
    await createDgdr('copier-fails', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/outcome': 'fail', 'kwok.dynamo-fn.dev/container-name': 'output-copier', 'kwok.dynamo-fn.dev/exit-code': '1', 'kwok.dynamo-fn.dev/reason': 'Error', 'kwok.dynamo-fn.dev/message': copierError, 'kwok.dynamo-fn.dev/run-duration': '1s' }) });
    const failed = await waitForPhase('copier-fails', 'Failed');
    const message = condition(failed, 'Profiling')?.message ?? '';
    expect(message).toMatch(/^profiling job failed: .+\. Details: Pod: profile-copier-fails-[a-z0-9]+, Container: output-copier, ExitCode: 1, Reason: Error, Message: /);
    expect(message.endsWith(`Message: ${copierError}`)).toBe(true);
  });

  it('issue 20: the output-copier\'s own write step (real kubectl, bash) leaves a foreign dgdr-output-<name> untouched and exits 1 naming it; absent, it writes it controlled by the request', async () => {
    const created = await createDgdr('copier-guard', { hardware: HARDWARE });
    await waitForPhase('copier-guard', 'Profiling');
    const script = renderOutputCopierScript({ configMapName: 'dgdr-output-copier-guard', namespace, dgdrName: 'copier-guard', dgdrUid: created.metadata.uid ?? '', outputPath: '/data' });
    // The script's header and its write_cm function, as rendered; then one write (the relay loop needs a pod to watch).
    const writeStep = `${script.slice(0, script.indexOf('CMEOF\n}\n') + 'CMEOF\n}\n'.length)}write_cm '  phase: "Done"'\n`;
    const runWrite = () => spawnSync('bash', ['-c', writeStep], { env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') }, encoding: 'utf8', timeout: 60_000 });
    const planted = await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dgdr-output-copier-guard', namespace }, data: { 'final_config.yaml': 'planted' } });
    const refused = runWrite();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`ERROR: ConfigMap ${namespace}/dgdr-output-copier-guard exists and is not controlled by DynamoGraphDeploymentRequest copier-guard; it is left untouched`);
    expect((await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-copier-guard' }))?.metadata.resourceVersion).toBe(planted?.metadata.resourceVersion);
    await user.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-copier-guard' });
    await eventually('planted ConfigMap gone', async () => ((await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-copier-guard' })) === undefined ? true : undefined));
    const written = runWrite();
    expect(written.stderr).toBe('');
    expect(written.status).toBe(0);
    const output = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'dgdr-output-copier-guard' });
    expect(output?.metadata['ownerReferences']).toEqual([{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'copier-guard', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(output?.['data']).toEqual({ phase: 'Done' });
  });

  it('"The DGDR spec becomes immutable during profiling": a spec edit is refused with the field path', async () => {
    await createDgdr('frozen', { hardware: HARDWARE, ...podAnnotations({ 'kwok.dynamo-fn.dev/outcome': 'run' }) });
    await waitForPhase('frozen', 'Profiling');
    await expect(replaceLatest('frozen', (spec) => ({ ...spec, model: 'Qwen/Qwen3-32B' }))).rejects.toThrow(
      /spec: Forbidden: updates are forbidden while the resource is in phase "Profiling"; delete and recreate the resource to change its spec/,
    );
    expect(((await getDgdr('frozen'))?.['spec'] as Obj)['model']).toBe('Qwen/Qwen3-0.6B');
  });

  it('v1alpha1 through the conversion webhook: a corpus v1alpha1 request is checked by the v1beta1 rules, admitted as v1beta1 and reads back in both versions', async () => {
    const alpha = parseYaml(readFileSync(resolve(sharedDir, 'corpus', 'dgdr', 'v1alpha1-online-profiling-no-autoapply.yaml'), 'utf8')) as Obj;
    // Its profiler image tag 0.7.0.post2 is not a semantic version: refused with the v1beta1 field path.
    await expect(user.create({ ...(alpha as Parameters<Kube['create']>[0]), metadata: { name: 'legacy-bad', namespace } })).rejects.toThrow(
      /spec\.runtimeVersionOverride: Required value: is required when spec\.image has no parseable semantic-version tag/,
    );
    const alphaSpec = alpha['spec'] as Obj;
    const { profilerImage: _image, ...profilingConfig } = alphaSpec['profilingConfig'] as Obj;
    const created = await user.create({ ...(alpha as Parameters<Kube['create']>[0]), metadata: { name: 'legacy', namespace }, spec: { ...alphaSpec, profilingConfig } });
    expect(created?.apiVersion).toBe('nvidia.com/v1alpha1');
    const beta = await getDgdr('legacy');
    // Converted (blob sla -> workload and sla, autoApply false), then defaulted by the v1beta1 webhook.
    expect(beta?.['spec']).toMatchObject({ model: 'Qwen/Qwen3-32B', backend: 'trtllm', autoApply: false, image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', workload: { isl: 2048, osl: 256 }, sla: { ttft: 500, itl: 50 } });
    const readAlpha = await user.get({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeploymentRequest', namespace, name: 'legacy' });
    expect((readAlpha?.['spec'] as Obj)['profilingConfig']).toMatchObject({ profilerImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', config: (alphaSpec['profilingConfig'] as Obj)['config'] });
  });
});
