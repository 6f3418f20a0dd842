/**
 * From AISimulate's `recommendation.json` to the Run's selected candidates and the DGD each
 * one stands for. No I/O.
 *
 * Source: upstream-notes/profiler.md §3.5 (`recommendation.json`: `schema_version "1.1"`,
 * `candidates[]` with `candidate_id`, `config`, `metrics`, `status`, `used_gpus`;
 * `views.top_n` best first) and §3.4 (the generated DGD's shape: a `Frontend` and a worker per
 * role, runtime image = the request image with its last path segment replaced by
 * `<backend>-runtime`, tag kept; `python3 -m dynamo.<backend>`); reference "Candidate status"
 * (invalid Candidates count toward `recommendation.maxCandidates`).
 * @module
 */
import { DEFAULT_MAX_CANDIDATES, type DgdrV1Beta2Spec } from '../../api/index.js';
import type { GeneratedDgd } from './candidate.js';

/** One candidate as `recommendation.json` lists it (the fields we read). */
export interface RecommendedCandidate {
  readonly candidateId: string;
  readonly status: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly metrics: Readonly<Record<string, unknown>>;
  readonly usedGpus: number | undefined;
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The candidates to publish: feasible ones in `views.top_n` order (best first; the candidates'
 * own order when there is no view), at most `recommendation.maxCandidates` (default 5).
 * In: the parsed `recommendation.json`. Out: selected candidates; [] for anything else. Pure.
 */
export function selectCandidates(recommendation: unknown, spec: Pick<DgdrV1Beta2Spec, 'recommendation'>): RecommendedCandidate[] {
  const root = record(recommendation);
  const all = (Array.isArray(root['candidates']) ? root['candidates'] : []).map(record).flatMap((c): RecommendedCandidate[] => {
    const id = c['candidate_id'];
    if (typeof id !== 'string') return [];
    return [{ candidateId: id, status: typeof c['status'] === 'string' ? c['status'] : '', config: record(c['config']), metrics: record(c['metrics']), usedGpus: typeof c['used_gpus'] === 'number' ? c['used_gpus'] : undefined }];
  });
  const byId = new Map(all.map((c) => [c.candidateId, c]));
  const topN = record(root['views'])['top_n'];
  const ordered = Array.isArray(topN) ? topN.flatMap((id) => { const c = typeof id === 'string' ? byId.get(id) : undefined; return c === undefined ? [] : [c]; }) : all;
  return ordered.filter((c) => c.status === 'feasible').slice(0, spec.recommendation?.maxCandidates ?? DEFAULT_MAX_CANDIDATES);
}

const RUNTIME_IMAGE_NAME: Readonly<Record<string, string>> = { vllm: 'vllm-runtime', sglang: 'sglang-runtime', trtllm: 'tensorrtllm-runtime' };
const PARALLEL_FLAGS: Readonly<Record<string, readonly [string, string]>> = {
  vllm: ['--tensor-parallel-size', '--pipeline-parallel-size'],
  sglang: ['--tp-size', '--pp-size'],
  trtllm: ['--tensor-parallel-size', '--pipeline-parallel-size'],
};

/**
 * The runtime image of a backend: the request image with its last path segment replaced by
 * `vllm-runtime` / `sglang-runtime` / `tensorrtllm-runtime`, tag or digest kept
 * (profiler.md §3.4). Pure.
 */
export function runtimeImage(requestImage: string, backend: string): string {
  const match = /^(.*\/)?([^/:@]+)([:@].*)?$/.exec(requestImage);
  const name = RUNTIME_IMAGE_NAME[backend] ?? `${backend}-runtime`;
  return `${match?.[1] ?? ''}${name}${match?.[3] ?? ''}`;
}

function positiveInt(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * The DGD an aggregated candidate stands for: a `Frontend` (`python3 -m dynamo.frontend`) and a
 * `worker` with `replicas` from the candidate, `python3 -m dynamo.<backend>` with the model and
 * the tensor/pipeline parallel sizes, and `tp x pp` GPUs per replica. Other deployment modes
 * (disaggregated, afd) have no renderer yet: undefined.
 * In: the candidate, the Run's spec (model, image), the default image. Pure.
 */
export function renderCandidateDgd(candidate: RecommendedCandidate, spec: Pick<DgdrV1Beta2Spec, 'model' | 'image'>, defaultImage: string): GeneratedDgd | undefined {
  const { config } = candidate;
  if (config['deployment_mode'] !== 'agg') return undefined;
  const backend = typeof config['backend'] === 'string' ? config['backend'] : '';
  const flags = PARALLEL_FLAGS[backend];
  if (flags === undefined) return undefined;
  const tp = positiveInt(config['tp'], 1);
  const pp = positiveInt(config['pp'], 1);
  const image = runtimeImage(spec.image ?? defaultImage, backend);
  const gpus = String(tp * pp);
  return {
    metadata: {},
    spec: {
      backendFramework: backend,
      components: [
        { name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image, command: ['python3'], args: ['-m', 'dynamo.frontend'] }] } } },
        {
          name: 'worker',
          type: 'worker',
          replicas: positiveInt(config['replicas'], 1),
          podTemplate: {
            spec: {
              containers: [
                {
                  name: 'main',
                  image,
                  command: ['python3', '-m', `dynamo.${backend}`],
                  args: ['--model', spec.model.name, flags[0], String(tp), flags[1], String(pp)],
                  resources: { limits: { 'nvidia.com/gpu': gpus }, requests: { 'nvidia.com/gpu': gpus } },
                },
              ],
            },
          },
        },
      ],
    },
  };
}

/** The resolved simulation inputs a Candidate's status keeps as `parameters`. Pure. */
export function candidateParameters(candidate: RecommendedCandidate): Record<string, unknown> {
  const c = candidate.config;
  const pick = (key: string) => (c[key] === undefined || c[key] === null ? {} : { [key]: c[key] });
  return { ...pick('backend'), ...pick('backend_version'), ...pick('deployment_mode'), ...pick('tp'), ...pick('pp'), ...pick('replicas'), ...(candidate.usedGpus === undefined ? {} : { used_gpus: candidate.usedGpus }) };
}
