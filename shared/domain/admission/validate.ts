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
import { ANNOTATION_GROVE_UPDATE_STRATEGY, DGD_V1ALPHA1, parseDgd, type Component, type Dgd, type FieldIssue } from '../../api/index.js';
import { resolveUpdateStrategy } from '../availability.js';
import { type AdmissionConfig, type AdmissionContext, type ValidationResult } from './common.js';
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
import { findLpxPair, validateLpxComponent, validateLpxComposition, validateLpxGate, validateLpxGraph } from './lpx.js';
import { minAvailableDeprecationWarnings, validateMinAvailableFitsReplicas, validateMinAvailableForms, validateMinAvailableImmutable } from './min-available.js';
import { validateProviderOverrides } from './provider-override.js';
import { completeOutageWarnings, validateRolloutBudget } from './rollout-budget.js';

/**
 * Validates a DynamoGraphDeployment of either served version.
 * In: `object` (the defaulted object of the request), `oldObject` (the stored object on UPDATE,
 * undefined on CREATE), `config.lpxEnabled`. Out: every field issue (the request is denied when
 * there is one) and every warning, paths as Kubernetes prints them. Structural problems (the zod
 * schema, standing in for the CRD schema) are returned alone; the rules run on a parsed object.
 * A terminating object (UPDATE with `metadata.deletionTimestamp`) is checked for metadata rules
 * only, so finalizers can always be removed.
 * Failures: see the rules in ./graph.ts, ./components.ts, ./provider-override.ts,
 * ./min-available.ts, ./rollout-budget.ts and ./lpx.ts. Never throws.
 * Source: dgd-reference; upstream-notes/dgd.md §3. Pure.
 */
export function validateDgd(object: unknown, oldObject: unknown, config: AdmissionConfig): ValidationResult {
  const parsed = parseDgd(object);
  if (!parsed.ok) return { issues: parsed.issues, warnings: [] };
  const isUpdate = oldObject !== undefined && oldObject !== null;
  const oldParsed = isUpdate ? parseDgd(oldObject) : undefined;
  const old = oldParsed?.ok === true ? oldParsed.dgd : undefined;
  const result = validateParsedDgd(parsed.dgd, old, isUpdate, config);
  return parsed.sourceVersion === DGD_V1ALPHA1 ? toV1Alpha1Paths(result, parsed.dgd) : result;
}

/**
 * Validates a parsed v1beta1 DGD against the stored one. `isUpdate` with `old` undefined means
 * the stored object no longer parses: create-only rules are skipped, comparisons are not made.
 * Out and failures as {@link validateDgd}. Pure.
 */
export function validateParsedDgd(dgd: Dgd, old: Dgd | undefined, isUpdate: boolean, config: AdmissionConfig): ValidationResult {
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
  };

  const backend = validateBackendFrameworkImmutable(ctx);
  const issues: FieldIssue[] = [
    ...validateUpdateStrategyAnnotation(ctx),
    ...validateGroveWorkloadProvider(ctx),
    ...validateComponentsPresent(ctx),
    ...validateGroveNameBudget(ctx),
    ...validateComponentSetImmutable(ctx),
    ...backend.issues,
    ...validateGraphImmutableFields(ctx),
    ...validateRestart(ctx),
    ...validateLpxGate(ctx),
    ...validateLpxComposition(ctx),
    ...validateLpxGraph(ctx),
  ];
  dgd.spec.components.forEach((component, index) => {
    issues.push(
      ...validateComponentTypeImmutable(ctx, component, index),
      ...validateMultinode(ctx, component, index),
      ...validateTypeSpecificFields(component, index),
      ...validateMainContainer(component, index),
      ...validateComponentImmutableFields(ctx, component, index),
      ...validateLpxComponent(ctx, component, index),
    );
  });
  issues.push(
    ...validateProviderOverrides(ctx),
    ...validateMinAvailableForms(ctx),
    ...validateMinAvailableFitsReplicas(ctx),
    ...validateMinAvailableImmutable(ctx),
    ...validateRolloutBudget(ctx),
  );
  const warnings = [...backend.warnings, ...minAvailableDeprecationWarnings(ctx), ...completeOutageWarnings(ctx, issues)];
  return { issues, warnings };
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

