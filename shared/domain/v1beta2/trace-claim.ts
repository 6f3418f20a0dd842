/**
 * The cleanup side of the trace-claim lifecycle: for one claim, which Run finalizers to
 * remove and which reading Runs' Jobs to stop. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Trace claim lifecycle": "The operator removes
 * a Run's finalizer once the Run is complete and none of its Jobs is still running, or once the
 * Run and its Jobs are deleted"; "When the claim has a deletionTimestamp, the operator stops the
 * Job of every Run that reads it through foreground deletion ... then removes the Run's
 * finalizer".
 * @module
 */
import { isJobRunning, shouldStopJobForDeletedClaim } from './run-lifecycle.js';
import { runUidOfFinalizer, type ClaimState, type JobState } from './observed.js';

/** One Run named by a claim finalizer, as observed now. */
export interface ClaimReader {
  readonly runUid: string;
  /** The Run, or undefined when it is gone; `claimName` is the claim its spec reads (`traceClaimNameOf`), if any. */
  readonly run: { readonly name: string; readonly isComplete: boolean; readonly claimName: string | undefined } | undefined;
  /** The Jobs labelled with this Run's uid (a gone Run's Jobs linger until garbage collection). */
  readonly jobs: readonly JobState[];
}

export type ClaimReaderVerdict =
  | { readonly kind: 'Release'; readonly runUid: string; readonly finalizer: string; readonly reason: 'RunComplete' | 'RunDeleted' | 'NotReader' }
  | { readonly kind: 'StopJob'; readonly runUid: string; readonly jobName: string }
  | { readonly kind: 'Keep'; readonly runUid: string; readonly reason: 'RunOpen' | 'JobRunning' | 'JobsLinger' };

export interface ClaimDesired {
  /** Finalizers to remove from the claim, in finalizer order. */
  readonly removeFinalizers: readonly string[];
  /** Jobs to stop by foreground deletion, sorted by name. */
  readonly stopJobs: readonly string[];
  /** One verdict per Run finalizer, for logs and tests. */
  readonly verdicts: readonly ClaimReaderVerdict[];
}

/**
 * Decides one reader of the claim: a gone Run is released once its Jobs are gone too; a
 * complete Run once none of its Jobs still runs; on a claim under deletion the active Jobs of
 * an open Run are stopped (the Run then fails `TraceSourceDeleted` and is released as complete).
 * A Run whose spec reads another claim (or none) is not a reader of this one, whatever finalizer
 * the claim carries (anyone who can write the claim can add one): its Jobs are never stopped here
 * and the finalizer, which protects nothing the Run reads, is released at once (`NotReader`;
 * issue 20 "the same rule everywhere a function reads what a Job or a user could also write").
 * Source: reference "Trace claim lifecycle" (Protection: "Every Run that reads the claim adds
 * its own finalizer"; Deleting the claim cancels "every Run that reads it"). Pure.
 */
export function decideClaimReader(claim: ClaimState, reader: ClaimReader, finalizer: string): readonly ClaimReaderVerdict[] {
  if (reader.run === undefined) {
    return reader.jobs.length === 0 ? [{ kind: 'Release', runUid: reader.runUid, finalizer, reason: 'RunDeleted' }] : [{ kind: 'Keep', runUid: reader.runUid, reason: 'JobsLinger' }];
  }
  if (reader.run.claimName !== claim.name) return [{ kind: 'Release', runUid: reader.runUid, finalizer, reason: 'NotReader' }];
  const running = reader.jobs.filter(isJobRunning);
  if (reader.run.isComplete) {
    return running.length === 0 ? [{ kind: 'Release', runUid: reader.runUid, finalizer, reason: 'RunComplete' }] : [{ kind: 'Keep', runUid: reader.runUid, reason: 'JobRunning' }];
  }
  const stops = reader.jobs.filter((job) => shouldStopJobForDeletedClaim(claim, job)).map((job): ClaimReaderVerdict => ({ kind: 'StopJob', runUid: reader.runUid, jobName: job.name }));
  return stops.length > 0 ? stops : [{ kind: 'Keep', runUid: reader.runUid, reason: 'RunOpen' }];
}

/**
 * True when `finalizers` holds a Run's `nvidia.com/dgdr-run-<uid>` finalizer: the claims the
 * cleanup function resyncs and decides when a Run or Job is gone and its claim is unknown.
 * Source: reference "Trace claim lifecycle" (Protection). Pure.
 */
export function hasTraceClaimFinalizer(finalizers: readonly string[]): boolean {
  return finalizers.some((finalizer) => runUidOfFinalizer(finalizer) !== undefined);
}

/**
 * Decides one trace claim: every `nvidia.com/dgdr-run-<uid>` finalizer is matched with its
 * reader (readers missing from `readers` count as gone Runs with no Jobs); other finalizers
 * (kubernetes.io/pvc-protection, anyone's) are never touched.
 * In: the claim; readers by Run uid. Out: ClaimDesired. Pure.
 */
export function decideTraceClaim(claim: ClaimState, readers: ReadonlyMap<string, ClaimReader>): ClaimDesired {
  const verdicts: ClaimReaderVerdict[] = [];
  for (const finalizer of claim.finalizers) {
    const runUid = runUidOfFinalizer(finalizer);
    if (runUid === undefined) continue;
    verdicts.push(...decideClaimReader(claim, readers.get(runUid) ?? { runUid, run: undefined, jobs: [] }, finalizer));
  }
  return {
    removeFinalizers: verdicts.flatMap((v) => (v.kind === 'Release' ? [v.finalizer] : [])),
    stopJobs: verdicts.flatMap((v) => (v.kind === 'StopJob' ? [v.jobName] : [])).sort(),
    verdicts,
  };
}
