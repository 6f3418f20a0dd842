import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { RUN_UID, aClaim, aJob, aRun } from '../../../test/support/v1beta2-builders.js';
import { decideRun, decideRunVerdict, runJobName, type RunObserved, type RunVerdict } from './run-lifecycle.js';

const JOB = 'qwen3-trace-replay-1-aisimulate';
const FINALIZER = `nvidia.com/dgdr-run-${RUN_UID}`;
const started = { jobRef: { name: JOB, uid: 'job-uid-1' } };

function observed(overrides: Partial<RunObserved> = {}): RunObserved {
  return { run: aRun(), claim: aClaim(), job: undefined, waiting: [], isSuperseded: false, publication: { isPublished: false, candidates: 0, validCandidates: 0 }, ...overrides };
}

const open = (phase: RunVerdict['phase'], reason: string, message: string, actions: RunVerdict['actions'] = []): RunVerdict => ({ phase, completed: 'False', reason, message, actions });
const failed = (reason: string, message: string): RunVerdict => ({ phase: 'Failed', completed: 'True', reason, message, actions: [] });

describe('the Run decision table: claim state x Job state x Run state -> action and reason', () => {
  const rows: { name: string; reason: string; input: RunObserved; want: RunVerdict | undefined }[] = [
    {
      name: 'claim without our finalizer, no Job: add the finalizer, then create the Job',
      reason: 'reference "Trace claim lifecycle", Protection: "Before a Run creates its Job, the operator adds the finalizer nvidia.com/dgdr-run-<run-uid>"',
      input: observed({ claim: aClaim({ finalizers: ['kubernetes.io/pvc-protection'] }) }),
      want: open('Running', 'JobPending', `created Job ${JOB}`, [{ kind: 'AddClaimFinalizer', claimName: 'request-traces', finalizer: FINALIZER }, { kind: 'CreateJob', jobName: JOB }]),
    },
    {
      name: 'claim already protected, no Job: create the Job only',
      reason: 'reference "Trace claim lifecycle", Protection (idempotent)',
      input: observed(),
      want: open('Running', 'JobPending', `created Job ${JOB}`, [{ kind: 'CreateJob', jobName: JOB }]),
    },
    {
      name: 'a Pending claim is accepted',
      reason: 'reference "Trace claim lifecycle": "A Pending claim, such as one that waits for its first consumer, is accepted"',
      input: observed({ claim: aClaim({ phase: 'Pending', finalizers: [] }) }),
      want: open('Running', 'JobPending', `created Job ${JOB}`, [{ kind: 'AddClaimFinalizer', claimName: 'request-traces', finalizer: FINALIZER }, { kind: 'CreateJob', jobName: JOB }]),
    },
    {
      name: 'missing claim: Pending, Completed=False TraceSourceMissing, nothing created',
      reason: 'reference "Trace claim lifecycle": "When the claim does not exist, the Run stays Pending with Completed=False and reason TraceSourceMissing"',
      input: observed({ claim: undefined }),
      want: open('Pending', 'TraceSourceMissing', 'PersistentVolumeClaim "request-traces" not found; the Run starts once it exists'),
    },
    {
      name: 'claim being deleted before the Job: fail TraceSourceDeleted without creating anything',
      reason: 'reference "Trace claim lifecycle": "A Run whose claim is already being deleted before it creates its Job fails with TraceSourceDeleted without creating anything"',
      input: observed({ claim: aClaim({ isDeleting: true, finalizers: ['kubernetes.io/pvc-protection'] }) }),
      want: failed('TraceSourceDeleted', 'PersistentVolumeClaim "request-traces" is being deleted'),
    },
    {
      name: 'volumeMode Block before the Job: fail TraceSourceUnavailable',
      reason: 'reference "Trace claim lifecycle": "Before the Run creates its Job, a volumeMode: Block claim ... fails the Run with reason TraceSourceUnavailable"',
      input: observed({ claim: aClaim({ volumeMode: 'Block', finalizers: [] }) }),
      want: failed('TraceSourceUnavailable', 'PersistentVolumeClaim "request-traces" has volumeMode Block; the trace needs a filesystem volume'),
    },
    {
      name: 'phase Lost before the Job: fail TraceSourceUnavailable',
      reason: 'reference "Trace claim lifecycle": "... or a claim in phase Lost fails the Run with reason TraceSourceUnavailable"',
      input: observed({ claim: aClaim({ phase: 'Lost', finalizers: [] }) }),
      want: failed('TraceSourceUnavailable', 'PersistentVolumeClaim "request-traces" is Lost'),
    },
    {
      name: 'phase Lost after the Job exists is not checked again',
      reason: 'reference "Trace claim lifecycle": "After the Job exists, the operator does not check the claim\'s volume mode or phase again"',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ phase: 'Lost' }), job: aJob() }),
      want: open('Running', 'EvaluatingCandidates', `Job ${JOB} is evaluating candidates`),
    },
    {
      name: 'active Job with a container waiting on an error: ContainerWaiting with the copied reason and message, Job kept',
      reason: 'reference "Trace claim lifecycle": "the Run stays open with Completed=False, reason ContainerWaiting, and the message container "<name>" is waiting: <reason>: <message> ... The operator does not delete the Job, and there is no timeout"',
      input: observed({ run: aRun({ status: started }), job: aJob(), waiting: [{ name: 'aisimulate', reason: 'CreateContainerConfigError', message: 'failed to prepare subPath for volumeMount "trace"' }] }),
      want: open('Running', 'ContainerWaiting', 'container "aisimulate" is waiting: CreateContainerConfigError: failed to prepare subPath for volumeMount "trace"'),
    },
    {
      name: 'claim being deleted while the Job is active: stop the Job, Run still open',
      reason: 'reference "Trace claim lifecycle": "the operator stops the Job of every Run that reads it through foreground deletion, whether or not the Job\'s pod has started"',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ isDeleting: true }), job: aJob() }),
      want: open('Running', 'TraceSourceDeleted', `stopping Job ${JOB}: PersistentVolumeClaim "request-traces" is being deleted`, [{ kind: 'StopJob', jobName: JOB }]),
    },
    {
      name: 'claim being deleted, Job being deleted and marked failed meanwhile: wait, still TraceSourceDeleted',
      reason: 'reference "Trace claim lifecycle": "Once the operator has started stopping a Job, the Run fails with TraceSourceDeleted even if the Job is marked failed while its pod is removed"',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ isDeleting: true }), job: aJob({ isDeleting: true, outcome: 'Failed', failureMessage: 'pod deleted' }) }),
      want: open('Running', 'TraceSourceDeleted', `stopping Job ${JOB}: PersistentVolumeClaim "request-traces" is being deleted`),
    },
    {
      name: 'claim being deleted and the stopped Job gone: fail TraceSourceDeleted',
      reason: 'reference "Trace claim lifecycle": "Once the Job and its pod are gone, the Run fails with reason TraceSourceDeleted"',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ isDeleting: true }), job: undefined }),
      want: failed('TraceSourceDeleted', `PersistentVolumeClaim "request-traces" was deleted; Job ${JOB} was stopped`),
    },
    {
      name: 'claim being deleted after the Job failed on its own: the Job\'s outcome decides',
      reason: 'reference "Trace claim lifecycle": "A Job that already completed or failed before the claim\'s deletion, and is not itself being deleted, is not stopped; its own outcome decides the Run"',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ isDeleting: true }), job: aJob({ outcome: 'Failed', failureMessage: 'Job has reached the specified backoff limit' }) }),
      want: failed('JobFailed', `Job ${JOB} failed: Job has reached the specified backoff limit`),
    },
    {
      name: 'claim being deleted after the Job completed and Candidates were published: the Run succeeds',
      reason: 'reference "Trace claim lifecycle" (a completed Job keeps its own outcome); "Candidate status": success needs one Valid Candidate',
      input: observed({ run: aRun({ status: started }), claim: aClaim({ isDeleting: true }), job: aJob({ outcome: 'Complete' }), publication: { isPublished: true, candidates: 3, validCandidates: 2 } }),
      want: { phase: 'Succeeded', completed: 'True', reason: 'RunSucceeded', message: '2 of 3 Candidates are Valid', actions: [] },
    },
    {
      name: 'Job complete, publisher not done yet: open',
      reason: 'reference "v1beta2 DGD Overrides": "Published is owned by the publisher; the Run controller independently owns Completed"',
      input: observed({ run: aRun({ status: started }), job: aJob({ outcome: 'Complete' }) }),
      want: open('Running', 'EvaluatingCandidates', `Job ${JOB} finished; publishing Candidates`),
    },
    {
      name: 'Job complete, every Candidate invalid: the Run fails and keeps them',
      reason: 'reference "Candidate status": "when all selected Candidates are invalid, the Run fails and keeps them for diagnosis"',
      input: observed({ run: aRun({ status: started }), job: aJob({ outcome: 'Complete' }), publication: { isPublished: true, candidates: 2, validCandidates: 0 } }),
      want: failed('NoValidCandidates', 'none of the 2 Candidates is Valid'),
    },
    {
      name: 'request spec changed while the Job is active: stop the Job (Superseded)',
      reason: 'reference "v1beta2 DGD Overrides": "Changing the request\'s spec stops the old Run and its publisher before starting the replacement Run"',
      input: observed({ run: aRun({ status: started }), job: aJob(), isSuperseded: true }),
      want: open('Running', 'Superseded', `stopping Job ${JOB}: the request's spec changed`, [{ kind: 'StopJob', jobName: JOB }]),
    },
    {
      name: 'request spec changed and the stopped Job gone: fail Superseded',
      reason: 'reference "Trace claim lifecycle": "change the request\'s spec (the Run fails with reason Superseded)"',
      input: observed({ run: aRun({ status: started }), isSuperseded: true }),
      want: failed('Superseded', `the request's spec changed; Job ${JOB} was stopped`),
    },
    {
      name: 'request spec changed before the Run started: fail Superseded, create nothing',
      reason: 'reference "v1beta2 DGD Overrides" (the old Run stops before the new one starts)',
      input: observed({ isSuperseded: true }),
      want: failed('Superseded', "the request's spec changed before the Run started"),
    },
    {
      name: 'a Job deleted by someone else: fail JobDeleted',
      reason: 'our rule: a Run whose Job vanished cannot finish (reference: "after a Run failed, change the request\'s spec to start a new Run")',
      input: observed({ run: aRun({ status: started }) }),
      want: failed('JobDeleted', `Job ${JOB} was deleted before it finished`),
    },
    {
      name: 'stopping for the claim recorded, the Job gone and the claim no longer seen: fail TraceSourceDeleted, not JobDeleted',
      reason: 'reference "Trace claim lifecycle": "Once the operator has started stopping a Job, the Run fails with TraceSourceDeleted even if the Job is marked failed while its pod is removed"',
      input: observed({
        run: aRun({ status: { ...started, conditions: [{ type: 'Completed', status: 'False', reason: 'TraceSourceDeleted', message: `stopping Job ${JOB}: PersistentVolumeClaim "request-traces" is being deleted`, lastTransitionTime: '2026-12-01T08:00:00.000Z' }] } }),
        claim: undefined,
      }),
      want: failed('TraceSourceDeleted', `PersistentVolumeClaim "request-traces" was deleted; Job ${JOB} was stopped`),
    },
    {
      name: 'stopping for a newer request spec recorded (not the claim), the Job gone: the recorded claim rule does not apply, JobDeleted',
      reason: 'reference "Trace claim lifecycle": TraceSourceDeleted is the claim\'s cancellation only; a Job vanished otherwise cannot finish',
      input: observed({
        run: aRun({ status: { ...started, conditions: [{ type: 'Completed', status: 'False', reason: 'JobDeleted', message: `Job ${JOB} is being deleted`, lastTransitionTime: '2026-12-01T08:00:00.000Z' }] } }),
        claim: undefined,
      }),
      want: failed('JobDeleted', `Job ${JOB} was deleted before it finished`),
    },
    {
      name: 'a Job of the same name the Run does not control: left untouched, JobConflict',
      reason: 'DESIGN.md "Writes": "Never adopt ... the parent reports the conflict on its status"',
      input: observed({ foreignJobName: JOB }),
      want: open('Pending', 'JobConflict', `Job ${JOB} exists and is not controlled by this Run; it is left untouched`),
    },
    {
      name: 'a static Run creates its Job without any claim',
      reason: 'reference "Trace claim lifecycle" applies to trace Runs only',
      input: observed({ run: aRun({ spec: { workload: { static: { isl: 4000, osl: 1000 } } } }), claim: undefined }),
      want: open('Running', 'JobPending', `created Job ${JOB}`, [{ kind: 'CreateJob', jobName: JOB }]),
    },
    {
      name: 'a finished Run never changes',
      reason: 'reference "Replay a recorded trace": "after a Run failed, change the request\'s spec to start a new Run"',
      input: observed({ run: aRun({ status: { ...started, conditions: [{ type: 'Completed', status: 'True', reason: 'JobFailed', message: 'x', lastTransitionTime: '2026-12-01T08:00:00.000Z' }] } }), claim: undefined }),
      want: undefined,
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(decideRunVerdict(deepFreeze(input))).toEqual(want);
  });
});

describe('decideRun status', () => {
  const now = new Date('2026-12-01T09:00:00.000Z');

  it('writes phase, Completed with observedGeneration, startTime on Job creation', () => {
    expect(decideRun(observed(), now)?.status).toEqual({
      observedGeneration: 1,
      phase: 'Running',
      conditions: [{ type: 'Completed', status: 'False', reason: 'JobPending', message: `created Job ${JOB}`, observedGeneration: 1, lastTransitionTime: now.toISOString() }],
      startTime: now.toISOString(),
    });
  });

  it('keeps lastTransitionTime while Completed stays False, and sets completionTime when it turns True', () => {
    const earlier = '2026-12-01T08:00:00.000Z';
    const run = aRun({ status: { ...started, startTime: earlier, conditions: [{ type: 'Completed', status: 'False', reason: 'EvaluatingCandidates', message: 'x', lastTransitionTime: earlier }] } });
    expect(decideRun(observed({ run, job: aJob() }), now)?.status.conditions[0]?.lastTransitionTime).toBe(earlier);
    const done = decideRun(observed({ run, job: aJob({ outcome: 'Failed' }) }), now)?.status;
    expect(done).toMatchObject({ phase: 'Failed', startTime: earlier, completionTime: now.toISOString(), conditions: [{ status: 'True', reason: 'JobFailed', lastTransitionTime: now.toISOString() }] });
  });

  it('deciding again after the Job was created gives the same open state and no new Job', () => {
    const first = decideRun(observed(), now);
    const run = aRun({ status: { ...started, ...first?.status, conditions: [...(first?.status.conditions ?? [])] } });
    expect(decideRunVerdict(observed({ run, job: aJob() }))?.actions).toEqual([]);
  });

  it('names the Job <run>-aisimulate within 63 characters', () => {
    expect(runJobName('qwen3-trace-replay-1')).toBe('qwen3-trace-replay-1-aisimulate');
    const long = runJobName('a'.repeat(60));
    expect(long).toHaveLength(63);
    expect(long).toBe(runJobName('a'.repeat(60)));
  });
});
