/**
 * The Run decision: given a DynamoGraphDeploymentRun, its trace claim, its Job (and the Job's
 * waiting containers), whether the request has moved on, and what the publisher reported,
 * decide the Run's `Completed` condition and phase and the writes (claim finalizer, Job
 * create, Job stop). No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Trace claim lifecycle" (every bullet),
 * "Replay a recorded trace" (Pending claims accepted; a failed Run needs a spec change),
 * "v1beta2 DGD Overrides" (Completed owned by the Run logic; a Run with no Valid Candidate
 * fails; a spec change stops the old Run before the new one starts). Upstream: "the run
 * controller derives Completed from the Job result" (upstream-notes/dgdr.md §5).
 * @module
 */
import {
  CONDITION_COMPLETED,
  REASON_CONTAINER_WAITING,
  REASON_EVALUATING_CANDIDATES,
  REASON_JOB_DELETED,
  REASON_JOB_CONFLICT,
  REASON_JOB_FAILED,
  REASON_JOB_PENDING,
  REASON_NO_VALID_CANDIDATES,
  REASON_RUN_SUCCEEDED,
  REASON_SUPERSEDED,
  REASON_TRACE_SOURCE_DELETED,
  REASON_TRACE_SOURCE_MISSING,
  REASON_TRACE_SOURCE_UNAVAILABLE,
  type Condition,
  type Run,
  type RunPhase,
} from '../../api/index.js';
import { shortenName } from '../dgd/names.js';
import { containerWaitingMessage, traceClaimFinalizer, type ClaimState, type JobState, type WaitingContainer } from './observed.js';

/** What the publisher reported: its `Published` condition and the Candidates it wrote. */
export interface PublicationState {
  readonly isPublished: boolean;
  readonly candidates: number;
  readonly validCandidates: number;
}

export interface RunObserved {
  readonly run: Run;
  /** The trace claim of a trace Run; undefined when it does not exist (not read for static Runs). */
  readonly claim: ClaimState | undefined;
  /** The Run's Job, if it exists. */
  readonly job: JobState | undefined;
  readonly waiting: readonly WaitingContainer[];
  /** The request's spec changed after this Run started (its generation is newer), or the request is gone. */
  readonly isSuperseded: boolean;
  readonly publication: PublicationState;
  /** A Job with the Run's Job name exists but is not controlled by this Run (never adopted). */
  readonly foreignJobName?: string;
}

export type RunAction =
  /** Add `nvidia.com/dgdr-run-<uid>` to the claim; always before CreateJob. */
  | { readonly kind: 'AddClaimFinalizer'; readonly claimName: string; readonly finalizer: string }
  | { readonly kind: 'CreateJob'; readonly jobName: string }
  /** Stop the Job by foreground deletion (its pods go first). */
  | { readonly kind: 'StopJob'; readonly jobName: string };

/** The decision table's answer: the Run's state and the writes, before timestamps. */
export interface RunVerdict {
  readonly phase: RunPhase;
  /** `True` when the Run is finished (succeeded or failed); `False` while open. */
  readonly completed: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly actions: readonly RunAction[];
}

/** Job names become the `job-name` label value: at most 63 characters (Kubernetes batch/v1 Job validation). */
const MAX_JOB_NAME_LENGTH = 63;

/** The Run's Job: `<run>-aisimulate`, shortened with a hash to 63 characters (see MAX_JOB_NAME_LENGTH). Pure. */
export function runJobName(runName: string): string {
  return shortenName(`${runName}-aisimulate`, MAX_JOB_NAME_LENGTH);
}

/** The Run's trace claim name, or undefined for a static Run. Pure. */
export function traceClaimNameOf(run: Pick<Run, 'spec'>): string | undefined {
  return run.spec.workload?.trace?.source.persistentVolumeClaim.claimName;
}

/** Whether the Run's Completed condition is True: the Run is finished and never changes again. Pure. */
export function isRunComplete(run: Pick<Run, 'status'>): boolean {
  return run.status?.conditions?.some((c) => c.type === CONDITION_COMPLETED && c.status === 'True') ?? false;
}

/** A Job still runs while it is active or being deleted (its pods may still mount the claim). Pure. */
export function isJobRunning(job: JobState): boolean {
  return job.isDeleting || job.outcome === 'Active';
}

/**
 * A claim under deletion stops a reading Run's Job by foreground deletion, started or not; a
 * Job that already completed or failed, and is not being deleted, is not stopped.
 * Source: reference "Trace claim lifecycle", "Deleting the claim cancels its Runs". Pure.
 */
export function shouldStopJobForDeletedClaim(claim: ClaimState | undefined, job: JobState): boolean {
  return claim !== undefined && claim.isDeleting && !job.isDeleting && job.outcome === 'Active';
}

const open = (phase: RunPhase, reason: string, message: string, actions: readonly RunAction[] = []): RunVerdict => ({ phase, completed: 'False', reason, message, actions });
const failed = (reason: string, message: string): RunVerdict => ({ phase: 'Failed', completed: 'True', reason, message, actions: [] });

/**
 * Before the Job exists, a trace Run checks its claim: missing -> Pending `TraceSourceMissing`
 * until it appears; being deleted -> failed `TraceSourceDeleted`, nothing created; `volumeMode:
 * Block` or phase `Lost` -> failed `TraceSourceUnavailable`; otherwise (a Pending claim
 * included) the finalizer is added, then the Job created.
 * Source: reference "Trace claim lifecycle" (Protection; A missing claim keeps the Run open; A
 * claim no Job can mount fails the Run before it starts; A Pending claim is accepted). Pure.
 */
export function decideTraceClaimBeforeJob(runUid: string, claimName: string, claim: ClaimState | undefined, jobName: string): RunVerdict {
  if (claim === undefined) return open('Pending', REASON_TRACE_SOURCE_MISSING, `PersistentVolumeClaim "${claimName}" not found; the Run starts once it exists`);
  if (claim.isDeleting) return failed(REASON_TRACE_SOURCE_DELETED, `PersistentVolumeClaim "${claimName}" is being deleted`);
  if (claim.volumeMode === 'Block') return failed(REASON_TRACE_SOURCE_UNAVAILABLE, `PersistentVolumeClaim "${claimName}" has volumeMode Block; the trace needs a filesystem volume`);
  if (claim.phase === 'Lost') return failed(REASON_TRACE_SOURCE_UNAVAILABLE, `PersistentVolumeClaim "${claimName}" is Lost`);
  const finalizer = traceClaimFinalizer(runUid);
  const protect: RunAction[] = claim.finalizers.includes(finalizer) ? [] : [{ kind: 'AddClaimFinalizer', claimName, finalizer }];
  return open('Running', REASON_JOB_PENDING, `created Job ${jobName}`, [...protect, { kind: 'CreateJob', jobName }]);
}

/**
 * After the Job is gone: stopped for a deleted claim (the claim seen being deleted, or the Run's
 * own `Completed` reason already `TraceSourceDeleted` while stopping) -> `TraceSourceDeleted`; stopped for a
 * newer request spec -> `Superseded`; deleted by someone else -> `JobDeleted`.
 * Source: reference "Trace claim lifecycle" ("Once the Job and its pod are gone, the Run fails
 * with reason TraceSourceDeleted"; "Once the operator has started stopping a Job, the Run fails
 * with TraceSourceDeleted even if the Job is marked failed while its pod is removed"); "To stop a Run ... change the request's spec (the Run fails
 * with reason Superseded)". Pure.
 */
export function decideJobGone(observed: RunObserved, claimName: string | undefined, jobName: string): RunVerdict {
  // "Once the operator has started stopping a Job, the Run fails with TraceSourceDeleted": a Run
  // that recorded stopping its Job for the claim fails so even when the claim is no longer seen.
  const isStoppingForClaim = observed.run.status?.conditions?.some((c) => c.type === CONDITION_COMPLETED && c.status === 'False' && c.reason === REASON_TRACE_SOURCE_DELETED) ?? false;
  if (claimName !== undefined && (observed.claim?.isDeleting === true || isStoppingForClaim)) return failed(REASON_TRACE_SOURCE_DELETED, `PersistentVolumeClaim "${claimName}" was deleted; Job ${jobName} was stopped`);
  if (observed.isSuperseded) return failed(REASON_SUPERSEDED, `the request's spec changed; Job ${jobName} was stopped`);
  return failed(REASON_JOB_DELETED, `Job ${jobName} was deleted before it finished`);
}

/**
 * While the Job exists: a Job being deleted is waited for (it counts as stopped for a deleted
 * claim even if it is marked failed meanwhile); an active Job is stopped for a newer request
 * spec or a deleted claim, else reports a waiting container (`ContainerWaiting`, no timeout)
 * or progress; a failed Job fails the Run; a complete Job waits for the publisher, then the
 * Run succeeds with at least one Valid Candidate and fails without.
 * Source: reference "Trace claim lifecycle" (Deleting the claim cancels its Runs; A waiting
 * container is a diagnostic); "Candidate status" ("A successful Run requires a successful search
 * and at least one Valid=True Candidate"). Pure.
 */
export function decideWithJob(observed: RunObserved, claimName: string | undefined, job: JobState): RunVerdict {
  const claimDeleting = claimName !== undefined && observed.claim?.isDeleting === true;
  if (job.isDeleting) {
    if (claimDeleting) return open('Running', REASON_TRACE_SOURCE_DELETED, `stopping Job ${job.name}: PersistentVolumeClaim "${claimName}" is being deleted`);
    if (observed.isSuperseded) return open('Running', REASON_SUPERSEDED, `stopping Job ${job.name}: the request's spec changed`);
    return open('Running', REASON_JOB_DELETED, `Job ${job.name} is being deleted`);
  }
  if (job.outcome === 'Active') {
    if (observed.isSuperseded) return open('Running', REASON_SUPERSEDED, `stopping Job ${job.name}: the request's spec changed`, [{ kind: 'StopJob', jobName: job.name }]);
    if (claimDeleting) return open('Running', REASON_TRACE_SOURCE_DELETED, `stopping Job ${job.name}: PersistentVolumeClaim "${claimName}" is being deleted`, [{ kind: 'StopJob', jobName: job.name }]);
    const waiting = observed.waiting[0];
    if (waiting !== undefined) return open('Running', REASON_CONTAINER_WAITING, containerWaitingMessage(waiting));
    return open('Running', REASON_EVALUATING_CANDIDATES, `Job ${job.name} is evaluating candidates`);
  }
  if (job.outcome === 'Failed') return failed(REASON_JOB_FAILED, `Job ${job.name} failed${job.failureMessage === undefined ? '' : `: ${job.failureMessage}`}`);
  const { publication } = observed;
  if (!publication.isPublished) {
    if (observed.isSuperseded) return failed(REASON_SUPERSEDED, `the request's spec changed before the Candidates were published`);
    return open('Running', REASON_EVALUATING_CANDIDATES, `Job ${job.name} finished; publishing Candidates`);
  }
  if (publication.validCandidates === 0) return failed(REASON_NO_VALID_CANDIDATES, `none of the ${publication.candidates} Candidates is Valid`);
  return { phase: 'Succeeded', completed: 'True', reason: REASON_RUN_SUCCEEDED, message: `${publication.validCandidates} of ${publication.candidates} Candidates are Valid`, actions: [] };
}

/**
 * The decision table: claim state x Job state x Run state -> the Run's state and writes.
 * A finished Run (Completed=True) never changes. Without a Job yet, a superseded Run fails
 * `Superseded` and creates nothing; a Job of the same name that the Run does not control is
 * never adopted (`JobConflict`, DESIGN.md "Writes"); a trace Run checks its claim first.
 * In: observed (see RunObserved). Out: RunVerdict, or undefined for a finished Run. Pure.
 */
export function decideRunVerdict(observed: RunObserved): RunVerdict | undefined {
  const { run, job } = observed;
  if (isRunComplete(run)) return undefined;
  const claimName = traceClaimNameOf(run);
  const jobName = run.status?.jobRef?.name ?? runJobName(run.metadata.name ?? '');
  if (job !== undefined) return decideWithJob(observed, claimName, job);
  if (run.status?.jobRef !== undefined) return decideJobGone(observed, claimName, jobName);
  if (observed.foreignJobName !== undefined) return open('Pending', REASON_JOB_CONFLICT, `Job ${observed.foreignJobName} exists and is not controlled by this Run; it is left untouched`);
  if (observed.isSuperseded) return failed(REASON_SUPERSEDED, `the request's spec changed before the Run started`);
  if (claimName !== undefined) return decideTraceClaimBeforeJob(run.metadata.uid ?? '', claimName, observed.claim, jobName);
  return open('Running', REASON_JOB_PENDING, `created Job ${jobName}`, [{ kind: 'CreateJob', jobName }]);
}

/** The Run status fields the Run logic owns (the publisher owns Published, candidateRefs, progress). */
export interface RunStatusIntent {
  readonly observedGeneration: number | undefined;
  readonly phase: RunPhase;
  readonly conditions: readonly Condition[];
  readonly startTime?: string;
  readonly completionTime?: string;
}

export interface RunDesired {
  readonly verdict: RunVerdict;
  readonly status: RunStatusIntent;
}

/**
 * The condition with `lastTransitionTime` kept while the status stays the same, as
 * apimachinery's `meta.SetStatusCondition` does. Pure.
 */
export function nextCondition(previous: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition {
  const old = previous?.find((c) => c.type === next.type);
  return { ...next, lastTransitionTime: old !== undefined && old.status === next.status ? old.lastTransitionTime : now.toISOString() };
}

/**
 * Decides one Run: the verdict and the status the Run logic writes (phase, Completed with
 * observedGeneration, startTime when the Job is created, completionTime when finished).
 * Out: undefined for a finished Run (nothing to write). Pure.
 */
export function decideRun(observed: RunObserved, now: Date): RunDesired | undefined {
  const verdict = decideRunVerdict(observed);
  if (verdict === undefined) return undefined;
  const { run } = observed;
  const condition = nextCondition(run.status?.conditions, { type: CONDITION_COMPLETED, status: verdict.completed, reason: verdict.reason, message: verdict.message, ...(run.metadata.generation === undefined ? {} : { observedGeneration: run.metadata.generation }) }, now);
  const startTime = run.status?.startTime ?? (verdict.actions.some((a) => a.kind === 'CreateJob') ? now.toISOString() : undefined);
  return {
    verdict,
    status: {
      observedGeneration: run.metadata.generation,
      phase: verdict.phase,
      conditions: [condition],
      ...(startTime === undefined ? {} : { startTime }),
      ...(verdict.completed === 'True' ? { completionTime: now.toISOString() } : {}),
    },
  };
}
