/**
 * A quiet Run pass (issue 17 item 3: "The same for profile's DGDR and Run passes"): the status
 * `decideRun` computes on an unchanged world equals the stored one in every field the Run logic
 * owns, so nothing is written; a change is written, naming what changed.
 */
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { aClaim, aJob, aRun } from '../../../test/support/v1beta2-builders.js';
import type { RunStatus } from '../../api/index.js';
import { decideStatusWrite } from '../status-write.js';
import { REQUEST_STATUS_OWNERSHIP, RUN_STATUS_OWNERSHIP } from './quiet.js';
import { decideRun, type RunObserved } from './run-lifecycle.js';

const NOW = new Date('2026-12-01T09:00:00Z');
const LATER = new Date('2026-12-01T10:00:00Z');
const JOB_REF = { name: 'qwen3-trace-replay-1-aisimulate', uid: 'job-uid-1' };
const published = { type: 'Published', status: 'True', reason: 'PublicationSucceeded', message: 'published 0 Candidates', lastTransitionTime: NOW.toISOString() } as const;

function observed(status: RunStatus | undefined, overrides: Partial<RunObserved> = {}): RunObserved {
  return deepFreeze({ run: aRun(status === undefined ? {} : { status }), claim: aClaim(), job: aJob(), waiting: [], isSuperseded: false, publication: { isPublished: false, candidates: 0, validCandidates: 0 }, ...overrides });
}

/** The status the Run logic writes for `observed` (as functions/profile/run.ts builds it: decideRun's, plus jobRef). */
function written(world: RunObserved, now: Date): Record<string, unknown> {
  const desired = decideRun(world, now);
  if (desired === undefined) throw new Error('a finished Run has no status to write');
  return { ...desired.status, jobRef: world.run.status?.jobRef ?? JOB_REF };
}

describe('a Run pass over an unchanged world', () => {
  const rows: readonly { readonly name: string; readonly reason: string; readonly world: Partial<RunObserved> }[] = [
    { name: 'Job active, evaluating candidates: no status write', reason: 'reference "Trace claim lifecycle": a running Run reports progress; unchanged progress is no change', world: {} },
    { name: 'a container waiting on its image: no status write on the next pass', reason: 'reference: "A waiting container is a diagnostic" (the same diagnostic again is no change)', world: { waiting: [{ name: 'aisimulate', reason: 'ImagePullBackOff', message: 'back-off' }] } },
    { name: 'Job complete, publication pending: no status write on the next pass', reason: 'reference "Candidate status": the Run waits for the publisher', world: { job: aJob({ outcome: 'Complete' }) } },
  ];

  it.each(rows)('$name', ({ world }) => {
    const first = written(observed(undefined, world), NOW);
    const stored = { ...first, conditions: [...(first['conditions'] as object[]), published] } as RunStatus;
    expect(decideStatusWrite(stored, written(observed(stored, world), LATER), RUN_STATUS_OWNERSHIP)).toEqual({ kind: 'Unchanged' });
  });

  it('a changed verdict (the Job failed) writes, naming exactly the changed fields', () => {
    const stored = written(observed(undefined), NOW) as RunStatus;
    const next = written(observed(stored, { job: aJob({ outcome: 'Failed', failureMessage: 'BackoffLimitExceeded' }) }), LATER);
    expect(decideStatusWrite(stored, next, RUN_STATUS_OWNERSHIP)).toEqual({ kind: 'Changed', changed: ['status.completionTime', 'status.conditions[Completed]', 'status.phase'] });
  });
});

describe('the request status the Runs logic owns', () => {
  it('unchanged refs and Accepted: no write; the publisher-free fields of others are not compared', () => {
    const status = { observedGeneration: 2, activeRunRef: { name: 'r-2', uid: 'u2' }, recentRunRefs: [{ name: 'r-2', uid: 'u2' }], conditions: [{ type: 'Accepted', status: 'True', reason: 'RunCreated', message: 'm', observedGeneration: 2, lastTransitionTime: NOW.toISOString() }] };
    const stored = { ...status, profilingResults: { other: 'writer' }, conditions: [...status.conditions, { type: 'Other', status: 'True', reason: 'R', message: '', lastTransitionTime: NOW.toISOString() }] };
    expect(decideStatusWrite(stored, status, REQUEST_STATUS_OWNERSHIP)).toEqual({ kind: 'Unchanged' });
  });

  it('an activeRunRef the Runs logic no longer sets is a write (server-side apply removes it)', () => {
    const stored = { observedGeneration: 2, activeRunRef: { name: 'r-2' }, recentRunRefs: [], conditions: [] };
    expect(decideStatusWrite(stored, { observedGeneration: 2, recentRunRefs: [], conditions: [] }, REQUEST_STATUS_OWNERSHIP)).toEqual({ kind: 'Changed', changed: ['status.activeRunRef'] });
  });
});
