/**
 * Graph-level DGD admission rules: the update-strategy annotation, the workload provider, the
 * component list, the Grove name budget, update immutability of the component set and the
 * backend, and the restart rules.
 *
 * Source: ../shared/reference/dgd-reference.txt "Grove update strategy";
 * ../shared/upstream-notes/dgd.md §2.2, §3.1, §3.5; lpx.md §1.2.
 * @module
 */
import {
  ANNOTATION_ENABLE_GROVE,
  ANNOTATION_GROVE_UPDATE_STRATEGY,
  GROVE_MAX_COMBINED_NAME_LENGTH,
  GROVE_UPDATE_STRATEGIES,
  renderPath,
  type FieldIssue,
} from '../../api/index.js';
import { resolveUpdateStrategy } from '../dgd/availability.js';
import { componentNameBudget, podCliqueSetName } from '../dgd/names.js';
import { componentPath, isDeepEqual, quoteList, type AdmissionContext } from './common.js';

/** Length of the random suffix the API server appends to `metadata.generateName`. */
const GENERATED_NAME_SUFFIX_LENGTH = 5;
/** The API server truncates `generateName` to 58 characters before adding the suffix (63 - 5). */
const MAX_GENERATE_NAME_PREFIX = 58;

export const UPDATE_STRATEGY_ANNOTATION_PATH = renderPath(['metadata', 'annotations', { key: ANNOTATION_GROVE_UPDATE_STRATEGY }]);

/**
 * validateUpdateStrategyAnnotation: `metadata.annotations["nvidia.com/grove-update-strategy"]`
 * must be exactly `Coherent`, `RollingRecreate` or `OnDelete` (case-sensitive, no trimming).
 * Only the DGD's own metadata is read: `spec.annotations` propagates to children and selects nothing.
 * Failures: NotSupported at `metadata.annotations[nvidia.com/grove-update-strategy]`.
 * Source: dgd-reference "Grove update strategy"; upstream-notes/dgd.md §3.1. Pure.
 */
export function validateUpdateStrategyAnnotation(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const resolved = resolveUpdateStrategy(ctx.dgd);
  if (resolved.ok) return [];
  return [{ path: UPDATE_STRATEGY_ANNOTATION_PATH, type: 'NotSupported', value: resolved.value, detail: `supported values: ${quoteList(GROVE_UPDATE_STRATEGIES)}` }];
}

/**
 * validateGroveWorkloadProvider: this control plane renders only through Grove, so
 * `nvidia.com/enable-grove: "false"` (the upstream opt-out into the component pathway) is refused
 * with the renderer's text rather than admitted and left unrenderable.
 * The upstream checks that `nvidia.com/workload-provider` is materialized by the controller
 * before provider overrides are accepted (upstream-notes/dgd.md §3.2 steps 2-3) are skipped for
 * the same reason: the provider is always Grove.
 * Failures: NotSupported at `metadata.annotations[nvidia.com/enable-grove]`. Pure.
 */
export function validateGroveWorkloadProvider(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const value = ctx.dgd.metadata.annotations?.[ANNOTATION_ENABLE_GROVE];
  if (value?.toLowerCase() !== 'false') return [];
  return [
    {
      path: renderPath(['metadata', 'annotations', { key: ANNOTATION_ENABLE_GROVE }]),
      type: 'NotSupported',
      value,
      detail: 'only the Grove workload provider is rendered by this control plane',
    },
  ];
}

/**
 * validateComponentsPresent: a DGD has at least one component.
 * Failures: Required at `spec.components` "must have at least one component".
 * Source: upstream-notes/dgd.md §3.5. Pure.
 */
export function validateComponentsPresent(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  return ctx.dgd.spec.components.length === 0 ? [{ path: 'spec.components', type: 'Required', detail: 'must have at least one component' }] : [];
}

/**
 * validateGroveNameBudget: Grove requires len(PodCliqueSet name) + len(clique name)
 * (+ len(scaling-group name) for its members) <= 45, so that a pod name
 * `<pcs>-<i>-<pcsg>-<j>-<clique>-<5 random>` stays within 63 characters. The PodCliqueSet name is
 * the one the renderer uses (`podCliqueSetName`: the DGD name, shortened with a hash when a
 * component needs room, never below 8 characters); a component's share is its lower-cased name,
 * or for a scaling group its name plus its longest member clique (`<name>-ldr`/`<name>-wkr` when
 * multinode). LPX components render into their own PodCliqueSet and are not counted here.
 * With `generateName` and no name, the name the API server will generate is assumed
 * (prefix up to 58 characters + 5 random).
 * Failures: Invalid at `spec.components[i].name` "combined Grove resource name length N exceeds
 * the 45-character limit; shorten the deployment or component name".
 * Source: upstream-notes/dgd.md §3.5, §4.1; grove.md §A.8. Pure.
 */
export function validateGroveNameBudget(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const meta = ctx.dgd.metadata;
  const name = meta.name !== undefined && meta.name !== '' ? meta.name : meta.generateName === undefined ? undefined : meta.generateName.slice(0, MAX_GENERATE_NAME_PREFIX) + 'x'.repeat(GENERATED_NAME_SUFFIX_LENGTH);
  if (name === undefined) return [];
  const ordinary = ctx.dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pcsName = podCliqueSetName(name, ordinary);
  const issues: FieldIssue[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    if (component.type === 'lpx') return;
    const combined = pcsName.length + componentNameBudget(component);
    if (combined <= GROVE_MAX_COMBINED_NAME_LENGTH) return;
    issues.push({
      path: `${componentPath(index)}.name`,
      type: 'Invalid',
      value: component.name,
      detail: `combined Grove resource name length ${combined} exceeds the ${GROVE_MAX_COMBINED_NAME_LENGTH}-character limit; shorten the deployment or component name`,
    });
  });
  return issues;
}

/**
 * validateComponentSetImmutable (UPDATE): components cannot be added or removed; names are the
 * list-map keys and compare exactly. Go prints the name lists as `[a b]`.
 * Failures: Forbidden at `spec.components` "component topology is immutable and cannot be
 * modified after creation: components added: [..]" (and/or "components removed: [..]").
 * Source: upstream-notes/dgd.md §3.5 "Update rules". Pure.
 */
export function validateComponentSetImmutable(ctx: Pick<AdmissionContext, 'dgd' | 'old'>): FieldIssue[] {
  if (ctx.old === undefined) return [];
  const newNames = ctx.dgd.spec.components.map((c) => c.name);
  const oldNames = ctx.old.spec.components.map((c) => c.name);
  const added = newNames.filter((n) => !oldNames.includes(n));
  const removed = oldNames.filter((n) => !newNames.includes(n));
  if (added.length === 0 && removed.length === 0) return [];
  const parts = [...(added.length > 0 ? [`components added: [${added.join(' ')}]`] : []), ...(removed.length > 0 ? [`components removed: [${removed.join(' ')}]`] : [])];
  return [{ path: 'spec.components', type: 'Forbidden', detail: `component topology is immutable and cannot be modified after creation: ${parts.join(', ')}` }];
}

/** The warning upstream returns beside the backendFramework immutability error (upstream-notes/dgd.md §3.5). */
export const BACKEND_FRAMEWORK_CHANGE_WARNING = 'Changing spec.backendFramework may cause unexpected behavior';

/**
 * validateBackendFrameworkImmutable (UPDATE): `spec.backendFramework` cannot change once set.
 * Setting it on a DGD that had none is allowed (nothing rendered depended on it).
 * Failures: Invalid at `spec.backendFramework` "field is immutable", with the warning
 * {@link BACKEND_FRAMEWORK_CHANGE_WARNING}. Source: upstream-notes/dgd.md §3.5. Pure.
 */
export function validateBackendFrameworkImmutable(ctx: Pick<AdmissionContext, 'dgd' | 'old'>): { issues: FieldIssue[]; warnings: string[] } {
  const before = ctx.old?.spec.backendFramework;
  const after = ctx.dgd.spec.backendFramework;
  if (before === undefined || before === after) return { issues: [], warnings: [] };
  return { issues: [{ path: 'spec.backendFramework', type: 'Invalid', value: after ?? null, detail: 'field is immutable' }], warnings: [BACKEND_FRAMEWORK_CHANGE_WARNING] };
}

/** Restart phases during which `spec.restart.id` may not change (upstream-notes/dgd.md §3.5). */
const ACTIVE_ROLLING_UPDATE_PHASES: readonly string[] = ['Pending', 'InProgress'];

/**
 * validateRestart: the restart rules.
 * - CREATE: `spec.restart.id` must be unset (mirrors the CRD's CEL rule for callers that bypass
 *   the API server): Invalid at `spec` "spec.restart must be unset on create; set
 *   spec.restart.id after creation to request a restart".
 * - `strategy.order` is Forbidden with `Parallel`; otherwise, when given, it names every
 *   component exactly once (Duplicate / NotSupported at `order[k]`, Invalid at `order` for
 *   missing names).
 * - UPDATE: `restart.id` may not change while `status.rollingUpdate.phase` is Pending or InProgress.
 * - A graph with an LPX component needs an explicit `restart.strategy.type: Parallel`: Invalid at
 *   `spec` "spec.restart.strategy.type must be Parallel when the graph contains LPX components"
 *   (also when an update adds LPX beside an unchanged Sequential restart).
 * Source: upstream-notes/dgd.md §2.2, §3.5 "Restart order", "Update rules"; lpx.md §1.2. Pure.
 */
export function validateRestart(ctx: Pick<AdmissionContext, 'dgd' | 'old' | 'isUpdate'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const restart = ctx.dgd.spec.restart;
  if (!ctx.isUpdate && restart?.id !== undefined) {
    issues.push({ path: 'spec', type: 'Invalid', value: 'object', detail: 'spec.restart must be unset on create; set spec.restart.id after creation to request a restart' });
  }
  const order = restart?.strategy?.order ?? [];
  if (order.length > 0) {
    if (restart?.strategy?.type === 'Parallel') {
      issues.push({ path: 'spec.restart.strategy.order', type: 'Forbidden', detail: 'must not be set when the restart strategy type is Parallel' });
    } else {
      const names = ctx.dgd.spec.components.map((c) => c.name);
      const seen = new Set<string>();
      order.forEach((name, k) => {
        if (seen.has(name)) issues.push({ path: `spec.restart.strategy.order[${k}]`, type: 'Duplicate', value: name, detail: 'each component may appear only once' });
        else if (!names.includes(name)) issues.push({ path: `spec.restart.strategy.order[${k}]`, type: 'NotSupported', value: name, detail: `supported values: ${quoteList(names)}` });
        seen.add(name);
      });
      const missing = names.filter((n) => !seen.has(n));
      if (missing.length > 0) issues.push({ path: 'spec.restart.strategy.order', type: 'Invalid', value: order, detail: `must list every component; missing ${quoteList(missing)}` });
    }
  }
  if (ctx.old !== undefined && ctx.old.spec.restart?.id !== restart?.id) {
    const phase = rollingUpdatePhase(ctx.old);
    if (phase !== undefined && ACTIVE_ROLLING_UPDATE_PHASES.includes(phase)) {
      issues.push({ path: 'spec.restart.id', type: 'Forbidden', detail: `cannot be changed while a rolling update is in progress (status.rollingUpdate.phase is ${phase})` });
    }
  }
  if (ctx.dgd.spec.components.some((c) => c.type === 'lpx') && restart?.strategy?.type !== 'Parallel') {
    issues.push({ path: 'spec', type: 'Invalid', value: 'object', detail: 'spec.restart.strategy.type must be Parallel when the graph contains LPX components' });
  }
  return issues;
}

function rollingUpdatePhase(dgd: AdmissionContext['dgd']): string | undefined {
  const rollingUpdate = (dgd.status as Record<string, unknown> | undefined)?.['rollingUpdate'];
  if (typeof rollingUpdate !== 'object' || rollingUpdate === null) return undefined;
  const phase = (rollingUpdate as Record<string, unknown>)['phase'];
  return typeof phase === 'string' ? phase : undefined;
}

/**
 * validateGraphImmutableFields (UPDATE): graph fields that cannot change after creation:
 * `spec.topologyConstraint` and `spec.experimental.kvTransferPolicy`.
 * Failures: Invalid "field is immutable". Source: upstream-notes/dgd.md §3.5 "Update rules". Pure.
 */
export function validateGraphImmutableFields(ctx: Pick<AdmissionContext, 'dgd' | 'old'>): FieldIssue[] {
  if (ctx.old === undefined) return [];
  const issues: FieldIssue[] = [];
  if (!isDeepEqual(ctx.old.spec.topologyConstraint, ctx.dgd.spec.topologyConstraint)) {
    issues.push({ path: 'spec.topologyConstraint', type: 'Invalid', value: ctx.dgd.spec.topologyConstraint ?? null, detail: 'field is immutable' });
  }
  const before = ctx.old.spec.experimental?.['kvTransferPolicy'];
  const after = ctx.dgd.spec.experimental?.['kvTransferPolicy'];
  if (!isDeepEqual(before, after)) issues.push({ path: 'spec.experimental.kvTransferPolicy', type: 'Invalid', value: after ?? null, detail: 'field is immutable' });
  return issues;
}
