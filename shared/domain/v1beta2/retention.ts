/**
 * Run retention: a request keeps its five most recent finished Runs (with their Jobs and
 * pods); older finished Runs are retired. Open Runs are never retired. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Trace claim lifecycle" ("The operator keeps the
 * Runs, Jobs, and pods of a request's five most recent finished Runs").
 * @module
 */
import { RUN_RETENTION_FINISHED } from '../../api/index.js';

/** One Run of a request, as retention reads it. */
export interface RetainedRun {
  readonly name: string;
  readonly isFinished: boolean;
  /** `status.completionTime` (RFC 3339), when finished. */
  readonly completionTime: string | undefined;
  /** The request generation the Run evaluates (its label), for a stable order on equal times. */
  readonly generation: number;
  /** True when the Run already has a deletionTimestamp: it still counts, but is not deleted again. */
  readonly isDeleting?: boolean;
}

/**
 * The finished Runs to delete: all but the `keep` most recent, newest first by completionTime
 * then generation (a finished Run without completionTime counts as the oldest); a Run already
 * being deleted is not deleted again (a quiet pass writes nothing, even while someone's
 * finalizer holds it).
 * In: the request's Runs (any order); keep (default 5). Out: names to delete, sorted. Pure.
 */
export function selectRunsToRetire(runs: readonly RetainedRun[], keep: number = RUN_RETENTION_FINISHED): string[] {
  const finished = runs
    .filter((run) => run.isFinished)
    .slice()
    .sort((a, b) => {
      const byTime = (b.completionTime ?? '').localeCompare(a.completionTime ?? '');
      return byTime !== 0 ? byTime : b.generation - a.generation;
    });
  return finished.slice(keep).filter((run) => run.isDeleting !== true).map((run) => run.name).sort();
}
