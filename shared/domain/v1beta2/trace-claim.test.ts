import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { RUN_UID, aClaim, aJob } from '../../../test/support/v1beta2-builders.js';
import { claimStateOf, jobStateOf, waitingContainersOf } from './observed.js';
import { decideTraceClaim, type ClaimDesired, type ClaimReader } from './trace-claim.js';

const FINALIZER = `nvidia.com/dgdr-run-${RUN_UID}`;
const OTHER_UID = '7d1f0a52-0000-4000-8000-000000000002';
const OTHER_FINALIZER = `nvidia.com/dgdr-run-${OTHER_UID}`;
const JOB = 'qwen3-trace-replay-1-aisimulate';
/** The claim the Runs read (aClaim's name). */
const CLAIM = aClaim().name;

function reader(overrides: Partial<ClaimReader> = {}): ClaimReader {
  return { runUid: RUN_UID, run: { name: 'qwen3-trace-replay-1', isComplete: false, claimName: CLAIM }, jobs: [aJob()], ...overrides };
}

describe('trace claim release: claim state x Job state x Run state -> action and reason', () => {
  const rows: { name: string; reason: string; claim: ReturnType<typeof aClaim>; readers: ClaimReader[]; want: ClaimDesired }[] = [
    {
      name: 'open Run with an active Job: keep the finalizer',
      reason: 'reference "Trace claim lifecycle", Protection',
      claim: aClaim(),
      readers: [reader()],
      want: { removeFinalizers: [], stopJobs: [], verdicts: [{ kind: 'Keep', runUid: RUN_UID, reason: 'RunOpen' }] },
    },
    {
      name: 'complete Run whose Job finished: release',
      reason: 'reference: "removes a Run\'s finalizer once the Run is complete and none of its Jobs is still running"',
      claim: aClaim(),
      readers: [reader({ run: { name: 'r', isComplete: true, claimName: CLAIM }, jobs: [aJob({ outcome: 'Complete' })] })],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'RunComplete' }] },
    },
    {
      name: 'complete Run whose Job is still being deleted: keep until it is gone',
      reason: 'reference: "... and none of its Jobs is still running"',
      claim: aClaim(),
      readers: [reader({ run: { name: 'r', isComplete: true, claimName: CLAIM }, jobs: [aJob({ outcome: 'Failed', isDeleting: true })] })],
      want: { removeFinalizers: [], stopJobs: [], verdicts: [{ kind: 'Keep', runUid: RUN_UID, reason: 'JobRunning' }] },
    },
    {
      name: 'Run deleted and its Jobs gone: release',
      reason: 'reference: "or once the Run and its Jobs are deleted, for example when the request retires old Runs or is deleted"',
      claim: aClaim(),
      readers: [reader({ run: undefined, jobs: [] })],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'RunDeleted' }] },
    },
    {
      name: 'Run deleted but its Job not yet collected: keep',
      reason: 'reference: "once the Run and its Jobs are deleted"',
      claim: aClaim(),
      readers: [reader({ run: undefined, jobs: [aJob({ isDeleting: true })] })],
      want: { removeFinalizers: [], stopJobs: [], verdicts: [{ kind: 'Keep', runUid: RUN_UID, reason: 'JobsLinger' }] },
    },
    {
      name: 'claim being deleted, open Run with an active Job: stop the Job',
      reason: 'reference: "When the claim has a deletionTimestamp, the operator stops the Job of every Run that reads it through foreground deletion"',
      claim: aClaim({ isDeleting: true }),
      readers: [reader()],
      want: { removeFinalizers: [], stopJobs: [JOB], verdicts: [{ kind: 'StopJob', runUid: RUN_UID, jobName: JOB }] },
    },
    {
      name: 'claim being deleted, Job already being stopped: wait',
      reason: 'reference: "Once the Job and its pod are gone, the Run fails with reason TraceSourceDeleted, and the operator then removes the Run\'s finalizer"',
      claim: aClaim({ isDeleting: true }),
      readers: [reader({ jobs: [aJob({ isDeleting: true })] })],
      want: { removeFinalizers: [], stopJobs: [], verdicts: [{ kind: 'Keep', runUid: RUN_UID, reason: 'RunOpen' }] },
    },
    {
      name: 'claim being deleted, Job finished before the deletion: not stopped',
      reason: 'reference: "A Job that already completed or failed before the claim\'s deletion, and is not itself being deleted, is not stopped"',
      claim: aClaim({ isDeleting: true }),
      readers: [reader({ jobs: [aJob({ outcome: 'Complete' })] })],
      want: { removeFinalizers: [], stopJobs: [], verdicts: [{ kind: 'Keep', runUid: RUN_UID, reason: 'RunOpen' }] },
    },
    {
      name: 'claim being deleted, Run failed TraceSourceDeleted and its Job gone: release',
      reason: 'reference: "... and the operator then removes the Run\'s finalizer"',
      claim: aClaim({ isDeleting: true }),
      readers: [reader({ run: { name: 'r', isComplete: true, claimName: CLAIM }, jobs: [] })],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'RunComplete' }] },
    },
    {
      name: 'two Runs share the claim: each finalizer is decided on its own; others are never touched',
      reason: 'reference: "Every Run that reads the claim adds its own finalizer, so Runs of several requests can share a claim"',
      claim: aClaim({ finalizers: ['kubernetes.io/pvc-protection', FINALIZER, OTHER_FINALIZER, 'example.com/keep'] }),
      readers: [reader({ run: { name: 'r', isComplete: true, claimName: CLAIM }, jobs: [] }), reader({ runUid: OTHER_UID })],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'RunComplete' }, { kind: 'Keep', runUid: OTHER_UID, reason: 'RunOpen' }] },
    },
    {
      name: 'issue 20 "the same rule everywhere a function reads what a Job or a user could also write": claim being deleted, carrying the finalizer of an open Run that reads another claim: its active Job is not stopped, the finalizer is released',
      reason: 'reference: the operator stops "the Job of every Run that reads it"; a finalizer anyone added proves nothing',
      claim: aClaim({ name: 'decoy', isDeleting: true }),
      readers: [reader()],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'NotReader' }] },
    },
    {
      name: 'issue 20: a live claim carrying the finalizer of a Run that reads no claim (a static workload): released, its Job untouched',
      reason: 'reference Protection: "Every Run that reads the claim adds its own finalizer"; this Run reads none',
      claim: aClaim({ name: 'decoy' }),
      readers: [reader({ run: { name: 'static-1', isComplete: false, claimName: undefined } })],
      want: { removeFinalizers: [FINALIZER], stopJobs: [], verdicts: [{ kind: 'Release', runUid: RUN_UID, finalizer: FINALIZER, reason: 'NotReader' }] },
    },
  ];

  it.each(rows)('$name', ({ claim, readers, want }) => {
    const input = deepFreeze({ claim, readers: new Map(readers.map((r) => [r.runUid, r])) });
    expect(decideTraceClaim(input.claim, input.readers)).toEqual(want);
  });
});

describe('reading claims, Jobs and pods (structured state only)', () => {
  it('claim: deletionTimestamp, volumeMode (default Filesystem), phase, finalizers', () => {
    expect(claimStateOf({ metadata: { name: 'c', deletionTimestamp: '2026-12-01T00:00:00Z', finalizers: ['a'] }, spec: {}, status: { phase: 'Bound' } })).toEqual({ name: 'c', isDeleting: true, volumeMode: 'Filesystem', phase: 'Bound', finalizers: ['a'] });
  });

  it.each([
    { name: 'no conditions: Active', conditions: [], want: 'Active' },
    { name: 'Complete=True: Complete', conditions: [{ type: 'Complete', status: 'True' }], want: 'Complete' },
    { name: 'SuccessCriteriaMet=True: Complete', conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }], want: 'Complete' },
    { name: 'FailureTarget=True: Failed', conditions: [{ type: 'FailureTarget', status: 'True', message: 'm' }], want: 'Failed' },
    { name: 'Failed=False: Active', conditions: [{ type: 'Failed', status: 'False' }], want: 'Active' },
  ])('Job conditions (batch/v1 Job status): $name', ({ conditions, want }) => {
    expect(jobStateOf({ metadata: { name: 'j' }, status: { conditions } }).outcome).toBe(want);
  });

  it('waiting containers: errors are copied; ContainerCreating and PodInitializing are not reported', () => {
    const pod = {
      status: {
        initContainerStatuses: [{ name: 'init', state: { waiting: { reason: 'PodInitializing' } } }],
        containerStatuses: [
          { name: 'aisimulate', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } },
          { name: 'other', state: { waiting: { reason: 'ContainerCreating' } } },
          { name: 'running', state: { running: {} } },
        ],
      },
    };
    expect(waitingContainersOf([pod])).toEqual([{ name: 'aisimulate', reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' }]);
  });
});
