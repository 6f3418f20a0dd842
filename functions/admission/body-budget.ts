/**
 * Reads an AdmissionReview body while holding, from the server's byte budget, only the bytes
 * that have actually arrived (issue 20 item 2).
 *
 * Why not the declared Content-Length: 80 connections that each declared 7 MiB and sent a byte
 * every 500 ms reserved the whole 64 MiB budget while holding almost nothing, and 62 of 63 valid
 * reviews got 429. Counting received bytes, a trickling body holds what it sent (a few bytes),
 * for at most the body deadline, so any number of them leave the budget to real reviews. A
 * chunk that finds no room pauses the connection (TCP backpressure keeps the rest in the client)
 * and waits in the budget's FIFO queue like any other review; the body deadline does not run
 * while it waits (the wait has its own bound, the queue timeout), as before when the whole
 * reservation came first.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { AcquireOptions, ReviewQueue } from './review-queue.js';

export type BudgetedBody =
  /** The whole body; call `release` once the answer is written (the bytes are held until then). */
  | { readonly ok: true; readonly body: Buffer; readonly release: () => void }
  /** More than `maxBodyBytes` arrived (chunked, or a lying Content-Length). */
  | { readonly ok: false; readonly reason: 'TooLarge' }
  /** The client went away before the body ended. */
  | { readonly ok: false; readonly reason: 'Aborted' }
  /** The body did not end within `timeoutMs` of reading time. */
  | { readonly ok: false; readonly reason: 'TimedOut'; readonly receivedBytes: number }
  /** A chunk found no room: the queue was full, or no room freed up within its timeout. */
  | { readonly ok: false; readonly reason: 'QueueFull' | 'QueueTimedOut' };

export interface BudgetedBodyOptions {
  readonly maxBodyBytes: number;
  /** Reading time allowed, in ms (time spent waiting for room is not counted). */
  readonly timeoutMs: number;
  /** The byte budget (a {@link ReviewQueue} counting bytes). */
  readonly budget: ReviewQueue;
  /** The budget's size, in bytes: one body never reserves more than all of it. */
  readonly budgetBytes: number;
  /**
   * The byte budget of the connection's source address, taken before `budget` (issue 20 item 2:
   * one source cannot hold what another needs). Absent: only `budget` counts.
   */
  readonly sourceBudget?: { readonly budget: ReviewQueue; readonly budgetBytes: number };
}

const PRIORITY: AcquireOptions = { isPriority: true };
const ORDINARY: AcquireOptions = { isPriority: false };

/**
 * Takes `units` from each budget in order, all or none, at once, adding what each gave to
 * `held` (one count per budget, given back together: no slot per chunk); false when any had no room.
 */
function tryTakeAll(budgets: readonly ReviewQueue[], held: number[], units: number, isPriority: boolean): boolean {
  const options = isPriority ? PRIORITY : ORDINARY;
  const first = budgets[0] as ReviewQueue;
  const taken = first.tryTake(units, options);
  if (taken === 0) return false;
  const second = budgets[1];
  if (second !== undefined) {
    const alsoTaken = second.tryTake(units, options);
    if (alsoTaken === 0) {
      first.give(taken);
      return false;
    }
    held[1] = (held[1] ?? 0) + alsoTaken;
  }
  held[0] = (held[0] ?? 0) + taken;
  return true;
}

/** Waits for `units` from each budget in turn (source first), all or none. Never rejects. */
async function acquireAll(budgets: readonly ReviewQueue[], units: number, isPriority: boolean): Promise<{ readonly ok: true; readonly release: () => void } | { readonly ok: false; readonly reason: 'QueueFull' | 'QueueTimedOut' }> {
  const taken: (() => void)[] = [];
  for (const budget of budgets) {
    const granted = await budget.acquire(units, { isPriority });
    if (!granted.ok) {
      for (const release of taken) release();
      return granted;
    }
    taken.push(granted.release);
  }
  return {
    ok: true,
    release: () => {
      for (const release of taken) release();
    },
  };
}

/**
 * Reads `request`'s body, taking each chunk's bytes from `options.budget` as it arrives.
 * Out: see {@link BudgetedBody}. Every failure releases what was taken and leaves the stream
 * paused with input unread (answer, then `closeAfterAnswer`). Never rejects.
 */
export function readBodyWithinBudget(request: IncomingMessage, options: BudgetedBodyOptions): Promise<BudgetedBody> {
  if (request.destroyed) return Promise.resolve({ ok: false, reason: 'Aborted' });
  const { maxBodyBytes, timeoutMs, budget, sourceBudget } = options;
  const budgets = sourceBudget === undefined ? [budget] : [sourceBudget.budget, budget];
  const budgetBytes = Math.min(options.budgetBytes, sourceBudget?.budgetBytes ?? Infinity);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    /** Slots of bytes that had to wait for room. */
    const releases: (() => void)[] = [];
    /** Bytes taken at once from each budget (in `budgets` order), given back together. */
    const held = [0, 0];
    let receivedBytes = 0;
    let heldBytes = 0;
    let isDone = false;
    let remainingMs = timeoutMs;
    let armedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const releaseAll = (): void => {
      budgets.forEach((b, i) => {
        const units = held[i] ?? 0;
        held[i] = 0;
        b.give(units);
      });
      for (const release of releases.splice(0)) release();
    };
    const arm = (): void => {
      armedAt = performance.now();
      timer = setTimeout(() => fail({ ok: false, reason: 'TimedOut', receivedBytes }), remainingMs);
    };
    const disarm = (): void => {
      clearTimeout(timer);
      remainingMs = Math.max(0, remainingMs - (performance.now() - armedAt));
    };
    const detach = (): void => {
      isDone = true;
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onAbort);
      request.off('close', onAbort);
    };
    const fail = (result: Exclude<BudgetedBody, { ok: true }>): void => {
      if (isDone) return;
      request.pause();
      detach();
      chunks.length = 0;
      releaseAll();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      receivedBytes += chunk.length;
      if (receivedBytes > maxBodyBytes) {
        fail({ ok: false, reason: 'TooLarge' });
        return;
      }
      chunks.push(chunk);
      const wanted = Math.min(chunk.length, budgetBytes - heldBytes);
      if (wanted <= 0) return;
      // The first chunk queues in arrival order; later ones go first (see AcquireOptions.isPriority).
      const isPriority = heldBytes > 0;
      if (tryTakeAll(budgets, held, wanted, isPriority)) {
        heldBytes += wanted;
        return;
      }
      // No room now: stop reading, wait in line for these bytes, then carry on.
      request.pause();
      disarm();
      void acquireAll(budgets, wanted, isPriority).then((granted) => {
        if (!granted.ok) {
          fail({ ok: false, reason: granted.reason });
          return;
        }
        if (isDone) {
          granted.release();
          return;
        }
        heldBytes += wanted;
        releases.push(granted.release);
        arm();
        request.resume();
      });
    };
    const onEnd = (): void => {
      if (isDone) return;
      detach();
      resolve({ ok: true, body: Buffer.concat(chunks, receivedBytes), release: releaseAll });
    };
    const onAbort = (): void => fail({ ok: false, reason: 'Aborted' });
    arm();
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onAbort);
    request.on('close', onAbort);
  });
}
