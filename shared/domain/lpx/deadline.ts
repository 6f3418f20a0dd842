/**
 * LPX scheduling deadlines (`lpx.scheduling.attemptDeadlineSeconds`): which pipeline requests
 * expired, the durable `SchedulingFailed` record, and the cleanup of only the trailing expired
 * engine replicas. functions/cleanup runs this on ticks and request events.
 *
 * Source: ../shared/upstream-notes/lpx.md §3.4 "Design D (newest)"; upstream
 * `internal/controller/lpx/pipeline_request_deadline.go` and `pipeline_request_status.go`
 * (`pipelineRequestDeadlines`, `isPipelineRequestDeadlineExempt`,
 * `schedulingFailureCoversPipelineRequests`, `expiredPipelineRequestSuffix`,
 * `acknowledgeSchedulingRetry`); ../shared/reference/dgd-reference.txt ("For LPX workloads with
 * explicit replica counts, scheduling deadline cleanup also waits until capacity can be reduced
 * before deleting expired pipeline requests. Workloads with omitted replica counts retain
 * external capacity ownership, and their expired requests can still be cleaned up during a
 * rollout.").
 * @module
 */
import {
  ANNOTATION_LPX_DYNAMO_MODEL,
  CONDITION_SCHEDULING_FAILED,
  MESSAGE_LPX_DEADLINE_EXCEEDED,
  MESSAGE_LPX_RETRY_AUTHORIZED,
  REASON_LPX_DEADLINE_EXCEEDED,
  REASON_LPX_RETRY_AUTHORIZED,
  type Condition,
  type LpuPipelineRequest,
} from '../../api/index.js';
import { requestTarget } from './pipeline-requests.js';

/** Bound on the retry of a pass that cannot act yet while a deadline is active (upstream `pipelineRequestDeadlineRetryInterval`). */
export const DEADLINE_RETRY_INTERVAL_MS = 5_000;

/** What the deadline decision needs to know about one workload (one scaling group). */
export interface DeadlineWorkload {
  /** Grove's scaling-group object name (`<pcs>-0-<group>`), as the requests name it. */
  readonly scalingGroupObject: string;
  /** Per runtime model, the owning component's deadline in seconds; undefined: unlimited. */
  readonly secondsByModel: ReadonlyMap<string, number | undefined>;
  /** True when the DGD component sets replicas (the controller owns capacity). */
  readonly hasExplicitReplicas: boolean;
  /** The observed scaling group's `spec.replicas`; undefined while it does not exist. */
  readonly liveReplicas: number | undefined;
}

export interface DeadlineObserved {
  /** LPXGD metadata.generation. */
  readonly generation: number;
  /** LPXGD status.conditions. */
  readonly conditions: readonly Condition[];
  readonly workloads: readonly DeadlineWorkload[];
  /** The requests controlled by the LPX PodCliqueSet. */
  readonly requests: readonly LpuPipelineRequest[];
  /** True during an active Grove Coherent rollout of the LPX PodCliqueSet (replica writes are refused). */
  readonly isScalingBlocked: boolean;
}

export interface DeadlineDesired {
  /** The SchedulingFailed condition to apply, when it changes. */
  readonly schedulingFailed: Condition | undefined;
  /** Scaling-group scale-downs, before any delete. */
  readonly scale: readonly { readonly scalingGroupObject: string; readonly replicas: number }[];
  /** Requests to delete, in order (non-expired siblings before expired ones), with their resourceVersion precondition. */
  readonly delete: readonly { readonly name: string; readonly uid: string | undefined; readonly resourceVersion: string | undefined }[];
  /** True when an explicit-replica workload waits for the Coherent rollout before it can reduce capacity. */
  readonly isScalingDeferred: boolean;
  /** When to look again (the earliest future deadline, or a bounded retry); undefined: no timer. */
  readonly recheckAt: Date | undefined;
}

/**
 * schedulingStartedAt: the scheduler's non-empty `status.schedulingStartedAt`, else
 * `metadata.creationTimestamp` (the fallback covers the wait for the scheduler); undefined when
 * neither is known. Source: lpx.md §3.4 "Start time". Pure.
 */
export function schedulingStartedAt(request: Pick<LpuPipelineRequest, 'metadata' | 'status'>): Date | undefined {
  const started = request.status?.schedulingStartedAt;
  const text = started !== undefined && started !== null && started !== '' ? started : request.metadata.creationTimestamp;
  if (text === undefined) return undefined;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

/**
 * isDeadlineExempt: a current-generation receipt outside the scheduling timer: `bound`, `noFit`,
 * `unsupported`; `degraded`/`releasing`/`released` only when `committed.execution.acceptedGeneration`
 * is the request's generation. Exemption is not readiness (noFit stays pending). Stale receipts
 * never exempt. Source: lpx.md §3.4 "Expiry"; upstream `isPipelineRequestDeadlineExempt`. Pure.
 */
export function isDeadlineExempt(request: Pick<LpuPipelineRequest, 'metadata' | 'status'>): boolean {
  const status = request.status;
  if (status === undefined || status === null || status.observedGeneration === undefined || status.observedGeneration !== request.metadata.generation) return false;
  switch (status.phase) {
    case 'bound':
    case 'noFit':
    case 'unsupported':
      return true;
    case 'degraded':
    case 'releasing':
    case 'released':
      return status.committed?.execution?.acceptedGeneration !== undefined && status.committed.execution.acceptedGeneration === request.metadata.generation;
    default:
      return false;
  }
}

/**
 * findExpiredRequests: requests whose deadline passed (`now >= start + seconds`), skipping
 * deleting requests, models without a deadline and exempt receipts; and the earliest future
 * deadline among the rest. Source: lpx.md §3.4; upstream `pipelineRequestDeadlines`. Pure.
 */
export function findExpiredRequests(observed: Pick<DeadlineObserved, 'workloads' | 'requests'>, now: Date): { readonly expired: LpuPipelineRequest[]; readonly nextDeadline: Date | undefined } {
  const byGroup = new Map(observed.workloads.map((w) => [w.scalingGroupObject, w]));
  const expired: LpuPipelineRequest[] = [];
  let next: Date | undefined;
  for (const request of observed.requests) {
    const workload = byGroup.get(requestTarget(request)?.scalingGroupObject ?? '');
    const seconds = workload?.secondsByModel.get(request.metadata.annotations?.[ANNOTATION_LPX_DYNAMO_MODEL] ?? '');
    if (seconds === undefined || request.metadata.deletionTimestamp !== undefined || isDeadlineExempt(request)) continue;
    const started = schedulingStartedAt(request);
    if (started === undefined) continue;
    const deadline = new Date(started.getTime() + seconds * 1000);
    if (now.getTime() >= deadline.getTime()) expired.push(request);
    else if (next === undefined || deadline < next) next = deadline;
  }
  return { expired, nextDeadline: next };
}

function failedCondition(conditions: readonly Condition[]): Condition | undefined {
  const failed = conditions.find((c) => c.type === CONDITION_SCHEDULING_FAILED);
  return failed?.status === 'True' && failed.reason === REASON_LPX_DEADLINE_EXCEEDED ? failed : undefined;
}

/**
 * isSchedulingFailureCurrent: `SchedulingFailed=True/LPXSchedulingDeadlineExceeded` recorded at
 * this generation or later: publication (new requests, scale-up) stays blocked until a newer
 * input revision. Source: lpx.md §3.4 "After deletion"; upstream `isSchedulingFailedConditionCurrent`. Pure.
 */
export function isSchedulingFailureCurrent(generation: number, conditions: readonly Condition[]): boolean {
  const failed = failedCondition(conditions);
  return failed !== undefined && (failed.observedGeneration ?? 0) >= generation;
}

/**
 * isFailureCovering: the recorded failure's lastTransitionTime is after every expired request's
 * start, so cleanup may proceed; a cycle that started later needs its own record.
 * Source: upstream `schedulingFailureCoversPipelineRequests`. Pure.
 */
export function isFailureCovering(conditions: readonly Condition[], expired: readonly LpuPipelineRequest[]): boolean {
  const failed = failedCondition(conditions);
  if (failed === undefined) return false;
  const recordedAt = new Date(failed.lastTransitionTime).getTime();
  if (Number.isNaN(recordedAt)) return false;
  return expired.every((request) => {
    const started = schedulingStartedAt(request);
    return started !== undefined && started.getTime() < recordedAt;
  });
}

/**
 * expiredSuffix: the surviving replica count and the requests to remove for one workload. Only
 * a contiguous trailing suffix of expired ordinals (counted down from the live replicas) is
 * removed; any expired ordinal below it blocks the whole workload. One expired model request
 * makes its replica eligible, siblings included; requests beyond the live count are included
 * (finishing after an earlier scale write); siblings come before expired requests, so a partial
 * failure keeps the expiry evidence. Examples with 4 replicas: expiry {2,3} -> 2; {0} or {0,3} ->
 * nothing. Source: lpx.md §3.4 "Cleanup per workload"; upstream `expiredPipelineRequestSuffix`. Pure.
 */
export function expiredSuffix(
  requests: readonly LpuPipelineRequest[],
  expired: readonly LpuPipelineRequest[],
  liveReplicas: number,
): { readonly replicas: number; readonly removed: LpuPipelineRequest[] } {
  if (expired.length === 0) return { replicas: liveReplicas, removed: [] };
  const failedOrdinals = new Set(expired.map((r) => requestTarget(r)?.replicaIndex ?? -1));
  let target = liveReplicas;
  while (target > 0 && failedOrdinals.has(target - 1)) target -= 1;
  for (const ordinal of failedOrdinals) if (ordinal < target) return { replicas: liveReplicas, removed: [] };
  const expiredNames = new Set(expired.map((r) => r.metadata.name));
  const siblings = requests.filter((r) => (requestTarget(r)?.replicaIndex ?? -1) >= target && !expiredNames.has(r.metadata.name ?? ''));
  return { replicas: target, removed: [...siblings, ...expired] };
}

function byName(a: LpuPipelineRequest, b: LpuPipelineRequest): number {
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * decideLpxDeadlines: one pass of deadline handling for an LPXGraphDeployment.
 * 1. Expired requests not covered by a recorded failure: record `SchedulingFailed=True`,
 *    reason `LPXSchedulingDeadlineExceeded`, "An LPX request exceeded its scheduling deadline",
 *    at this generation and time (renewing the timestamp), and look again at once: cleanup
 *    happens only in a later pass.
 * 2. Covered: per workload, {@link expiredSuffix} against the live scaling group. With explicit
 *    replicas, scale the group down to the survivors first and delete in a later pass; during an
 *    active Coherent rollout nothing is written and the workload waits (`isScalingDeferred`).
 *    With omitted replicas capacity is never written and the requests are deleted even during a
 *    rollout. A workload whose scaling group is not observed waits.
 * 3. No expired request and a failure recorded at an older generation: `SchedulingFailed=False`,
 *    `LPXSchedulingRetryAuthorized`, "The current input revision supersedes the previous
 *    scheduling failure".
 * `recheckAt`: now for a follow-up pass, else the earliest future deadline (a deferred workload
 * retries within 5 s). In: {@link DeadlineObserved}, now. Out: {@link DeadlineDesired}.
 * Source: see the module docstring. Pure.
 */
export function decideLpxDeadlines(observed: DeadlineObserved, now: Date): DeadlineDesired {
  const { expired, nextDeadline } = findExpiredRequests(observed, now);
  const none: DeadlineDesired = { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: false, recheckAt: nextDeadline };
  if (expired.length > 0 && !isFailureCovering(observed.conditions, expired)) {
    const schedulingFailed: Condition = {
      type: CONDITION_SCHEDULING_FAILED,
      status: 'True',
      reason: REASON_LPX_DEADLINE_EXCEEDED,
      message: MESSAGE_LPX_DEADLINE_EXCEEDED,
      lastTransitionTime: now.toISOString(),
      observedGeneration: observed.generation,
    };
    return { ...none, schedulingFailed, recheckAt: now };
  }
  if (expired.length === 0) {
    const prior = observed.conditions.find((c) => c.type === CONDITION_SCHEDULING_FAILED);
    const isRetry = prior !== undefined && observed.generation > (prior.observedGeneration ?? 0);
    if (!isRetry) return none;
    const schedulingFailed: Condition = {
      type: CONDITION_SCHEDULING_FAILED,
      status: 'False',
      reason: REASON_LPX_RETRY_AUTHORIZED,
      message: MESSAGE_LPX_RETRY_AUTHORIZED,
      lastTransitionTime: prior.status === 'False' ? prior.lastTransitionTime : now.toISOString(),
      observedGeneration: observed.generation,
    };
    return { ...none, schedulingFailed };
  }

  const scale: { scalingGroupObject: string; replicas: number }[] = [];
  const deletes: LpuPipelineRequest[] = [];
  let isScalingDeferred = false;
  let isFollowUp = false;
  for (const workload of [...observed.workloads].sort((a, b) => (a.scalingGroupObject < b.scalingGroupObject ? -1 : 1))) {
    const inGroup = (r: LpuPipelineRequest) => requestTarget(r)?.scalingGroupObject === workload.scalingGroupObject;
    const groupExpired = expired.filter(inGroup).sort(byName);
    if (groupExpired.length === 0 || workload.liveReplicas === undefined) continue;
    const groupRequests = observed.requests.filter((r) => inGroup(r) && r.metadata.deletionTimestamp === undefined).sort(byName);
    const { replicas, removed } = expiredSuffix(groupRequests, groupExpired, workload.liveReplicas);
    if (removed.length === 0) continue;
    if (workload.hasExplicitReplicas) {
      if (observed.isScalingBlocked) {
        isScalingDeferred = true;
        continue;
      }
      if (workload.liveReplicas > replicas) {
        // Persist the lower capacity before any request goes (upstream: scale, then delete).
        scale.push({ scalingGroupObject: workload.scalingGroupObject, replicas });
        isFollowUp = true;
        continue;
      }
    }
    deletes.push(...removed);
  }
  const deferredRetry = isScalingDeferred ? new Date(now.getTime() + DEADLINE_RETRY_INTERVAL_MS) : undefined;
  const candidates = [isFollowUp ? now : undefined, deferredRetry, nextDeadline].filter((d): d is Date => d !== undefined);
  const recheckAt = candidates.length === 0 ? undefined : new Date(Math.min(...candidates.map((d) => d.getTime())));
  return {
    schedulingFailed: undefined,
    scale,
    delete: deletes.map((r) => ({ name: r.metadata.name ?? '', uid: r.metadata.uid, resourceVersion: r.metadata.resourceVersion })),
    isScalingDeferred,
    recheckAt,
  };
}
