/**
 * Validation of a v1beta2 request (and of a Run, whose spec is the same): the open SKU, the
 * trace/static exclusivity, the DGD override's version, and the merged AISimulate input
 * against the bundled schema. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "v1beta2 hardware SKU" (warn on an SKU missing
 * from the bundled catalog, never reject it; an unknown SKU needs budget and numGpusPerNode;
 * "Request and Run admission validate the merged input against the bundled AISimulate input
 * schema", except a trace request's: see `validateV1Beta2Spec`), "Replay a recorded trace" (trace
 * xor static), "Spec reference" (concurrency xor requestRate), "v1beta2 DGD Overrides" (only a
 * `nvidia.com/v1beta1` `DynamoGraphDeployment`).
 * @module
 */
import { BUNDLED_AISIMULATE_SKUS, DGD_KIND, DGD_V1BETA1, type DgdrV1Beta2Spec, type FieldIssue } from '../../api/index.js';
import { buildAisimulateInput, type AisimulateInputValidator } from './aisimulate-input.js';

export interface V1Beta2Validation {
  readonly issues: readonly FieldIssue[];
  readonly warnings: readonly string[];
}

const BUNDLED: ReadonlySet<string> = new Set(BUNDLED_AISIMULATE_SKUS);

/**
 * `spec.hardware.gpu.sku` is passed through: a warning when the bundled catalog lacks it, and
 * then `budget` and `numGpusPerNode` are required (admission cannot map it to capacity). Pure.
 */
export function validateHardwareSku(spec: DgdrV1Beta2Spec): V1Beta2Validation {
  const gpu = spec.hardware?.gpu;
  const sku = gpu?.sku;
  if (sku === undefined || BUNDLED.has(sku)) return { issues: [], warnings: [] };
  const issues: FieldIssue[] = [];
  if (gpu?.budget === undefined) issues.push({ path: 'spec.hardware.gpu.budget', type: 'Required', detail: `an SKU missing from the bundled AISimulate catalog ("${sku}") needs an explicit budget` });
  if (gpu?.numGpusPerNode === undefined) issues.push({ path: 'spec.hardware.gpu.numGpusPerNode', type: 'Required', detail: `an SKU missing from the bundled AISimulate catalog ("${sku}") needs an explicit numGpusPerNode` });
  return { issues, warnings: [`spec.hardware.gpu.sku: "${sku}" is not in the bundled AISimulate system catalog (${BUNDLED_AISIMULATE_SKUS.join(', ')}); it is passed to AISimulate unchanged`] };
}

/** `spec.workload.trace` and `spec.workload.static` are mutually exclusive. Pure. */
export function validateWorkloadExclusive(spec: DgdrV1Beta2Spec): readonly FieldIssue[] {
  const workload = spec.workload;
  if (workload?.trace !== undefined && workload.static !== undefined && workload.static !== null) {
    return [{ path: 'spec.workload.static', type: 'Forbidden', detail: 'may not be set together with spec.workload.trace; set it to null to switch to a trace' }];
  }
  return [];
}

/**
 * A static workload names at most one load target: `concurrency` and `requestRate` are mutually
 * exclusive (Forbidden at `spec.workload.static.requestRate` when both are set). Neither is
 * required: without one the Run searches at the maximum-throughput load
 * (./aisimulate-input.ts `STATIC_DEFAULT_LOAD`), so the reference's v1beta2 examples, which set
 * no workload, are admitted with the static default `{isl, osl}`.
 * Source: dgdr-reference "Spec reference" (workload.concurrency / requestRate: "Mutually exclusive
 * with ...", "When neither field is set ... the profiler uses its default maximum-throughput
 * selection"); the examples `future-accelerator`, `hardware: {}` and `custom-worker-image`
 * ("v1beta2 hardware SKU", "v1beta2 DGD Overrides"). Pure.
 */
export function validateStaticWorkloadTarget(spec: DgdrV1Beta2Spec): readonly FieldIssue[] {
  const workload = spec.workload;
  const target = workload?.trace === undefined ? workload?.static : undefined;
  if (target === undefined || target === null) return [];
  if (target.concurrency !== undefined && target.requestRate !== undefined) {
    return [{ path: 'spec.workload.static.requestRate', type: 'Forbidden', detail: 'may not be set together with spec.workload.static.concurrency: they are mutually exclusive' }];
  }
  return [];
}

/** `spec.overrides.dgd` must be a `nvidia.com/v1beta1` `DynamoGraphDeployment`. Pure. */
export function validateV1Beta2DgdOverrideVersion(spec: DgdrV1Beta2Spec): readonly FieldIssue[] {
  const dgd = spec.overrides?.dgd;
  if (dgd === undefined) return [];
  const issues: FieldIssue[] = [];
  if (dgd['apiVersion'] !== DGD_V1BETA1) issues.push(dgd['apiVersion'] === undefined ? { path: 'spec.overrides.dgd.apiVersion', type: 'Required', detail: 'must be specified when dgd is set' } : { path: 'spec.overrides.dgd.apiVersion', type: 'NotSupported', value: dgd['apiVersion'], detail: `supported values: "${DGD_V1BETA1}"` });
  if (dgd['kind'] !== DGD_KIND) issues.push(dgd['kind'] === undefined ? { path: 'spec.overrides.dgd.kind', type: 'Required', detail: 'must be specified when dgd is set' } : { path: 'spec.overrides.dgd.kind', type: 'NotSupported', value: dgd['kind'], detail: `supported values: "${DGD_KIND}"` });
  return issues;
}

/**
 * Validates a v1beta2 request or Run spec: every rule above, and, unless the workload is a trace,
 * the merged AISimulate input against the bundled schema (issues under `spec.aisim.inputOverrides`).
 * In: the spec (already structurally parsed), the compiled schema validator. Pure.
 */
export function validateV1Beta2Spec(spec: DgdrV1Beta2Spec, validateInput: AisimulateInputValidator): V1Beta2Validation {
  const sku = validateHardwareSku(spec);
  // Two sentences of the reference meet here: "Request and Run admission validate the merged
  // input against the bundled AISimulate input schema" ("v1beta2 hardware SKU") and, for a trace,
  // "AISimulate validates the resulting input when the Run's Job starts, and an input it rejects
  // fails the Run; admission does not validate it against the AISimulate schema yet" ("Replay a
  // recorded trace"). The trace sentence is the more specific one, so it decides: a trace
  // request's (or Run's) merged input is not checked here; AISimulate checks it in the Job.
  const isTrace = spec.workload?.trace !== undefined;
  const inputIssues = isTrace ? [] : validateInput(buildAisimulateInput(spec));
  return {
    issues: [...sku.issues, ...validateWorkloadExclusive(spec), ...validateStaticWorkloadTarget(spec), ...validateV1Beta2DgdOverrideVersion(spec), ...inputIssues],
    warnings: sku.warnings,
  };
}
