/**
 * The DGDR lifecycle decision: one row per transition of upstream-notes/dgdr.md §1.2 and
 * profiler.md §1.9 (reasons and messages word for word), plus the reference's rules on resource
 * ownership (no owner reference, tracking labels) and on not adopting an existing DGD.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { DgdrSchema, formatIssue, type Condition, type Dgdr } from '../../api/index.js';
import { validateDgd } from '../admission/index.js';
import { classifyOutputConfigMap, decideDgdr, decidePlannerConfigMapConflict, isPlannerConfigMapCreatedByUs, isPlannerConfigMapOurs, isRequestsDgd, plannerConfigMapNames, succeededCondition, type ChildFacts, type DgdrDesired, type DgdrObserved } from './lifecycle.js';

type Obj = Record<string, unknown>;

const NOW = new Date('2026-12-01T09:00:00Z');
const EARLIER = '2026-12-01T08:00:00Z';
const CONFIG = { operatorImage: undefined, standardEnv: [] };
const FIXTURES = resolve(import.meta.dirname, '../../../../shared/fixtures/profiler');
const OUT1 = readFileSync(resolve(FIXTURES, 'out1.final_config.yaml'), 'utf8');
const OUT3 = readFileSync(resolve(FIXTURES, 'out3.final_config.yaml'), 'utf8');
const OUT8_FAILED_STATUS = readFileSync(resolve(FIXTURES, 'out8-without-tool.profiler_status.yaml'), 'utf8');

const HARDWARE = { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16, rdma: false } as const;

function aDgdr(fields: { spec?: Obj; status?: Obj; generation?: number; annotations?: Record<string, string> } = {}): Dgdr {
  return DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'ns', uid: 'uid-1', generation: fields.generation ?? 1, ...(fields.annotations === undefined ? {} : { annotations: fields.annotations }) },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', autoApply: true, hardware: HARDWARE, ...fields.spec },
    ...(fields.status === undefined ? {} : { status: fields.status }),
  });
}

/** The output ConfigMap as the Job's output-copier writes it: tracking labels, controller owner reference to the request's uid (output-copier.ts). */
const ownOutput = (fields: Partial<ChildFacts & { resourceVersion: string }> = {}) => ({ name: 'dgdr-output-qwen', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator' }, ownerReferences: [{ uid: 'uid-1', controller: true }], resourceVersion: '41', ...fields });

/** An observed state; output data given without output facts is the copier's own (see ownOutput), as the function loads it. */
function observed(dgdr: Dgdr, fields: Partial<DgdrObserved> = {}): DgdrObserved {
  const output = fields.outputData === undefined ? undefined : ownOutput();
  return { dgdr, job: undefined, jobPods: [], outputData: undefined, output, dgd: undefined, dgdPodContainers: [], configMaps: [], nodes: undefined, modelCachePvcExists: undefined, ...fields };
}

const ownJob = (conditions: { type: string; status: string; message?: string }[] = []) => ({ name: 'profile-qwen', uid: 'job-uid', labels: { app: 'dynamo-profiler', dgdr: 'qwen' }, ownerReferences: [{ uid: 'uid-1', controller: true }], conditions });
const cond = (type: string, status: 'True' | 'False', reason: string, message: string, observedGeneration: number | null = 1, lastTransitionTime = NOW.toISOString()): Condition => ({ type, status, reason, message, lastTransitionTime, ...(observedGeneration === null ? {} : { observedGeneration }) });

function conditionOf(desired: DgdrDesired, type: string): Condition | undefined {
  return desired.status?.conditions?.find((c) => c.type === type);
}

const profilingStatus = (fields: Obj = {}): Obj => ({ phase: 'Profiling', profilingPhase: 'Initializing', profilingJobName: 'profile-qwen', observedGeneration: 1, conditions: [cond('Profiling', 'False', 'Initializing', 'Discovering GPU hardware and preparing profiling job', 1, EARLIER)], ...fields });

/** A decision that writes nothing but its status and Events: every other field of DgdrDesired empty (spread, then status and events). */
const NO_WRITES = { hardware: undefined, deleteStaleOutput: undefined, job: undefined, annotations: undefined, configMaps: [], dgd: undefined, deleteConfigMaps: [], adoptConfigMaps: [] } as const;

describe('succeededCondition (upstream setSucceededCondition table)', () => {
  it.each([
    { phase: 'Pending', want: { status: 'False', reason: 'Pending', message: 'DGDR is pending' } },
    { phase: 'Profiling', want: { status: 'False', reason: 'Profiling', message: 'Profiling is in progress' } },
    { phase: 'Ready', want: { status: 'True', reason: 'SpecGenerated', message: 'Profiling complete, spec available' } },
    { phase: 'Deploying', want: { status: 'False', reason: 'Deploying', message: 'Deployment is in progress' } },
    { phase: 'Deployed', want: { status: 'True', reason: 'Deployed', message: 'Deployment is healthy' } },
    { phase: 'Failed', want: { status: 'False', reason: 'Failed', message: 'DGDR has failed' } },
  ] as const)('$phase', ({ phase, want }) => {
    expect(succeededCondition(phase, [])).toEqual({ type: 'Succeeded', ...want });
  });

  it('Failed copies the first False condition with a message, prefixed ("Profiling failed: ")', () => {
    expect(succeededCondition('Failed', [cond('Validation', 'True', 'ValidationPassed', 'DGDR spec validation passed'), cond('Profiling', 'False', 'SweepingPrefillFailed', 'profiling failed: boom')])).toEqual({
      type: 'Succeeded',
      status: 'False',
      reason: 'SweepingPrefillFailed',
      message: 'Profiling failed: profiling failed: boom',
    });
  });
});

describe('decideDgdr', () => {
  it('Pending: validation passes, discovered hardware is persisted and the Job is created (phase stays Pending)', () => {
    const dgdr = aDgdr({ spec: { hardware: undefined } });
    const nodes = ['a', 'b'].map((name) => ({ name, labels: { 'nvidia.com/gpu.product': 'H200-SXM5-141GB', 'nvidia.com/gpu.count': '8', 'nvidia.com/gpu.memory': '141312' } }));
    const desired = decideDgdr(observed(dgdr, { nodes }), CONFIG, NOW);
    expect(desired.hardware).toEqual(HARDWARE);
    // No output ConfigMap exists: nothing to delete (issue 20: only a ConfigMap this request provably owns is deleted).
    expect(desired.deleteStaleOutput).toBeUndefined();
    expect((desired.job?.['metadata'] as Obj)['name']).toBe('profile-qwen');
    const args = ((((desired.job?.['spec'] as Obj)['template'] as Obj)['spec'] as { containers: { args: string[] }[] }).containers[0]?.args ?? []);
    expect(JSON.parse(args[1] ?? '{}').hardware).toEqual(HARDWARE);
    expect(desired.status).toEqual({
      phase: 'Pending',
      profilingJobName: 'profile-qwen',
      observedGeneration: 1,
      conditions: [
        cond('Profiling', 'False', 'DiscoveringHardware', 'Discovering GPU hardware and preparing profiling job'),
        cond('Succeeded', 'False', 'Pending', 'DGDR is pending'),
        cond('Validation', 'True', 'ValidationPassed', 'DGDR spec validation passed'),
      ],
    });
    expect(desired.events).toEqual([{ type: 'Normal', reason: 'Initialized', action: 'Validate', note: 'DGDR initialized successfully' }]);
  });

  it('Pending with DCGM exporters: their hardware and interconnect are persisted and reach the Job\'s --config (upstream enrichHardwareFromDiscovery)', () => {
    const dgdr = aDgdr({ spec: { hardware: undefined } });
    const body = readFileSync(resolve(import.meta.dirname, '../../../test/fixtures/dcgm/h200-hgx-8gpu.metrics'), 'utf8');
    // The GPU Operator's DaemonSet pods, each exporter's Hostname its own node (NODE_NAME from spec.nodeName).
    const exporterPods = ['a', 'b'].map((node, i) => ({ namespace: 'gpu-operator', name: `dcgm-${node}`, nodeName: node, phase: 'Running', podIp: `10.0.0.${i + 1}`, controller: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter' }, scrape: { endpoint: `http://10.0.0.${i + 1}:9400/metrics`, ok: true as const, body: body.replace(/Hostname="[^"]*"/g, `Hostname="${node}"`) } }));
    const desired = decideDgdr(observed(dgdr, { nodes: [{ name: 'a', labels: {} }, { name: 'b', labels: {} }], discoverySignals: { dcgm: { exporterPods, isGpuOperatorRunning: false } } }), CONFIG, NOW);
    const want = { gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 16, rdma: false, interconnect: 'nvlink' };
    expect(desired.hardware).toEqual(want);
    const args = ((((desired.job?.['spec'] as Obj)['template'] as Obj)['spec'] as { containers: { args: string[] }[] }).containers[0]?.args ?? []);
    expect(JSON.parse(args[1] ?? '{}').hardware).toEqual(want);
  });

  it('Pending with explicit sizing but no interconnect: best-effort discovery adds it; nothing found leaves the spec as it is', () => {
    const explicit = { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16 } as const;
    const dgdr = aDgdr({ spec: { hardware: explicit } });
    const nodes = [{ name: 'a', labels: { 'nvidia.com/gpu.product': 'H200-SXM5-141GB', 'nvidia.com/gpu.count': '8', 'nvidia.com/gpu.memory': '141312', 'nvidia.com/rdma.present': 'true' } }];
    expect(decideDgdr(observed(dgdr, { nodes }), CONFIG, NOW).hardware).toEqual({ ...explicit, rdma: true });
    const nothing = decideDgdr(observed(dgdr, { nodes: [] }), CONFIG, NOW);
    expect(nothing.hardware).toBeUndefined();
    expect(nothing.status?.phase).toBe('Pending');
  });

  it('"every mismatch ... moves the DGDR to Failed before any Job exists" (no GPU nodes)', () => {
    const desired = decideDgdr(observed(aDgdr({ spec: { hardware: undefined } }), { nodes: [] }), CONFIG, NOW);
    expect(desired.job).toBeUndefined();
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'Validation')).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(conditionOf(desired, 'Succeeded')?.message).toMatch(/^Validation failed: GPU hardware discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found \(checked 0 nodes\)/);
    expect(desired.events[0]).toMatchObject({ type: 'Warning', reason: 'ValidationFailed' });
  });

  it('Pending: a missing model cache PVC fails validation (upstream message)', () => {
    const desired = decideDgdr(observed(aDgdr({ spec: { modelCache: { pvcName: 'weights' } } }), { modelCachePvcExists: false }), CONFIG, NOW);
    expect(conditionOf(desired, 'Validation')?.message).toBe('model cache PVC weights not found in namespace ns');
  });

  it('Pending: the Job observed -> Profiling, profilingPhase Initializing, Normal ProfilingJobCreated', () => {
    const dgdr = aDgdr({ status: { phase: 'Pending', observedGeneration: 1, conditions: [cond('Validation', 'True', 'ValidationPassed', 'DGDR spec validation passed', 1, EARLIER)] } });
    const desired = decideDgdr(observed(dgdr, { job: ownJob() }), CONFIG, NOW);
    expect(desired.status).toEqual({
      phase: 'Profiling',
      profilingPhase: 'Initializing',
      profilingJobName: 'profile-qwen',
      observedGeneration: 1,
      conditions: [
        cond('Profiling', 'False', 'Initializing', 'Discovering GPU hardware and preparing profiling job'),
        cond('Succeeded', 'False', 'Profiling', 'Profiling is in progress'),
        cond('Validation', 'True', 'ValidationPassed', 'DGDR spec validation passed', 1, EARLIER),
      ],
    });
    expect(desired.events).toEqual([{ type: 'Normal', reason: 'ProfilingJobCreated', action: 'Create', note: 'Profiling job created' }]);
  });

  it('"Never touch what is not ours": a Job profile-<name> this request does not control is a conflict, not adopted', () => {
    const desired = decideDgdr(observed(aDgdr(), { job: { ...ownJob(), ownerReferences: [] } }), CONFIG, NOW);
    expect(desired.job).toBeUndefined();
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'Profiling')).toMatchObject({ reason: 'JobNameConflict', message: 'Job profile-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; delete that Job or create the request under another name' });
  });

  it('"Own what you read" (issue 20): a stale dgdr-output-<name> this request controls is deleted before the Job, that version only', () => {
    const desired = decideDgdr(observed(aDgdr(), { output: ownOutput({ resourceVersion: '77' }) }), CONFIG, NOW);
    expect(desired.deleteStaleOutput).toEqual({ name: 'dgdr-output-qwen', resourceVersion: '77' });
    expect(desired.job).toBeDefined();
  });

  it.each([
    { name: 'unlabelled and ownerless', reason: 'issue 20: anyone who can write ConfigMaps could otherwise choose the DGD', output: { name: 'dgdr-output-qwen', labels: {}, ownerReferences: [] } },
    { name: 'with the tracking labels but no owner', reason: 'labels name the request, which anyone can guess; only the uid proves it', output: ownOutput({ ownerReferences: [] }) },
    { name: 'owned by the request uid without controller: true', reason: 'the copier writes controller: true', output: ownOutput({ ownerReferences: [{ uid: 'uid-1' }] }) },
    { name: 'controlled by another uid (an earlier request of the same name)', reason: 'a deleted-and-recreated request has a new uid', output: ownOutput({ ownerReferences: [{ uid: 'uid-old', controller: true }] }) },
  ])('"never deletes or reads one it cannot prove" (issue 20), Pending: a foreign dgdr-output-<name> $name is a conflict: no Job, not deleted', ({ output }) => {
    const desired = decideDgdr(observed(aDgdr(), { output, outputData: { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT1 } }), CONFIG, NOW);
    expect(desired).toEqual({
      ...NO_WRITES,
      status: {
        phase: 'Failed',
        observedGeneration: 1,
        conditions: [
          cond('Profiling', 'False', 'OutputConfigMapConflict', 'ConfigMap dgdr-output-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name'),
          cond('Succeeded', 'False', 'OutputConfigMapConflict', 'Profiling failed: ConfigMap dgdr-output-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name'),
        ],
      },
      events: [{ type: 'Warning', reason: 'ProfilingJobFailed', action: 'Create', note: 'ConfigMap dgdr-output-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name' }],
    });
  });

  it('"never deletes or reads one it cannot prove" (issue 20), Profiling: a complete Job with a foreign output holding a DGD creates nothing and fails naming the ConfigMap', () => {
    const outputData = { phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success', 'final_config.yaml': OUT1 };
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData, output: { name: 'dgdr-output-qwen', labels: {}, ownerReferences: [] } }), CONFIG, NOW);
    expect(desired.dgd).toBeUndefined();
    expect(desired.annotations).toBeUndefined();
    expect(desired.configMaps).toEqual([]);
    expect(desired.deleteStaleOutput).toBeUndefined();
    expect(desired.status?.phase).toBe('Failed');
    // dgdr-reference "status.profilingPhase": "cleared when profiling completes or fails".
    expect(desired.status?.profilingPhase).toBeUndefined();
    expect(desired.status?.profilingResults).toBeUndefined();
    expect(conditionOf(desired, 'Profiling')).toMatchObject({ status: 'False', reason: 'OutputConfigMapConflict', message: 'ConfigMap dgdr-output-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name' });
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'ProfilingCheckFailed', action: 'Get', note: 'ConfigMap dgdr-output-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name' }]);
  });

  it('"Own what you read" (issue 20), Profiling: a Job profile-<name> no longer controlled by the request (recreated by someone else) is a conflict, its conditions not read', () => {
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: { ...ownJob([{ type: 'Failed', status: 'True', message: 'planted' }]), ownerReferences: [{ uid: 'someone', controller: true }] } }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'Profiling')).toMatchObject({ reason: 'JobNameConflict', message: 'Job profile-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; delete that Job or create the request under another name' });
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'ProfilingCheckFailed', action: 'Get', note: 'Job profile-qwen already exists and is not controlled by this DynamoGraphDeploymentRequest; delete that Job or create the request under another name' }]);
  });

  it('"the request\'s message names the copier\'s error, not the profiler\'s successful exit" (issue 20): profiler exit 0, output-copier exit 1', () => {
    const copierError = 'ERROR: kubectl not found in the output-copier image. The image set for the output-copier container through spec.overrides.profilingJob must contain kubectl.';
    const pods = [{ name: 'profile-qwen-abcde', phase: 'Failed', profiler: { terminated: { exitCode: 0, reason: 'Completed' } }, outputCopier: { terminated: { exitCode: 1, reason: 'Error', message: copierError } } }];
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Failed', status: 'True', message: 'Job has reached the specified backoff limit' }]), jobPods: pods }), CONFIG, NOW);
    expect(conditionOf(desired, 'Profiling')).toMatchObject({
      reason: 'InitializingFailed',
      message: `profiling job failed: Job has reached the specified backoff limit. Details: Pod: profile-qwen-abcde, Container: output-copier, ExitCode: 1, Reason: Error, Message: ${copierError}`,
    });
  });

  it('Profiling: the Job runs -> Profiling reason ProfilingRunning "Profiling is in progress" (only from Initializing)', () => {
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob() }), CONFIG, NOW);
    expect(conditionOf(desired, 'Profiling')).toEqual(cond('Profiling', 'False', 'ProfilingRunning', 'Profiling is in progress', 1, EARLIER));
  });

  it('Profiling: the output ConfigMap phase becomes profilingPhase, the reason the phase and the message the ConfigMap message', () => {
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus({ conditions: [cond('Profiling', 'False', 'ProfilingRunning', 'Profiling is in progress', 1, EARLIER)] }) }), { job: ownJob(), outputData: { phase: 'SweepingPrefill', message: 'Sweeping parallelization strategies' } }), CONFIG, NOW);
    expect(desired.status?.profilingPhase).toBe('SweepingPrefill');
    expect(conditionOf(desired, 'Profiling')).toEqual(cond('Profiling', 'False', 'SweepingPrefill', 'Sweeping parallelization strategies', 1, EARLIER));
  });

  it('"a profiler failure is final with its whole error (not just its first line)": the folded YAML error is read whole', () => {
    const outputData = { phase: 'GeneratingDGD', message: 'Profiler failed with exception: DGDOverrideError', profiler_status: 'failed', profiler_error: "could not find dgd-apply-overrides; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or", 'profiler_status.yaml': OUT8_FAILED_STATUS };
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus({ profilingPhase: 'GeneratingDGD' }) }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Failed');
    // Reference "status.profilingPhase": "cleared when profiling completes or fails"; the reason keeps the sub-phase.
    expect(desired.status && 'profilingPhase' in desired.status).toBe(false);
    expect(conditionOf(desired, 'Profiling')).toMatchObject({ status: 'False', reason: 'GeneratingDGDFailed', message: "profiling failed: could not find 'dgd-apply-overrides'; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or add it to PATH" });
    expect(conditionOf(desired, 'Succeeded')).toMatchObject({ reason: 'GeneratingDGDFailed', message: "Profiling failed: profiling failed: could not find 'dgd-apply-overrides'; set $DYNAMO_DGD_APPLY_OVERRIDES_BIN or add it to PATH" });
    expect(desired.events[0]).toMatchObject({ type: 'Warning', reason: 'ProfilingCheckFailed' });
  });

  it('Profiling: a failed Job gives upstream\'s message with the pod details and the <Phase>Failed reason; reference "status.profilingPhase ... cleared when profiling completes or fails": cleared (the reference wins over upstream, which keeps it)', () => {
    const pods = [{ name: 'profile-qwen-abcde', phase: 'Failed', profiler: { terminated: { exitCode: 1, reason: 'Error', message: 'container failed' } } }];
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus({ profilingPhase: 'SweepingPrefill' }) }), { job: ownJob([{ type: 'Failed', status: 'True', message: 'Job has reached the specified backoff limit' }]), jobPods: pods }), CONFIG, NOW);
    expect(conditionOf(desired, 'Profiling')).toMatchObject({
      reason: 'SweepingPrefillFailed',
      message: 'profiling job failed: Job has reached the specified backoff limit. Details: Pod: profile-qwen-abcde, Container: profiler, ExitCode: 1, Reason: Error, Message: container failed',
    });
    expect(desired.status?.phase).toBe('Failed');
    expect(desired.status && 'profilingPhase' in desired.status).toBe(false);
  });

  it('Profiling: Job complete but output not relayed yet -> wait, no failure', () => {
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData: { phase: 'Done', message: 'Profiler completed successfully' } }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Profiling');
    expect(desired.dgd).toBeUndefined();
  });

  it('Profiling done, autoApply true: <dgdr>-dgd, annotation and selectedConfig, planner ConfigMap with tracking labels and (issue 20) the request\'s uid label, Deploying', () => {
    const outputData = { phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success', 'final_config.yaml': OUT3 };
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus({ profilingPhase: 'GeneratingDGD' }) }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    expect(desired.status?.profilingPhase).toBeUndefined();
    expect(desired.status?.dgdName).toBe('qwen-dgd');
    const selected = desired.status?.profilingResults?.selectedConfig as Obj;
    expect(selected['apiVersion']).toBe('nvidia.com/v1beta1');
    expect((selected['metadata'] as Obj)['name']).toBe('qwen-dgd');
    expect(parseYaml(desired.annotations?.['nvidia.com/generated-dgd-spec'] ?? '')).toEqual(selected);
    expect(conditionOf(desired, 'Profiling')).toMatchObject({ status: 'True', reason: 'ProfilingCompleted', message: 'Profiling job completed successfully' });
    expect(conditionOf(desired, 'SpecGenerated')).toMatchObject({ status: 'True', reason: 'SpecGenerated', message: 'DynamoGraphDeployment spec generated successfully' });
    expect(desired.configMaps.map((c) => c['metadata'])).toEqual([
      { name: 'planner-config-fb8c', namespace: 'ns', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' } },
    ]);
    expect(desired.configMaps.map((c) => (c['metadata'] as Obj)['ownerReferences'])).toEqual([undefined]);
    expect(desired.events).toEqual([{ type: 'Normal', reason: 'SpecGenerated', action: 'Create', note: 'DynamoGraphDeployment spec generated successfully' }]);
  });

  it('issue 20 "the same rule everywhere" and upstream createAdditionalResources ("Create/update with no owner reference"): a planner ConfigMap from the profiling output (which overrides.profilingJob lets the request\'s author write) is created with its name, labels and annotations only; a controller reference to another request, finalizers, a namespace and a uid label it carries are not', () => {
    const documents = parseAllDocuments(OUT3).map((d) => d.toJS() as Obj);
    const planted = documents.map((d) =>
      d['kind'] === 'ConfigMap'
        ? {
            ...d,
            metadata: {
              ...(d['metadata'] as Obj),
              namespace: 'elsewhere',
              labels: { app: 'planner', 'dgdr.nvidia.com/uid': 'other-uid' },
              annotations: { note: 'kept' },
              finalizers: ['example.com/hold'],
              ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'other', uid: 'other-uid', controller: true, blockOwnerDeletion: true }],
            },
          }
        : d,
    );
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': planted.map((d) => stringifyYaml(d)).join('---\n') };
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    expect(desired.configMaps.map((c) => c['metadata'])).toEqual([
      {
        name: 'planner-config-fb8c',
        namespace: 'ns',
        labels: { app: 'planner', 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' },
        annotations: { note: 'kept' },
      },
    ]);
  });

  it('Profiling done, autoApply false -> Ready, "Generated spec is available in annotation nvidia.com/generated-dgd-spec"', () => {
    const outputData = { phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success', 'final_config.yaml': OUT1 };
    const desired = decideDgdr(observed(aDgdr({ spec: { autoApply: false }, status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Ready');
    expect(conditionOf(desired, 'SpecGenerated')?.message).toBe('Generated spec is available in annotation nvidia.com/generated-dgd-spec');
    expect(conditionOf(desired, 'Succeeded')).toMatchObject({ status: 'True', reason: 'SpecGenerated', message: 'Profiling complete, spec available' });
  });

  it('"metadata.name selects the final DGD name"; runtimeVersionOverride is copied to components without their own', () => {
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT1 };
    const spec = { runtimeVersionOverride: '1.6.1', overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'explicit-name' } } } };
    const desired = decideDgdr(observed(aDgdr({ spec, status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    const selected = desired.status?.profilingResults?.selectedConfig as { metadata: Obj; spec: { components: Obj[] } };
    expect(selected.metadata['name']).toBe('explicit-name');
    expect(selected.spec.components.map((c) => c['runtimeVersionOverride'])).toEqual(selected.spec.components.map(() => '1.6.1'));
  });

  it('reference "overrides.profilingJob customizes only the profiling Job. Use overrides.dgd for settings that must appear on deployed components": the tolerations the 1.6.1 profiler copies from the Job into every component (inject_tolerations_into_dgd) are removed; one overrides.dgd sets on a component stays', () => {
    const gpuTaint = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };
    const profilingPool = { key: 'pool', operator: 'Equal', value: 'profiling', effect: 'NoSchedule' };
    const templateOwn = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
    // OUT1 as the profiler writes it when the Job carries two tolerations: appended to every component.
    const injected = parseYaml(OUT1) as { spec: { components: { name: string; podTemplate: { spec: Obj } }[] } };
    for (const component of injected.spec.components) {
      const own = component.name === 'worker' ? [templateOwn] : [];
      component.podTemplate.spec['tolerations'] = [...own, gpuTaint, profilingPool];
    }
    const spec = {
      overrides: {
        profilingJob: { template: { spec: { tolerations: [gpuTaint, profilingPool] } } },
        dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'worker', podTemplate: { spec: { tolerations: [gpuTaint] } } }] } },
      },
    };
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': stringifyYaml(injected) };
    const desired = decideDgdr(observed(aDgdr({ spec, status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    const components = (desired.status?.profilingResults?.selectedConfig as { spec: { components: { name: string; podTemplate: { spec: Obj } }[] } }).spec.components;
    expect(components.map((c) => [c.name, c.podTemplate.spec['tolerations']])).toEqual([
      ['Frontend', undefined],
      ['worker', [templateOwn, gpuTaint]],
    ]);
    expect(parseYaml(desired.annotations?.['nvidia.com/generated-dgd-spec'] ?? '')).toEqual(desired.status?.profilingResults?.selectedConfig);
  });

  it('reference "A recognized deprecated name may be translated to the corresponding component in the selected topology with a warning": a VllmWorker override target shows on the request as a Warning Event with the merge engine\'s text', () => {
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT1 };
    const spec = { overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'VllmWorker', replicas: 2 }, { name: 'Frontend', replicas: 1 }] } } } };
    const desired = decideDgdr(observed(aDgdr({ spec, status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    expect(desired.events).toEqual([
      { type: 'Normal', reason: 'SpecGenerated', action: 'Create', note: 'DynamoGraphDeployment spec generated successfully' },
      { type: 'Warning', reason: 'DeprecatedOverrideTarget', action: 'Create', note: 'spec.components[name=VllmWorker]: deprecated override target "VllmWorker" translated to "worker"; use "worker" directly. Legacy-name translation will be removed in a future release' },
    ]);
  });

  it('a final_config.yaml without a DGD fails generation (upstream message)', () => {
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' };
    const desired = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    expect(conditionOf(desired, 'SpecGenerated')).toMatchObject({ status: 'False', reason: 'GenerationFailed', message: 'no DynamoGraphDeployment found in YAML content' });
    expect(desired.status?.phase).toBe('Failed');
  });

  const readyStatus = (fields: Obj = {}): Obj => ({ phase: 'Ready', dgdName: 'qwen-dgd', profilingJobName: 'profile-qwen', observedGeneration: 1, conditions: [cond('SpecGenerated', 'True', 'SpecGenerated', 'Generated spec is available in annotation nvidia.com/generated-dgd-spec', 1, EARLIER)], ...fields });
  const annotation = (): string => {
    const generated = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData: { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT1 } }), CONFIG, NOW);
    return generated.annotations?.['nvidia.com/generated-dgd-spec'] ?? '';
  };

  it('Ready with autoApply false stays Ready and writes nothing', () => {
    const dgdr = aDgdr({ spec: { autoApply: false }, status: readyStatus() });
    const first = decideDgdr(observed(dgdr), CONFIG, NOW);
    const again = decideDgdr(observed({ ...dgdr, status: first.status ?? dgdr.status }), CONFIG, NOW);
    expect(again).toMatchObject({ status: undefined, dgd: undefined, events: [] });
  });

  it('reference "deploymentInfo ... Populated once a DGD has been created (via autoApply or manually)": a DGD the user created by hand while Ready is followed (no tracking labels needed), and cleared once it is gone; the request stays Ready', () => {
    const byHand = { name: 'qwen-dgd', labels: {}, ownerReferences: [], state: 'pending', components: [{ replicas: 1, availableReplicas: 1 }, { replicas: 2, availableReplicas: 0 }] };
    const dgdr = aDgdr({ spec: { autoApply: false }, status: readyStatus() });
    const followed = decideDgdr(observed(dgdr, { dgd: byHand }), CONFIG, NOW);
    expect(followed.status?.phase).toBe('Ready');
    expect(followed.status?.deploymentInfo).toEqual({ replicas: 3, availableReplicas: 1 });
    expect(followed.dgd).toBeUndefined();
    const scaled = decideDgdr(observed({ ...dgdr, status: followed.status ?? dgdr.status }, { dgd: { ...byHand, state: 'successful', components: [{ replicas: 1, availableReplicas: 1 }, { replicas: 2, availableReplicas: 2 }] } }), CONFIG, NOW);
    expect(scaled.status?.deploymentInfo).toEqual({ replicas: 3, availableReplicas: 3 });
    const gone = decideDgdr(observed({ ...dgdr, status: scaled.status ?? dgdr.status }), CONFIG, NOW);
    expect(gone.status?.phase).toBe('Ready');
    expect(gone.status && 'deploymentInfo' in gone.status).toBe(false);
  });

  it('"After it reaches Ready, you may enable autoApply": Ready -> Deploying; then the DGD is created with the current runtimeVersionOverride, labels (issue 20: and the request\'s uid label) and no owner reference', () => {
    const ready = aDgdr({ spec: { autoApply: true, runtimeVersionOverride: '1.6.2' }, generation: 2, status: readyStatus(), annotations: { 'nvidia.com/generated-dgd-spec': annotation() } });
    const deploying = decideDgdr(observed(ready), CONFIG, NOW);
    expect(deploying.status?.phase).toBe('Deploying');
    expect(deploying.status?.observedGeneration).toBe(2);
    const created = decideDgdr(observed({ ...ready, status: deploying.status ?? ready.status }), CONFIG, NOW);
    const metadata = created.dgd?.['metadata'] as Obj;
    expect(metadata['name']).toBe('qwen-dgd');
    expect(metadata['namespace']).toBe('ns');
    expect(metadata['labels']).toEqual({ 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' });
    expect(metadata['ownerReferences']).toBeUndefined();
    expect(((created.dgd?.['spec'] as { components: Obj[] }).components).every((c) => c['runtimeVersionOverride'] === '1.6.2')).toBe(true);
    expect(created.events).toEqual([{ type: 'Normal', reason: 'DeploymentCreated', action: 'Create', note: 'DynamoGraphDeployment qwen-dgd created successfully' }]);
  });

  it('"An overridden runtime image without a parseable semantic-version tag requires runtimeVersionOverride on that component" / "The DGDR value also covers images replaced through spec.overrides.dgd": the DGD to create is held to DGD admission\'s rule', () => {
    // The generated spec with its runtime images replaced by :latest, as an overrides.dgd image replacement leaves it.
    const latest = annotation().replaceAll('vllm-runtime:1.6.1', 'vllm-runtime:latest');
    expect(latest).toContain('vllm-runtime:latest');
    const createdWith = (spec: Obj) => {
      const ready = aDgdr({ spec: { autoApply: true, ...spec }, generation: 2, status: readyStatus(), annotations: { 'nvidia.com/generated-dgd-spec': latest } });
      const deploying = decideDgdr(observed(ready), CONFIG, NOW);
      const dgd = decideDgdr(observed({ ...ready, status: deploying.status ?? ready.status }), CONFIG, NOW).dgd;
      if (dgd === undefined) throw new Error('no DGD to create');
      return validateDgd(dgd, undefined, { lpxEnabled: false }).issues.filter((i) => i.path.endsWith('.runtimeVersionOverride')).map(formatIssue);
    };
    expect(createdWith({})).toEqual([
      'spec.components[0].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag',
      'spec.components[1].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag',
    ]);
    expect(createdWith({ runtimeVersionOverride: '1.6.1' })).toEqual([]);
  });

  const deployingDgdr = () => aDgdr({ status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] }, annotations: { 'nvidia.com/generated-dgd-spec': annotation() } });
  /** The DGD this request created: the tracking labels and the uid label it stamps at creation (dgdToCreate). */
  const ourDgd = (state: string) => ({ name: 'qwen-dgd', uid: 'dgd-uid', labels: { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': 'uid-1' }, ownerReferences: [], state, components: [{ replicas: 1, availableReplicas: 1 }, { replicas: 2, availableReplicas: 0 }] });

  it('"a collision is reported, not adopted": an existing DGD without this request\'s labels fails the request and is left untouched', () => {
    const desired = decideDgdr(observed(deployingDgdr(), { dgd: { ...ourDgd('successful'), labels: {} } }), CONFIG, NOW);
    expect(desired.dgd).toBeUndefined();
    expect(desired.annotations).toBeUndefined();
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'DeploymentReady')).toMatchObject({ status: 'False', reason: 'DeploymentNameConflict' });
    expect(desired.events[0]).toMatchObject({ type: 'Warning', reason: 'DeploymentCreationFailed' });
  });

  it('Deploying: our DGD not yet successful -> DeploymentInProgress "DGD <n> is in <state> state", deploymentInfo summed, annotation cleared', () => {
    const desired = decideDgdr(observed(deployingDgdr(), { dgd: ourDgd('pending') }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    expect(conditionOf(desired, 'DeploymentReady')).toEqual(cond('DeploymentReady', 'False', 'DeploymentInProgress', 'DGD qwen-dgd is in pending state', null));
    expect(desired.status?.deploymentInfo).toEqual({ replicas: 3, availableReplicas: 1 });
    expect(desired.annotations).toEqual({});
  });

  it('"planner ConfigMaps ... labeled with dgdr.nvidia.com/name": once the DGD exists they get it as controller owner; the output ConfigMap keeps its DGDR owner', () => {
    const labels = { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns' };
    const configMaps = [
      { name: 'planner-config-fb8c', labels: { ...labels, 'dgdr.nvidia.com/uid': 'uid-1' }, ownerReferences: [] },
      { name: 'dgdr-output-qwen', labels, ownerReferences: [{ uid: 'uid-1', controller: true }] },
      { name: 'planner-profile-data-1a2b', labels, ownerReferences: [{ uid: 'dgd-uid', controller: true }] },
      // Issue 20 "Own what you read": labels anyone can set do not make a ConfigMap someone else controls ours to take over.
      { name: 'someone-elses', labels, ownerReferences: [{ uid: 'other-uid', controller: true }] },
    ];
    const desired = decideDgdr(observed(deployingDgdr(), { dgd: { ...ourDgd('pending'), uid: 'dgd-uid' }, configMaps }), CONFIG, NOW);
    expect(desired.adoptConfigMaps).toEqual([{ name: 'planner-config-fb8c', ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'qwen-dgd', uid: 'dgd-uid', controller: true, blockOwnerDeletion: true }] }]);
  });

  it('Deploying: one Warning ImagePullFailed per DGD pod container waiting in ErrImagePull or ImagePullBackOff (upstream text)', () => {
    const dgdPodContainers = [
      { pod: 'qwen-dgd-0-worker-x', container: 'main', reason: 'ImagePullBackOff', message: 'Back-off pulling image "nvcr.io/x:1"' },
      { pod: 'qwen-dgd-0-worker-x', container: 'init', reason: 'ErrImagePull', message: '' },
      { pod: 'qwen-dgd-0-frontend-y', container: 'main', reason: 'ContainerCreating', message: '' },
    ];
    const desired = decideDgdr(observed(deployingDgdr(), { dgd: ourDgd('pending'), dgdPodContainers }), CONFIG, NOW);
    expect(desired.events).toEqual([
      { type: 'Warning', reason: 'ImagePullFailed', action: 'Get', note: 'pod qwen-dgd-0-worker-x container main: ImagePullBackOff: Back-off pulling image "nvcr.io/x:1"' },
      { type: 'Warning', reason: 'ImagePullFailed', action: 'Get', note: 'pod qwen-dgd-0-worker-x container init: ErrImagePull' },
    ]);
  });

  it('Deploying: our DGD successful -> Deployed, DeploymentReady True, Normal DeploymentReady', () => {
    const desired = decideDgdr(observed(deployingDgdr(), { dgd: ourDgd('successful') }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deployed');
    expect(conditionOf(desired, 'DeploymentReady')).toEqual(cond('DeploymentReady', 'True', 'DeploymentReady', 'DynamoGraphDeployment qwen-dgd is ready', null));
    expect(conditionOf(desired, 'Succeeded')).toMatchObject({ status: 'True', reason: 'Deployed', message: 'Deployment is healthy' });
    expect(desired.events).toEqual([{ type: 'Normal', reason: 'DeploymentReady', action: 'Update', note: 'DynamoGraphDeployment qwen-dgd is ready' }]);
  });

  it('Deployed: the DGD deleted by the user -> Failed, DeploymentDeleted, dgdName cleared', () => {
    const dgdr = aDgdr({ status: { phase: 'Deployed', dgdName: 'qwen-dgd', deploymentInfo: { replicas: 3, availableReplicas: 3 }, observedGeneration: 1, conditions: [] } });
    const desired = decideDgdr(observed(dgdr), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Failed');
    expect(desired.status?.dgdName).toBeUndefined();
    expect(desired.status?.deploymentInfo).toBeUndefined();
    expect(conditionOf(desired, 'DeploymentReady')?.message).toBe('Deployment was deleted by user. Create a new DGDR to redeploy.');
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'DeploymentDeleted', action: 'Delete', note: 'DGD qwen-dgd was deleted. DGDR will not recreate it. Delete this DGDR and create a new one to redeploy.' }]);
  });

  it('Deployed: the DGD degraded -> Deploying, DeploymentDegraded', () => {
    const dgdr = aDgdr({ status: { phase: 'Deployed', dgdName: 'qwen-dgd', observedGeneration: 1, conditions: [] } });
    const desired = decideDgdr(observed(dgdr, { dgd: ourDgd('failed') }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    expect(conditionOf(desired, 'DeploymentReady')).toMatchObject({ reason: 'DeploymentDegraded', message: 'Deployment degraded to failed' });
    expect(desired.events[0]).toEqual({ type: 'Warning', reason: 'DeploymentDegraded', action: 'Update', note: 'DynamoGraphDeployment qwen-dgd degraded from Ready to failed' });
  });

  it('a spec change after profiling started (not a deferred update) is rejected with SpecChangeRejected and the status is left alone', () => {
    const desired = decideDgdr(observed(aDgdr({ generation: 2, status: profilingStatus() }), { job: ownJob() }), CONFIG, NOW);
    expect(desired.status).toBeUndefined();
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'SpecChangeRejected', action: 'Validate', note: "Cannot modify spec in phase 'Profiling'. DynamoGraphDeploymentRequest is immutable once profiling starts. Create a new resource with a different name instead." }]);
  });

  it('Failed is terminal: deciding again writes nothing', () => {
    const failed = decideDgdr(observed(aDgdr({ spec: { hardware: undefined } }), { nodes: [] }), CONFIG, NOW);
    const again = decideDgdr(observed(aDgdr({ spec: { hardware: undefined }, status: failed.status as Obj })), CONFIG, NOW);
    expect(again).toMatchObject({ status: undefined, job: undefined, dgd: undefined, events: [] });
  });

  it('a frozen input does not throw and the same input gives the same output', () => {
    const input = observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData: { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT3 } });
    const frozen = structuredClone(input);
    deepFreeze(frozen);
    expect(decideDgdr(frozen, CONFIG, NOW)).toEqual(decideDgdr(input, CONFIG, NOW));
  });
});

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

describe('classifyOutputConfigMap (issue 20 "Own what you read")', () => {
  it.each([
    { name: 'absent', reason: 'nothing to read or delete', output: undefined, want: 'Absent' },
    { name: 'written by the output-copier', reason: 'controller owner reference to the request uid (output-copier.ts)', output: ownOutput(), want: 'Ours' },
    { name: 'controller ref to the uid beside other owners', reason: 'extra non-controller owners do not change who controls it', output: ownOutput({ ownerReferences: [{ uid: 'x' }, { uid: 'uid-1', controller: true }] }), want: 'Ours' },
    { name: 'ownerless', reason: 'a ConfigMap anyone could have written', output: ownOutput({ ownerReferences: [] }), want: 'Foreign' },
    { name: 'controlled by another uid', reason: 'not this request', output: ownOutput({ ownerReferences: [{ uid: 'uid-2', controller: true }] }), want: 'Foreign' },
    { name: 'owner ref to the uid, controller false', reason: 'the copier writes controller: true', output: ownOutput({ ownerReferences: [{ uid: 'uid-1', controller: false }] }), want: 'Foreign' },
    { name: 'owner ref to the uid, controller "true" (a string)', reason: 'only the boolean proves it', output: ownOutput({ ownerReferences: [{ uid: 'uid-1', controller: 'true' }] }), want: 'Foreign' },
  ])('$name -> $want ($reason)', ({ output, want }) => {
    expect(classifyOutputConfigMap(output, aDgdr())).toBe(want);
  });

  it('a request with no uid (never stored) proves nothing', () => {
    const dgdr = aDgdr();
    expect(classifyOutputConfigMap(ownOutput(), { ...dgdr, metadata: { ...dgdr.metadata, uid: undefined } })).toBe('Foreign');
  });
});

/**
 * Issue 20 item 1, "the same rule everywhere": a function acts on (reads, adopts, deletes, reports) an
 * object it did not create only when it can prove it created it for this request; names and name
 * labels alone never prove it. Here: the planner ConfigMaps the profiling output names, and the
 * generated DGD. The proof is the label dgdr.nvidia.com/uid the function stamps at creation (the DGD
 * carries no owner reference: dgdr-reference "Resource ownership").
 */
describe('issue 20 "the same rule everywhere": the planner ConfigMaps and the generated DGD are the request\'s only with proof', () => {
  const RULE = '"names and name-labels alone never prove it"';
  const TRACKING = { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': 'ns', 'nvidia.com/managed-by': 'dynamo-operator' };
  const STAMPED = { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-1' };
  const PLANNER_CONFLICT = 'ConfigMap planner-config-fb8c (named by the profiling output) already exists and was not created by this DynamoGraphDeploymentRequest; it is left untouched (neither adopted nor deployed). Delete that ConfigMap and create a new request';
  const DGD_CONFLICT = "DynamoGraphDeployment qwen-dgd already exists and was not created by this DynamoGraphDeploymentRequest (its label dgdr.nvidia.com/uid does not carry this request's uid); it is left untouched. Delete it, or create a new request with another spec.overrides.dgd.metadata.name";

  /** The annotations the Profiling step stores for OUT3 (a planner deployment: ConfigMap planner-config-fb8c before the DGD). */
  const generatedAnnotations = (): Record<string, string> => {
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT3 };
    const generated = decideDgdr(observed(aDgdr({ status: profilingStatus() }), { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    return { ...(generated.annotations ?? {}) };
  };
  const deployingStatus = (): Obj => ({ phase: 'Deploying', dgdName: 'qwen-dgd', profilingJobName: 'profile-qwen', observedGeneration: 1, conditions: [cond('Profiling', 'True', 'ProfilingCompleted', 'Profiling job completed successfully', 1, EARLIER), cond('SpecGenerated', 'True', 'SpecGenerated', 'DynamoGraphDeployment spec generated successfully', 1, EARLIER)] });
  /** Deploying, before the DGD exists: both annotations stored. */
  const beforeDgd = () => aDgdr({ status: deployingStatus(), annotations: generatedAnnotations() });
  /** Deploying once the DGD was observed: the generated spec annotation cleared, the additional resources kept. */
  const afterDgd = (phase: 'Deploying' | 'Deployed' = 'Deploying') => aDgdr({ status: { ...deployingStatus(), phase }, annotations: { 'dgdr.nvidia.com/additional-resources': generatedAnnotations()['dgdr.nvidia.com/additional-resources'] ?? '' } });
  const dgdWith = (labels: Record<string, string>, state = 'pending') => ({ name: 'qwen-dgd', uid: 'dgd-uid', labels, ownerReferences: [], state, components: [{ replicas: 1, availableReplicas: 1 }] });
  const planner = (fields: Partial<ChildFacts> = {}): ChildFacts => ({ name: 'planner-config-fb8c', labels: STAMPED, ownerReferences: [], ...fields });
  const toDgd = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'qwen-dgd', uid: 'dgd-uid', controller: true, blockOwnerDeletion: true };

  it('the stored additional resources name the planner ConfigMap (plannerConfigMapNames)', () => {
    expect(plannerConfigMapNames(beforeDgd())).toEqual(['planner-config-fb8c']);
    expect(plannerConfigMapNames(aDgdr())).toEqual([]);
  });

  it(`${RULE}: before the DGD exists, a planner ConfigMap stamped with another request's uid (an earlier request of the same name): not adopted, the request fails naming it, no DGD`, () => {
    const dgdr = beforeDgd();
    const desired = decideDgdr(observed(dgdr, { configMaps: [planner({ labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' } })] }), CONFIG, NOW);
    expect(desired).toEqual({
      ...NO_WRITES,
      status: {
        ...deployingStatus(),
        phase: 'Failed',
        conditions: [
          cond('DeploymentReady', 'False', 'PlannerConfigMapConflict', PLANNER_CONFLICT, null),
          cond('Profiling', 'True', 'ProfilingCompleted', 'Profiling job completed successfully', 1, EARLIER),
          cond('SpecGenerated', 'True', 'SpecGenerated', 'DynamoGraphDeployment spec generated successfully', 1, EARLIER),
          cond('Succeeded', 'False', 'PlannerConfigMapConflict', `Deployment failed: ${PLANNER_CONFLICT}`),
        ],
      },
      events: [{ type: 'Warning', reason: 'ConfigMapCreationFailed', action: 'Create', note: PLANNER_CONFLICT }],
    });
  });

  it(`${RULE} and "nothing is lost or half-written": before the DGD exists, the request fails on a foreign planner ConfigMap and deletes, at the versions read, the output's ConfigMaps it created that nothing owns, and nothing else`, () => {
    const additional = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-config-fb8c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-config-zz\n";
    const dgdr = aDgdr({ status: deployingStatus(), annotations: { ...generatedAnnotations(), 'dgdr.nvidia.com/additional-resources': additional } });
    const configMaps = [
      planner({ resourceVersion: '5' }),
      planner({ name: 'planner-config-zz', labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' }, resourceVersion: '6' }),
      // Stamped by this request but not named by its output: not deleted.
      planner({ name: 'unnamed', resourceVersion: '7' }),
    ];
    const desired = decideDgdr(observed(dgdr, { configMaps }), CONFIG, NOW);
    expect(conditionOf(desired, 'DeploymentReady')).toMatchObject({ reason: 'PlannerConfigMapConflict', message: PLANNER_CONFLICT.replace('planner-config-fb8c', 'planner-config-zz') });
    expect(desired.dgd).toBeUndefined();
    expect(desired.deleteConfigMaps).toEqual([{ name: 'planner-config-fb8c', resourceVersion: '5' }]);
    // Controlled by the DGD (handed over) or by anything else: never deleted here.
    const handed = decideDgdr(observed(dgdr, { configMaps: [planner({ ownerReferences: [{ uid: 'dgd-uid', controller: true }] }), configMaps[1] as ChildFacts] }), CONFIG, NOW);
    expect(handed.deleteConfigMaps).toEqual([]);
  });

  it(`${RULE} and "nothing is lost or half-written", level-triggered: a request already Failed PlannerConfigMapConflict deletes, at every pass while no DGD of that name exists, the output's ConfigMaps it created that nothing owns (a pass that read it before it failed may have created one again); with any DGD of that name, or failed for another reason, it deletes nothing`, () => {
    const failedStatus = (reason: string) => ({ ...deployingStatus(), phase: 'Failed' as const, conditions: [cond('DeploymentReady', 'False', reason, 'm', null), cond('Succeeded', 'False', reason, 'Deployment failed: m')] });
    const failed = (reason: string) => aDgdr({ status: failedStatus(reason), annotations: generatedAnnotations() });
    const configMaps = [planner({ resourceVersion: '5' }), planner({ name: 'planner-config-zz', labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' }, resourceVersion: '6' })];
    const desired = decideDgdr(observed(failed('PlannerConfigMapConflict'), { configMaps }), CONFIG, NOW);
    expect(desired).toEqual({ ...NO_WRITES, status: undefined, events: [], deleteConfigMaps: [{ name: 'planner-config-fb8c', resourceVersion: '5' }] });
    // Any DGD of that name may mount them by name (its own, or one made by hand from the stored spec without the uid label): kept.
    expect(decideDgdr(observed(failed('PlannerConfigMapConflict'), { configMaps, dgd: dgdWith({ owner: 'someone-else' }) }), CONFIG, NOW).deleteConfigMaps).toEqual([]);
    expect(decideDgdr(observed(failed('PlannerConfigMapConflict'), { configMaps, dgd: dgdWith(STAMPED) }), CONFIG, NOW).deleteConfigMaps).toEqual([]);
    // DeploymentNameConflict keeps its own planner ConfigMap (the dgd-planted integration test).
    expect(decideDgdr(observed(failed('DeploymentNameConflict'), { configMaps }), CONFIG, NOW).deleteConfigMaps).toEqual([]);
  });

  it.each([
    { name: 'controlled by another uid', reason: 'DESIGN.md "Writes": never adopt what another controls', configMap: planner({ ownerReferences: [{ uid: 'other-uid', controller: true }] }) },
    { name: 'stamped with another request\'s uid', reason: 'an earlier request of the same name has another uid', configMap: planner({ labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' } }) },
  ])(`${RULE}: with the request's DGD, a planner ConfigMap $name is not adopted; the request fails naming it ($reason)`, ({ configMap }) => {
    const desired = decideDgdr(observed(afterDgd(), { dgd: dgdWith(STAMPED), configMaps: [configMap] }), CONFIG, NOW);
    expect(desired.adoptConfigMaps).toEqual([]);
    expect(desired.dgd).toBeUndefined();
    expect(desired.status?.phase).toBe('Failed');
    expect(desired.status?.deploymentInfo).toBeUndefined();
    expect(conditionOf(desired, 'DeploymentReady')).toEqual(cond('DeploymentReady', 'False', 'PlannerConfigMapConflict', PLANNER_CONFLICT, null));
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'ConfigMapCreationFailed', action: 'Create', note: PLANNER_CONFLICT }]);
  });

  it(`${RULE}: Deployed, a planner ConfigMap replaced by one controlled by another object fails the request too (as a foreign DGD does)`, () => {
    const desired = decideDgdr(observed(afterDgd('Deployed'), { dgd: dgdWith(STAMPED, 'successful'), configMaps: [planner({ ownerReferences: [{ uid: 'other-uid', controller: true }] })] }), CONFIG, NOW);
    expect(desired.adoptConfigMaps).toEqual([]);
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'Succeeded')).toMatchObject({ reason: 'PlannerConfigMapConflict', message: `Deployment failed: ${PLANNER_CONFLICT}` });
  });

  it('upgrade and switch-over: an ownerless planner ConfigMap with the request\'s name labels and no uid label (created by the upstream operator or an earlier version, before the stamp) is the request\'s: the request deploys and hands it to the DGD', () => {
    // A request that was Ready (autoApply false) when this version was installed: its planner
    // ConfigMaps were created unstamped; turning autoApply on must deploy, not fail.
    const before = decideDgdr(observed(beforeDgd(), { configMaps: [planner({ labels: TRACKING })] }), CONFIG, NOW);
    expect(before.status?.phase).toBe('Deploying');
    expect(before.dgd).toBeDefined();
    const after = decideDgdr(observed(afterDgd(), { dgd: dgdWith(STAMPED), configMaps: [planner({ labels: TRACKING, resourceVersion: '3' })] }), CONFIG, NOW);
    expect(after.status?.phase).toBe('Deploying');
    expect(after.adoptConfigMaps).toEqual([{ name: 'planner-config-fb8c', resourceVersion: '3', ownerReferences: [toDgd] }]);
  });

  it('ours (stamped with the request\'s uid, ownerless) -> adopted into the DGD; a labelled ownerless ConfigMap the output does not name is left alone, not adopted', () => {
    const stranger = { name: 'someone-elses', labels: TRACKING, ownerReferences: [] };
    const desired = decideDgdr(observed(afterDgd(), { dgd: dgdWith(STAMPED), configMaps: [planner({ resourceVersion: '7' }), stranger] }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deploying');
    // Only the version proved ours is handed over (resourceVersion precondition on the apply).
    expect(desired.adoptConfigMaps).toEqual([{ name: 'planner-config-fb8c', resourceVersion: '7', ownerReferences: [toDgd] }]);
    expect(desired.events).toEqual([]);
  });

  it('already adopted: controlled by the request\'s DGD (upstream\'s adoption before switch-over carries no uid label) -> nothing to do, no conflict', () => {
    const desired = decideDgdr(observed(afterDgd('Deployed'), { dgd: dgdWith(STAMPED, 'successful'), configMaps: [planner({ labels: TRACKING, ownerReferences: [{ uid: 'dgd-uid', controller: true }] })] }), CONFIG, NOW);
    expect(desired.adoptConfigMaps).toEqual([]);
    expect(desired.status?.phase).toBe('Deployed');
  });

  it(`${RULE}: a planted DGD with the request's name and labels (no uid label) before it was created is not the request's: no deploymentInfo, no adoption, not Deployed, the generated spec kept`, () => {
    const dgdr = beforeDgd();
    const desired = decideDgdr(observed(dgdr, { dgd: dgdWith(TRACKING, 'successful'), configMaps: [planner()] }), CONFIG, NOW);
    expect(desired.dgd).toBeUndefined();
    expect(desired.annotations).toBeUndefined();
    expect(desired.adoptConfigMaps).toEqual([]);
    expect(desired.status?.phase).toBe('Failed');
    expect(desired.status?.deploymentInfo).toBeUndefined();
    expect(conditionOf(desired, 'DeploymentReady')).toEqual(cond('DeploymentReady', 'False', 'DeploymentNameConflict', DGD_CONFLICT, null));
    expect(desired.events).toEqual([{ type: 'Warning', reason: 'DeploymentCreationFailed', action: 'Create', note: DGD_CONFLICT }]);
  });

  it(`${RULE}: a DGD stamped with another request's uid (an earlier request of the same name) is not the request's, even Deployed`, () => {
    const desired = decideDgdr(observed(afterDgd('Deployed'), { dgd: dgdWith({ ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' }, 'successful') }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Failed');
    expect(conditionOf(desired, 'DeploymentReady')).toMatchObject({ reason: 'DeploymentNameConflict', message: DGD_CONFLICT });
  });

  it('switch-over: a DGD without the uid label that the request already observed as its own (generated spec annotation cleared, name labels) is still followed', () => {
    const desired = decideDgdr(observed(afterDgd('Deployed'), { dgd: dgdWith(TRACKING, 'successful') }), CONFIG, NOW);
    expect(desired.status?.phase).toBe('Deployed');
    expect(desired.status?.deploymentInfo).toEqual({ replicas: 1, availableReplicas: 1 });
  });

  it.each<{ name: string; dgd: ChildFacts; annotations: Record<string, string>; want: boolean }>([
    { name: 'stamped with the request uid', dgd: dgdWith(STAMPED), annotations: { 'nvidia.com/generated-dgd-spec': 'x' }, want: true },
    { name: 'stamped with another uid, annotation cleared', dgd: dgdWith({ ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-old' }), annotations: {}, want: false },
    { name: 'stamped with an empty uid', dgd: dgdWith({ ...TRACKING, 'dgdr.nvidia.com/uid': '' }), annotations: {}, want: false },
    { name: 'name labels only, generated spec not yet observed', dgd: dgdWith(TRACKING), annotations: { 'nvidia.com/generated-dgd-spec': 'x' }, want: false },
    { name: 'name labels only, generated spec cleared to "" (upstream clears it so)', dgd: dgdWith(TRACKING), annotations: { 'nvidia.com/generated-dgd-spec': '' }, want: true },
    { name: 'no labels, annotation cleared', dgd: dgdWith({}), annotations: {}, want: false },
  ])('isRequestsDgd: $name -> $want', ({ dgd, annotations, want }) => {
    expect(isRequestsDgd(dgd, aDgdr({ annotations }))).toBe(want);
  });

  it.each([
    { name: 'stamped, ownerless', configMap: planner(), dgdUid: undefined, want: true },
    { name: 'stamped, controlled by the request\'s DGD', configMap: planner({ ownerReferences: [{ uid: 'dgd-uid', controller: true }] }), dgdUid: 'dgd-uid', want: true },
    { name: 'stamped, controlled by another object', configMap: planner({ ownerReferences: [{ uid: 'x', controller: true }] }), dgdUid: 'dgd-uid', want: false },
    { name: 'stamped, controlled by a DGD before the request has one', configMap: planner({ ownerReferences: [{ uid: 'dgd-uid', controller: true }] }), dgdUid: undefined, want: false },
    { name: 'name labels only, ownerless (created before the stamp: upgrade, switch-over)', configMap: planner({ labels: TRACKING }), dgdUid: 'dgd-uid', want: true },
    { name: 'no labels, ownerless', configMap: planner({ labels: {} }), dgdUid: undefined, want: false },
    { name: 'stamped with another uid', configMap: planner({ labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-2' } }), dgdUid: undefined, want: false },
  ])('isPlannerConfigMapOurs: $name -> $want', ({ configMap, dgdUid, want }) => {
    expect(isPlannerConfigMapOurs(configMap, aDgdr(), dgdUid)).toBe(want);
  });

  it.each([
    { name: 'stamped with the request uid, ownerless (an earlier pass of ours)', configMap: planner(), want: true },
    { name: 'name labels only, ownerless (planted before our create)', configMap: planner({ labels: TRACKING }), want: false },
    { name: 'stamped, controlled by something', configMap: planner({ ownerReferences: [{ uid: 'x', controller: true }] }), want: false },
    { name: 'stamped with another uid', configMap: planner({ labels: { ...TRACKING, 'dgdr.nvidia.com/uid': 'uid-2' } }), want: false },
  ])(`${RULE}: isPlannerConfigMapCreatedByUs (the create met one, 409): $name -> $want`, ({ configMap, want }) => {
    expect(isPlannerConfigMapCreatedByUs(configMap, aDgdr())).toBe(want);
  });

  it('an alias bomb in the request\'s additional-resources annotation (its author can edit it) is skipped, never thrown', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i += 1) levels.push(`l${i}: &l${i} [${Array.from({ length: 10 }, () => (i === 1 ? '*a' : `*l${i - 1}`)).join(', ')}]`);
    const bomb = `${levels.join('\n')}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planner-config-fb8c\n`;
    const dgdr = aDgdr({ annotations: { 'dgdr.nvidia.com/additional-resources': bomb } });
    expect(plannerConfigMapNames(dgdr)).toEqual(['planner-config-fb8c']);
  });

  it('a request with no uid (never stored) proves nothing', () => {
    const dgdr = aDgdr();
    const noUid = { ...dgdr, metadata: { ...dgdr.metadata, uid: undefined } };
    expect(isPlannerConfigMapOurs(planner({ labels: { ...TRACKING, 'dgdr.nvidia.com/uid': '' } }), noUid, undefined)).toBe(false);
    expect(isRequestsDgd(dgdWith({ ...TRACKING, 'dgdr.nvidia.com/uid': '' }), noUid)).toBe(false);
  });

  it(`${RULE}: the create of a planner ConfigMap finds one of that name (409) the request did not create: decidePlannerConfigMapConflict fails the step's own status, no DGD`, () => {
    const outputData = { phase: 'Done', message: '', profiler_status: 'success', 'final_config.yaml': OUT3 };
    const dgdr = aDgdr({ status: profilingStatus() });
    const step = decideDgdr(observed(dgdr, { job: ownJob([{ type: 'Complete', status: 'True' }]), outputData }), CONFIG, NOW);
    const failed = decidePlannerConfigMapConflict(dgdr, step.status, 'planner-config-fb8c', NOW);
    expect(failed).toEqual({
      ...NO_WRITES,
      status: {
        ...step.status,
        phase: 'Failed',
        conditions: [
          cond('DeploymentReady', 'False', 'PlannerConfigMapConflict', PLANNER_CONFLICT, null),
          cond('Profiling', 'True', 'ProfilingCompleted', 'Profiling job completed successfully'),
          cond('SpecGenerated', 'True', 'SpecGenerated', 'DynamoGraphDeployment spec generated successfully'),
          cond('Succeeded', 'False', 'PlannerConfigMapConflict', `Deployment failed: ${PLANNER_CONFLICT}`),
        ],
      },
      events: [{ type: 'Warning', reason: 'ConfigMapCreationFailed', action: 'Create', note: PLANNER_CONFLICT }],
    });
  });
});
