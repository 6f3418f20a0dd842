/**
 * Admission of DynamoGraphDeploymentRequest v1beta2 and DynamoGraphDeploymentRun: the read-only
 * conversion views, hardware discovery (metrics exporters, then the Nodes' labels), the typed
 * defaults, and the rules of ./admission.ts (open SKU, trace xor static, DGD override version, the
 * merged AISimulate input against the bundled schema). No I/O: the admission shell lists the
 * Nodes, reads the DCGM and Intel XPU exporters (shared/discovery) and passes them in.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Conversion views", "v1beta2 hardware SKU",
 * "v1beta2 DGD Overrides", "Replay a recorded trace"; upstream-notes/dgdr.md §3 (discovery from
 * DCGM, Intel XPU and GPU Feature Discovery labels, reused from ../dgdr/discovery.ts) and §5.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import {
  DGDR_KIND,
  DGDR_V1BETA2,
  DGDR_VIEW_V1BETA1,
  DGDR_VIEW_V1BETA2,
  DgdrV1Beta2Schema,
  RUN_KIND,
  RunSchema,
  fromZodIssues,
  type DgdrV1Beta2Spec,
  type FieldIssue,
} from '../../api/index.js';
import { MAX_AUTO_TOTAL_GPUS, discoverFromSources, type DiscoverySignals, type GpuNode, type NodeFacts } from '../dgdr/discovery.js';
import { validateV1Beta2Spec, type V1Beta2Validation } from './admission.js';
import type { AisimulateInputValidator } from './aisimulate-input.js';

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The static workload admission adds when no trace is set (the v1beta1 workload defaults, dgdr-reference "Spec reference"). */
export const V1BETA2_STATIC_DEFAULTS = { isl: 4000, osl: 1000 } as const;

/** `spec.hardware.gpu` as admission fills it. */
export type V1Beta2Gpu = NonNullable<NonNullable<DgdrV1Beta2Spec['hardware']>['gpu']>;

/** The first path under `prefix` where `a` and `b` differ, for a message that names the edited field. Pure. */
function firstDifference(a: unknown, b: unknown, prefix: string): string {
  if (isObj(a) && isObj(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (!isDeepStrictEqual(a[key], b[key])) return firstDifference(a[key], b[key], `${prefix}.${key}`);
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let index = 0; index < a.length; index += 1) {
      if (!isDeepStrictEqual(a[index], b[index])) return firstDifference(a[index], b[index], `${prefix}[${index}]`);
    }
  }
  return prefix;
}

/**
 * The read-only conversion view `spec.<view>` may be written back only unchanged: setting it on
 * create, editing it, or replacing a view with native fields is Forbidden, naming the edited
 * path. In: the object and the stored object (UPDATE), both in the webhook's version; `view` is
 * `v1beta2` in v1beta1 objects and `v1beta1` in v1beta2 objects.
 * Source: dgdr-reference "Conversion views" ("do not set or edit the conversion field directly.
 * An unchanged conversion view can be written back without changing the stored request"). Pure.
 */
export function validateConversionView(object: unknown, oldObject: unknown, view: typeof DGDR_VIEW_V1BETA1 | typeof DGDR_VIEW_V1BETA2): FieldIssue[] {
  const spec = isObj(object) && isObj(object['spec']) ? object['spec'] : {};
  const oldSpec = isObj(oldObject) && isObj(oldObject['spec']) ? oldObject['spec'] : undefined;
  const nativeVersion = `nvidia.com/${view}`;
  const path = `spec.${view}`;
  const hasView = view in spec;
  const hadView = oldSpec !== undefined && view in oldSpec;
  if (!hasView && !hadView) return [];
  if (!hadView) {
    return [{ path, type: 'Forbidden', detail: `a read-only conversion view may not be set; create and modify the request through ${nativeVersion}` }];
  }
  if (!hasView) {
    return [{ path, type: 'Forbidden', detail: `the request was created through ${nativeVersion}: its conversion view may not be replaced by native fields; modify the request through ${nativeVersion}` }];
  }
  if (isDeepStrictEqual(spec, oldSpec)) return [];
  const edited = isDeepStrictEqual(spec[view], oldSpec[view]) ? 'spec' : firstDifference(spec[view], oldSpec[view], path);
  return [{ path: edited, type: 'Forbidden', detail: `the read-only conversion view ${path} may only be written back unchanged; modify the request through ${nativeVersion}` }];
}

/**
 * Whether admission discovers hardware: `hardware` omitted, or a nonempty `hardware` missing any
 * of `gpu.sku`, `gpu.budget`, `gpu.numGpusPerNode`. An exactly empty `hardware: {}` opts out.
 * Source: dgdr-reference "v1beta2 hardware SKU" ("An exactly empty hardware: {} object opts out of
 * all operator cluster and DCGM discovery and typed hardware defaults. Any nonempty object,
 * including hardware: {gpu: {}}, is partial hardware intent"). Pure.
 */
export function needsV1Beta2HardwareDiscovery(spec: Readonly<Obj>): boolean {
  const hardware = spec['hardware'];
  if (hardware === undefined) return true;
  if (!isObj(hardware) || Object.keys(hardware).length === 0) return false;
  const gpu = isObj(hardware['gpu']) ? hardware['gpu'] : {};
  return gpu['sku'] === undefined || gpu['budget'] === undefined || gpu['numGpusPerNode'] === undefined;
}

/** Hardware discovery's answer: the complete `spec.hardware.gpu` to persist, or the field issue to deny with. */
export type V1Beta2DiscoveryResult = { readonly ok: true; readonly gpu: V1Beta2Gpu } | { readonly ok: false; readonly issue: FieldIssue };

/**
 * Discovers the missing `spec.hardware.gpu` fields, keeping every explicit value.
 * In: the requested gpu (possibly empty), every Node (name, labels) and the metrics exporters
 * when observed (`signals.dcgm`: the DCGM, then Intel XPU exporters and their scrapes). Out: sku,
 * budget and numGpusPerNode, or a field issue naming what to set.
 * Sources, in v1beta1's order (../dgdr/discovery.ts `discoverFromSources`): the exporters' nodes
 * (filtered by an explicit sku) when they give any, else the GPU Feature Discovery labels; both
 * failing with exporters present names both (`metrics discovery failed: <x>; node-label discovery
 * failed: <y>`).
 * Rules over the chosen source's nodes: an explicit sku restricts discovery to nodes of that SKU;
 * the shape is the node with the most GPUs, ties broken by the highest VRAM per GPU, then by name;
 * `sku` and `numGpusPerNode` are the shape's; `budget` sums the GPUs of the nodes of exactly that
 * shape, capped at 32 (dgdr-reference "totalGpus": "temporarily capped at 32").
 * Source: dgdr-reference "v1beta2 hardware SKU" ("Omit hardware to let admission discover and
 * persist sku, budget, and numGpusPerNode"; "admission discovers and persists each missing field
 * while preserving every explicit value"); upstream-notes/dgdr.md §3.2 (DCGM, Intel XPU), §3.3
 * (node labels). Pure.
 */
export function discoverV1Beta2Hardware(requested: Readonly<V1Beta2Gpu>, nodes: readonly NodeFacts[], signals: DiscoverySignals = {}): V1Beta2DiscoveryResult {
  return discoverFromSources(requested.sku, nodes, signals, (gpuNodes) => selectV1Beta2Hardware(requested, gpuNodes, nodes.length), (metricsError, fromLabels) =>
    fromLabels.ok ? fromLabels : { ok: false, issue: { ...fromLabels.issue, path: 'spec.hardware.gpu', detail: `metrics discovery failed: ${metricsError}; node-label discovery failed: ${fromLabels.issue.detail}` } },
  );
}

/** The rules of {@link discoverV1Beta2Hardware} over one source's GPU nodes (`nodeCount`: every Node, for the message). Pure. */
function selectV1Beta2Hardware(requested: Readonly<V1Beta2Gpu>, gpuNodes: readonly GpuNode[], nodeCount: number): V1Beta2DiscoveryResult {
  if (gpuNodes.length === 0) {
    return { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: `cannot discover sku, budget and numGpusPerNode: no nodes with NVIDIA GPU Feature Discovery labels found (checked ${nodeCount} nodes); set spec.hardware.gpu.{sku,budget,numGpusPerNode} explicitly, or hardware: {} to leave the hardware to spec.aisim.inputOverrides` } };
  }
  const candidates = requested.sku === undefined ? gpuNodes : gpuNodes.filter((node) => node.sku === requested.sku);
  if (candidates.length === 0) {
    const found = [...new Set(gpuNodes.map((node) => node.sku ?? node.product))].sort().join(', ');
    return { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: `cannot discover budget and numGpusPerNode: no GPU nodes of sku "${requested.sku ?? ''}" found (GPU types found: ${found}); set spec.hardware.gpu.budget and spec.hardware.gpu.numGpusPerNode explicitly` } };
  }
  const shape = [...candidates].sort((a, b) => b.gpuCount - a.gpuCount || b.vramMb - a.vramMb || a.name.localeCompare(b.name))[0] ?? candidates[0];
  if (shape === undefined) return { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: 'cannot discover the hardware' } };
  const sku = requested.sku ?? shape.sku;
  if (sku === undefined) {
    return { ok: false, issue: { path: 'spec.hardware.gpu.sku', type: 'Required', detail: `GPU product "${shape.product}" on node ${shape.name} does not map to an AISimulate system identifier; set spec.hardware.gpu.sku explicitly` } };
  }
  const shapeGpus = candidates.filter((node) => node.sku === shape.sku && node.gpuCount === shape.gpuCount && node.vramMb === shape.vramMb).reduce((sum, node) => sum + node.gpuCount, 0);
  return { ok: true, gpu: { ...requested, sku, budget: requested.budget ?? Math.min(shapeGpus, MAX_AUTO_TOTAL_GPUS), numGpusPerNode: requested.numGpusPerNode ?? shape.gpuCount } };
}

/**
 * The static workload default: `workload.static` gets isl 4000 and osl 1000 where missing, unless
 * `workload.trace` is set; a `static: null` (the switch to a trace) is removed, so the stored
 * request holds no null. Returns the new workload, or undefined when there is nothing to set.
 * Source: dgdr-reference "Replay a recorded trace" ("admission adds no static default when trace
 * is set. To switch an existing request from static traffic to a trace, set spec.workload.static
 * to null in the same update"). Pure.
 */
export function defaultV1Beta2Workload(workload: unknown): Obj | undefined {
  const base = workload ?? {};
  if (!isObj(base)) return undefined;
  const out: Obj = { ...base };
  if (out['static'] === null) delete out['static'];
  if (out['trace'] !== undefined) return out;
  const current = out['static'] ?? {};
  if (!isObj(current)) return out;
  out['static'] = { ...current, isl: current['isl'] ?? V1BETA2_STATIC_DEFAULTS.isl, osl: current['osl'] ?? V1BETA2_STATIC_DEFAULTS.osl };
  return out;
}

/** What defaulting decides: the defaulted copy, or the issue that denies the request. */
export type V1Beta2DefaultingResult = { readonly ok: true; readonly object: Obj } | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/**
 * Defaults a native v1beta2 request: the missing hardware discovered from `nodes` (unless
 * `hardware: {}`), and the static workload default. On UPDATE with the spec unchanged nothing is
 * defaulted (an unchanged request, or view, writes back without change). Anything not a native
 * v1beta2 DGDR with an object spec (a `spec.v1beta1` view included) is returned as is.
 * In: the object, the stored object (UPDATE), every Node (listed only when discovery is needed;
 * an error message when the list failed), the metrics exporters when read. Out: a defaulted copy (the input is not modified), or
 * the discovery issue. Source: see the module. Pure.
 */
export function defaultV1Beta2Request(object: unknown, oldObject: unknown, nodes: readonly NodeFacts[] | { readonly error: string }, signals: DiscoverySignals = {}): V1Beta2DefaultingResult {
  if (!isObj(object) || object['apiVersion'] !== DGDR_V1BETA2 || object['kind'] !== DGDR_KIND || !isObj(object['spec'])) return { ok: true, object: object as Obj };
  const spec: Obj = structuredClone(object['spec']);
  if (DGDR_VIEW_V1BETA1 in spec) return { ok: true, object };
  if (isObj(oldObject) && isDeepStrictEqual(oldObject['spec'], spec)) return { ok: true, object };
  const workload = defaultV1Beta2Workload(spec['workload']);
  if (workload !== undefined) spec['workload'] = workload;
  if (needsV1Beta2HardwareDiscovery(spec) && isObj(spec['hardware'] ?? {})) {
    if (!Array.isArray(nodes)) {
      return { ok: false, issues: [{ path: 'spec.hardware.gpu', type: 'Required', detail: `cannot discover sku, budget and numGpusPerNode: ${(nodes as { error: string }).error}; set them explicitly, or hardware: {}` }] };
    }
    const hardware = isObj(spec['hardware']) ? spec['hardware'] : {};
    const gpu = (isObj(hardware['gpu']) ? hardware['gpu'] : {}) as V1Beta2Gpu;
    const discovered = discoverV1Beta2Hardware(gpu, nodes, signals);
    if (!discovered.ok) return { ok: false, issues: [discovered.issue] };
    spec['hardware'] = { ...hardware, gpu: discovered.gpu };
  }
  return { ok: true, object: { ...object, spec } };
}

/**
 * Validates a native v1beta2 request or Run: the schema (every zod issue with its path), then
 * the rules of ./admission.ts `validateV1Beta2Spec`. On UPDATE with the spec unchanged the spec
 * is not checked again, so metadata stays updatable after a bundled schema change; a Run's spec
 * may not change at all. A v1beta2 object that is a `spec.v1beta1` view is left to the caller.
 * Source: dgdr-reference "v1beta2 hardware SKU" ("Request and Run admission validate the merged
 * input against the bundled AISimulate input schema. Run specs remain immutable; unchanged specs
 * remain metadata-updatable after a bundled schema change"); upstream Run CEL `spec is immutable`
 * (upstream-notes/profiler.md §4). Pure.
 */
export function validateV1Beta2Object(kind: typeof DGDR_KIND | typeof RUN_KIND, object: unknown, oldObject: unknown, validateInput: AisimulateInputValidator): V1Beta2Validation {
  const oldSpec = isObj(oldObject) ? oldObject['spec'] : undefined;
  if (isObj(object) && oldSpec !== undefined) {
    if (isDeepStrictEqual(object['spec'], oldSpec)) return { issues: [], warnings: [] };
    if (kind === RUN_KIND) return { issues: [{ path: 'spec', type: 'Forbidden', detail: 'spec is immutable' }], warnings: [] };
  }
  const parsed = (kind === RUN_KIND ? RunSchema : DgdrV1Beta2Schema).safeParse(object, { reportInput: true });
  if (!parsed.success) return { issues: fromZodIssues(parsed.error.issues), warnings: [] };
  return validateV1Beta2Spec(parsed.data.spec, validateInput);
}
