import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { sharedDir } from '../../../test/support/paths.js';
import { candidateParameters, renderCandidateDgd, runtimeImage, selectCandidates, type RecommendedCandidate } from './recommendation.js';

const rec1 = JSON.parse(readFileSync(resolve(sharedDir, 'fixtures', 'aisimulate', 'rec1.recommendation.first-candidate.json'), 'utf8')) as Record<string, unknown>;
const candidate = (id: string, status = 'feasible', config: Record<string, unknown> = { deployment_mode: 'agg', backend: 'vllm', tp: 2, pp: 1, replicas: 1 }): Record<string, unknown> => ({ candidate_id: id, status, config, metrics: {} });

describe('selecting the candidates to publish', () => {
  it('the real AISimulate output (fixture rec1, one feasible candidate) selects candidate-000001', () => {
    expect(selectCandidates(rec1, {}).map((c) => [c.candidateId, c.config['tp'], c.usedGpus])).toEqual([['candidate-000001', 2, 2]]);
  });

  it.each([
    { name: 'views.top_n gives the order, best first', input: { candidates: [candidate('a'), candidate('b'), candidate('c')], views: { top_n: ['c', 'a', 'b'] } }, max: undefined, want: ['c', 'a', 'b'] },
    { name: 'only feasible candidates', input: { candidates: [candidate('a', 'infeasible'), candidate('b')] }, max: undefined, want: ['b'] },
    { name: 'at most recommendation.maxCandidates (default 5)', input: { candidates: ['1', '2', '3', '4', '5', '6'].map((id) => candidate(id)) }, max: undefined, want: ['1', '2', '3', '4', '5'] },
    { name: 'maxCandidates set', input: { candidates: ['1', '2', '3'].map((id) => candidate(id)) }, max: 2, want: ['1', '2'] },
    { name: 'not a recommendation: nothing', input: 'garbage', max: undefined, want: [] },
  ])('$name', ({ input, max, want }) => {
    expect(selectCandidates(input, max === undefined ? {} : { recommendation: { maxCandidates: max } }).map((c) => c.candidateId)).toEqual(want);
  });
});

describe('the DGD of an aggregated candidate (profiler.md §3.4 shape)', () => {
  it.each([
    { name: 'a tagged image keeps its tag', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', want: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' },
    { name: 'trtllm maps to tensorrtllm-runtime', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'trtllm', want: 'nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1' },
    { name: 'a digest is kept', image: 'registry.example:5000/team/planner@sha256:abc', backend: 'sglang', want: 'registry.example:5000/team/sglang-runtime@sha256:abc' },
  ])('runtime image: $name', ({ image, backend, want }) => {
    expect(runtimeImage(image, backend)).toBe(want);
  });

  it('renders Frontend and worker with tp x pp GPUs and the backend module', () => {
    const [first] = selectCandidates(rec1, {}) as [RecommendedCandidate];
    expect(renderCandidateDgd(first, { model: { name: 'Qwen/Qwen3-0.6B' } }, 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1')).toEqual({
      metadata: {},
      spec: {
        backendFramework: 'vllm',
        components: [
          { name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', command: ['python3'], args: ['-m', 'dynamo.frontend'] }] } } },
          {
            name: 'worker',
            type: 'worker',
            replicas: 1,
            podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', command: ['python3', '-m', 'dynamo.vllm'], args: ['--model', 'Qwen/Qwen3-0.6B', '--tensor-parallel-size', '2', '--pipeline-parallel-size', '1'], resources: { limits: { 'nvidia.com/gpu': '2' }, requests: { 'nvidia.com/gpu': '2' } } }] } },
          },
        ],
      },
    });
  });

  it('an afd candidate or an unknown backend has no renderer', () => {
    const [afd, unknown] = selectCandidates({ candidates: [candidate('a', 'feasible', { deployment_mode: 'afd', backend: 'vllm' }), candidate('u', 'feasible', { deployment_mode: 'agg', backend: 'mocker' })] }, {}) as [RecommendedCandidate, RecommendedCandidate];
    expect(renderCandidateDgd(afd, { model: { name: 'm' } }, 'i:1')).toBeUndefined();
    expect(renderCandidateDgd(unknown, { model: { name: 'm' } }, 'i:1')).toBeUndefined();
  });
});

/**
 * A real disaggregated search: `aisimulate recommend` (0.13.0.dev85, the cached venv) over
 * test/fixtures/aisimulate/disagg.yaml (synthetic 2000/200 tokens, concurrency 16, vllm,
 * h200_sxm, mode disaggregated, 3 random trials, seed 42), its recommendation.json stored as
 * test/fixtures/aisimulate/disagg.recommendation.json.
 */
describe('the DGD of a disaggregated candidate (prefill and decode workers)', () => {
  const disagg = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'aisimulate', 'disagg.recommendation.json'), 'utf8')) as Record<string, unknown>;
  const planner = 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1';
  const runtime = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1';
  const worker = (name: string, replicas: number, tp: number, kvRole: string) => ({
    name,
    type: name,
    replicas,
    podTemplate: {
      spec: {
        containers: [
          {
            name: 'main',
            image: runtime,
            command: ['python3', '-m', 'dynamo.vllm'],
            args: ['--model', 'Qwen/Qwen3-0.6B', '--tensor-parallel-size', String(tp), '--pipeline-parallel-size', '1', '--disaggregation-mode', name, '--kv-transfer-config', `{"kv_connector":"NixlConnector","kv_role":"${kvRole}"}`],
            resources: { limits: { 'nvidia.com/gpu': String(tp) }, requests: { 'nvidia.com/gpu': String(tp) } },
          },
        ],
      },
    },
  });

  it('views.top_n orders the real search\'s three feasible disagg candidates', () => {
    expect(selectCandidates(disagg, {}).map((c) => [c.candidateId, c.config['deployment_mode'], c.usedGpus])).toEqual([
      ['candidate-000003', 'disagg', 6],
      ['candidate-000002', 'disagg', 3],
      ['candidate-000001', 'disagg', 5],
    ]);
  });

  it('the best one (prefill 2 x TP1, decode 1 x TP4; 6 GPUs) renders Frontend, decode and prefill as the 1.6.1 profiler names them (profiler.md §1.8; fixtures/profiler/out3.final_config.yaml), vLLM\'s --disaggregation-mode and NIXL kv_consumer/kv_producer', () => {
    const [best] = selectCandidates(disagg, {}) as [RecommendedCandidate];
    expect(renderCandidateDgd(best, { model: { name: 'Qwen/Qwen3-0.6B' } }, planner)).toEqual({
      metadata: {},
      spec: {
        backendFramework: 'vllm',
        components: [
          { name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: runtime, command: ['python3'], args: ['-m', 'dynamo.frontend'] }] } } },
          worker('decode', 1, 4, 'kv_consumer'),
          worker('prefill', 2, 1, 'kv_producer'),
        ],
      },
    });
    expect(candidateParameters(best)).toEqual({
      backend: 'vllm',
      backend_version: '0.24.0',
      deployment_mode: 'disagg',
      prefill_replicas: 2,
      prefill_tp: 1,
      prefill_pp: 1,
      decode_replicas: 1,
      decode_tp: 4,
      decode_pp: 1,
      used_gpus: 6,
    });
  });

  it('the same frozen candidate renders the same DGD every time (STYLE.md 16)', () => {
    const [best] = selectCandidates(deepFreeze(disagg), {}) as [RecommendedCandidate];
    const spec = deepFreeze({ model: { name: 'Qwen/Qwen3-0.6B' } });
    expect(renderCandidateDgd(best, spec, planner)).toEqual(renderCandidateDgd(best, spec, planner));
  });

  it.each([
    { name: 'SGLang: --disaggregation-mode, the NIXL transfer backend, bootstrap port 12345 (upstream profiler templates/dgd/sglang/disagg.yaml)', backend: 'sglang', want: ['--model', 'm', '--tp-size', '2', '--pp-size', '1', '--disaggregation-mode', 'prefill', '--disaggregation-transfer-backend', 'nixl', '--disaggregation-bootstrap-port', '12345', '--host', '0.0.0.0'] },
    { name: 'TRT-LLM: --disaggregation-mode (upstream profiler templates/dgd/trtllm/disagg.yaml)', backend: 'trtllm', want: ['--model', 'm', '--tensor-parallel-size', '2', '--pipeline-parallel-size', '1', '--disaggregation-mode', 'prefill'] },
  ])('$name', ({ backend, want }) => {
    const [one] = selectCandidates({ candidates: [candidate('d', 'feasible', { deployment_mode: 'disagg', backend, prefill_tp: 2, decode_tp: 1 })] }, {}) as [RecommendedCandidate];
    const components = (renderCandidateDgd(one, { model: { name: 'm' } }, planner)?.spec['components'] ?? []) as { name: string; podTemplate: { spec: { containers: { args: string[] }[] } } }[];
    expect(components.map((c) => c.name)).toEqual(['Frontend', 'decode', 'prefill']);
    expect(components[2]?.podTemplate.spec.containers[0]?.args).toEqual(want);
  });

  it.each([
    { name: 'vLLM aggregated: "Frontend, worker"', backend: 'vllm', want: ['Frontend', 'worker'] },
    { name: 'SGLang aggregated: "Frontend, decode"', backend: 'sglang', want: ['Frontend', 'decode'] },
    { name: 'TensorRT-LLM aggregated: "Frontend, TRTLLMWorker"', backend: 'trtllm', want: ['Frontend', 'TRTLLMWorker'] },
  ])('reference "Generated component names" table, $name', ({ backend, want }) => {
    const [one] = selectCandidates({ candidates: [candidate('a', 'feasible', { deployment_mode: 'agg', backend, tp: 1, pp: 1, replicas: 1 })] }, {}) as [RecommendedCandidate];
    const components = (renderCandidateDgd(one, { model: { name: 'm' } }, planner)?.spec['components'] ?? []) as { name: string; type: string }[];
    expect(components.map((c) => c.name)).toEqual(want);
    expect(components.map((c) => c.type)).toEqual(['frontend', 'worker']);
  });
});
