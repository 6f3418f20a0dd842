import { describe, expect, it } from 'vitest';
import type { Condition, Dgd } from '../../api/index.js';
import { combineReadiness, evaluateWorkloadReadiness, mergeLpxChildStatus, type LpxChildObserved } from './readiness.js';
import { resolveLpxWorkloads } from './workloads.js';

const REVISION = `sha256:${'a'.repeat(64)}`;
const T = '2026-12-01T10:00:00Z';

const role = (name: string) => ({ name, podTemplate: { spec: { containers: [{ name: 'main', image: 'lpx:1' }] } } });
const dgd = {
  spec: {
    components: [
      { name: 'frontend', type: 'frontend' },
      { name: 'draft', type: 'lpx', replicas: 2, lpx: { buildId: 'd' }, roles: [role('agent')] },
      { name: 'target', type: 'lpx', replicas: 1, lpx: { buildId: 't' }, roles: [role('agent'), role('conductor')] },
    ],
  },
} as unknown as Dgd;
const workloads = resolveLpxWorkloads(dgd);

const ready = (status: 'True' | 'False', reason: string, message: string): Condition => ({ type: 'Ready', status, reason, message, lastTransitionTime: T, observedGeneration: 3 });
function aChild(overrides: Partial<LpxChildObserved> = {}): LpxChildObserved {
  return {
    generation: 3,
    observedGeneration: 3,
    inputRevision: REVISION,
    isDeleting: false,
    conditions: [ready('True', 'Ready', 'LPX engine is ready')],
    components: {
      target: { componentKind: 'PodCliqueScalingGroup', componentNames: ['demo-1a2b-0-lpx'], replicas: 1, updatedReplicas: 1, availableReplicas: 1, retainedReplicas: 1, conditions: [] },
      draft: { componentKind: 'PodClique', componentNames: ['agt0', 'agt1'], replicas: 2 },
    },
    ...overrides,
  };
}

const placeholders = { draft: { componentKind: 'PodClique' }, target: { componentKind: 'PodCliqueScalingGroup' } };
const copied = {
  draft: { componentKind: 'PodClique', componentNames: ['agt0', 'agt1'], replicas: 2 },
  target: { componentKind: 'PodCliqueScalingGroup', componentNames: ['demo-1a2b-0-lpx'], replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
};
const childPending = { kind: 'pending', reason: 'LPXChildPending', message: 'Waiting for the current LPX engine revision and readiness' };

describe('mergeLpxChildStatus (lpx.md §6.1 mergeLPXChildStatus)', () => {
  it.each([
    {
      name: 'no child yet: placeholders and LPXChildPending',
      reason: '"Each LPX component gets a placeholder ComponentReplicaStatus{componentKind}"; otherwise Pending LPXChildPending',
      child: undefined,
      want: { components: placeholders, verdict: childPending },
    },
    {
      name: 'a current, observed, Ready child: its component statuses are copied and the LPX part is ready',
      reason: '"If the child is current and observed, copy the child\'s component statuses"; "Ready True: leave the ordinary result"',
      child: aChild(),
      want: { components: copied, verdict: { kind: 'ready' } },
    },
    {
      name: 'a child at an older input revision is not current: LPXChildPending, nothing copied',
      reason: 'Restart progress: "spec.inputRevision equals the revision recomputed from the current DGD. An old Ready is not enough."',
      child: aChild({ inputRevision: `sha256:${'b'.repeat(64)}` }),
      want: { components: placeholders, verdict: childPending },
    },
    {
      name: 'a child whose status lags its generation is not observed: LPXChildPending',
      reason: '"observed (observedGeneration == generation)"',
      child: aChild({ observedGeneration: 2 }),
      want: { components: placeholders, verdict: childPending },
    },
    {
      name: 'a deleting child is not current',
      reason: '"current (exists, not deleting)"',
      child: aChild({ isDeleting: true }),
      want: { components: placeholders, verdict: childPending },
    },
    {
      name: 'an observed child pending: the DGD is pending with the child\'s reason and message',
      reason: '"observed + current, Ready not True: DGD Pending, with the child\'s reason and message"',
      child: aChild({ conditions: [ready('False', 'Pending', 'LPX scheduler is binding the planned workload Pods')] }),
      want: { components: copied, verdict: { kind: 'pending', reason: 'Pending', message: 'LPX scheduler is binding the planned workload Pods' } },
    },
    {
      name: 'a current child failed: the DGD fails with the child\'s reason and message',
      reason: '"Ready current, False, reason Failed: DGD Failed, with the child\'s reason and message"',
      child: aChild({ conditions: [ready('False', 'Failed', 'An LPX request exceeded its scheduling deadline')] }),
      want: { components: copied, verdict: { kind: 'failed', reason: 'Failed', message: 'An LPX request exceeded its scheduling deadline' } },
    },
  ])('$name', ({ child, want }) => {
    expect(mergeLpxChildStatus(workloads, child, REVISION)).toEqual(want);
  });
});

describe('combineReadiness (issue 11: "a DGD is not Ready while its LPX part is not")', () => {
  const ordinaryReady = { isReady: true, reason: 'all_resources_are_ready', message: 'All resources are ready' };
  const ordinaryPending = { isReady: false, reason: 'some_resources_are_not_ready', message: 'frontend: pods_not_ready' };
  it.each([
    { name: 'both ready: Ready', ordinary: ordinaryReady, lpx: { kind: 'ready' as const }, want: { isReady: true, isFailed: false, reason: 'all_resources_are_ready', message: 'All resources are ready' } },
    { name: 'ordinary ready, LPX pending: not Ready, LPX reason', ordinary: ordinaryReady, lpx: childPending as never, want: { isReady: false, isFailed: false, reason: 'LPXChildPending', message: 'Waiting for the current LPX engine revision and readiness' } },
    { name: 'ordinary pending, LPX ready: not Ready, ordinary reason', ordinary: ordinaryPending, lpx: { kind: 'ready' as const }, want: { isReady: false, isFailed: false, reason: 'some_resources_are_not_ready', message: 'frontend: pods_not_ready' } },
    {
      name: 'both pending: ordinary reason, both messages',
      ordinary: ordinaryPending,
      lpx: childPending as never,
      want: { isReady: false, isFailed: false, reason: 'some_resources_are_not_ready', message: 'frontend: pods_not_ready; LPX: Waiting for the current LPX engine revision and readiness' },
    },
    { name: 'LPX failed outranks everything', ordinary: ordinaryReady, lpx: { kind: 'failed' as const, reason: 'Failed', message: 'x' }, want: { isReady: false, isFailed: true, reason: 'Failed', message: 'x' } },
  ])('$name', ({ ordinary, lpx, want }) => {
    expect(combineReadiness(ordinary, lpx)).toEqual(want);
  });
});

describe('evaluateWorkloadReadiness (lpx.md §5.2 pending messages)', () => {
  const group = (spec: number, status: Record<string, number>, generation = 1) => ({
    apiVersion: 'grove.io/v1alpha1' as const,
    kind: 'PodCliqueScalingGroup' as const,
    metadata: { name: 'demo-1a2b-0-lpx', generation },
    spec: { replicas: spec, cliqueNames: ['agt', 'cond'] },
    status,
  });
  it.each([
    { name: 'no PCS', pcs: false, g: undefined, want: 'Waiting for the exact LPX PodCliqueSet' },
    { name: 'no PCSG', pcs: true, g: undefined, want: 'Waiting for the LPX scaling group' },
    { name: 'PCSG not observed', pcs: true, g: group(2, { observedGeneration: 0 }), want: 'Waiting for the exact observed LPX scaling group' },
    { name: 'PCSG at another capacity', pcs: true, g: group(1, { observedGeneration: 1 }), want: 'LPX scaling group has not applied the desired revision and capacity' },
    { name: 'scheduled but not available', pcs: true, g: group(2, { observedGeneration: 1, scheduledReplicas: 2, updatedReplicas: 2, availableReplicas: 1 }), want: 'scheduled but available=1/2' },
  ])('$name', ({ pcs, g, want }) => {
    expect(evaluateWorkloadReadiness(pcs, g, 2).verdict).toEqual({ kind: 'pending', reason: 'Pending', message: want });
  });
  it('ready when every count reaches the desired capacity', () => {
    expect(evaluateWorkloadReadiness(true, group(2, { observedGeneration: 1, replicas: 2, scheduledReplicas: 2, updatedReplicas: 2, availableReplicas: 2 }), 2).verdict).toEqual({ kind: 'ready' });
  });
});
