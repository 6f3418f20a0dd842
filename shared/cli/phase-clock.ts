/**
 * Elapsed time per phase of a long command (`profile --local`): the command names each phase as
 * it enters it; the clock closes the previous one and, at the end, gives every phase's duration
 * and the total, formatted as the table the command prints to stderr (issue 21 item 3: "prints
 * its phases and elapsed time").
 * @module
 */

/** One finished phase: its name and how long it took, in milliseconds. */
export interface PhaseTime {
  readonly phase: string;
  readonly durationMs: number;
}

export interface PhaseClock {
  /**
   * Enters `phase` (a phase entered again while current is ignored). Out: the phase it closed, or
   * undefined for the first; `elapsedMs`, the time since the clock started.
   */
  enter(phase: string): { readonly closed: PhaseTime | undefined; readonly elapsedMs: number };
  /** Closes the current phase. Out: every phase in order and the total, in milliseconds. */
  finish(): { readonly phases: readonly PhaseTime[]; readonly totalMs: number };
}

/**
 * A clock over `nowMs` (milliseconds, monotonic: `performance.now`), started now, or at
 * `start.atMs` in phase `start.phase` (e.g. at 0, the process start of `performance.now`, so the
 * time Node.js took to start and load the command is a phase of its own).
 */
export function createPhaseClock(nowMs: () => number, start?: { readonly phase: string; readonly atMs: number }): PhaseClock {
  const startedAt = start?.atMs ?? nowMs();
  const phases: PhaseTime[] = [];
  let current: { phase: string; since: number } | undefined = start === undefined ? undefined : { phase: start.phase, since: start.atMs };
  const close = (at: number): PhaseTime | undefined => {
    if (current === undefined) return undefined;
    const closed = { phase: current.phase, durationMs: at - current.since };
    phases.push(closed);
    current = undefined;
    return closed;
  };
  return {
    enter(phase) {
      const at = nowMs();
      if (current?.phase === phase) return { closed: undefined, elapsedMs: at - startedAt };
      const closed = close(at);
      current = { phase, since: at };
      return { closed, elapsedMs: at - startedAt };
    },
    finish() {
      const at = nowMs();
      close(at);
      return { phases: [...phases], totalMs: at - startedAt };
    },
  };
}

/** Seconds with one decimal, e.g. 1234 ms -> `1.2`. Pure. */
export function formatSeconds(ms: number): string {
  return (Math.round(ms / 100) / 10).toFixed(1);
}

/**
 * The table of phase times: a header, one line per phase (name padded, seconds right-aligned),
 * then the total. Pure.
 * @example formatPhaseTable([{ phase: 'SweepingPrefill', durationMs: 12_300 }], 12_400)
 *   // 'Phase times (seconds):\n  SweepingPrefill   12.3\n  total             12.4\n'
 */
export function formatPhaseTable(phases: readonly PhaseTime[], totalMs: number): string {
  const rows = [...phases.map((p) => [p.phase, formatSeconds(p.durationMs)] as const), ['total', formatSeconds(totalMs)] as const];
  const nameWidth = Math.max(...rows.map(([name]) => name.length));
  const secondsWidth = Math.max(...rows.map(([, seconds]) => seconds.length));
  return `Phase times (seconds):\n${rows.map(([name, seconds]) => `  ${name.padEnd(nameWidth)}  ${seconds.padStart(secondsWidth)}\n`).join('')}`;
}
