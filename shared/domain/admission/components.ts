/**
 * Per-component DGD admission rules that do not concern availability, provider overrides or
 * LPX roles: type immutability, multinode, type-specific fields, the main container, and the
 * fields that are immutable after creation.
 *
 * Source: ../shared/upstream-notes/dgd.md §2.3, §3.5; lpx.md §1.3.
 * @module
 */
import { MAIN_CONTAINER_NAME, type Component, type FieldIssue } from '../../api/index.js';
import { isWorkerClass } from '../dgd/pod-template.js';
import { componentPath, isDeepEqual, type AdmissionContext } from './common.js';

/**
 * validateComponentTypeImmutable (UPDATE): a component's `type` cannot change once set, and no
 * component may move between LPX and non-LPX (including from an unset type to `lpx`).
 * Failures: Invalid at `spec.components[i].type`: "cannot change node topology between LPX and
 * non-LPX after creation" (lpx.md §1.3), else "type is immutable after it is set" (the upstream
 * CEL rule, upstream-notes/dgd.md §2.3). Pure.
 */
export function validateComponentTypeImmutable(ctx: Pick<AdmissionContext, 'oldComponents'>, component: Component, index: number): FieldIssue[] {
  const old = ctx.oldComponents.get(component.name);
  if (old === undefined || old.type === component.type) return [];
  const path = `${componentPath(index)}.type`;
  if ((old.type === 'lpx') !== (component.type === 'lpx')) {
    return [{ path, type: 'Invalid', value: component.type ?? null, detail: 'cannot change node topology between LPX and non-LPX after creation' }];
  }
  if (old.type === undefined) return [];
  return [{ path, type: 'Invalid', value: component.type ?? null, detail: 'type is immutable after it is set' }];
}

/**
 * validateMultinode: `multinode` is only for worker, prefill and decode components. An existing
 * ordinary component that already had `multinode` with the same type is ratcheted (left as is);
 * LPX components are never ratcheted (lpx.md §1.3 "Not grandfathered").
 * UPDATE: turning multinode on or off, or changing `nodeCount`, is Invalid "field is immutable".
 * Failures: Forbidden at `spec.components[i].multinode` "multinode is supported only for worker,
 * prefill, or decode components"; Invalid at `spec.components[i].multinode`.
 * Source: upstream-notes/dgd.md §2.3, §3.5 "Multinode", "Update rules". Pure.
 */
export function validateMultinode(ctx: Pick<AdmissionContext, 'oldComponents'>, component: Component, index: number): FieldIssue[] {
  const path = `${componentPath(index)}.multinode`;
  const old = ctx.oldComponents.get(component.name);
  const issues: FieldIssue[] = [];
  if (component.multinode !== undefined && !isWorkerClass(component)) {
    const isRatcheted = component.type !== 'lpx' && old?.multinode !== undefined && old.type === component.type;
    if (!isRatcheted) issues.push({ path, type: 'Forbidden', detail: 'multinode is supported only for worker, prefill, or decode components' });
  }
  if (old !== undefined && !isDeepEqual(old.multinode, component.multinode)) {
    issues.push({ path, type: 'Invalid', value: component.multinode ?? null, detail: 'field is immutable' });
  }
  return issues;
}

/**
 * validateTypeSpecificFields: fields that belong to one component type.
 * - `lpx` is required, and only allowed, when `type: lpx` (Required / Forbidden at
 *   `spec.components[i].lpx`; lpx.md §1.1 CEL texts, with `type` for the v1beta1 field);
 * - `experimental.checkpoint` only for worker, prefill and decode (Forbidden "checkpoint
 *   functionality is supported only for worker, prefill, and decode components", lpx.md §1.3);
 * - `eppConfig` only for `type: epp` (Forbidden; upstream-notes/dgd.md §2.3, our wording).
 * Pure.
 */
export function validateTypeSpecificFields(component: Component, index: number): FieldIssue[] {
  const at = componentPath(index);
  const issues: FieldIssue[] = [];
  if (component.type === 'lpx' && component.lpx === undefined) issues.push({ path: `${at}.lpx`, type: 'Required', detail: 'lpx is required when type is lpx' });
  if (component.type !== 'lpx' && component.lpx !== undefined) issues.push({ path: `${at}.lpx`, type: 'Forbidden', detail: 'lpx may only be set when type is lpx' });
  if (component.experimental?.checkpoint !== undefined && !isWorkerClass(component)) {
    issues.push({ path: `${at}.experimental.checkpoint`, type: 'Forbidden', detail: 'checkpoint functionality is supported only for worker, prefill, and decode components' });
  }
  if (component.eppConfig !== undefined && component.type !== 'epp') {
    issues.push({ path: `${at}.eppConfig`, type: 'Forbidden', detail: 'eppConfig is supported only for epp components' });
  }
  return issues;
}

/**
 * validateMainContainer: an ordinary component's pod template contains the container `main`
 * with a non-empty image, unless its roles carry the templates (multinode leader/worker). The
 * renderer cannot build the component otherwise, so admission refuses it up front.
 * LPX components are checked by the LPX role rules instead.
 * Failures: Required at `spec.components[i].podTemplate.spec.containers`.
 * Source: upstream-notes/dgd.md §2.3 `podTemplate`; the renderer's check (render.ts). Pure.
 */
export function validateMainContainer(component: Component, index: number): FieldIssue[] {
  if (component.type === 'lpx') return [];
  if ((component.roles ?? []).some((r) => r.podTemplate !== undefined)) return [];
  const main = component.podTemplate?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME);
  if ((main?.image ?? '').trim() !== '') return [];
  return [{ path: `${componentPath(index)}.podTemplate.spec.containers`, type: 'Required', detail: `must contain a container named "${MAIN_CONTAINER_NAME}" with a non-empty image` }];
}

/**
 * validateComponentImmutableFields (UPDATE): component fields fixed at creation besides type and
 * multinode: `topologyConstraint`, `experimental.grove.forceScalingGroup`,
 * `experimental.gpuMemoryService` and `experimental.failover` (they decide the Grove shape and
 * therefore the provider-override target and clique names).
 * Failures: Invalid "field is immutable". Source: upstream-notes/dgd.md §3.5 "Update rules". Pure.
 */
export function validateComponentImmutableFields(ctx: Pick<AdmissionContext, 'oldComponents'>, component: Component, index: number): FieldIssue[] {
  const old = ctx.oldComponents.get(component.name);
  if (old === undefined) return [];
  const at = componentPath(index);
  const fields: readonly [string, unknown, unknown][] = [
    ['topologyConstraint', old.topologyConstraint, component.topologyConstraint],
    ['experimental.grove.forceScalingGroup', old.experimental?.grove?.forceScalingGroup ?? false, component.experimental?.grove?.forceScalingGroup ?? false],
    ['experimental.gpuMemoryService', old.experimental?.gpuMemoryService, component.experimental?.gpuMemoryService],
    ['experimental.failover', old.experimental?.failover, component.experimental?.failover],
  ];
  return fields
    .filter(([, before, after]) => !isDeepEqual(before, after))
    .map(([field, , after]) => ({ path: `${at}.${field}`, type: 'Invalid' as const, value: after ?? null, detail: 'field is immutable' }));
}
