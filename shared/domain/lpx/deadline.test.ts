import { describe, expect, it } from 'vitest';
import type { Condition, LpuPipelineRequest } from '../../api/index.js';
import { decideLpxDeadlines, expiredSuffix, isDeadlineExempt, type DeadlineObserved, type DeadlineWorkload } from './deadline.js';

const GROUP = 'demo-1a2b-0-lpx';
const NOW = new Date('2026-12-01T10:00:00Z');
const T0 = '2026-12-01T09:00:00Z'; // an hour before NOW

/** A request for `model` on scaling-group replica `replicaIndex`, created at T0 with no receipt. */
function aRequest(replicaIndex: number, overrides: { model?: string; status?: LpuPipelineRequest['status']; created?: string; deleting?: boolean; group?: string } = {}): LpuPipelineRequest {
  const model = overrides.model ?? 'default';
  return {
    apiVersion: 'scheduling.lpu.nvidia.com/v1alpha1',
    kind: 'LpuPipelineRequest',
    metadata: {
      name: `lpr-${overrides.group ?? 'g'}-${replicaIndex}-${model}`,
      uid: `uid-${replicaIndex}-${model}`,
      resourceVersion: '7',
      generation: 1,
      creationTimestamp: overrides.created ?? T0,
      annotations: { 'scheduling.lpu.nvidia.com/dynamo-model': model },
      ...(overrides.deleting === true ? { deletionTimestamp: T0 } : {}),
    },
    spec: { materializationTarget: { podCliqueSetReplicaIndex: 0, podCliqueScalingGroupRef: { name: overrides.group ?? GROUP, replicaIndex } } },
    ...(overrides.status === undefined ? {} : { status: overrides.status }),
  };
}

const bound = { phase: 'bound', observedGeneration: 1 };
const startedRecently = { phase: 'pending', observedGeneration: 1, schedulingStartedAt: '2026-12-01T09:59:30Z' };

function aWorkload(overrides: Partial<DeadlineWorkload> = {}): DeadlineWorkload {
  return { scalingGroupObject: GROUP, secondsByModel: new Map([['default', 600]]), hasExplicitReplicas: true, liveReplicas: 4, ...overrides };
}

const recorded: Condition = {
  type: 'SchedulingFailed',
  status: 'True',
  reason: 'LPXSchedulingDeadlineExceeded',
  message: 'An LPX request exceeded its scheduling deadline',
  lastTransitionTime: '2026-12-01T09:30:00Z',
  observedGeneration: 1,
};

function anObserved(overrides: Partial<DeadlineObserved> = {}): DeadlineObserved {
  return { generation: 1, conditions: [recorded], workloads: [aWorkload()], requests: [], isScalingBlocked: false, ...overrides };
}

const del = (r: LpuPipelineRequest) => ({ name: r.metadata.name ?? '', uid: r.metadata.uid, resourceVersion: r.metadata.resourceVersion });
const fourWithTrailingExpired = [aRequest(0, { status: bound }), aRequest(1, { status: bound }), aRequest(2), aRequest(3)];

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: DeadlineObserved;
  readonly want: ReturnType<typeof decideLpxDeadlines>;
}

const rows: Row[] = [
  {
    name: 'an expired request is first recorded as SchedulingFailed=True, and nothing is cleaned in that pass',
    reason: 'lpx.md §3.4 "On expiry": persist SchedulingFailed=True first; cleanup happens only in a later reconcile',
    input: anObserved({ conditions: [], requests: fourWithTrailingExpired }),
    want: { schedulingFailed: { ...recorded, lastTransitionTime: NOW.toISOString() }, scale: [], delete: [], isScalingDeferred: false, recheckAt: NOW },
  },
  {
    name: 'a recorded failure older than a request start is renewed before cleanup',
    reason: 'upstream schedulingFailureCoversPipelineRequests: every expired cycle must predate the recorded failure',
    input: anObserved({ conditions: [{ ...recorded, lastTransitionTime: '2026-12-01T08:00:00Z' }], requests: fourWithTrailingExpired }),
    want: { schedulingFailed: { ...recorded, lastTransitionTime: NOW.toISOString() }, scale: [], delete: [], isScalingDeferred: false, recheckAt: NOW },
  },
  {
    name: 'explicit replicas: expiry {2,3} of 4 scales the scaling group to 2 before any request is deleted',
    reason: 'lpx.md §3.4 "Examples with 4 replicas: expiry {2,3} -> scale to 2"; "Scale the PCSG /scale down to the surviving prefix before deleting LPRs"',
    input: anObserved({ requests: fourWithTrailingExpired }),
    want: { schedulingFailed: undefined, scale: [{ scalingGroupObject: GROUP, replicas: 2 }], delete: [], isScalingDeferred: false, recheckAt: NOW },
  },
  {
    name: 'explicit replicas: once the scaling group is at 2, the requests beyond the live count are deleted',
    reason: 'upstream expiredPipelineRequestSuffix: "Include LPRs beyond the live count to finish cleanup after an earlier scale write"',
    input: anObserved({ workloads: [aWorkload({ liveReplicas: 2 })], requests: fourWithTrailingExpired }),
    want: { schedulingFailed: undefined, scale: [], delete: [del(aRequest(2)), del(aRequest(3))], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'explicit replicas during an active Coherent rollout: nothing is written and the workload waits',
    reason: 'dgd-reference: "For LPX workloads with explicit replica counts, scheduling deadline cleanup also waits until capacity can be reduced"',
    input: anObserved({ requests: fourWithTrailingExpired, isScalingBlocked: true }),
    want: { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: true, recheckAt: new Date(NOW.getTime() + 5000) },
  },
  {
    name: 'omitted replicas during a rollout: expired requests are deleted and capacity is never written',
    reason: 'dgd-reference: "Workloads with omitted replica counts retain external capacity ownership, and their expired requests can still be cleaned up during a rollout"',
    input: anObserved({ workloads: [aWorkload({ hasExplicitReplicas: false })], requests: fourWithTrailingExpired, isScalingBlocked: true }),
    want: { schedulingFailed: undefined, scale: [], delete: [del(aRequest(2)), del(aRequest(3))], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'an interior expired ordinal {0,3} blocks the whole workload',
    reason: 'lpx.md §3.4 "{0} or {0,3} -> nothing"; "Any interior expired ordinal blocks that workload\'s cleanup entirely"',
    input: anObserved({ requests: [aRequest(0), aRequest(1, { status: bound }), aRequest(2, { status: bound }), aRequest(3)] }),
    want: { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'one expired model request makes its replica eligible, and the non-expired sibling is deleted first',
    reason: 'lpx.md §3.4 "One expired model request makes the whole replica eligible, siblings included"; "Non-expired siblings are deleted before expired ones"',
    input: anObserved({
      workloads: [aWorkload({ hasExplicitReplicas: false, liveReplicas: 2, secondsByModel: new Map([['draft0', 600], ['target', 600]]) })],
      requests: [aRequest(0, { model: 'draft0', status: bound }), aRequest(0, { model: 'target', status: bound }), aRequest(1, { model: 'draft0' }), aRequest(1, { model: 'target', status: bound })],
    }),
    want: { schedulingFailed: undefined, scale: [], delete: [del(aRequest(1, { model: 'target' })), del(aRequest(1, { model: 'draft0' }))], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'bound, noFit and unsupported receipts of the current generation are exempt; the earliest future deadline is the recheck',
    reason: 'lpx.md §3.4 "Skipped: current-generation bound, noFit and unsupported"; "The earliest future deadline ... becomes RequeueAfter"',
    input: anObserved({
      conditions: [],
      requests: [aRequest(0, { status: bound }), aRequest(1, { status: { phase: 'noFit', observedGeneration: 1 } }), aRequest(2, { status: { phase: 'unsupported', observedGeneration: 1 } }), aRequest(3, { status: startedRecently })],
    }),
    want: { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: false, recheckAt: new Date('2026-12-01T10:09:30Z') },
  },
  {
    name: 'a model without attemptDeadlineSeconds never expires',
    reason: 'lpx.md §1.1 "Omitted means unlimited"; §3.4 "nil means no deadline for that model"',
    input: anObserved({ conditions: [], workloads: [aWorkload({ secondsByModel: new Map([['default', undefined]]) })], requests: fourWithTrailingExpired }),
    want: { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'deleting requests are skipped',
    reason: 'lpx.md §3.4 "Skipped: deleting LPRs"',
    input: anObserved({ conditions: [], requests: [aRequest(0, { deleting: true })] }),
    want: { schedulingFailed: undefined, scale: [], delete: [], isScalingDeferred: false, recheckAt: undefined },
  },
  {
    name: 'a newer generation without a current expiry authorizes a retry',
    reason: 'lpx.md §2.2 SchedulingFailed retry: False, LPXSchedulingRetryAuthorized, "The current input revision supersedes the previous scheduling failure"',
    input: anObserved({ generation: 2, requests: [aRequest(0, { status: { ...bound, observedGeneration: 1 } })] }),
    want: {
      schedulingFailed: { type: 'SchedulingFailed', status: 'False', reason: 'LPXSchedulingRetryAuthorized', message: 'The current input revision supersedes the previous scheduling failure', lastTransitionTime: NOW.toISOString(), observedGeneration: 2 },
      scale: [],
      delete: [],
      isScalingDeferred: false,
      recheckAt: undefined,
    },
  },
  {
    name: 'after an edit, a failure recorded before the expired cycle started still covers it, so cleanup does not consume the retry',
    reason: 'lpx.md §3.4 "After an edit, a failure still covers the cycles that started before it"',
    input: anObserved({ generation: 2, workloads: [aWorkload({ hasExplicitReplicas: false })], requests: fourWithTrailingExpired }),
    want: { schedulingFailed: undefined, scale: [], delete: [del(aRequest(2)), del(aRequest(3))], isScalingDeferred: false, recheckAt: undefined },
  },
];

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !(value instanceof Map)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('decideLpxDeadlines (lpx.md §3.4 design D)', () => {
  it.each(rows)('$name', ({ input, want }) => {
    expect(decideLpxDeadlines(deepFreeze(input), NOW)).toEqual(want);
  });

  it('gives the same output for the same input', () => {
    const input = anObserved({ requests: fourWithTrailingExpired });
    expect(decideLpxDeadlines(input, NOW)).toEqual(decideLpxDeadlines(input, NOW));
  });
});

describe('expiredSuffix (upstream expiredPipelineRequestSuffix: "For four replicas, expiry at {2,3} removes that suffix; {0,3} removes nothing")', () => {
  it.each([
    { name: '{2,3} of 4 -> 2', expired: [2, 3], want: 2 },
    { name: '{3} of 4 -> 3', expired: [3], want: 3 },
    { name: '{0} of 4 -> nothing', expired: [0], want: 4 },
    { name: '{0,3} of 4 -> nothing', expired: [0, 3], want: 4 },
    { name: '{0,1,2,3} of 4 -> 0', expired: [0, 1, 2, 3], want: 0 },
  ])('$name', ({ expired, want }) => {
    const requests = [0, 1, 2, 3].map((i) => aRequest(i));
    expect(expiredSuffix(requests, requests.filter((_, i) => expired.includes(i)), 4).replicas).toBe(want);
  });
});

describe('isDeadlineExempt (upstream isPipelineRequestDeadlineExempt)', () => {
  it.each([
    { name: 'a stale bound receipt does not exempt', status: { phase: 'bound', observedGeneration: 0 }, want: false },
    { name: 'degraded with the current accepted generation is exempt', status: { phase: 'degraded', observedGeneration: 1, committed: { execution: { acceptedGeneration: 1 } } }, want: true },
    { name: 'degraded without a current accepted generation is timed', status: { phase: 'degraded', observedGeneration: 1 }, want: false },
    { name: 'planned is timed', status: { phase: 'planned', observedGeneration: 1 }, want: false },
  ])('$name', ({ status, want }) => {
    expect(isDeadlineExempt(aRequest(0, { status }))).toBe(want);
  });
});
