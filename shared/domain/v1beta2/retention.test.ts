import { describe, expect, it } from 'vitest';
import { selectRunsToRetire, type RetainedRun } from './retention.js';

const finished = (generation: number, completionTime: string): RetainedRun => ({ name: `req-${generation}`, isFinished: true, completionTime, generation });
const at = (minute: number) => `2026-12-01T08:${String(minute).padStart(2, '0')}:00Z`;

describe('Run retention: "the operator keeps the Runs, Jobs, and pods of a request\'s five most recent finished Runs" (reference "Trace claim lifecycle")', () => {
  const rows = [
    { name: 'five finished Runs: none retired', runs: [1, 2, 3, 4, 5].map((g) => finished(g, at(g))), want: [] },
    { name: 'seven finished Runs: the two oldest retired', runs: [1, 2, 3, 4, 5, 6, 7].map((g) => finished(g, at(g))), want: ['req-1', 'req-2'] },
    {
      name: 'an open Run is never retired and does not count',
      runs: [...[1, 2, 3, 4, 5, 6].map((g) => finished(g, at(g))), { name: 'req-7', isFinished: false, completionTime: undefined, generation: 7 }],
      want: ['req-1'],
    },
    { name: 'most recent means completionTime, not generation', runs: [finished(1, at(59)), ...[2, 3, 4, 5, 6].map((g) => finished(g, at(g)))], want: ['req-2'] },
    { name: 'equal completion times: the older generation goes first', runs: [1, 2, 3, 4, 5, 6].map((g) => finished(g, at(0))), want: ['req-1'] },
    { name: 'a Run already being deleted still counts but is not deleted again', runs: [{ ...finished(1, at(1)), isDeleting: true }, ...[2, 3, 4, 5, 6, 7].map((g) => finished(g, at(g)))], want: ['req-2'] },
  ];
  it.each(rows)('$name', ({ runs, want }) => {
    expect(selectRunsToRetire(Object.freeze(runs))).toEqual(want);
  });
});
