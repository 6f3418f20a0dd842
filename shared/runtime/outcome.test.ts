import { describe, expect, it } from 'vitest';
import type { Outcome } from './contract.js';
import { PermanentError, TransientError } from './errors.js';
import { combineResyncOutcomes, outcomeForError, statusForOutcome, throwFirstFailure } from './outcome.js';

describe('outcome answers', () => {
  const cause = new Error('503');
  it.each<{ name: string; outcome: Outcome; want: number }>([
    { name: 'Done', outcome: { kind: 'Done' }, want: 204 },
    { name: 'Permanent', outcome: { kind: 'Permanent', reason: 'InvalidSpec', message: 'm' }, want: 204 },
    { name: 'Transient', outcome: { kind: 'Transient', cause }, want: 500 },
    { name: 'Transient, throttled', outcome: { kind: 'Transient', cause, throttled: true }, want: 429 },
  ])('statusForOutcome: $name -> $want', ({ outcome, want }) => {
    expect(statusForOutcome(outcome)).toBe(want);
  });

  it('combineResyncOutcomes: Done unless some object is Transient, and never 429', () => {
    expect(combineResyncOutcomes([])).toEqual({ kind: 'Done' });
    expect(combineResyncOutcomes([{ kind: 'Done' }, { kind: 'Permanent', reason: 'r', message: 'm' }])).toEqual({
      kind: 'Done',
    });
    const combined = combineResyncOutcomes([{ kind: 'Done' }, { kind: 'Transient', cause, throttled: true }]);
    expect(combined.kind).toBe('Transient');
    expect(statusForOutcome(combined)).toBe(500);
    expect(combined.kind === 'Transient' && combined.cause).toEqual(
      expect.objectContaining({ message: 'resync had 1 transient failures of 2 objects', errors: [cause] }),
    );
  });
});

describe('outcomeForError', () => {
  it('maps the shell errors and leaves anything else to the host (a bug: 500)', () => {
    const transient = new TransientError('cannot get DGD team-a/llama', { throttled: true });
    expect(outcomeForError(transient)).toEqual({ kind: 'Transient', cause: transient, throttled: true });
    expect(outcomeForError(new PermanentError('cannot apply Service team-a/x: forbidden', { reason: 'Forbidden' }))).toEqual({
      kind: 'Permanent',
      reason: 'Forbidden',
      message: 'cannot apply Service team-a/x: forbidden',
    });
    expect(outcomeForError(new TypeError('x is undefined'))).toBeUndefined();
    expect(outcomeForError('a string')).toBeUndefined();
  });
});

describe('throwFirstFailure (independent writes, each tried, reported after)', () => {
  const forbidden = new PermanentError('403 Forbidden', { reason: 'Forbidden' });
  const conflict = new TransientError('409 Conflict');
  it.each([
    { name: 'none: returns', failures: [], want: undefined },
    { name: 'one: that one', failures: [forbidden], want: forbidden },
    { name: 'a permanent one before a transient one: the transient one (retried, so the retryable write is tried again)', failures: [forbidden, conflict], want: conflict },
    { name: 'two permanent ones: the first', failures: [forbidden, new PermanentError('422 Invalid', { reason: 'Invalid' })], want: forbidden },
  ])('$name', ({ failures, want }) => {
    let thrown: unknown;
    try {
      throwFirstFailure(failures);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(want);
  });
});
