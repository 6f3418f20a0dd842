/**
 * Reading what the profiling Job reported: the output ConfigMap `dgdr-output-<name>` (progress and
 * results relayed by the output-copier), the Job's conditions, failed pods, and the generated
 * DGD inside `final_config.yaml`.
 *
 * Source: ../shared/upstream-notes/profiler.md §1.3, §1.5-§1.7; dgdr.md §2.3, §4.1; upstream
 * dynamographdeploymentrequest_controller.go (`updateProfilingSubPhase`, `checkProfilingJobStatus`,
 * `extractResourcesFromYAML`, `computeDGDName`, `applyDGDRRuntimeVersionOverride`).
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, PROFILING_PHASES, convertDgdV1Alpha1, formatIssues, parseDgd, type DgdrSpec, type ProfilingPhase } from '../../api/index.js';
import { isObject } from '../admission/common.js';

type Obj = Record<string, unknown>;

/** What the output ConfigMap says. */
export interface ProfilerOutput {
  /** A valid profiling phase, or undefined (absent or not one of the seven). */
  readonly phase: ProfilingPhase | undefined;
  readonly message: string;
  readonly status: 'success' | 'failed' | undefined;
  /** The profiler's whole error (from the `profiler_status.yaml` key when readable). */
  readonly error: string;
  readonly finalConfig: string | undefined;
}

/** Upstream's text for a failure without details (upstream-notes/profiler.md §1.6 step 3). */
export const NO_FAILURE_DETAILS = 'profiler reported failure (no details available)';

/**
 * Reads the output ConfigMap's data. The whole `error` comes from the `profiler_status.yaml` key
 * (yaml.safe_dump folds long errors, so the sidecar's `profiler_error` can hold only their first
 * line); `profiler_error`, then the message, are the fallbacks.
 * Source: upstream-notes/profiler.md §1.3 ("Pitfall"), §1.5. Pure.
 */
export function readProfilerOutput(data: Readonly<Record<string, string>> | undefined): ProfilerOutput | undefined {
  if (data === undefined) return undefined;
  const phase = (PROFILING_PHASES as readonly string[]).includes(data['phase'] ?? '') ? (data['phase'] as ProfilingPhase) : undefined;
  const status = data['profiler_status'] === 'success' || data['profiler_status'] === 'failed' ? data['profiler_status'] : undefined;
  let fileError: string | undefined;
  try {
    const file: unknown = parseYaml(data['profiler_status.yaml'] ?? '');
    if (isObject(file) && typeof file['error'] === 'string' && file['error'].trim() !== '') fileError = file['error'];
  } catch {
    fileError = undefined; // An unreadable status file: fall back to the relayed fields.
  }
  const error = fileError ?? nonEmpty(data['profiler_error']) ?? nonEmpty(data['message']) ?? NO_FAILURE_DETAILS;
  return { phase, message: data['message'] ?? '', status, error, finalConfig: data['final_config.yaml'] };
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text;
}

/** A Job condition as batch/v1 reports it. */
export interface JobCondition {
  readonly type: string;
  readonly status: string;
  readonly message?: string;
  readonly reason?: string;
}

/** A profiling pod's facts for failure details. */
export interface PodFacts {
  readonly name: string;
  readonly phase: string | undefined;
  /** The `profiler` container's state. */
  readonly profiler: { readonly terminated?: { readonly exitCode: number; readonly reason?: string; readonly message?: string }; readonly waiting?: { readonly reason?: string; readonly message?: string } } | undefined;
}

/** `complete`, `failed` (with its condition message), or `running`. Source: upstream `checkProfilingJobStatus` (batch/v1 conditions). Pure. */
export function readJobOutcome(conditions: readonly JobCondition[]): { readonly kind: 'complete' } | { readonly kind: 'failed'; readonly message: string } | { readonly kind: 'running' } {
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed !== undefined) return { kind: 'failed', message: failed.message ?? failed.reason ?? '' };
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return { kind: 'complete' };
  return { kind: 'running' };
}

/**
 * The failure message of a failed profiling Job:
 * `profiling job failed: <condition message>[. Details: Pod: <p>, Container: profiler, ExitCode: N, Reason: R[, Message: M]]`,
 * from the first Failed pod whose profiler container terminated, else its Waiting state
 * (`Pod: <p>, Container: profiler, Waiting - Reason: R, Message: M`).
 * Source: upstream-notes/profiler.md §1.6 step 2 (text word for word). Pure.
 */
export function describeJobFailure(conditionMessage: string, pods: readonly PodFacts[]): string {
  const base = `profiling job failed: ${conditionMessage}`;
  for (const pod of pods.filter((p) => p.phase === 'Failed')) {
    const terminated = pod.profiler?.terminated;
    if (terminated !== undefined) {
      const message = terminated.message === undefined || terminated.message === '' ? '' : `, Message: ${terminated.message}`;
      return `${base}. Details: Pod: ${pod.name}, Container: profiler, ExitCode: ${terminated.exitCode}, Reason: ${terminated.reason ?? ''}${message}`;
    }
    const waiting = pod.profiler?.waiting;
    if (waiting !== undefined) return `${base}. Details: Pod: ${pod.name}, Container: profiler, Waiting - Reason: ${waiting.reason ?? ''}, Message: ${waiting.message ?? ''}`;
  }
  return base;
}

/**
 * The generated DGD's name: `spec.overrides.dgd.metadata.name` when set, else `<dgdrName>-dgd`
 * (the profiler's own name is discarded).
 * Source: upstream `computeDGDName` (compute_dgd_name_test.go: `my-dgdr` -> `my-dgdr-dgd`,
 * `{"metadata":{"name":"explicit-name"}}` -> `explicit-name`, `metadata: {}` -> `my-dgdr-dgd`). Pure.
 */
export function generatedDgdName(dgdrName: string, spec: DgdrSpec): string {
  const metadata = spec.overrides?.dgd?.['metadata'];
  const name = isObject(metadata) ? metadata['name'] : undefined;
  return typeof name === 'string' && name !== '' ? name : `${dgdrName}-dgd`;
}

/** The profiler's output split into the DGD (v1beta1, renamed) and the other documents. */
export type GeneratedOutput =
  | { readonly ok: true; readonly dgd: Obj; readonly additional: readonly Obj[] }
  | { readonly ok: false; readonly message: string };

/**
 * Splits `final_config.yaml`: the `DynamoGraphDeployment` document becomes the DGD (v1alpha1
 * converted to v1beta1; other versions refused), renamed to `name`; every other document is an
 * additional resource. The DGD must pass our DGD schema; its issues are the failure message.
 * Failures: `no DynamoGraphDeployment found in YAML content`, `unsupported DynamoGraphDeployment
 * apiVersion "<v>"`, a YAML error, or the DGD's field issues.
 * Source: upstream `extractResourcesFromYAML` (upstream-notes/profiler.md §1.7). Pure.
 */
export function splitGeneratedOutput(finalConfig: string, name: string): GeneratedOutput {
  let documents: unknown[];
  try {
    documents = parseAllDocuments(finalConfig).map((d) => {
      if (d.errors.length > 0) throw d.errors[0] ?? new Error('invalid YAML');
      return d.toJSON() as unknown;
    });
  } catch (error) {
    return { ok: false, message: `cannot parse final_config.yaml: ${(error as Error).message}` };
  }
  const objects = documents.filter(isObject);
  const found = objects.find((o) => o['kind'] === DGD_KIND);
  if (found === undefined) return { ok: false, message: 'no DynamoGraphDeployment found in YAML content' };
  let dgd: Obj;
  if (found['apiVersion'] === DGD_V1BETA1) dgd = structuredClone(found);
  else if (found['apiVersion'] === DGD_V1ALPHA1) {
    const converted = convertDgdV1Alpha1(found);
    if (!converted.ok) return { ok: false, message: `cannot convert the generated v1alpha1 DynamoGraphDeployment: ${formatIssues(converted.issues)}` };
    dgd = converted.object as Obj;
  } else return { ok: false, message: `unsupported DynamoGraphDeployment apiVersion ${JSON.stringify(found['apiVersion'])}` };
  const metadata = isObject(dgd['metadata']) ? dgd['metadata'] : {};
  dgd = { ...dgd, apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { ...pick(metadata, ['labels', 'annotations']), name } };
  const parsed = parseDgd(dgd);
  if (!parsed.ok) return { ok: false, message: `the generated DynamoGraphDeployment is invalid: ${formatIssues(parsed.issues)}` };
  return { ok: true, dgd, additional: objects.filter((o) => o !== found) };
}

function pick(object: Obj, keys: readonly string[]): Obj {
  return Object.fromEntries(keys.filter((k) => object[k] !== undefined).map((k) => [k, object[k]]));
}

/**
 * Copies `spec.runtimeVersionOverride` to every component without its own (an explicit component
 * value wins). Out: a new DGD object; unchanged when the DGDR sets none.
 * Source: dgdr-reference "Profiler image version compatibility" ("copies the DGDR value only to
 * components that do not already have an explicit override"); upstream `applyDGDRRuntimeVersionOverride`. Pure.
 */
export function applyRuntimeVersionOverride(dgd: Readonly<Obj>, runtimeVersionOverride: string | undefined): Obj {
  const spec = dgd['spec'];
  if (runtimeVersionOverride === undefined || !isObject(spec) || !Array.isArray(spec['components'])) return structuredClone(dgd) as Obj;
  const components = (spec['components'] as unknown[]).map((c) => {
    if (!isObject(c)) return c;
    const own = c['runtimeVersionOverride'];
    return typeof own === 'string' && own !== '' ? c : { ...c, runtimeVersionOverride };
  });
  return structuredClone({ ...dgd, spec: { ...spec, components } }) as Obj;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The tolerations `spec.overrides.dgd` sets on each component, by name (v1beta1 `components[].podTemplate.spec`, v1alpha1 `services.<name>.extraPodSpec`). */
function overrideTolerations(dgdOverride: unknown): Map<string, unknown[]> {
  const byName = new Map<string, unknown[]>();
  const spec = isObject(dgdOverride) && isObject(dgdOverride['spec']) ? dgdOverride['spec'] : {};
  for (const component of listOf(spec['components'])) {
    if (!isObject(component) || typeof component['name'] !== 'string') continue;
    const podSpec = isObject(component['podTemplate']) && isObject(component['podTemplate']['spec']) ? component['podTemplate']['spec'] : {};
    byName.set(component['name'], listOf(podSpec['tolerations']));
  }
  for (const [name, service] of Object.entries(isObject(spec['services']) ? spec['services'] : {})) {
    const extra = isObject(service) && isObject(service['extraPodSpec']) ? service['extraPodSpec'] : {};
    byName.set(name, [...(byName.get(name) ?? []), ...listOf(extra['tolerations'])]);
  }
  return byName;
}

/**
 * Removes the profiling Job's tolerations from the generated DGD: the Dynamo 1.6.1 profiler
 * copies `overrides.profilingJob.template.spec.tolerations` into every generated component
 * (`get_profiling_job_tolerations` / `inject_tolerations_into_dgd`, appended by identity), and the
 * reference says profiling-Job settings never reach the deployment. A toleration equal to one of
 * the Job's is removed from each component's `podTemplate.spec.tolerations`, unless
 * `spec.overrides.dgd` sets that toleration on that component itself (then it is the user's DGD
 * intent). An emptied list is removed. Out: a new DGD object; unchanged (a copy) when the Job
 * sets no tolerations.
 * Source: dgdr-reference "Overrides" (profilingJob: "Only customizes the profiling Job — not the
 * deployed worker pods"; "overrides.profilingJob customizes only the profiling Job. Use
 * overrides.dgd for settings that must appear on deployed components"); upstream-notes/
 * profiler.md §1.4 (the profiler's injection). Pure.
 */
export function stripProfilingJobTolerations(dgd: Readonly<Obj>, overrides: DgdrSpec['overrides']): Obj {
  const job = overrides?.profilingJob;
  const template = isObject(job) && isObject(job['template']) ? job['template'] : {};
  const jobTolerations = listOf(isObject(template['spec']) ? template['spec']['tolerations'] : undefined);
  const spec = dgd['spec'];
  if (jobTolerations.length === 0 || !isObject(spec) || !Array.isArray(spec['components'])) return structuredClone(dgd) as Obj;
  const kept = overrideTolerations(overrides?.dgd);
  const components = (spec['components'] as unknown[]).map((component) => {
    if (!isObject(component) || !isObject(component['podTemplate']) || !isObject(component['podTemplate']['spec'])) return component;
    const podTemplate = component['podTemplate'];
    const podSpec = podTemplate['spec'] as Obj;
    if (!Array.isArray(podSpec['tolerations'])) return component;
    const own = kept.get(typeof component['name'] === 'string' ? component['name'] : '') ?? [];
    const tolerations = (podSpec['tolerations'] as unknown[]).filter((t) => !jobTolerations.some((j) => isDeepStrictEqual(j, t)) || own.some((o) => isDeepStrictEqual(o, t)));
    const { tolerations: _dropped, ...rest } = podSpec;
    return { ...component, podTemplate: { ...podTemplate, spec: tolerations.length === 0 ? rest : { ...rest, tolerations } } };
  });
  return structuredClone({ ...dgd, spec: { ...spec, components } }) as Obj;
}
