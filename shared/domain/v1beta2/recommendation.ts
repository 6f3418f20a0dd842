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
 * The extra arguments of a disaggregated worker, per backend and role, as the Dynamo 1.6.1
 * profiler writes them (the observed vLLM disagg DGD, upstream-notes/profiler.md §1.8 and
 * ../shared/fixtures/profiler/out3.final_config.yaml; upstream
 * components/src/dynamo/profiler/templates/dgd/{sglang,trtllm}/disagg.yaml): every backend takes
 * `--disaggregation-mode prefill|decode`; vLLM adds the NIXL KV connector (`kv_producer` on
 * prefill, `kv_consumer` on decode); SGLang the NIXL transfer backend, bootstrap port 12345
 * and `--host 0.0.0.0`.
 */
const DISAGG_ARGS: Readonly<Record<string, (role: DisaggRole) => readonly string[]>> = {
  vllm: (role) => ['--disaggregation-mode', role, '--kv-transfer-config', JSON.stringify({ kv_connector: 'NixlConnector', kv_role: role === 'prefill' ? 'kv_producer' : 'kv_consumer' })],
  sglang: (role) => ['--disaggregation-mode', role, '--disaggregation-transfer-backend', 'nixl', '--disaggregation-bootstrap-port', '12345', '--host', '0.0.0.0'],
  trtllm: (role) => ['--disaggregation-mode', role],
};

/** A worker role of a disaggregated candidate; also its component's name and type. */
export type DisaggRole = 'prefill' | 'decode';

/** The shape of one worker component: replicas and parallelism. */
interface WorkerShape {
  readonly replicas: number;
  readonly tp: number;
  readonly pp: number;
}

/** A worker component: `python3 -m dynamo.<backend>` with the model, tp/pp flags and extra args; `tp x pp` GPUs per replica. */
function workerComponent(name: string, type: string, backend: string, image: string, model: string, shape: WorkerShape, extraArgs: readonly string[]): Record<string, unknown> {
  const flags = PARALLEL_FLAGS[backend] ?? ['--tensor-parallel-size', '--pipeline-parallel-size'];
  const gpus = String(shape.tp * shape.pp);
  return {
    name,
    type,
    replicas: shape.replicas,
    podTemplate: {
      spec: {
        containers: [
          {
            name: 'main',
            image,
            command: ['python3', '-m', `dynamo.${backend}`],
            args: ['--model', model, flags[0], String(shape.tp), flags[1], String(shape.pp), ...extraArgs],
            resources: { limits: { 'nvidia.com/gpu': gpus }, requests: { 'nvidia.com/gpu': gpus } },
          },
        ],
      },
    },
  };
}

function frontendComponent(image: string): Record<string, unknown> {
  return { name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image, command: ['python3'], args: ['-m', 'dynamo.frontend'] }] } } };
}

/** The shape of a role from AISimulate's `<role>_replicas`, `<role>_tp`, `<role>_pp` config keys (a disagg candidate, `aisimulate recommend`). Pure. */
export function disaggWorkerShape(config: Readonly<Record<string, unknown>>, role: DisaggRole): WorkerShape {
  return { replicas: positiveInt(config[`${role}_replicas`], 1), tp: positiveInt(config[`${role}_tp`], 1), pp: positiveInt(config[`${role}_pp`], 1) };
}

/**
 * The aggregated worker component's name per backend: vLLM `worker`, SGLang `decode`, TensorRT-LLM
 * `TRTLLMWorker`. Source: dgdr-reference "Generated component names" (the table's Aggregated
 * column: "vLLM Frontend, worker"; "SGLang Frontend, decode"; "TensorRT-LLM Frontend,
 * TRTLLMWorker"), which overrides must target by exact, case-sensitive name.
 */
export const AGGREGATED_WORKER_NAMES: Readonly<Record<string, string>> = { vllm: 'worker', sglang: 'decode', trtllm: 'TRTLLMWorker' };

/**
 * The DGD a candidate stands for, by its `deployment_mode`:
 * - `agg`: a `Frontend` (`python3 -m dynamo.frontend`) and the aggregated worker (type worker,
 *   named per backend: {@link AGGREGATED_WORKER_NAMES}) with `replicas`, `tp`, `pp` from the
 *   candidate;
 * - `disagg`: a `Frontend`, a `decode` (type decode) and a `prefill` (type prefill) worker, each
 *   with its own replicas and parallelism (`decode_*`, `prefill_*`) and the backend's
 *   disaggregation arguments (see DISAGG_ARGS). Component names and types are the Dynamo 1.6.1
 *   profiler's (profiler.md §1.8 "Generated component names observed": vLLM disagg `Frontend`,
 *   `decode`, `prefill`; dgdr.md §4.5 for SGLang and TRT-LLM).
 * Workers run `python3 -m dynamo.<backend>` with the model and the tensor/pipeline parallel
 * sizes, and `tp x pp` GPUs per replica. Other modes (afd) and unknown backends: undefined.
 * In: the candidate, the Run's spec (model, image), the default image. Pure.
 */
export function renderCandidateDgd(candidate: RecommendedCandidate, spec: Pick<DgdrV1Beta2Spec, 'model' | 'image'>, defaultImage: string): GeneratedDgd | undefined {
  const { config } = candidate;
  const backend = typeof config['backend'] === 'string' ? config['backend'] : '';
  const disaggArgs = DISAGG_ARGS[backend];
  const aggregatedName = AGGREGATED_WORKER_NAMES[backend];
  if (PARALLEL_FLAGS[backend] === undefined || disaggArgs === undefined || aggregatedName === undefined) return undefined;
  const image = runtimeImage(spec.image ?? defaultImage, backend);
  const model = spec.model.name;
  if (config['deployment_mode'] === 'agg') {
    const shape = { replicas: positiveInt(config['replicas'], 1), tp: positiveInt(config['tp'], 1), pp: positiveInt(config['pp'], 1) };
    return { metadata: {}, spec: { backendFramework: backend, components: [frontendComponent(image), workerComponent(aggregatedName, 'worker', backend, image, model, shape, [])] } };
  }
  if (config['deployment_mode'] === 'disagg') {
    const roles: readonly DisaggRole[] = ['decode', 'prefill'];
    return {
      metadata: {},
      spec: { backendFramework: backend, components: [frontendComponent(image), ...roles.map((role) => workerComponent(role, role, backend, image, model, disaggWorkerShape(config, role), disaggArgs(role)))] },
    };
  }
  return undefined;
}

/**
 * The resolved simulation inputs a Candidate's status keeps as `parameters`: backend, version,
 * deployment mode, `tp`/`pp`/`replicas` (agg) or `prefill_*`/`decode_*` replicas/tp/pp (disagg),
 * `used_gpus`. Pure.
 */
export function candidateParameters(candidate: RecommendedCandidate): Record<string, unknown> {
  const c = candidate.config;
  const pick = (key: string) => (c[key] === undefined || c[key] === null ? {} : { [key]: c[key] });
  const roles = ['prefill', 'decode'].flatMap((role) => ['replicas', 'tp', 'pp'].map((key) => `${role}_${key}`));
  return {
    ...pick('backend'),
    ...pick('backend_version'),
    ...pick('deployment_mode'),
    ...pick('tp'),
    ...pick('pp'),
    ...pick('replicas'),
    ...Object.fromEntries(roles.flatMap((key) => (c[key] === undefined || c[key] === null ? [] : [[key, c[key]]]))),
    ...(candidate.usedGpus === undefined ? {} : { used_gpus: candidate.usedGpus }),
  };
}
