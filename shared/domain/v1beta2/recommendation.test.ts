import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDir } from '../../../test/support/paths.js';
import { renderCandidateDgd, runtimeImage, selectCandidates, type RecommendedCandidate } from './recommendation.js';

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

  it('a disaggregated candidate has no renderer', () => {
    const [disagg] = selectCandidates({ candidates: [candidate('d', 'feasible', { deployment_mode: 'disagg', backend: 'vllm' })] }, {}) as [RecommendedCandidate];
    expect(renderCandidateDgd(disagg, { model: { name: 'm' } }, 'i:1')).toBeUndefined();
  });
});
