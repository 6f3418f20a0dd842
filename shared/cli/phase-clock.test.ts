/** The phase clock of `profile --local` (issue 21 item 3: "prints its phases and elapsed time"). */
import { describe, expect, it } from 'vitest';
import { createPhaseClock, formatPhaseTable, formatSeconds } from './phase-clock.js';

function aManualClock(times: readonly number[]) {
  let index = 0;
  return () => times[Math.min(index++, times.length - 1)] as number;
}

describe('createPhaseClock', () => {
  it('closes each phase when the next is entered, ignores a phase entered again, and gives every phase and the total at the end', () => {
    const clock = createPhaseClock(aManualClock([1000, 1000, 1500, 4000, 4200, 9000]));
    expect(clock.enter('Checking request')).toEqual({ closed: undefined, elapsedMs: 0 });
    expect(clock.enter('SweepingPrefill')).toEqual({ closed: { phase: 'Checking request', durationMs: 500 }, elapsedMs: 500 });
    expect(clock.enter('SweepingPrefill')).toEqual({ closed: undefined, elapsedMs: 3000 });
    expect(clock.enter('Done')).toEqual({ closed: { phase: 'SweepingPrefill', durationMs: 2700 }, elapsedMs: 3200 });
    expect(clock.finish()).toEqual({
      phases: [
        { phase: 'Checking request', durationMs: 500 },
        { phase: 'SweepingPrefill', durationMs: 2700 },
        { phase: 'Done', durationMs: 4800 },
      ],
      totalMs: 8000,
    });
  });

  it('can start earlier, in a phase of its own (the process start: performance.now() 0)', () => {
    const clock = createPhaseClock(aManualClock([2500, 3000]), { phase: 'StartingCommand', atMs: 0 });
    expect(clock.enter('CheckingRequest')).toEqual({ closed: { phase: 'StartingCommand', durationMs: 2500 }, elapsedMs: 2500 });
    expect(clock.finish()).toEqual({ phases: [{ phase: 'StartingCommand', durationMs: 2500 }, { phase: 'CheckingRequest', durationMs: 500 }], totalMs: 3000 });
  });
});

describe('formatPhaseTable', () => {
  it('prints one line per phase and the total, in seconds with one decimal, aligned', () => {
    expect(formatPhaseTable([{ phase: 'Checking request', durationMs: 40 }, { phase: 'SweepingPrefill', durationMs: 12_345 }], 12_400)).toBe(
      'Phase times (seconds):\n  Checking request   0.0\n  SweepingPrefill   12.3\n  total             12.4\n',
    );
    expect(formatSeconds(57_049)).toBe('57.0');
  });
});
