/**
 * DGDR v1alpha1 <-> v1beta1 conversion: every corpus v1alpha1 request converts to a v1beta1 object
 * our schema accepts; round trips in both directions give back what was written; the state/phase
 * table of upstream dynamographdeploymentrequest_conversion.go (`dgdrStateToPhase`, `dgdrPhaseToState`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DgdrSchema } from './dgdr.js';
import { convertDgdr, dgdrPhaseToState, dgdrStateToPhase } from './dgdr-v1alpha1.js';

type Obj = Record<string, unknown>;

const CORPUS = resolve(import.meta.dirname, '../../../shared/corpus/dgdr');
const ALPHA_FILES = readdirSync(CORPUS).filter((f) => f.startsWith('v1alpha1-') && !f.includes('MALFORMED')).sort();

/** Upstream v1alpha1 DynamoGraphDeploymentRequestSpec fields (api/v1alpha1/dynamographdeploymentrequest_types.go). */
const V1ALPHA1_SPEC_FIELDS = ['model', 'backend', 'enableGpuDiscovery', 'useMocker', 'autoApply', 'profilingConfig', 'deploymentOverrides'];

function converted(object: Obj, to: string): Obj {
  const result = convertDgdr(object, to);
  if (!result.ok) throw new Error(result.message);
  return result.object;
}

describe('DGDR v1alpha1 -> v1beta1', () => {
  it.each(ALPHA_FILES)('corpus %s converts to a v1beta1 request our schema accepts, and back unchanged', (file) => {
    const alpha = parse(readFileSync(resolve(CORPUS, file), 'utf8')) as Obj;
    const beta = converted(alpha, 'nvidia.com/v1beta1');
    expect(DgdrSchema.safeParse(beta).success).toBe(true);
    const back = converted(beta, 'nvidia.com/v1alpha1');
    // Fields that are not v1alpha1 spec fields (one corpus file puts profilerImage at spec level)
    // are pruned by the API server, so they are not expected back.
    const spec = Object.fromEntries(Object.entries(alpha['spec'] as Obj).filter(([key]) => V1ALPHA1_SPEC_FIELDS.includes(key)));
    expect(back['spec']).toEqual({ ...spec, autoApply: spec['autoApply'] ?? false });
  });

  it('maps the blob and the typed fields as upstream does', () => {
    const alpha = {
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeploymentRequest',
      metadata: { name: 'r', namespace: 'ns' },
      spec: {
        model: 'Qwen/Qwen3-0.6B',
        backend: 'vllm',
        useMocker: true,
        autoApply: true,
        profilingConfig: {
          profilerImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
          config: { sla: { isl: 3000, osl: 150, ttft: 200, itl: 20 }, deployment: { modelCache: { pvcName: 'cache', modelPathInPvc: 'qwen', pvcMountPath: '/models' } }, planner: { mode: 'disagg' }, sweep: { useAiConfigurator: true } },
          tolerations: [{ key: 'gpu', operator: 'Exists' }],
          resources: { requests: { cpu: '1' } },
          outputPVC: 'out',
        },
      },
    };
    const beta = converted(alpha, 'nvidia.com/v1beta1');
    expect(beta['spec']).toEqual({
      model: 'Qwen/Qwen3-0.6B',
      backend: 'vllm',
      image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
      autoApply: true,
      workload: { isl: 3000, osl: 150 },
      sla: { ttft: 200, itl: 20 },
      modelCache: { pvcName: 'cache', pvcModelPath: 'qwen', pvcMountPath: '/models' },
      features: { planner: { mode: 'disagg' }, mocker: { enabled: true } },
      overrides: { profilingJob: { template: { spec: { containers: [{ name: '', resources: { requests: { cpu: '1' } } }], tolerations: [{ key: 'gpu', operator: 'Exists' }] } } } },
    });
    expect((beta['metadata'] as { annotations: Obj }).annotations).toEqual({
      'nvidia.com/dgdr-profiling-config': JSON.stringify(alpha.spec.profilingConfig.config),
      'nvidia.com/dgdr-output-pvc': 'out',
    });
  });

  it.each([
    { state: undefined, deployment: undefined, phase: 'Pending' },
    { state: 'Pending', deployment: undefined, phase: 'Pending' },
    { state: 'Profiling', deployment: undefined, phase: 'Profiling' },
    { state: 'Ready', deployment: { name: 'd', created: false }, phase: 'Ready' },
    { state: 'Ready', deployment: { name: 'd', created: true }, phase: 'Deployed' },
    { state: 'Deploying', deployment: undefined, phase: 'Deploying' },
    { state: 'DeploymentDeleted', deployment: undefined, phase: 'Ready' },
    { state: 'Failed', deployment: undefined, phase: 'Failed' },
  ])('state $state (deployment $deployment) -> phase $phase', ({ state, deployment, phase }) => {
    expect(dgdrStateToPhase(state, deployment)).toBe(phase);
  });

  it.each([
    { phase: 'Pending', state: 'Pending' },
    { phase: 'Profiling', state: 'Profiling' },
    { phase: 'Ready', state: 'Ready' },
    { phase: 'Deploying', state: 'Deploying' },
    { phase: 'Deployed', state: 'Ready' },
    { phase: 'Failed', state: 'Failed' },
  ])('phase $phase -> state $state', ({ phase, state }) => {
    expect(dgdrPhaseToState(phase)).toBe(state);
  });
});

describe('DGDR v1beta1 -> v1alpha1 -> v1beta1', () => {
  it('gives back the v1beta1 request, v1beta1-only fields (hardware, searchStrategy, e2e SLA) included, and its status', () => {
    const beta = {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeploymentRequest',
      metadata: { name: 'r', namespace: 'ns', annotations: { team: 'a' } },
      spec: {
        model: 'Qwen/Qwen3-0.6B',
        backend: 'sglang',
        image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
        searchStrategy: 'rapid',
        autoApply: false,
        hardware: { gpuSku: 'h200_sxm', totalGpus: 16, numGpusPerNode: 8, vramMb: 141312, rdma: false },
        workload: { isl: 4000, osl: 1000, concurrency: 8 },
        sla: { ttft: 2000, itl: 30, optimizationType: 'latency' },
        features: { kvRouter: { enabled: true } },
        overrides: { trustRemoteCode: true, dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'x' } } },
      },
      status: { phase: 'Profiling', profilingPhase: 'SweepingPrefill', profilingJobName: 'profile-r', observedGeneration: 2, conditions: [] },
    };
    const alpha = converted(beta, 'nvidia.com/v1alpha1');
    expect((alpha['status'] as Obj)['state']).toBe('Profiling');
    const back = converted(alpha, 'nvidia.com/v1beta1');
    expect(back['spec']).toEqual(beta.spec);
    expect(back['metadata']).toEqual(beta.metadata);
    expect(back['status']).toEqual({ phase: 'Profiling', profilingJobName: 'profile-r', observedGeneration: 2, conditions: [] });
  });

  it('converting to the same version is the identity; another version is refused', () => {
    const beta = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { model: 'm' } };
    expect(convertDgdr(beta, 'nvidia.com/v1beta1')).toEqual({ ok: true, object: beta });
    expect(convertDgdr(beta, 'nvidia.com/v1beta3')).toEqual({ ok: false, message: 'cannot convert DynamoGraphDeploymentRequest from nvidia.com/v1beta1 to nvidia.com/v1beta3: supported versions are nvidia.com/v1beta1, nvidia.com/v1alpha1 and nvidia.com/v1beta2' });
  });
});
