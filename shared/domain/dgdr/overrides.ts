/**
 * The `spec.overrides.dgd` merge engine: overlays a partial, versioned DGD override onto the
 * complete DGD the profiler generated (the "blueprint"), with the DGD schema's server-side-apply
 * merge rules. The same engine serves `dynamo-fn dgd-apply-overrides`, which the real profiler
 * calls (protocol v1), so the profiler's own merge is ours.
 *
 * Rules (each is one named function below):
 * - inputs: blueprint and override are `nvidia.com/v1alpha1` or `nvidia.com/v1beta1`
 *   `DynamoGraphDeployment`; the result keeps the blueprint's apiVersion and kind; neither input
 *   is modified;
 * - metadata: only labels and annotations merge; reserved `nvidia.com/dgd-*` conversion
 *   annotations are dropped; other metadata is ignored; both with a warning;
 * - `status` is refused; JSON `null` is refused except inside untyped (preserved) fields;
 * - targets: every override component (v1beta1) or service (v1alpha1) must exist in the
 *   blueprint; a deprecated name is translated within the same `backendFramework` when exactly
 *   one candidate exists (warning), otherwise refused; two entries resolving to one target are refused;
 * - `$patch: {args: append}` on a v1beta1 container: base args + override args, `$patch` removed;
 * - v1alpha1 services other than `Frontend`/`Planner`: `extraPodSpec.mainContainer.args` are
 *   appended to the generated args (the legacy contract);
 * - merge: objects merge field by field; lists follow their schema markers: components, roles,
 *   containers, env, volumes, ... merge by key; set lists union; every other list (args,
 *   command, graph-level `spec.env`, tolerations, ...) is atomic and replaced.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Generated DGD overrides"; upstream
 * deploy/operator/internal/dgdoverride/override.go (error and warning texts, order of checks) and
 * override_test.go; ../shared/upstream-notes/profiler.md §1.8; ../shared/upstream-notes/dgdr.md §4.4.
 * Pure.
 * @module
 */
import { DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, MAIN_CONTAINER_NAME } from '../../api/constants.js';
import { ComponentSchema, DgdSpecSchema } from '../../api/dgd.js';
import { convertDgdV1Alpha1 } from '../../api/dgd-v1alpha1.js';
import { formatIssue, fromZodIssues } from '../../api/issues.js';

/** The `dgd-apply-overrides` protocol the Dynamo 1.6.1 profiler expects (`DGD_OVERRIDE_PROTOCOL_VERSION`). */
export const DGD_OVERRIDE_PROTOCOL_VERSION = '1';

/** Annotation prefix reserved for DGD conversion bookkeeping (upstream api/v1alpha1 `dgdConversionAnnotationPrefix`). */
export const DGD_CONVERSION_ANNOTATION_PREFIX = 'nvidia.com/dgd-';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A non-fatal translation or sanitisation; printed as `<path>: <message>` (upstream `Warning.String`). */
export interface OverrideWarning {
  /** Field path in the override, e.g. `metadata`, `spec.components[name=VllmWorker]`; empty for none. */
  readonly path: string;
  readonly message: string;
}

/** The outcome of {@link applyDgdOverride}. `error` is upstream's text, path first. */
export type OverrideResult =
  | { readonly ok: true; readonly dgd: JsonObject; readonly warnings: readonly OverrideWarning[] }
  | { readonly ok: false; readonly error: string; readonly warnings: readonly OverrideWarning[] };

/** `path: message`, or the message alone when there is no path (upstream `Warning.String`). */
export function formatOverrideWarning(warning: OverrideWarning): string {
  return warning.path === '' ? warning.message : `${warning.path}: ${warning.message}`;
}

/** Raised inside this module only; {@link applyDgdOverride} turns it into `{ok: false}`. */
class OverrideFailure extends Error {
  override readonly name = 'OverrideFailure';
}

/**
 * Applies a partial DGD override to a complete blueprint.
 * In: `blueprint` and `override`, parsed JSON (any shape). Out: the merged DGD with the
 * blueprint's apiVersion/kind/name/namespace, and warnings; or the first error, as upstream's
 * `dgdoverride.Apply` words it (e.g. `spec.components[name=Missing]: override target "Missing"
 * is not present in the generated blueprint`). Never throws on input.
 * `options.isSchemaChecked` (default true): a v1beta1 override naming a field the DGD schema
 * does not declare, or a merged DGD the schema refuses, fails the merge, as upstream's typed
 * conversion does. A v1beta2 Candidate passes false: the merged DGD keeps such fields and the
 * strict dry-run records the failure (dgdr-reference "v1beta2 DGD Overrides": "Unknown fields
 * and incorrect field types remain visible on invalid Candidates; Valid=False records the
 * failure").
 * Source: upstream deploy/operator/internal/dgdoverride/override.go `Apply`. Pure.
 */
export function applyDgdOverride(blueprint: unknown, override: unknown, options: { readonly isSchemaChecked?: boolean } = {}): OverrideResult {
  const isSchemaChecked = options.isSchemaChecked ?? true;
  const warnings: OverrideWarning[] = [];
  try {
    const base = requireDgd(blueprint, 'blueprint');
    const partial = requireDgd(override, 'override');
    const baseVersion = base['apiVersion'] as string;
    const overrideVersion = partial['apiVersion'] as string;
    if (baseVersion === DGD_V1ALPHA1 && overrideVersion === DGD_V1BETA1) {
      throw new OverrideFailure(
        `a ${DGD_V1BETA1} override cannot be applied to a ${DGD_V1ALPHA1} blueprint here: the Dynamo 1.6.1 profiler generates ${DGD_V1BETA1} blueprints; use a ${DGD_V1ALPHA1} override for this blueprint`,
      );
    }
    rejectStatusOverride(partial);
    warnings.push(...sanitizeOverrideMetadata(partial));
    rejectNullValues(partial, []);
    const backendFramework = readBackendFramework(base);
    let prepared: JsonObject;
    let semantics: ListSemanticsLookup;
    if (overrideVersion === DGD_V1ALPHA1 && baseVersion === DGD_V1ALPHA1) {
      warnings.push(...prepareAlphaServices(base, partial, backendFramework));
      prepared = partial;
      semantics = alphaListSemantics;
    } else if (overrideVersion === DGD_V1ALPHA1) {
      warnings.push(...prepareAlphaServices(base, partial, backendFramework, { betaBlueprint: true }));
      prepared = translateAlphaOverrideToBeta(partial, warnings);
      semantics = betaListSemantics;
    } else {
      warnings.push(...prepareBetaComponents(base, partial, backendFramework));
      if (isSchemaChecked) rejectUnknownBetaFields(partial);
      prepared = partial;
      semantics = betaListSemantics;
    }
    const merged = mergeValue(base, prepared, [], semantics) as JsonObject;
    merged['apiVersion'] = baseVersion;
    merged['kind'] = DGD_KIND;
    if (baseVersion === DGD_V1BETA1 && isSchemaChecked) validateMergedBetaDgd(merged, overrideVersion);
    return { ok: true, dgd: merged, warnings };
  } catch (error) {
    if (error instanceof OverrideFailure) return { ok: false, error: error.message, warnings };
    throw error;
  }
}

/**
 * The input must be a JSON object of an accepted GVK; returns a deep copy.
 * Source: override.go `validateDGD` ("%s must be %s or %s, got apiVersion %q kind %q").
 */
function requireDgd(value: unknown, role: 'blueprint' | 'override'): JsonObject {
  if (value === null || value === undefined) throw new OverrideFailure(`${role} must not be nil`);
  if (!isObject(value)) throw new OverrideFailure(`${role} must be a JSON object, got ${describe(value)}`);
  const apiVersion = typeof value['apiVersion'] === 'string' ? value['apiVersion'] : '';
  const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
  if (kind !== DGD_KIND || (apiVersion !== DGD_V1ALPHA1 && apiVersion !== DGD_V1BETA1)) {
    throw new OverrideFailure(`${role} must be ${DGD_V1ALPHA1} or ${DGD_V1BETA1}, got apiVersion ${quote(apiVersion)} kind ${quote(kind)}`);
  }
  return structuredClone(value) as JsonObject;
}

/** `status` cannot be overridden. Source: override.go `prepareOverride` ("override status is not supported"). */
function rejectStatusOverride(override: JsonObject): void {
  if ('status' in override) throw new OverrideFailure('override status is not supported');
}

/**
 * Keeps only `metadata.labels` and `metadata.annotations` of the override (in place), drops
 * reserved `nvidia.com/dgd-*` annotations, and reports both.
 * Source: override.go `sanitizeMetadata`; dgdr-reference "Generated DGD overrides" ("Labels and
 * annotations merge, metadata.name selects the final DGD name, and other identity metadata is ignored").
 */
function sanitizeOverrideMetadata(override: JsonObject): OverrideWarning[] {
  if (!('metadata' in override)) return [];
  const metadata = override['metadata'];
  if (!isObject(metadata)) throw new OverrideFailure(`override metadata must be an object, got ${describe(metadata)}`);
  const allowed: JsonObject = {};
  for (const key of ['annotations', 'labels']) {
    const value = metadata[key];
    if (value !== undefined) allowed[key] = value;
  }
  const warnings: OverrideWarning[] = [];
  const annotations = allowed['annotations'];
  if (isObject(annotations)) {
    const reserved = Object.keys(annotations)
      .filter((key) => key.startsWith(DGD_CONVERSION_ANNOTATION_PREFIX))
      .sort();
    for (const key of reserved) delete annotations[key];
    if (Object.keys(annotations).length === 0) delete allowed['annotations'];
    if (reserved.length > 0) warnings.push({ path: 'metadata.annotations', message: `ignored reserved operator keys: ${reserved.join(', ')}` });
  }
  const ignored = Object.keys(metadata)
    .filter((key) => key !== 'annotations' && key !== 'labels')
    .sort();
  if (Object.keys(allowed).length === 0) delete override['metadata'];
  else override['metadata'] = allowed;
  if (ignored.length > 0) warnings.unshift({ path: 'metadata', message: `ignored identity/runtime fields: ${ignored.join(', ')}` });
  return warnings;
}

/**
 * Untyped (preserved-unknown) fields of the DGD schema, where `null` is a value, not a deletion.
 * Source: upstream v1beta1 DGD CRD (`eppConfig.config.customPluginConfig` is
 * `x-kubernetes-preserve-unknown-fields` without a type); override_test.go
 * `TestApplyAllowsNullInPreservedUnknownFields`.
 */
const UNTYPED_FIELD_PATHS: readonly (readonly string[])[] = [['spec', 'components', '[]', 'eppConfig', 'config', 'customPluginConfig']];

/**
 * Refuses JSON `null` anywhere in the override except below an untyped field.
 * Path printed as `spec.components[0].eppConfig.config.apiVersion`.
 * Source: override.go `rejectNullValues` ("override %s must not be null; field deletion is not supported").
 */
function rejectNullValues(value: Json, path: readonly (string | number)[]): void {
  if (value === null) throw new OverrideFailure(`override ${printPath(path)} must not be null; field deletion is not supported`);
  if (Array.isArray(value)) {
    value.forEach((item, index) => rejectNullValues(item, [...path, index]));
  } else if (isObject(value)) {
    for (const key of Object.keys(value).sort()) {
      const child = [...path, key];
      if (isUntypedField(child)) continue;
      rejectNullValues(value[key] ?? null, child);
    }
  }
}

function isUntypedField(path: readonly (string | number)[]): boolean {
  const schemaPath = path.map((segment) => (typeof segment === 'number' ? '[]' : segment));
  return UNTYPED_FIELD_PATHS.some((untyped) => untyped.length === schemaPath.length && untyped.every((segment, i) => segment === schemaPath[i]));
}

/**
 * The blueprint's `spec.backendFramework`; when absent, the backend its workers launch
 * ({@link inferBackendFramework}); "" when neither says. Source: override.go `prepareOverride`
 * (reads `spec.backendFramework`); the inference is ours: the Dynamo 1.6.1 profiler's blueprints
 * set no `backendFramework`, so upstream's comparison refuses every deprecated name for them,
 * while dgdr-reference "Generated DGD overrides" says "A recognized deprecated name may be
 * translated to the corresponding component in the selected topology with a warning".
 */
function readBackendFramework(blueprint: JsonObject): string {
  const spec = blueprint['spec'];
  const value = isObject(spec) ? spec['backendFramework'] : undefined;
  if (value === undefined) return inferBackendFramework(blueprint);
  if (typeof value !== 'string') throw new OverrideFailure(`blueprint spec.backendFramework must be a string, got ${describe(value)}`);
  return value;
}

const WORKER_MODULES: Readonly<Record<string, string>> = { 'dynamo.vllm': 'vllm', 'dynamo.sglang': 'sglang', 'dynamo.trtllm': 'trtllm' };

/**
 * The backend a DGD's workers launch: the `python3 -m dynamo.<vllm|sglang|trtllm>` module named in
 * any container's command or args (v1beta1 `spec.components[].podTemplate.spec.containers[]`,
 * v1alpha1 `spec.services.<n>.extraPodSpec.mainContainer`), when exactly one backend is named;
 * else "". Source: the profiler's blueprints (upstream-notes/profiler.md §3.4: the worker runs
 * `python3 -m dynamo.vllm`). Pure.
 */
export function inferBackendFramework(dgd: unknown): string {
  const spec = isObject(dgd) && isObject(dgd['spec']) ? dgd['spec'] : {};
  const containers: unknown[] = [];
  for (const component of Array.isArray(spec['components']) ? spec['components'] : []) {
    const podTemplate = isObject(component) && isObject(component['podTemplate']) ? component['podTemplate'] : {};
    const podSpec = isObject(podTemplate['spec']) ? podTemplate['spec'] : {};
    if (Array.isArray(podSpec['containers'])) containers.push(...podSpec['containers']);
  }
  for (const service of Object.values(isObject(spec['services']) ? spec['services'] : {})) {
    const extra = isObject(service) && isObject(service['extraPodSpec']) ? service['extraPodSpec'] : {};
    containers.push(extra['mainContainer']);
  }
  const backends = new Set<string>();
  for (const container of containers) {
    if (!isObject(container)) continue;
    for (const token of [...(Array.isArray(container['command']) ? container['command'] : []), ...(Array.isArray(container['args']) ? container['args'] : [])]) {
      const backend = typeof token === 'string' ? WORKER_MODULES[token] : undefined;
      if (backend !== undefined) backends.add(backend);
    }
  }
  return backends.size === 1 ? ([...backends][0] ?? '') : '';
}

/**
 * The deprecated override targets that name a component of the generated DGD through translation,
 * each as the merge engine's warning (`spec.components[name=VllmWorker]: deprecated override
 * target "VllmWorker" translated to "worker"; use "worker" directly. Legacy-name translation will
 * be removed in a future release`; v1alpha1 paths `spec.services.<name>`). The profiler prints
 * these only in its log; the controller reports them on the request. In: the generated (merged)
 * DGD, whose component names the override cannot change, and `spec.overrides.dgd`. Out: the
 * warnings, in override order; none for names that are not deprecated or do not translate.
 * Source: override.go `resolveDGDOverrideTarget`, `deprecatedTargetTranslationWarning`;
 * dgdr-reference "Generated DGD overrides". Pure.
 */
export function findDeprecatedTargetTranslations(generated: unknown, override: unknown): OverrideWarning[] {
  const spec = isObject(generated) && isObject(generated['spec']) ? generated['spec'] : {};
  const baseNames = new Set<string>();
  for (const component of Array.isArray(spec['components']) ? spec['components'] : []) {
    if (isObject(component) && typeof component['name'] === 'string') baseNames.add(component['name']);
  }
  for (const name of Object.keys(isObject(spec['services']) ? spec['services'] : {})) baseNames.add(name);
  let backendFramework: string;
  try {
    backendFramework = isObject(generated) ? readBackendFramework(generated as JsonObject) : '';
  } catch {
    return [];
  }
  const overrideSpec = isObject(override) && isObject(override['spec']) ? override['spec'] : {};
  const targets: { readonly at: string; readonly name: string }[] = [];
  for (const component of Array.isArray(overrideSpec['components']) ? overrideSpec['components'] : []) {
    if (isObject(component) && typeof component['name'] === 'string') targets.push({ at: `spec.components[name=${component['name']}]`, name: component['name'] });
  }
  for (const name of Object.keys(isObject(overrideSpec['services']) ? overrideSpec['services'] : {}).sort()) targets.push({ at: `spec.services.${name}`, name });
  const warnings: OverrideWarning[] = [];
  for (const { at, name } of targets) {
    if (baseNames.has(name) || !Object.hasOwn(DEPRECATED_OVERRIDE_TARGETS, name)) continue;
    try {
      const resolved = resolveOverrideTarget(baseNames, backendFramework, name);
      if (resolved.translated) warnings.push(deprecatedTargetWarning(at, name, resolved.name));
    } catch (error) {
      if (!(error instanceof OverrideFailure)) throw error;
    }
  }
  return warnings;
}

/** A deprecated component/service name and the names it may translate to. */
interface DeprecatedTarget {
  readonly backendFramework: string;
  readonly candidates: readonly string[];
}

/**
 * Deprecated override target names, per backend. Source: override.go `deprecatedDGDOverrideTargets`.
 */
export const DEPRECATED_OVERRIDE_TARGETS: Readonly<Record<string, DeprecatedTarget>> = {
  VllmWorker: { backendFramework: 'vllm', candidates: ['worker'] },
  VllmPrefillWorker: { backendFramework: 'vllm', candidates: ['prefill'] },
  VllmDecodeWorker: { backendFramework: 'vllm', candidates: ['worker', 'decode'] },
  TRTLLMPrefillWorker: { backendFramework: 'trtllm', candidates: ['prefill'] },
  TRTLLMDecodeWorker: { backendFramework: 'trtllm', candidates: ['decode'] },
  SGLangPrefillWorker: { backendFramework: 'sglang', candidates: ['prefill'] },
  SGLangDecodeWorker: { backendFramework: 'sglang', candidates: ['worker', 'decode'] },
  SglangPrefillWorker: { backendFramework: 'sglang', candidates: ['prefill'] },
  SglangDecodeWorker: { backendFramework: 'sglang', candidates: ['worker', 'decode'] },
};

/**
 * Resolves an override target to a blueprint component/service name.
 * Out: `{name, translated}`. Failures: unknown target, cross-backend or ambiguous deprecated name.
 * Source: override.go `resolveDGDOverrideTarget`; dgdr-reference "Generated DGD overrides"
 * ("A recognized deprecated name may be translated to the corresponding component in the selected topology with a warning").
 */
function resolveOverrideTarget(baseNames: ReadonlySet<string>, backendFramework: string, name: string): { readonly name: string; readonly translated: boolean } {
  if (baseNames.has(name)) return { name, translated: false };
  const deprecated = Object.hasOwn(DEPRECATED_OVERRIDE_TARGETS, name) ? DEPRECATED_OVERRIDE_TARGETS[name] : undefined;
  if (deprecated === undefined) throw new OverrideFailure(`override target ${quote(name)} is not present in the generated blueprint`);
  if (deprecated.backendFramework !== backendFramework) {
    throw new OverrideFailure(
      `deprecated override target ${quote(name)} belongs to backend ${quote(deprecated.backendFramework)} and cannot be translated for generated backend ${quote(backendFramework)}`,
    );
  }
  const matches = deprecated.candidates.filter((candidate) => baseNames.has(candidate));
  if (matches.length === 0) {
    throw new OverrideFailure(
      `deprecated override target ${quote(name)} cannot be translated because the generated blueprint contains none of the compatible targets: ${deprecated.candidates.join(', ')}`,
    );
  }
  if (matches.length > 1) {
    throw new OverrideFailure(
      `deprecated override target ${quote(name)} cannot be translated unambiguously because the generated blueprint contains multiple compatible targets: ${matches.join(', ')}`,
    );
  }
  return { name: matches[0] as string, translated: true };
}

/** Source: override.go `deprecatedTargetTranslationWarning`. */
function deprecatedTargetWarning(path: string, oldName: string, newName: string): OverrideWarning {
  return {
    path,
    message: `deprecated override target ${quote(oldName)} translated to ${quote(newName)}; use ${quote(newName)} directly. Legacy-name translation will be removed in a future release`,
  };
}

/**
 * v1beta1 override: resolves every `spec.components[]` entry against the blueprint, renames
 * translated entries and materialises `$patch: {args: append}` (in place).
 * Source: override.go `prepareBetaComponents`.
 */
function prepareBetaComponents(blueprint: JsonObject, override: JsonObject, backendFramework: string): OverrideWarning[] {
  const overrideSpec = override['spec'];
  if (overrideSpec === undefined) return [];
  if (!isObject(overrideSpec)) throw new OverrideFailure(`override spec must be an object, got ${describe(overrideSpec)}`);
  const overrideComponents = overrideSpec['components'];
  if (overrideComponents === undefined) return [];
  if (!Array.isArray(overrideComponents)) throw new OverrideFailure(`beta override spec.components must be a list, got ${describe(overrideComponents)}`);
  const baseSpec = blueprint['spec'];
  const baseComponents = isObject(baseSpec) ? (baseSpec['components'] ?? []) : [];
  if (!Array.isArray(baseComponents)) throw new OverrideFailure(`beta blueprint spec.components must be a list, got ${describe(baseComponents)}`);
  const baseByName = new Map<string, JsonObject>();
  baseComponents.forEach((value, index) => {
    if (!isObject(value)) throw new OverrideFailure(`beta blueprint spec.components[${index}] must be an object, got ${describe(value)}`);
    const name = value['name'];
    if (typeof name !== 'string' || name === '') throw new OverrideFailure(`beta blueprint spec.components[${index}].name must be a non-empty string`);
    baseByName.set(name, value);
  });
  const baseNames = new Set(baseByName.keys());
  const resolvedSources = new Map<string, string>();
  const warnings: OverrideWarning[] = [];
  overrideComponents.forEach((value, index) => {
    if (!isObject(value)) throw new OverrideFailure(`beta override spec.components[${index}] must be an object, got ${describe(value)}`);
    const name = value['name'];
    if (typeof name !== 'string' || name === '') throw new OverrideFailure(`beta override spec.components[${index}].name must be a non-empty string`);
    const at = `spec.components[name=${name}]`;
    const resolved = withPrefix(at, () => resolveOverrideTarget(baseNames, backendFramework, name));
    const previous = resolvedSources.get(resolved.name);
    if (previous !== undefined) {
      throw new OverrideFailure(`${at}: override targets ${quote(previous)} and ${quote(name)} both resolve to generated component ${quote(resolved.name)}`);
    }
    if (resolved.translated) {
      value['name'] = resolved.name;
      warnings.push(deprecatedTargetWarning(at, name, resolved.name));
    }
    materializeBetaArgsAppend(value, baseByName.get(resolved.name) ?? {}, index);
    resolvedSources.set(resolved.name, name);
  });
  return warnings;
}

/**
 * `$patch: {args: append}` on an override container: the map must be exactly `{args: append}`,
 * the container named, present in the blueprint with explicit `args`, and the override args a
 * non-empty list of non-empty strings. The container's args become base + override and `$patch`
 * is removed (in place).
 * Source: override.go `materializeBetaContainerArgsAppends`; dgdr-reference "Generated DGD
 * overrides" ("The only supported modifier is args: append, and its args list must contain at
 * least one non-empty string. The target container and its args list must already be present in
 * the generated blueprint").
 */
function materializeBetaArgsAppend(component: JsonObject, baseComponent: JsonObject, componentIndex: number): void {
  const containers = nested(component, ['podTemplate', 'spec', 'containers']);
  if (containers === undefined) return;
  const at = `beta override spec.components[${componentIndex}].podTemplate.spec.containers`;
  if (!Array.isArray(containers)) throw new OverrideFailure(`${at} must be a list, got ${describe(containers)}`);
  containers.forEach((value, containerIndex) => {
    if (!isObject(value)) throw new OverrideFailure(`${at}[${containerIndex}] must be an object, got ${describe(value)}`);
    if (!('$patch' in value)) return;
    const modifier = value['$patch'];
    if (!isObject(modifier) || Object.keys(modifier).length !== 1 || modifier['args'] !== 'append') {
      throw new OverrideFailure(`${at}[${containerIndex}].$patch only supports args: append`);
    }
    const name = value['name'];
    if (typeof name !== 'string' || name === '') throw new OverrideFailure(`${at}[${containerIndex}].name must be a non-empty string when $patch is used`);
    const baseContainer = findBlueprintContainer(baseComponent, name, componentIndex);
    if (baseContainer === undefined) throw new OverrideFailure(`${at}[${containerIndex}].name ${quote(name)} is not present in the generated blueprint`);
    const args = value['args'];
    if (args !== undefined && !isStringList(args)) throw new OverrideFailure(`${at}[${containerIndex}].args must be a list of strings`);
    if (args === undefined || args.length === 0) throw new OverrideFailure(`${at}[${containerIndex}].args must be non-empty when $patch args is append`);
    const emptyIndex = args.findIndex((arg) => arg === '');
    if (emptyIndex >= 0) throw new OverrideFailure(`${at}[${containerIndex}].args[${emptyIndex}] must be non-empty when $patch args is append`);
    const baseArgs = baseContainer['args'];
    if (baseArgs === undefined) {
      throw new OverrideFailure(`beta blueprint spec.components[${componentIndex}] container ${quote(name)} must define args explicitly before they can be appended`);
    }
    if (!isStringList(baseArgs)) throw new OverrideFailure(`beta blueprint spec.components[${componentIndex}] container ${quote(name)} args must be a list of strings`);
    delete value['$patch'];
    value['args'] = [...baseArgs, ...args];
  });
}

function findBlueprintContainer(component: JsonObject, name: string, componentIndex: number): JsonObject | undefined {
  const containers = nested(component, ['podTemplate', 'spec', 'containers']);
  if (containers === undefined) return undefined;
  if (!Array.isArray(containers)) throw new OverrideFailure(`beta blueprint spec.components[${componentIndex}].podTemplate.spec.containers must be a list`);
  for (const [index, value] of containers.entries()) {
    if (!isObject(value)) throw new OverrideFailure(`beta blueprint spec.components[${componentIndex}].podTemplate.spec.containers[${index}] must be an object, got ${describe(value)}`);
    if (value['name'] === name) return value;
  }
  return undefined;
}

/**
 * v1alpha1 override: resolves every `spec.services` key against the blueprint (services of a
 * v1alpha1 blueprint, components of a v1beta1 one), renames translated entries, and appends
 * `extraPodSpec.mainContainer.args` of services other than `Frontend`/`Planner` to the
 * generated args (in place).
 * Source: override.go `prepareAlphaServices`, `appendAlphaWorkerArgs`; dgdr-reference "Generated
 * DGD overrides" ("Existing nvidia.com/v1alpha1 overrides ... merge services by name, and append
 * extraPodSpec.mainContainer.args to generated worker arguments").
 */
function prepareAlphaServices(blueprint: JsonObject, override: JsonObject, backendFramework: string, options: { readonly betaBlueprint?: boolean } = {}): OverrideWarning[] {
  const overrideSpec = override['spec'];
  if (overrideSpec === undefined) return [];
  if (!isObject(overrideSpec)) throw new OverrideFailure(`override spec must be an object, got ${describe(overrideSpec)}`);
  const services = overrideSpec['services'];
  if (services === undefined) return [];
  if (!isObject(services)) throw new OverrideFailure(`alpha override spec.services must be an object, got ${describe(services)}`);
  const baseArgsByName = options.betaBlueprint === true ? betaMainArgsByComponent(blueprint) : alphaMainArgsByService(blueprint);
  const baseNames = new Set(baseArgsByName.keys());
  const resolved: JsonObject = {};
  const resolvedSources = new Map<string, string>();
  const warnings: OverrideWarning[] = [];
  for (const name of Object.keys(services).sort()) {
    const at = `spec.services.${name}`;
    const target = withPrefix(at, () => resolveOverrideTarget(baseNames, backendFramework, name));
    const previous = resolvedSources.get(target.name);
    if (previous !== undefined) {
      throw new OverrideFailure(`${at}: override targets ${quote(previous)} and ${quote(name)} both resolve to generated service ${quote(target.name)}`);
    }
    const service = services[name] ?? null;
    if (target.translated) warnings.push(deprecatedTargetWarning(at, name, target.name));
    if (target.name !== 'Frontend' && target.name !== 'Planner') {
      withPrefix(`${at}.extraPodSpec.mainContainer.args`, () => appendAlphaWorkerArgs(baseArgsByName.get(target.name), service));
    }
    resolved[target.name] = service;
    resolvedSources.set(target.name, name);
  }
  overrideSpec['services'] = resolved;
  return warnings;
}

/** Source: override.go `appendAlphaWorkerArgs` (base args + override args, in place). */
function appendAlphaWorkerArgs(baseArgs: Json | undefined, service: Json): void {
  if (!isObject(service)) throw new OverrideFailure(`override service must be an object, got ${describe(service)}`);
  const main = nested(service, ['extraPodSpec', 'mainContainer']);
  if (!isObject(main) || main['args'] === undefined) return;
  const args = main['args'];
  if (!isStringList(args)) throw new OverrideFailure('must be a list of strings');
  if (baseArgs !== undefined && !isStringList(baseArgs)) throw new OverrideFailure('blueprint value must be a list of strings');
  main['args'] = [...(baseArgs ?? []), ...args];
}

/** Service name -> `extraPodSpec.mainContainer.args` (or undefined) of a v1alpha1 blueprint. */
function alphaMainArgsByService(blueprint: JsonObject): Map<string, Json | undefined> {
  const services = nested(blueprint, ['spec', 'services']);
  if (services !== undefined && !isObject(services)) throw new OverrideFailure(`alpha blueprint spec.services must be an object, got ${describe(services)}`);
  const out = new Map<string, Json | undefined>();
  for (const [name, service] of Object.entries(services ?? {})) {
    out.set(name, isObject(service) ? nested(service, ['extraPodSpec', 'mainContainer', 'args']) : undefined);
  }
  return out;
}

/** Component name -> args of its `main` container (or undefined) of a v1beta1 blueprint (the v1alpha1 `mainContainer`). */
function betaMainArgsByComponent(blueprint: JsonObject): Map<string, Json | undefined> {
  const components = nested(blueprint, ['spec', 'components']);
  const out = new Map<string, Json | undefined>();
  if (!Array.isArray(components)) return out;
  for (const component of components) {
    if (!isObject(component) || typeof component['name'] !== 'string') continue;
    const containers = nested(component, ['podTemplate', 'spec', 'containers']);
    const main = Array.isArray(containers) ? containers.find((c) => isObject(c) && c['name'] === MAIN_CONTAINER_NAME) : undefined;
    out.set(component['name'], isObject(main) ? main['args'] : undefined);
  }
  return out;
}

/**
 * Turns a prepared v1alpha1 override into the equivalent sparse v1beta1 override, service by
 * service, with the project's v1alpha1 -> v1beta1 conversion (shared/api/dgd-v1alpha1.ts), then
 * removes what that conversion synthesises for a complete object (an empty `main` container,
 * an empty pod template) so the sparse override only sets what the user set. Upstream converts
 * the blueprint to v1alpha1 instead; merging in v1beta1 keeps v1beta1-only blueprint fields
 * (upstream `TestApplyVersionMatrix` "beta blueprint with alpha override" asserts they survive).
 * Conversion notes become warnings. Source: override.go `Apply` (cross-version path).
 */
function translateAlphaOverrideToBeta(override: JsonObject, warnings: OverrideWarning[]): JsonObject {
  const spec = isObject(override['spec']) ? override['spec'] : {};
  const alpha = {
    apiVersion: DGD_V1ALPHA1,
    kind: DGD_KIND,
    metadata: { name: 'override' },
    spec: { ...spec, services: isObject(spec['services']) ? spec['services'] : {} },
  };
  const converted = convertDgdV1Alpha1(alpha);
  if (!converted.ok) {
    throw new OverrideFailure(`validate ${DGD_V1ALPHA1} override: ${converted.issues.map(formatIssue).join('; ')}`);
  }
  for (const note of converted.notes) warnings.push({ path: '', message: note });
  const convertedSpec = converted.object['spec'] as JsonObject;
  const components = (convertedSpec['components'] as Json[]).map((component) => pruneSynthesizedPodTemplate(component as JsonObject));
  const out: JsonObject = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, spec: { ...convertedSpec, components } };
  if (override['metadata'] !== undefined) out['metadata'] = override['metadata'];
  if (!isObject(override['spec']) || override['spec']['services'] === undefined) delete (out['spec'] as JsonObject)['components'];
  return out;
}

function pruneSynthesizedPodTemplate(component: JsonObject): JsonObject {
  const podTemplate = component['podTemplate'];
  if (!isObject(podTemplate)) return component;
  const podSpec = podTemplate['spec'];
  if (isObject(podSpec) && Array.isArray(podSpec['containers'])) {
    const containers = podSpec['containers'].filter((c) => !(isObject(c) && Object.keys(c).length === 1 && c['name'] === MAIN_CONTAINER_NAME));
    if (containers.length === 0) delete podSpec['containers'];
    else podSpec['containers'] = containers;
    if (Object.keys(podSpec).length === 0) delete podTemplate['spec'];
  }
  if (Object.keys(podTemplate).length === 0) delete component['podTemplate'];
  return component;
}

/**
 * The override may only name fields the v1beta1 DGD schema defines (top level, `spec`, each
 * component). Source: override.go `Apply` (typed conversion of the override rejects unknown
 * fields; override_test.go "unknown beta field"); the field sets come from our DGD schema
 * (shared/api/dgd.ts).
 */
function rejectUnknownBetaFields(override: JsonObject): void {
  rejectUnknownKeys(override, ['apiVersion', 'kind', 'metadata', 'spec'], '');
  const spec = override['spec'];
  if (spec === undefined) return;
  if (!isObject(spec)) throw new OverrideFailure(`validate ${DGD_V1BETA1} override: spec must be an object`);
  rejectUnknownKeys(spec, Object.keys(DgdSpecSchema.shape), 'spec');
  const components = spec['components'];
  if (!Array.isArray(components)) return;
  components.forEach((component, index) => {
    if (isObject(component)) rejectUnknownKeys(component, Object.keys(ComponentSchema.shape), `spec.components[${index}]`);
  });
}

function rejectUnknownKeys(object: JsonObject, known: readonly string[], at: string): void {
  const unknown = Object.keys(object).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    const field = at === '' ? (unknown[0] as string) : `${at}.${unknown[0] as string}`;
    throw new OverrideFailure(`validate ${DGD_V1BETA1} override: ${field}: field not declared in schema`);
  }
}

/**
 * The merged v1beta1 DGD must still satisfy the DGD schema (structural validation; CEL and
 * admission rules stay with the API server). Source: override.go `Apply` ("Structural schema
 * validation runs here").
 */
function validateMergedBetaDgd(merged: JsonObject, overrideVersion: string): void {
  const parsed = DgdSpecSchema.safeParse(merged['spec'], { reportInput: true });
  if (parsed.success) return;
  const issues = fromZodIssues(parsed.error.issues).map((issue) => formatIssue({ ...issue, path: issue.path === '' ? 'spec' : `spec.${issue.path}` }));
  throw new OverrideFailure(`merge ${overrideVersion} override: ${issues.join('; ')}`);
}

// ---------------------------------------------------------------------------------------------
// Server-side-apply style merge
// ---------------------------------------------------------------------------------------------

/** How a list merges: by key fields, as a set (union), or atomically (replaced). */
export type ListSemantics = { readonly type: 'map'; readonly keys: readonly string[] } | { readonly type: 'set' } | { readonly type: 'atomic' };

type ListSemanticsLookup = (schemaPath: readonly string[]) => ListSemantics;

const ATOMIC: ListSemantics = { type: 'atomic' };
const byKeys = (...keys: string[]): ListSemantics => ({ type: 'map', keys });

/**
 * corev1.PodSpec lists with `+listType=map` markers (every other PodSpec list, e.g.
 * `tolerations`, `readinessGates`, is atomic). Source: k8s.io/api/core/v1/types.go markers.
 */
const POD_SPEC_LISTS: Readonly<Record<string, ListSemantics>> = {
  containers: byKeys('name'),
  initContainers: byKeys('name'),
  ephemeralContainers: byKeys('name'),
  volumes: byKeys('name'),
  imagePullSecrets: byKeys('name'),
  hostAliases: byKeys('ip'),
  topologySpreadConstraints: byKeys('topologyKey', 'whenUnsatisfiable'),
  resourceClaims: byKeys('name'),
  schedulingGates: byKeys('name'),
};

/**
 * corev1.Container lists with `+listType=map` markers (`args`, `command`, `envFrom`,
 * `resizePolicy` are atomic). Source: k8s.io/api/core/v1/types.go markers.
 */
const CONTAINER_LISTS: Readonly<Record<string, ListSemantics>> = {
  env: byKeys('name'),
  ports: byKeys('containerPort', 'protocol'),
  volumeMounts: byKeys('mountPath'),
  volumeDevices: byKeys('devicePath'),
};

const CONTAINER_LIST_FIELDS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** Semantics of a list inside a corev1.PodSpec, given the path below the PodSpec. */
function podSpecListSemantics(below: readonly string[]): ListSemantics {
  const [field, item, ...rest] = below;
  if (field === undefined) return ATOMIC;
  if (rest.length === 0 && item === undefined) return POD_SPEC_LISTS[field] ?? ATOMIC;
  if (CONTAINER_LIST_FIELDS.has(field) && item === '[]') return containerListSemantics(rest);
  return ATOMIC;
}

/** Semantics of a list inside a corev1.Container, given the path below the Container. */
function containerListSemantics(below: readonly string[]): ListSemantics {
  if (below.length === 1) return CONTAINER_LISTS[below[0] as string] ?? ATOMIC;
  if (below.length === 2 && below[0] === 'resources' && below[1] === 'claims') return byKeys('name');
  return ATOMIC;
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => segment === path[i]);
}

/**
 * List semantics of the v1beta1 DGD schema: `spec.components` and `roles` by `name` (our CRD's
 * `x-kubernetes-list-map-keys`), `experimental.gpuMemoryService.extraClientContainers` a set
 * (upstream `TestApplyUsesStructuralSetSemantics`), pod templates as corev1, all else atomic
 * (server-side apply's default for a list without markers; graph-level `spec.env` is atomic per
 * dgdr-reference "Generated DGD overrides").
 */
function betaListSemantics(path: readonly string[]): ListSemantics {
  if (path.length === 2 && path[0] === 'spec' && path[1] === 'components') return byKeys('name');
  if (!startsWith(path, ['spec', 'components', '[]'])) return ATOMIC;
  const inComponent = path.slice(3);
  if (inComponent.length === 1 && inComponent[0] === 'roles') return byKeys('name');
  if (startsWith(inComponent, ['experimental', 'gpuMemoryService', 'extraClientContainers']) && inComponent.length === 3) return { type: 'set' };
  if (startsWith(inComponent, ['podTemplate', 'spec'])) return podSpecListSemantics(inComponent.slice(2));
  if (startsWith(inComponent, ['roles', '[]', 'podTemplate', 'spec'])) return podSpecListSemantics(inComponent.slice(4));
  return ATOMIC;
}

/**
 * List semantics of the v1alpha1 DGD schema: `spec.services` is a map (merged by key as an
 * object), `extraPodSpec` is a corev1.PodSpec and `extraPodSpec.mainContainer` a corev1.Container;
 * all else atomic. Source: upstream api/v1alpha1 (`ExtraPodSpec` embeds `corev1.PodSpec` and
 * `MainContainer *corev1.Container`); override_test.go `TestApplyVersionMatrix` (env merges by name).
 */
function alphaListSemantics(path: readonly string[]): ListSemantics {
  if (!startsWith(path, ['spec', 'services']) || path.length < 4) return ATOMIC;
  const inService = path.slice(3);
  if (startsWith(inService, ['extraPodSpec', 'mainContainer'])) return containerListSemantics(inService.slice(2));
  if (startsWith(inService, ['extraPodSpec'])) return podSpecListSemantics(inService.slice(1));
  return ATOMIC;
}

/**
 * Merges `override` into `base` (new values; inputs untouched): objects field by field,
 * scalars and atomic lists replaced, map lists by key (base order kept, new items appended),
 * set lists unioned. `schemaPath` names list items `[]` and map values by key.
 * Failures: an override item of a single-key map list without its key (as a typed merge refuses
 * it) throws the module's internal failure, which {@link applyDgdOverride} reports.
 * Source: sigs.k8s.io/structured-merge-diff `typed.Merge` as used by override.go. Pure.
 */
export function mergeValue(base: Json | undefined, override: Json, schemaPath: readonly string[], semanticsAt: ListSemanticsLookup): Json {
  if (isObject(override)) {
    if (!isObject(base)) return structuredClone(override);
    const out: JsonObject = structuredClone(base);
    for (const [key, value] of Object.entries(override)) out[key] = mergeValue(base[key], value, [...schemaPath, key], semanticsAt);
    return out;
  }
  if (Array.isArray(override)) {
    const semantics = semanticsAt(schemaPath);
    if (!Array.isArray(base) || semantics.type === 'atomic') return structuredClone(override);
    if (semantics.type === 'set') {
      const out = structuredClone(base);
      for (const item of override) if (!out.some((existing) => sameJson(existing, item))) out.push(structuredClone(item));
      return out;
    }
    const itemPath = [...schemaPath, '[]'];
    const out = structuredClone(base);
    for (const [position, item] of override.entries()) {
      const key = semantics.keys[0] as string;
      if (semantics.keys.length === 1 && (!isObject(item) || item[key] === undefined)) {
        throw new OverrideFailure(`override ${printSchemaPath(schemaPath)}[${position}]: list item must set its merge key ${quote(key)}`);
      }
      const index = out.findIndex((existing) => sameKeys(existing, item, semantics.keys));
      if (index < 0) out.push(mergeValue(undefined, item, itemPath, semanticsAt));
      else out[index] = mergeValue(out[index], item, itemPath, semanticsAt);
    }
    return out;
  }
  return override;
}

function sameKeys(a: Json | undefined, b: Json, keys: readonly string[]): boolean {
  if (!isObject(a) || !isObject(b)) return false;
  return keys.every((key) => sameJson(a[key], b[key]));
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringList(value: Json | undefined): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function nested(object: JsonObject, path: readonly string[]): Json | undefined {
  let current: Json | undefined = object;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

function withPrefix<T>(prefix: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof OverrideFailure) throw new OverrideFailure(`${prefix}: ${error.message}`);
    throw error;
  }
}

function printSchemaPath(path: readonly string[]): string {
  return path.join('.').replaceAll('.[]', '[]');
}

function printPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  return out;
}

/** Go's `%q` for the strings these messages quote. */
function quote(value: string): string {
  return JSON.stringify(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
