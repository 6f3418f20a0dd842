/**
 * Minimum availability admission: the deprecated component `minAvailable` versus the native
 * minimum in `providerOverride` (`value.spec.minAvailable` standalone, `value.minAvailable` for a
 * scaling group), mixing, fitting the replica count, immutability of the effective value, and the
 * deprecation warning.
 *
 * Source: ../shared/reference/dgd-reference.txt "Grove update strategy" (mixing), "Configure
 * native minimum availability"; upstream-notes/dgd.md §3.3.
 * @module
 */
import { type Component, type FieldIssue } from '../../api/index.js';
import { nativeMinAvailable, nativeMinAvailablePath } from '../dgd/availability.js';
import { componentPath, desiredReplicas, isPositiveInt32, isSharedDraft, type AdmissionContext } from './common.js';

export const MIXED_MIN_AVAILABLE_DETAIL = 'cannot mix provider-native minAvailable with deprecated component minAvailable; migrate all components together';
export const MIN_AVAILABLE_FIT_DETAIL = 'minAvailable must be less than or equal to replicas unless replicas is 0';
export const MIN_AVAILABLE_IMMUTABLE_DETAIL = 'minAvailable is immutable after creation';

/** Path of the native minimum of a component: `spec.components[i].providerOverride.value.spec.minAvailable` or `...value.minAvailable`. Pure. */
export function nativeMinimumPath(component: Component, index: number): string {
  return `${componentPath(index)}.providerOverride.value.${nativeMinAvailablePath(component).join('.')}`;
}

/**
 * The effective minimum of a component: the deprecated field, else the native value, else 1
 * ("An omitted minimum resolves to 1 during rendering", dgd-reference); undefined when the
 * native value is present but not a positive int32 (its own issue is reported elsewhere). Pure.
 */
export function effectiveMinimum(component: Component): number | undefined {
  if (component.minAvailable !== undefined) return component.minAvailable;
  const native = nativeMinAvailable(component);
  if (native === undefined) return 1;
  return isPositiveInt32(native) ? native : undefined;
}

/**
 * validateMinAvailableForms: "Mixing the old and native minimum forms anywhere in the DGD is
 * rejected; migrate all components in one update." When any component has the deprecated
 * field, every component whose providerOverride holds a native minimum is refused.
 * Failures: Forbidden at `spec.components[i].providerOverride.value` {@link MIXED_MIN_AVAILABLE_DETAIL}.
 * Source: dgd-reference "Grove update strategy"; upstream-notes/dgd.md §3.3 "Mixing". Pure.
 */
export function validateMinAvailableForms(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const components = ctx.dgd.spec.components;
  if (!components.some((c) => c.minAvailable !== undefined)) return [];
  return components.flatMap((component, index) =>
    nativeMinAvailable(component) === undefined ? [] : [{ path: `${componentPath(index)}.providerOverride.value`, type: 'Forbidden' as const, detail: MIXED_MIN_AVAILABLE_DETAIL }],
  );
}

/**
 * validateMinAvailableFitsReplicas: a minimum "must ... fit a positive replica count; ordinary
 * Grove components may scale to zero without clearing their minimum". Checked for both forms;
 * skipped for LPX components with omitted replicas (the minimum seeds the initial scaling-group
 * capacity) and for shared drafts (their own rule applies). Ordinary components with omitted
 * replicas count as 1, the default.
 * Failures: Invalid at `spec.components[i].minAvailable` or the native path, {@link MIN_AVAILABLE_FIT_DETAIL}.
 * Source: dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §3.3; lpx.md §1.1. Pure.
 */
export function validateMinAvailableFitsReplicas(ctx: Pick<AdmissionContext, 'dgd' | 'lpxPair'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    const replicas = desiredReplicas(component);
    if (replicas === undefined || replicas === 0 || isSharedDraft(ctx, index)) return;
    if (component.minAvailable !== undefined && component.minAvailable > replicas) {
      issues.push({ path: `${componentPath(index)}.minAvailable`, type: 'Invalid', value: component.minAvailable, detail: MIN_AVAILABLE_FIT_DETAIL });
    }
    const native = nativeMinAvailable(component);
    if (isPositiveInt32(native) && native > replicas) {
      issues.push({ path: nativeMinimumPath(component, index), type: 'Invalid', value: native, detail: MIN_AVAILABLE_FIT_DETAIL });
    }
  });
  return issues;
}

/**
 * validateMinAvailableImmutable (UPDATE): "Admission enforces effective-value immutability across
 * both forms." The effective minimum (deprecated -> native -> 1) of each existing component may
 * not change; moving the same value between the forms is allowed (the migration path).
 * Failures: Invalid "minAvailable is immutable after creation" at the path of the form the new
 * object uses (deprecated, else native; the native path when neither is written).
 * Source: dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §3.3 "Immutability". Pure.
 */
export function validateMinAvailableImmutable(ctx: Pick<AdmissionContext, 'dgd' | 'oldComponents'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    const old = ctx.oldComponents.get(component.name);
    if (old === undefined) return;
    const before = effectiveMinimum(old);
    const after = effectiveMinimum(component);
    if (before === undefined || after === undefined || before === after) return;
    const path = component.minAvailable !== undefined || (nativeMinAvailable(component) === undefined && old.minAvailable !== undefined) ? `${componentPath(index)}.minAvailable` : nativeMinimumPath(component, index);
    issues.push({ path, type: 'Invalid', value: after, detail: MIN_AVAILABLE_IMMUTABLE_DETAIL });
  });
  return issues;
}

/**
 * minAvailableDeprecationWarnings: "Admission returns a deprecation warning when a component
 * introduces or changes the old minAvailable field, independently of the rollout strategy.
 * Updates that leave the legacy value unchanged, including replica-only and metadata edits, do
 * not repeat the warning." The text is ours (upstream does not specify it): it names the field
 * path and the replacement for the component's shape; a shared LPX draft has no replacement
 * (its target component owns the native minimum).
 * Out: one warning per component that sets the field on CREATE, or whose field differs from the
 * stored one on UPDATE. Source: dgd-reference "Configure native minimum availability". Pure.
 */
export function minAvailableDeprecationWarnings(ctx: Pick<AdmissionContext, 'dgd' | 'oldComponents' | 'lpxPair'>): string[] {
  const warnings: string[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    if (component.minAvailable === undefined) return;
    if (ctx.oldComponents.get(component.name)?.minAvailable === component.minAvailable) return;
    const at = `${componentPath(index)}.minAvailable ("${component.name}")`;
    warnings.push(
      isSharedDraft(ctx, index)
        ? `${at}: deprecated; remove it without adding a draft override, the shared LPX target component owns the native minimum`
        : `${at}: deprecated; use providerOverride.value.${nativeMinAvailablePath(component).join('.')} instead, migrating all components in one update`,
    );
  });
  return warnings;
}
