/**
 * Validation of a v1beta2 request (and of a Run, whose spec is the same): the open SKU, the
 * trace/static exclusivity, the DGD override's version, and the merged AISimulate input
 * against the bundled schema. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "v1beta2 hardware SKU" (warn on an SKU missing
 * from the bundled catalog, never reject it; an unknown SKU needs budget and numGpusPerNode;
 * "Request and Run admission validate the merged input against the bundled AISimulate input
 * schema"), "Replay a recorded trace" (trace xor static; a static load target, from upstream's
 * v1beta2 type), "v1beta2 DGD Overrides" (only a
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
 * A static workload names exactly one load target: `concurrency` or `requestRate` (AISimulate's
 * `traffic.load`, which its input requires), unless `spec.aisim.inputOverrides` sets
 * `traffic.load` itself. Issues: Required at `spec.workload.static.concurrency`; Forbidden at
 * `spec.workload.static.requestRate` when both are set.
 * Source: upstream v1beta2 StaticWorkload ("exactly one of requestRate, concurrency or
 * kvLoadRatio", upstream-notes/dgdr.md §5); the bundled AISimulate input schema
 * (`TrafficRecommendationConfig` requires `load`). Pure.
 */
export function validateStaticWorkloadTarget(spec: DgdrV1Beta2Spec): readonly FieldIssue[] {
  const workload = spec.workload;
  const target = workload?.trace === undefined ? workload?.static : undefined;
  if (target === undefined || target === null) return [];
  if (target.concurrency !== undefined && target.requestRate !== undefined) {
    return [{ path: 'spec.workload.static.requestRate', type: 'Forbidden', detail: 'may not be set together with spec.workload.static.concurrency: they are mutually exclusive' }];
  }
  const traffic = spec.aisim?.inputOverrides?.['traffic'];
  const hasLoadOverride = typeof traffic === 'object' && traffic !== null && !Array.isArray(traffic) && (traffic as Record<string, unknown>)['load'] !== undefined;
  if (target.concurrency === undefined && target.requestRate === undefined && !hasLoadOverride) {
    return [{ path: 'spec.workload.static.concurrency', type: 'Required', detail: 'a static workload needs a load target: set spec.workload.static.concurrency or spec.workload.static.requestRate' }];
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
 * Validates a v1beta2 request or Run spec: every rule above, and the merged AISimulate input
 * against the bundled schema (issues under `spec.aisim.inputOverrides`).
 * In: the spec (already structurally parsed), the compiled schema validator. Pure.
 */
export function validateV1Beta2Spec(spec: DgdrV1Beta2Spec, validateInput: AisimulateInputValidator): V1Beta2Validation {
  const sku = validateHardwareSku(spec);
  const target = validateStaticWorkloadTarget(spec);
  // A missing load target is reported once, at the typed field the user sets, not again as the
  // merged input's missing traffic.load.
  const inputIssues = validateInput(buildAisimulateInput(spec)).filter((issue) => target.length === 0 || issue.path !== 'spec.aisim.inputOverrides.traffic.load');
  return {
    issues: [...sku.issues, ...validateWorkloadExclusive(spec), ...target, ...validateV1Beta2DgdOverrideVersion(spec), ...inputIssues],
    warnings: sku.warnings,
  };
}
