/**
 * DGD validation: every admission rule of the reference, in one pure decision.
 *
 * Pipeline position: after the CRD schema (and its CEL rules) and after defaulting
 * (./defaulting.ts), exactly as the API server calls the validating webhook
 * (upstream-notes/dgd.md §3 "Pipeline order"). v1alpha1 objects are validated through
 * conversion to v1beta1, and issues and warnings are reported at the paths users wrote
 * (`spec.services[<name>]`, `componentType`).
 *
 * Source: ../shared/reference/dgd-reference.txt; ../shared/upstream-notes/dgd.md §3;
 * upstream-notes/lpx.md §1.2-§1.3.
 * @module
 */
import { ANNOTATION_GROVE_UPDATE_STRATEGY, DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, DgdSchema, hasPrototypeKeys, isExactDgd, parseDgd, type Component, type Dgd, type FieldIssue } from '../../api/index.js';
import { resolveUpdateStrategy } from '../dgd/availability.js';
import { isObject, type AdmissionConfig, type AdmissionContext, type ValidationResult } from './common.js';
import { validateComponentImmutableFields, validateComponentTypeImmutable, validateMainContainer, validateMultinode, validateTypeSpecificFields } from './components.js';
import {
  validateBackendFrameworkImmutable,
  validateComponentSetImmutable,
  validateComponentsPresent,
  validateGraphImmutableFields,
  validateGroveNameBudget,
  validateGroveWorkloadProvider,
  validateRestart,
  validateUpdateStrategyAnnotation,
} from './graph.js';
import { findLpxPair, legacyLocalPartitionsWarnings, validateLpxComponent, validateLpxComposition, validateLpxGate, validateLpxGraph } from './lpx.js';
import { minAvailableDeprecationWarnings, validateMinAvailableFitsReplicas, validateMinAvailableForms, validateMinAvailableImmutable } from './min-available.js';
import { validateMetadataAnnotations, validateMetadataAnnotationsUpdate, validateRuntimeVersionOverrideRequired } from './metadata-annotations.js';
import { validateProviderOverrides } from './provider-override.js';
import { validateScalingAdapterReplicas } from './scaling-adapter.js';
import { completeOutageWarnings, validateRolloutBudget } from './rollout-budget.js';
import { validateStorableSize } from './storable-size.js';
import { validateKvTransferPolicyTopology, validateTopologyConstraints, type ClusterTopologies } from './topology.js';
import { DEFAULT_RENDER_CONFIG } from '../dgd/render.js';

/**
 * Validates a DynamoGraphDeployment of either served version.
 * In: `object` (the defaulted object of the request), `oldObject` (the stored object on UPDATE,
 * undefined on CREATE), `config.lpxEnabled`. Out: every field issue (the request is denied when
 * there is one) and every warning, paths as Kubernetes prints them. Structural problems (the zod
 * schema, standing in for the CRD schema) are returned alone; the rules run on a parsed object.
 * Pod templates are left to the CRD schema the API server applies first (see
 * {@link parseKeepingPodTemplates}); only what the rules read in them is checked here.
 * A terminating object (UPDATE with `metadata.deletionTimestamp`) is checked for metadata rules
 * only, so finalizers can always be removed.
 * Failures: see the rules in ./graph.ts, ./components.ts, ./provider-override.ts,
 * ./min-available.ts, ./rollout-budget.ts and ./lpx.ts. Never throws.
 * `request.isFreeOfPrototypeKeys` true says the caller has already walked `object` and
 * `oldObject` and found no `__proto__` key (the webhook learns it in the walk that bounds the
 * body's depth), so that walk is not repeated here; absent, it is done here.
 * Source: dgd-reference; upstream-notes/dgd.md §3. Pure.
 */
export function validateDgd(
  object: unknown,
  oldObject: unknown,
  config: AdmissionConfig,
  request: { readonly username?: string | undefined; readonly objectBytes?: number | undefined; readonly clusterTopologies?: ClusterTopologies | undefined; readonly isFreeOfPrototypeKeys?: boolean } = {},
): ValidationResult {
  const isUpdate = oldObject !== undefined && oldObject !== null;
  // A key JavaScript takes as a prototype goes straight to parseDgd, which refuses it exactly as
  // reconcile does (one rule for reserved keys; a fast path that skipped it stored a DGD reconcile
  // then reported InvalidSpec, issue 20). Otherwise the common case, an object already in the
  // schema's output form, is read as it is (isExactDgd), and the rest is parsed.
  const hasReservedKeys = request.isFreeOfPrototypeKeys === true ? () => false : hasPrototypeKeys;
  const dgd = hasReservedKeys(object) ? undefined : isExactDgd(object) ? object : parseKeepingPodTemplates(object);
  if (dgd !== undefined) {
    const stored = isUpdate ? (readStored(oldObject, hasReservedKeys) ?? parseKeepingPodTemplates(oldObject) ?? parsedOrUndefined(oldObject)) : undefined;
    try {
      return validateParsedDgd(dgd, stored, isUpdate, config, request.username, request.objectBytes, request.clusterTopologies);
    } catch {
      // A pod template the rules could not read: parse everything, so its schema issue is reported.
    }
  }
  const parsed = parseDgd(object);
  if (!parsed.ok) return { issues: parsed.issues, warnings: [] };
  const result = validateParsedDgd(parsed.dgd, isUpdate ? parsedOrUndefined(oldObject) : undefined, isUpdate, config, request.username, request.objectBytes, request.clusterTopologies);
  return parsed.sourceVersion === DGD_V1ALPHA1 ? toV1Alpha1Paths(result, parsed.dgd) : result;
}

/** The stored object as it is, when it is already in the schema's output form. Pure. */
function readStored(object: unknown, hasReservedKeys: (value: unknown) => boolean): Dgd | undefined {
  return !hasReservedKeys(object) && isExactDgd(object) ? object : undefined;
}

function parsedOrUndefined(object: unknown): Dgd | undefined {
  const parsed = parseDgd(object);
  return parsed.ok ? parsed.dgd : undefined;
}

/**
 * A v1beta1 DGD parsed with its pod templates kept as they are, or undefined when it is not a
 * v1beta1 DGD outline or the rest does not parse (the caller then parses it whole, for the issues).
 *
 * Why: the pod templates are the bulk of a DGD and of its parsing cost, the schema passes them
 * through unchanged (loose objects, no defaults), and the API server has already checked them
 * against our CRD (generated from the same zod schema) before any validating webhook runs, on the
 * new object and the stored one alike. So everything else is parsed as usual (defaults, pruning,
 * the CEL-mirrored list rules) and the templates are put back as written; admission reads only
 * their container names, images and scheduler fields. A rule that cannot read a template makes
 * {@link validateDgd} parse the whole object instead. Pure.
 */
function parseKeepingPodTemplates(value: unknown): Dgd | undefined {
  const outline = dgdOutline(value);
  if (outline === undefined) return undefined;
  const { components } = outline;
  const withoutTemplates = components.map((c) => {
    const { podTemplate: _template, ...rest } = c;
    return Array.isArray(rest['roles']) ? { ...rest, roles: (rest['roles'] as unknown[]).map((r) => (isObject(r) ? { ...r, podTemplate: undefined } : r)) } : rest;
  });
  const parsed = DgdSchema.safeParse({ ...outline.object, spec: { ...outline.spec, components: withoutTemplates } });
  if (!parsed.success) return undefined;
  parsed.data.spec.components.forEach((component, i) => {
    const source = components[i] as Record<string, unknown>;
    if (source['podTemplate'] !== undefined) component.podTemplate = source['podTemplate'] as Component['podTemplate'];
    const roles = source['roles'];
    component.roles?.forEach((role, j) => {
      const template = Array.isArray(roles) ? (roles[j] as Record<string, unknown> | undefined)?.['podTemplate'] : undefined;
      if (template !== undefined) role.podTemplate = template as Component['podTemplate'];
    });
  });
  return parsed.data;
}

function dgdOutline(value: unknown): { object: Record<string, unknown>; spec: Record<string, unknown>; components: Record<string, unknown>[] } | undefined {
  if (!isObject(value) || value['apiVersion'] !== DGD_V1BETA1 || value['kind'] !== DGD_KIND) return undefined;
  const spec = value['spec'];
  if (!isObject(spec)) return undefined;
  const components = spec['components'];
  if (!Array.isArray(components) || !components.every(isObject)) return undefined;
  return { object: value, spec, components: components as Record<string, unknown>[] };
}

/**
 * Validates a parsed v1beta1 DGD against the stored one. `isUpdate` with `old` undefined means
 * the stored object no longer parses: create-only rules are skipped, comparisons are not made.
 * Out and failures as {@link validateDgd}. Pure.
 */
export function validateParsedDgd(dgd: Dgd, old: Dgd | undefined, isUpdate: boolean, config: AdmissionConfig, username?: string, objectBytes?: number, clusterTopologies?: ClusterTopologies): ValidationResult {
  if (isUpdate && dgd.metadata.deletionTimestamp !== undefined) {
    const isAnnotationChanged = old?.metadata.annotations?.[ANNOTATION_GROVE_UPDATE_STRATEGY] !== dgd.metadata.annotations?.[ANNOTATION_GROVE_UPDATE_STRATEGY];
    return { issues: isAnnotationChanged ? validateUpdateStrategyAnnotation({ dgd }) : [], warnings: [] };
  }
  const strategy = resolveUpdateStrategy(dgd);
  const oldStrategy = old === undefined ? undefined : resolveUpdateStrategy(old);
  const ctx: AdmissionContext = {
    dgd,
    old,
    isUpdate,
    config,
    strategy: strategy.ok ? strategy.strategy : undefined,
    isStrategyKnown: strategy.ok,
    oldStrategy: oldStrategy?.ok === true ? oldStrategy.strategy : undefined,
    oldComponents: new Map<string, Component>((old?.spec.components ?? []).map((c) => [c.name, c])),
    lpxPair: findLpxPair(dgd),
    username,
    clusterTopologies,
  };

  const backend = validateBackendFrameworkImmutable(ctx);
  // Each rule's issues are appended in turn (most rules find none: nothing is copied for them).
  const issues: FieldIssue[] = [];
  append(issues, validateUpdateStrategyAnnotation(ctx));
  append(issues, validateMetadataAnnotations(ctx));
  append(issues, validateMetadataAnnotationsUpdate(ctx));
  append(issues, validateGroveWorkloadProvider(ctx));
  append(issues, validateComponentsPresent(ctx));
  append(issues, validateGroveNameBudget(ctx));
  append(issues, validateComponentSetImmutable(ctx));
  append(issues, backend.issues);
  append(issues, validateGraphImmutableFields(ctx));
  append(issues, validateRestart(ctx));
  append(issues, validateLpxGate(ctx));
  append(issues, validateLpxComposition(ctx));
  append(issues, validateLpxGraph(ctx));
  append(issues, validateScalingAdapterReplicas(ctx));
  const components = dgd.spec.components;
  for (let index = 0; index < components.length; index += 1) {
    const component = components[index] as Component;
    append(issues, validateComponentTypeImmutable(ctx, component, index));
    append(issues, validateMultinode(ctx, component, index));
    append(issues, validateTypeSpecificFields(component, index));
    append(issues, validateMainContainer(component, index));
    append(issues, validateRuntimeVersionOverrideRequired(ctx, component, index));
    append(issues, validateComponentImmutableFields(ctx, component, index));
    append(issues, validateLpxComponent(ctx, component, index));
  }
  append(issues, validateProviderOverrides(ctx));
  append(issues, validateTopologyConstraints(ctx));
  append(issues, validateKvTransferPolicyTopology(ctx));
  append(issues, validateMinAvailableForms(ctx));
  append(issues, validateMinAvailableFitsReplicas(ctx));
  append(issues, validateMinAvailableImmutable(ctx));
  append(issues, validateRolloutBudget(ctx));
  // Last, and only for an otherwise valid DGD: it may render (./storable-size.ts).
  if (issues.length === 0) append(issues, validateStorableSize(dgd, { config: { ...DEFAULT_RENDER_CONFIG, lpxEnabled: config.lpxEnabled }, ...(objectBytes === undefined ? {} : { objectBytes }) }));
  const warnings: string[] = [];
  append(warnings, backend.warnings);
  append(warnings, minAvailableDeprecationWarnings(ctx));
  append(warnings, legacyLocalPartitionsWarnings(ctx));
  append(warnings, completeOutageWarnings(ctx, issues));
  return { issues, warnings };
}

/** Appends `items` to `into`, in order. */
function append<T>(into: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i += 1) into.push(items[i] as T);
}

/**
 * Reports a converted v1alpha1 object's issues and warnings in the form the user wrote:
 * `spec.components[i]` -> `spec.services[<name>]`, and its `type` -> `componentType`
 * (upstream-notes/lpx.md §1.3: the alpha gate path is `spec.services[<name>].componentType`).
 * Fields below the component keep their v1beta1 names. Pure.
 */
export function toV1Alpha1Paths(result: ValidationResult, dgd: Dgd): ValidationResult {
  const names = dgd.spec.components.map((c) => c.name);
  const rewrite = (text: string): string =>
    text.replace(/^spec\.components\[(\d+)\](\.type(?=$|:| ))?/, (_match, index: string, type: string | undefined) => {
      const name = names[Number(index)];
      return name === undefined ? _match : `spec.services[${name}]${type === undefined ? '' : '.componentType'}`;
    });
  return {
    issues: result.issues.map((issue) => ({ ...issue, path: rewrite(issue.path) })),
    warnings: result.warnings.map(rewrite),
  };
}

