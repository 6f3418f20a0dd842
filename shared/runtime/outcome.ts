/**
 * The one place where a handler's {@link Outcome} becomes the broker's answer
 * (STYLE.md §3; DESIGN.md "Events in, answers out"; knative.md §2.3):
 *
 * | Outcome | HTTP | Broker |
 * | --- | --- | --- |
 * | Done | 204, empty | accepted |
 * | Permanent (already reported on status) | 204, empty | accepted, no retry |
 * | Transient | 500, empty | retried with backoff |
 * | Transient, `throttled` | 429, empty | retried with backoff |
 *
 * Never a body on a 2xx and never a reply event: behind an MT broker a non-CloudEvent body
 * on a 2xx becomes a 502, and a reply event goes back into the Broker.
 * @module
 */
import type { Outcome } from './contract.js';
import { PermanentError, TransientError } from './errors.js';

/** Answer for Done and Permanent: 2xx with no body (204 cannot carry one). */
export const STATUS_ACCEPTED = 204;
/** Answer for Transient: the broker retries 5xx. */
export const STATUS_TRANSIENT = 500;
/** Answer for Transient with `throttled`: the broker retries 429 too, and it says why. */
export const STATUS_THROTTLED = 429;

/**
 * Maps an outcome to the HTTP status. In: an Outcome. Out: 204, 429 or 500.
 * Source: knative.md §2.3 (retry on 429 and 5xx; no retry on 2xx). Pure.
 */
export function statusForOutcome(outcome: Outcome): 204 | 429 | 500 {
  switch (outcome.kind) {
    case 'Done':
    case 'Permanent':
      return STATUS_ACCEPTED;
    case 'Transient':
      return outcome.throttled === true ? STATUS_THROTTLED : STATUS_TRANSIENT;
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The outcome a thrown error stands for: `TransientError` -> Transient (with `throttled`),
 * `PermanentError` -> Permanent (with its `reason`). Anything else is a bug: undefined, and
 * the host answers 500. Handlers may use it too: `catch (err) { return outcomeForError(err) ?? ... }`.
 * Pure.
 */
export function outcomeForError(error: unknown): Outcome | undefined {
  if (error instanceof TransientError) {
    return { kind: 'Transient', cause: error, throttled: error.throttled };
  }
  if (error instanceof PermanentError) {
    return { kind: 'Permanent', reason: error.reason, message: error.message };
  }
  return undefined;
}

/**
 * Combines per-object outcomes of a resync: Transient if any is Transient (a 500, never 429:
 * one throttled object should not slow the whole tick), else Done.
 * In: outcomes (may be empty). Out: Done, or Transient whose cause is an AggregateError of
 * the transient causes. Pure.
 */
export function combineResyncOutcomes(outcomes: readonly Outcome[]): Outcome {
  const causes = outcomes.flatMap((outcome) => (outcome.kind === 'Transient' ? [outcome.cause] : []));
  if (causes.length === 0) return { kind: 'Done' };
  return {
    kind: 'Transient',
    cause: new AggregateError(causes, `resync had ${causes.length} transient failures of ${outcomes.length} objects`),
  };
}

/**
 * After independent writes tried one after another (one refused does not keep the others from
 * being tried), throws the failure that stands for them: the first TransientError, so the event
 * is retried and the retryable write tried again, else the first failure; returns when there is
 * none. The same preference as {@link combineResyncOutcomes}: a failure that may pass is never
 * hidden behind one that cannot. In: the failures, in the order met.
 */
export function throwFirstFailure(failures: readonly unknown[]): void {
  if (failures.length === 0) return;
  throw failures.find((error) => error instanceof TransientError) ?? failures[0];
}
