/**
 * LPX readiness: the LPXGraphDeployment's verdict from its scaling groups and request receipts,
 * and the merge of that child status into the DGD's `status.components` and `Ready` (a DGD is
 * not Ready while its LPX part is not).
 *
 * Source: ../shared/upstream-notes/lpx.md §5.2 (`EvaluateLPXGroveReadiness`: per-workload
 * messages; graph Ready needs every workload ready, every desired request bound, no deferred
 * scaling), §6.1 (`mergeLPXChildStatus`: placeholders, copy when current and observed, the
 * verdict table, reason `LPXChildPending`); §2.2 (component status is logical replicas only).
 * @module
 */
import {
  CONDITION_READY,
  LPX_REASON_FAILED,
  LPX_REASON_PENDING,
  LPX_REASON_READY,
  MESSAGE_LPX_CHILD_PENDING,
  REASON_LPX_CHILD_PENDING,
  type Condition,
  type LpxComponentStatus,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../api/index.js';
import { scalingGroupCliqueName } from './render-pcs.js';
import type { LpxWorkload } from './workloads.js';

export type LpxVerdict =
  | { readonly kind: 'ready' }
  | { readonly kind: 'pending' | 'failed'; readonly reason: string; readonly message: string };

/**
 * evaluateWorkloadReadiness: one workload's scaling group against its desired capacity.
 * Pending, in order: "Waiting for the exact LPX PodCliqueSet" (no PCS); "Waiting for the LPX
 * scaling group" (no PCSG); "Waiting for the exact observed LPX scaling group" (status
 * observedGeneration behind); "LPX scaling group has not applied the desired revision and
 * capacity" (spec.replicas not the desired count); "scheduled but available=%d/%d".
 * Out: the verdict and the serving component's status (replicas, updated, scheduled, available).
 * Source: lpx.md §5.2. Pure.
 */
export function evaluateWorkloadReadiness(
  hasPodCliqueSet: boolean,
  group: PodCliqueScalingGroup | undefined,
  desired: number,
): { readonly verdict: LpxVerdict; readonly status: LpxComponentStatus } {
  const pending = (message: string): LpxVerdict => ({ kind: 'pending', reason: LPX_REASON_PENDING, message });
  const base: LpxComponentStatus = { componentKind: 'PodCliqueScalingGroup', replicas: 0, updatedReplicas: 0, scheduledReplicas: 0, availableReplicas: 0, ready: false };
  if (!hasPodCliqueSet) return { verdict: pending('Waiting for the exact LPX PodCliqueSet'), status: base };
  if (group === undefined) return { verdict: pending('Waiting for the LPX scaling group'), status: base };
  const s = group.status ?? {};
  const status: LpxComponentStatus = {
    componentKind: 'PodCliqueScalingGroup',
    componentNames: [group.metadata.name ?? ''],
    replicas: s.replicas ?? 0,
    updatedReplicas: s.updatedReplicas ?? 0,
    scheduledReplicas: s.scheduledReplicas ?? 0,
    availableReplicas: s.availableReplicas ?? 0,
    ready: false,
  };
  if (s.observedGeneration === undefined || s.observedGeneration !== group.metadata.generation) return { verdict: pending('Waiting for the exact observed LPX scaling group'), status };
  if (group.spec.replicas !== desired) return { verdict: pending('LPX scaling group has not applied the desired revision and capacity'), status };
  if ((s.scheduledReplicas ?? 0) < desired) return { verdict: pending(`insufficient scheduled replicas: scheduled=${s.scheduledReplicas ?? 0}/${desired}`), status };
  if ((s.updatedReplicas ?? 0) < desired) return { verdict: pending(`desired=${desired}, updated=${s.updatedReplicas ?? 0}`), status };
  if ((s.availableReplicas ?? 0) < desired) return { verdict: pending(`scheduled but available=${s.availableReplicas ?? 0}/${desired}`), status };
  return { verdict: { kind: 'ready' }, status: { ...status, ready: true } };
}

/**
 * evaluateRoleReadiness: the role cliques of each desired engine replica
 * (`<pcs>-0-<group>-<i>-<clique>`). A missing clique is pending "Waiting for LPX role %s"; a
 * replica counts as available only when every one of its cliques has all its pods ready
 * (`readyReplicas >= spec.replicas`, the full width), and physical Agent pod counts are never
 * reported. Out: the first pending verdict (else ready) and the number of complete replicas.
 * Source: lpx.md §5.2 "Cliques" and "Complete model instances". Pure.
 */
export function evaluateRoleReadiness(
  pcsName: string,
  workload: Pick<LpxWorkload, 'scalingGroup' | 'models' | 'conductorClique'>,
  desired: number,
  cliques: ReadonlyMap<string, PodClique>,
): { readonly verdict: LpxVerdict; readonly completeReplicas: number } {
  // A model whose partitions all run on the Cyborg GPU has no Agent clique (lpx.md §1.1 localPartitions).
  const agents = workload.models.filter((m) => m.derived?.agentReplicas !== 0).map((m) => m.agentClique);
  const roles = [...agents, ...(workload.conductorClique === undefined ? [] : [workload.conductorClique])];
  let verdict: LpxVerdict = { kind: 'ready' };
  let completeReplicas = 0;
  for (let i = 0; i < desired; i += 1) {
    let isComplete = true;
    for (const role of roles) {
      const clique = cliques.get(scalingGroupCliqueName(pcsName, workload.scalingGroup, i, role));
      if (clique === undefined) {
        if (verdict.kind === 'ready') verdict = { kind: 'pending', reason: LPX_REASON_PENDING, message: `Waiting for LPX role ${role}` };
        isComplete = false;
        continue;
      }
      if ((clique.status?.readyReplicas ?? 0) < clique.spec.replicas) isComplete = false;
    }
    if (isComplete) completeReplicas += 1;
  }
  return { verdict, completeReplicas };
}

/** Largest condition message in bytes (upstream `maxConditionMessageSize`). */
export const MAX_CONDITION_MESSAGE_BYTES = 32_768;

/**
 * truncateConditionMessage: at most 32768 UTF-8 bytes; a longer message is cut at a character
 * boundary and ends in `...`. Source: lpx.md §2.2 (upstream `truncateConditionMessage`). Pure.
 */
export function truncateConditionMessage(message: string): string {
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= MAX_CONDITION_MESSAGE_BYTES) return message;
  let last = MAX_CONDITION_MESSAGE_BYTES - 3;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (last > 0 && ((bytes[last] ?? 0) & 0xc0) === 0x80) last -= 1;
  return `${bytes.subarray(0, last).toString('utf8')}...`;
}

/** The LPXGD `Ready` condition for a verdict (reasons Ready / Pending / Failed, lpx.md §2.2). Pure. */
export function lpxReadyCondition(verdict: LpxVerdict, generation: number, previous: Condition | undefined, now: Date): Condition {
  const status = verdict.kind === 'ready' ? 'True' : 'False';
  const reason = verdict.kind === 'ready' ? LPX_REASON_READY : verdict.reason;
  const message = truncateConditionMessage(verdict.kind === 'ready' ? 'LPX engine is ready' : verdict.message);
  // lastTransitionTime changes only when the boolean changes (lpx.md §2.2).
  const lastTransitionTime = previous !== undefined && previous.status === status ? previous.lastTransitionTime : now.toISOString();
  return { type: CONDITION_READY, status, reason, message, lastTransitionTime, observedGeneration: generation };
}

/** The LPX child as the DGD side observes it. */
export interface LpxChildObserved {
  readonly generation: number | undefined;
  readonly inputRevision: string | undefined;
  readonly isDeleting: boolean;
  readonly observedGeneration: number | undefined;
  readonly conditions: readonly Condition[];
  readonly components: Readonly<Record<string, LpxComponentStatus>>;
}

/**
 * mergeLpxChildStatus: the LPX part of the DGD status.
 * - every LPX component gets a placeholder `{componentKind}` (PodCliqueScalingGroup with a
 *   conductor role, PodClique for a draft);
 * - when the child is current (exists, not deleting, `spec.inputRevision` is the expected one)
 *   and observed (`status.observedGeneration == metadata.generation`), its component statuses
 *   are copied;
 * - the verdict: current child `Ready=False` reason `Failed` -> failed with its reason and
 *   message; `Ready=True` (current and observed) -> ready; observed and current but not True ->
 *   pending with its reason and message; otherwise pending, reason `LPXChildPending`, "Waiting for
 *   the current LPX engine revision and readiness".
 * In: the DGD's LPX workloads, the child (undefined when absent), the expected input revision.
 * Source: lpx.md §6.1 `mergeLPXChildStatus`. Pure.
 */
export function mergeLpxChildStatus(
  workloads: readonly LpxWorkload[],
  child: LpxChildObserved | undefined,
  expectedRevision: string,
): { readonly components: Record<string, Record<string, unknown>>; readonly verdict: LpxVerdict } {
  const components: Record<string, Record<string, unknown>> = {};
  for (const workload of workloads) {
    for (const component of workload.components) {
      components[component.name] = { componentKind: component === workload.serving ? 'PodCliqueScalingGroup' : 'PodClique' };
    }
  }
  const childPending: LpxVerdict = { kind: 'pending', reason: REASON_LPX_CHILD_PENDING, message: MESSAGE_LPX_CHILD_PENDING };
  if (child === undefined || child.isDeleting || child.inputRevision !== expectedRevision) return { components, verdict: childPending };
  const isObserved = child.generation !== undefined && child.observedGeneration === child.generation;
  const ready = child.conditions.find((c) => c.type === CONDITION_READY);
  if (ready?.status === 'False' && ready.reason === LPX_REASON_FAILED) {
    if (isObserved) copyComponents(components, child);
    return { components, verdict: { kind: 'failed', reason: ready.reason, message: ready.message } };
  }
  if (!isObserved) return { components, verdict: childPending };
  copyComponents(components, child);
  if (ready?.status === 'True') return { components, verdict: { kind: 'ready' } };
  if (ready !== undefined) return { components, verdict: { kind: 'pending', reason: ready.reason, message: ready.message } };
  return { components, verdict: childPending };
}

function copyComponents(into: Record<string, Record<string, unknown>>, child: LpxChildObserved): void {
  for (const [name, status] of Object.entries(child.components)) {
    if (into[name] === undefined) continue;
    const { conditions: _conditions, retainedReplicas: _retained, ...replicas } = status;
    into[name] = { ...into[name], ...replicas };
  }
}

/**
 * combineReadiness: the DGD's `Ready` from its ordinary part and its LPX part. A failed LPX part
 * fails the DGD with the child's reason; an ordinary part that is not ready keeps its own reason,
 * with the LPX message appended when that part is pending too; an ordinary part that is ready
 * takes the LPX verdict. Source: lpx.md §6.1 (the verdict table: "Ready True: leave the ordinary
 * result"); issue 11 part 4 ("a DGD is not Ready while its LPX part is not"). Pure.
 */
export function combineReadiness(
  ordinary: { readonly isReady: boolean; readonly reason: string; readonly message: string },
  lpx: LpxVerdict,
): { readonly isReady: boolean; readonly isFailed: boolean; readonly reason: string; readonly message: string } {
  if (lpx.kind === 'failed') return { isReady: false, isFailed: true, reason: lpx.reason, message: lpx.message };
  if (!ordinary.isReady) {
    return { isReady: false, isFailed: false, reason: ordinary.reason, message: lpx.kind === 'pending' ? `${ordinary.message}; LPX: ${lpx.message}` : ordinary.message };
  }
  if (lpx.kind === 'pending') return { isReady: false, isFailed: false, reason: lpx.reason, message: lpx.message };
  return { isReady: true, isFailed: false, reason: ordinary.reason, message: ordinary.message };
}

