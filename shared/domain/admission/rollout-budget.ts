/**
 * The Grove rollout budget (`spec.components[*].providerOverride.value.rollingUpdate.maxUnavailable`)
 * in its context: the update strategy and the effective minimum; and the complete-outage warnings.
 *
 * Source: ../shared/reference/dgd-reference.txt "Grove rollout budget overrides", "Coherent
 * capacity and disruption"; upstream-notes/dgd.md §3.2 step 9, §3.4.
 * @module
 */
import { type Component, type Dgd, type FieldIssue, type GroveUpdateStrategy } from '../../api/index.js';
import { maxUnavailable } from '../dgd/availability.js';
import { computeWorkerHash } from '../dgd/worker-hash.js';
import { isWorkerClass } from '../dgd/pod-template.js';
import { componentPath, desiredReplicas, effectiveStrategy, hasExternalCapacity, isDeepEqual, isPathUnder, isPositiveInt32, isSharedDraft, type AdmissionContext } from './common.js';
import { effectiveMinimum } from './min-available.js';

/**
 * validateRolloutBudget: a valid component budget (its value rules are in ./provider-override.ts)
 * checked against the strategy:
 * - OnDelete: "Grove rejects rolling update configuration under OnDelete": Forbidden at
 *   `...providerOverride.value.rollingUpdate` "must not be set when the update strategy is OnDelete";
 * - Coherent: "it must also be at least the component's effective minAvailable": Invalid at
 *   `...rollingUpdate.maxUnavailable` "must not be less than minAvailable (M) under the Coherent
 *   update strategy".
 * Not checked, by decision: a budget above the replicas, or above an LPX template seed. The
 * reference allows it ("It may exceed the component's desired replicas or the immutable PCS
 * template seed, including for LPX. The budget remains valid when a component scales below it or
 * to zero"); upstream rejected it (upstream-notes/dgd.md §3.2 step 9). The reference wins.
 * Source: dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.2 step 9. Pure.
 */
export function validateRolloutBudget(ctx: Pick<AdmissionContext, 'dgd' | 'strategy' | 'isStrategyKnown' | 'lpxPair'>): FieldIssue[] {
  if (!ctx.isStrategyKnown) return [];
  const issues: FieldIssue[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    if (isSharedDraft(ctx, index)) return;
    const budget = maxUnavailable(component);
    if (!isPositiveInt32(budget)) return;
    const at = `${componentPath(index)}.providerOverride.value.rollingUpdate`;
    if (ctx.strategy === 'OnDelete') {
      issues.push({ path: at, type: 'Forbidden', detail: 'must not be set when the update strategy is OnDelete' });
      return;
    }
    const minimum = effectiveMinimum(component);
    if (ctx.strategy === 'Coherent' && minimum !== undefined && budget < minimum) {
      issues.push({ path: `${at}.maxUnavailable`, type: 'Invalid', value: budget, detail: `must not be less than minAvailable (${minimum}) under the Coherent update strategy` });
    }
  });
  return issues;
}

/** How a component stands in a rollout: the budget that applies and whether it can take every replica. */
interface OutageRisk {
  readonly replicas: number;
  readonly minimum: number;
  /** The explicit budget, else Grove's Coherent default (the effective minimum); undefined when no warning applies. */
  readonly budget: number | undefined;
  readonly isAtRisk: boolean;
}

/**
 * The budget a warning is judged on: an explicit valid budget under RollingRecreate or Coherent;
 * under Coherent without one, Grove's default (the effective minimum). RollingRecreate without a
 * budget keeps its established behavior (no warning); OnDelete has no rolling budget.
 */
function outageRisk(component: Component, strategy: GroveUpdateStrategy | undefined): OutageRisk | undefined {
  const replicas = desiredReplicas(component);
  const minimum = effectiveMinimum(component);
  if (replicas === undefined || minimum === undefined) return undefined;
  const explicit = maxUnavailable(component);
  const resolved = effectiveStrategy(strategy);
  if (resolved === 'OnDelete') return { replicas, minimum, budget: undefined, isAtRisk: false };
  if (explicit !== undefined && !isPositiveInt32(explicit)) return undefined;
  const budget = explicit ?? (resolved === 'Coherent' ? minimum : undefined);
  return { replicas, minimum, budget, isAtRisk: budget !== undefined && replicas > 0 && minimum > 0 && budget >= replicas };
}

/**
 * Whether the component's rendered pod template changes between the stored and the new object:
 * its own podTemplate or roles, the graph-wide `spec.env`/`spec.labels`/`spec.annotations` it
 * inherits, or, for worker-class components, the shared worker-generation hash ("A pod-template
 * edit to one worker can therefore roll every worker component", dgd-reference).
 */
function hasPodTemplateEdit(old: Dgd, dgd: Dgd, before: Component, after: Component, workerHashChanged: () => boolean): boolean {
  if (!isDeepEqual(before.podTemplate, after.podTemplate) || !isDeepEqual(before.roles, after.roles)) return true;
  if (!isDeepEqual(old.spec.env, dgd.spec.env) || !isDeepEqual(old.spec.labels, dgd.spec.labels) || !isDeepEqual(old.spec.annotations, dgd.spec.annotations)) return true;
  return isWorkerClass(after) && workerHashChanged();
}

/**
 * completeOutageWarnings: "Admission warns on creation and relevant rollout edits when an explicit
 * budget could make every replica of a component unavailable under either RollingRecreate or
 * Coherent. Coherent also warns when its default budget introduces this risk, including for
 * singleton frontends. RollingRecreate retains its established warning behavior when no budget is
 * configured. Replica-only edits warn when they introduce this risk; unrelated metadata updates
 * and replica-only edits that leave existing risk unchanged do not repeat the warning.
 * Pod-template edits still warn before a rollout that could take the component offline."
 *
 * A component warns when it is at risk (replicas > 0, minimum > 0, budget >= replicas) and: the
 * request is a CREATE (or the component is new); or the effective strategy changed; or the budget
 * changed; or its rendered pod template changes (see {@link hasPodTemplateEdit}); or its replicas
 * changed and the stored object was not at risk. Never for LPX components with omitted replicas
 * ("admission cannot infer live serving capacity"), shared drafts, components that already have
 * an issue, or when the strategy annotation is invalid.
 * Text (upstream-notes/dgd.md §3.4, with "RollingRecreate" for that strategy):
 * `spec.components[i] ("<name>"): <Strategy> updates may temporarily make this entire component
 * unavailable (replicas=R, minAvailable=M, maxUnavailable=B); provision spare serving capacity before updating`.
 * Source: dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.4. Pure.
 */
export function completeOutageWarnings(ctx: AdmissionContext, issues: readonly FieldIssue[]): string[] {
  if (!ctx.isStrategyKnown) return [];
  const strategy = effectiveStrategy(ctx.strategy);
  if (strategy === 'OnDelete') return [];
  let workerHashChanged: boolean | undefined;
  const hasWorkerHashChanged = (): boolean => {
    if (workerHashChanged === undefined) workerHashChanged = ctx.old === undefined || computeWorkerHash(ctx.old) !== computeWorkerHash(ctx.dgd);
    return workerHashChanged;
  };
  const warnings: string[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    if (hasExternalCapacity(component) || isSharedDraft(ctx, index)) return;
    const at = componentPath(index);
    if (issues.some((issue) => isPathUnder(issue.path, at))) return;
    const risk = outageRisk(component, ctx.strategy);
    if (risk === undefined || !risk.isAtRisk || risk.budget === undefined) return;
    const old = ctx.oldComponents.get(component.name);
    if (ctx.old !== undefined && old !== undefined) {
      const oldRisk = outageRisk(old, ctx.oldStrategy);
      const isStrategyChanged = effectiveStrategy(ctx.oldStrategy) !== strategy;
      const isBudgetChanged = oldRisk?.budget !== risk.budget;
      const isReplicaRiskIntroduced = desiredReplicas(old) !== risk.replicas && oldRisk?.isAtRisk !== true;
      const isRelevant = isStrategyChanged || isBudgetChanged || isReplicaRiskIntroduced || hasPodTemplateEdit(ctx.old, ctx.dgd, old, component, hasWorkerHashChanged);
      if (!isRelevant) return;
    }
    warnings.push(
      `${at} ("${component.name}"): ${strategy} updates may temporarily make this entire component unavailable (replicas=${risk.replicas}, minAvailable=${risk.minimum}, maxUnavailable=${risk.budget}); provision spare serving capacity before updating`,
    );
  });
  return warnings;
}
