/**
 * DGDR admission (v1beta1): defaulting (`defaultDgdr`) and validation (`validateDgdr`), each rule a
 * named function citing its source. Pure; the webhook shell is functions/admission.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Spec reference", "Profiler image version
 * compatibility", "SKU format", "Generated DGD overrides"; upstream
 * deploy/operator/internal/webhook/{defaulting,validation}/dynamographdeploymentrequest*.go as
 * recorded in ../shared/upstream-notes/dgdr.md §1.4, §2.1, §4.3.
 * @module
 */
import {
  DEFAULT_OPERATOR_VERSION,
  DEFAULT_PLANNER_IMAGE_REPOSITORY,
  DEPRECATED_GPU_SKU_GB200_SXM,
  DGDR_KIND,
  DGDR_V1BETA1,
  DGD_KIND,
  DGD_V1ALPHA1,
  DGD_V1BETA1,
  DgdrSchema,
  fromZodIssues,
  type Dgdr,
  type DgdrPhase,
  type DgdrSpec,
  type FieldIssue,
} from '../../api/index.js';
import { isDeepEqual, isObject } from '../admission/common.js';
import { canonicalVersion, hasSemanticVersionTag } from './image-version.js';

/** The operator settings DGDR admission depends on. */
export interface DgdrAdmissionConfig {
  /** The operator version whose planner image is the default profiler image (semver; `v` allowed). */
  readonly operatorVersion: string;
  /** An explicit default profiler image (a Helm value upstream, for rc/nightly charts); wins over the version. */
  readonly defaultImage?: string;
}

export const DEFAULT_DGDR_ADMISSION_CONFIG: DgdrAdmissionConfig = { operatorVersion: DEFAULT_OPERATOR_VERSION };

/** Defaults of the reference's spec table (dgdr-reference "Spec reference"). */
export const DGDR_DEFAULTS = {
  backend: 'auto',
  searchStrategy: 'rapid',
  autoApply: true,
  isl: 4000,
  osl: 1000,
  ttft: 2000,
  itl: 30,
  pvcMountPath: '/opt/model-cache',
} as const;

/** Phases in which the spec may no longer change (dgdr-reference "Generated DGD overrides": "The DGDR spec becomes immutable during profiling"; "Other spec updates remain forbidden after profiling starts"). */
export const DGDR_IMMUTABLE_PHASES: readonly DgdrPhase[] = ['Profiling', 'Ready', 'Deploying', 'Deployed'];

/** PCIe SKUs the profiler has no training data for (dgdr-reference "SKU format"). */
export const PCIE_GPU_SKUS: readonly string[] = ['h100_pcie', 'a100_pcie', 'v100_pcie'];

/**
 * The default profiler image: `config.defaultImage` when set, else
 * `nvcr.io/nvidia/ai-dynamo/dynamo-planner:<canonical operatorVersion>`; undefined when the
 * operator version does not parse (then no default is applied).
 * Source: dgdr-reference "Profiler image version compatibility"; upstream-notes/dgdr.md §2.1. Pure.
 */
export function defaultProfilerImage(config: DgdrAdmissionConfig): string | undefined {
  if (config.defaultImage !== undefined && config.defaultImage !== '') return config.defaultImage;
  const version = canonicalVersion(config.operatorVersion);
  return version === undefined ? undefined : `${DEFAULT_PLANNER_IMAGE_REPOSITORY}:${version}`;
}

/**
 * Defaults a DynamoGraphDeploymentRequest (v1beta1).
 * In: any object; `operation` CREATE or UPDATE. Out: a defaulted copy (the input is not modified);
 * anything not a v1beta1 DGDR with an object `spec` is returned as is.
 * Defaults: `spec.image` (CREATE only), `backend: auto`, `searchStrategy: rapid`, `autoApply: true`,
 * `workload.isl: 4000`, `workload.osl: 1000`, `sla.ttft: 2000` and `sla.itl: 30` (not when
 * `sla.e2eLatency` is set: it "cannot be combined with them"), and `modelCache.pvcMountPath:
 * /opt/model-cache` when `modelCache` is set. Only where the surrounding shape is an object.
 * Source: dgdr-reference "Spec reference". Pure.
 */
export function defaultDgdr<T>(object: T, config: DgdrAdmissionConfig, operation: 'CREATE' | 'UPDATE'): T {
  if (!isObject(object) || object['apiVersion'] !== DGDR_V1BETA1 || object['kind'] !== DGDR_KIND || !isObject(object['spec'])) return object;
  const spec: Record<string, unknown> = structuredClone(object['spec']);
  const image = defaultProfilerImage(config);
  if (operation === 'CREATE' && (spec['image'] === undefined || spec['image'] === '') && image !== undefined) spec['image'] = image;
  spec['backend'] ??= DGDR_DEFAULTS.backend;
  spec['searchStrategy'] ??= DGDR_DEFAULTS.searchStrategy;
  spec['autoApply'] ??= DGDR_DEFAULTS.autoApply;
  const workload = withDefaults(spec['workload'], { isl: DGDR_DEFAULTS.isl, osl: DGDR_DEFAULTS.osl });
  if (workload !== undefined) spec['workload'] = workload;
  const sla = spec['sla'] ?? {};
  if (isObject(sla) && sla['e2eLatency'] === undefined) spec['sla'] = withDefaults(sla, { ttft: DGDR_DEFAULTS.ttft, itl: DGDR_DEFAULTS.itl });
  if (isObject(spec['modelCache'])) spec['modelCache'] = withDefaults(spec['modelCache'], { pvcMountPath: DGDR_DEFAULTS.pvcMountPath });
  return { ...object, spec } as T;
}

function withDefaults(value: unknown, defaults: Record<string, unknown>): Record<string, unknown> | undefined {
  const base = value ?? {};
  if (!isObject(base)) return undefined;
  const out = { ...base };
  for (const [key, fallback] of Object.entries(defaults)) out[key] ??= fallback;
  return out;
}

/** What validation decides: every field issue (a denial when non-empty) and every warning. */
export interface DgdrValidationResult {
  readonly issues: readonly FieldIssue[];
  readonly warnings: readonly string[];
}

/** `spec.model` must be non-empty, not just whitespace (dgdr-reference "model": "Must be non-empty."). Pure. */
export function validateModel(spec: DgdrSpec): FieldIssue[] {
  return spec.model.trim() === '' ? [{ path: 'spec.model', type: 'Required', detail: 'must be non-empty' }] : [];
}

/**
 * An image without a parseable semantic-version tag needs `spec.runtimeVersionOverride`. On UPDATE
 * only when the image or the override changed, or autoApply was turned on.
 * Source: dgdr-reference "Spec reference" ("Admission rejects a new DGDR whose supplied spec.image has
 * no parseable semantic-version tag unless spec.runtimeVersionOverride is set"); upstream-notes/dgdr.md §1.4, §4.3. Pure.
 */
export function validateRuntimeVersionRequired(spec: DgdrSpec, old: DgdrSpec | undefined): FieldIssue[] {
  if (spec.image === undefined || spec.image === '' || spec.runtimeVersionOverride !== undefined) return [];
  if (hasSemanticVersionTag(spec.image)) return [];
  if (old !== undefined) {
    const isAutoApplyActivated = old.autoApply === false && spec.autoApply !== false;
    if (old.image === spec.image && old.runtimeVersionOverride === spec.runtimeVersionOverride && !isAutoApplyActivated) return [];
  }
  return [{ path: 'spec.runtimeVersionOverride', type: 'Required', detail: 'is required when spec.image has no parseable semantic-version tag' }];
}

/** `workload.concurrency` and `workload.requestRate` are mutually exclusive (dgdr-reference "workload"). Pure. */
export function validateWorkloadTarget(spec: DgdrSpec): FieldIssue[] {
  const workload = spec.workload;
  if (workload?.concurrency === undefined || workload.requestRate === undefined) return [];
  return [{ path: 'spec.workload.requestRate', type: 'Forbidden', detail: 'may not be set together with spec.workload.concurrency: they are mutually exclusive' }];
}

/** `sla.e2eLatency` "cannot be combined with" `sla.ttft` / `sla.itl` (dgdr-reference "sla"). Pure. */
export function validateLatencyTargets(spec: DgdrSpec): FieldIssue[] {
  const sla = spec.sla;
  if (sla?.e2eLatency === undefined || (sla.ttft === undefined && sla.itl === undefined)) return [];
  return [{ path: 'spec.sla.e2eLatency', type: 'Forbidden', detail: 'cannot be combined with spec.sla.ttft or spec.sla.itl: set either e2eLatency or ttft and itl' }];
}

/**
 * `searchStrategy: thorough` needs a specific backend; on UPDATE only when newly introduced.
 * Source: upstream-notes/dgdr.md §1.2 step 1 (a) and §1.4 (message word for word). Pure.
 */
export function validateThoroughBackend(spec: DgdrSpec, old: DgdrSpec | undefined): FieldIssue[] {
  const isThoroughAuto = (s: DgdrSpec | undefined): boolean => s?.searchStrategy === 'thorough' && (s.backend ?? 'auto') === 'auto';
  if (!isThoroughAuto(spec) || (old !== undefined && isThoroughAuto(old))) return [];
  return [{ path: 'spec.searchStrategy', type: 'Invalid', value: 'thorough', detail: 'is incompatible with spec.backend "auto": set spec.backend to a specific backend (sglang, trtllm, or vllm)' }];
}

/**
 * `overrides.dgd` is a partial, versioned DGD: `kind: DynamoGraphDeployment`, `apiVersion`
 * `nvidia.com/v1beta1` or `nvidia.com/v1alpha1`, and no `status`.
 * Source: dgdr-reference "Overrides" (dgd); upstream-notes/dgdr.md §4.4 (accepted inputs,
 * `override status is not supported`). Pure.
 */
export function validateDgdOverrideVersion(spec: DgdrSpec): FieldIssue[] {
  const dgd = spec.overrides?.dgd;
  if (dgd === undefined) return [];
  const issues: FieldIssue[] = [];
  if (dgd['apiVersion'] !== DGD_V1BETA1 && dgd['apiVersion'] !== DGD_V1ALPHA1) {
    issues.push({ path: 'spec.overrides.dgd.apiVersion', type: 'NotSupported', value: dgd['apiVersion'], detail: `supported values: "${DGD_V1BETA1}", "${DGD_V1ALPHA1}"` });
  }
  if (dgd['kind'] !== DGD_KIND) issues.push({ path: 'spec.overrides.dgd.kind', type: 'NotSupported', value: dgd['kind'], detail: `supported values: "${DGD_KIND}"` });
  if (dgd['status'] !== undefined) issues.push({ path: 'spec.overrides.dgd.status', type: 'Forbidden', detail: 'override status is not supported' });
  return issues;
}

/**
 * Whether an UPDATE is the deferred runtime-version / auto-apply update the reference allows:
 * the stored `autoApply` is explicitly false, the phase is Profiling or Ready, only
 * `runtimeVersionOverride` and/or `autoApply` changed, and autoApply turns on only from Ready.
 * Source: dgdr-reference "Profiler image version compatibility" ("While a DGDR has autoApply: false,
 * you may set or change runtimeVersionOverride during Profiling or Ready. After it reaches Ready, you
 * may enable autoApply"); upstream-notes/dgdr.md §1.4 `isDGDRDeferredRuntimeVersionUpdate`. Pure.
 */
export function isDeferredRuntimeVersionUpdate(spec: DgdrSpec, old: DgdrSpec, phase: DgdrPhase): boolean {
  if (old.autoApply !== false || (phase !== 'Profiling' && phase !== 'Ready')) return false;
  const strip = (s: DgdrSpec): DgdrSpec => ({ ...s, runtimeVersionOverride: undefined, autoApply: undefined });
  if (!isDeepEqual(strip(spec), strip(old))) return false;
  return spec.autoApply === false || phase === 'Ready';
}

/**
 * The spec is immutable once profiling starts (phases Profiling, Ready, Deploying, Deployed),
 * except for the deferred update above.
 * Source: dgdr-reference "Generated DGD overrides" and "Profiler image version compatibility";
 * upstream-notes/dgdr.md §1.4 (message word for word). Pure.
 */
export function validateSpecImmutable(spec: DgdrSpec, old: DgdrSpec, phase: DgdrPhase | undefined): FieldIssue[] {
  if (phase === undefined || !DGDR_IMMUTABLE_PHASES.includes(phase) || isDeepEqual(spec, old)) return [];
  if (isDeferredRuntimeVersionUpdate(spec, old, phase)) return [];
  return [{ path: 'spec', type: 'Forbidden', detail: `updates are forbidden while the resource is in phase "${phase}"; delete and recreate the resource to change its spec` }];
}

/** Warnings for the deprecated `gb200_sxm` and for PCIe SKUs (dgdr-reference "SKU format"). Pure. */
export function warnGpuSku(spec: DgdrSpec): string[] {
  const sku = spec.hardware?.gpuSku;
  if (sku === DEPRECATED_GPU_SKU_GB200_SXM) return ['spec.hardware.gpuSku: "gb200_sxm" is deprecated because GB200 systems use NVL rather than SXM; use gpuSku: gb200'];
  if (sku !== undefined && PCIE_GPU_SKUS.includes(sku)) return [`spec.hardware.gpuSku: the profiler ships no training data for PCIe SKU "${sku}"; profiler-assisted sizing falls back to defaults`];
  return [];
}

/**
 * Validates a DGDR (v1beta1) create or update.
 * In: the object and, on UPDATE, the stored object (its `status.phase` decides immutability).
 * Out: every field issue (paths as Kubernetes prints them) and every warning. Schema problems come
 * first (zod, the same schema as the CRD); the rules run only on a schema-valid object.
 * Source: see each rule. Pure.
 */
export function validateDgdr(object: unknown, oldObject: unknown): DgdrValidationResult {
  const parsed = DgdrSchema.safeParse(withoutMetadata(object), { reportInput: true });
  if (!parsed.success) return { issues: fromZodIssues(parsed.error.issues), warnings: [] };
  const old = oldObject === undefined || oldObject === null ? undefined : DgdrSchema.safeParse(withoutMetadata(oldObject));
  const stored: Dgdr | undefined = old?.success === true ? old.data : undefined;
  const spec = parsed.data.spec;
  const issues = [
    ...validateModel(spec),
    ...validateRuntimeVersionRequired(spec, stored?.spec),
    ...validateWorkloadTarget(spec),
    ...validateLatencyTargets(spec),
    ...validateThoroughBackend(spec, stored?.spec),
    ...validateDgdOverrideVersion(spec),
    ...(stored === undefined ? [] : validateSpecImmutable(spec, stored.spec, stored.status?.phase)),
  ];
  return { issues, warnings: warnGpuSku(spec) };
}

/** Metadata is the API server's to validate (an emptied annotation map arrives as `null`); the rules read only spec and status. */
function withoutMetadata(object: unknown): unknown {
  return isObject(object) ? { ...object, metadata: {} } : object;
}
