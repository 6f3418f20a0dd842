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
  const { sourceBudget } = options;
  const budgets = sourceBudget === undefined ? [options.budget] : [sourceBudget.budget, options.budget];
  const budgetBytes = Math.min(options.budgetBytes, sourceBudget?.budgetBytes ?? Infinity);
  return new Promise((resolve) => new BodyReader(request, options.maxBodyBytes, options.timeoutMs, budgets, budgetBytes, resolve).start());
}

/** The body deadline's timer callback (a plain function given the reader: no closure per review). */
function onBodyTimedOut(reader: BodyReader): void {
  reader.fail({ ok: false, reason: 'TimedOut', receivedBytes: reader.receivedBytes });
}

/**
 * One body being read: its chunks, the bytes it holds from each budget and its deadline. A
 * class, so a review allocates one object and three bound listeners rather than a closure per
 * step (the server reads one body per review).
 */
class BodyReader {
  private readonly chunks: Buffer[] = [];
  /** Slots of bytes that had to wait for room. */
  private readonly releases: (() => void)[] = [];
  /** Bytes taken at once from each budget (in `budgets` order), given back together. */
  private readonly held: number[] = [0, 0];
  receivedBytes = 0;
  private heldBytes = 0;
  private isDone = false;
  private remainingMs: number;
  private armedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onData: (chunk: Buffer) => void;
  private readonly onEnd: () => void;
  private readonly onAbort: () => void;

  constructor(
    private readonly request: IncomingMessage,
    private readonly maxBodyBytes: number,
    timeoutMs: number,
    private readonly budgets: readonly ReviewQueue[],
    private readonly budgetBytes: number,
    private readonly resolve: (result: BudgetedBody) => void,
  ) {
    this.remainingMs = timeoutMs;
    this.onData = this.data.bind(this);
    this.onEnd = this.end.bind(this);
    this.onAbort = this.abort.bind(this);
  }

  start(): void {
    this.arm();
    this.request.on('data', this.onData);
    this.request.on('end', this.onEnd);
    this.request.on('error', this.onAbort);
    this.request.on('close', this.onAbort);
  }

  /** Gives back every byte held; idempotent (the answer's `release`, or a failure). */
  releaseAll(): void {
    for (let i = 0; i < this.budgets.length; i += 1) {
      const units = this.held[i] ?? 0;
      this.held[i] = 0;
      (this.budgets[i] as ReviewQueue).give(units);
    }
    for (const release of this.releases.splice(0)) release();
  }

  fail(result: Exclude<BudgetedBody, { ok: true }>): void {
    if (this.isDone) return;
    this.request.pause();
    this.detach();
    this.chunks.length = 0;
    this.releaseAll();
    this.resolve(result);
  }

  private arm(): void {
    this.armedAt = performance.now();
    this.timer = setTimeout(onBodyTimedOut, this.remainingMs, this);
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.remainingMs = Math.max(0, this.remainingMs - (performance.now() - this.armedAt));
  }

  private detach(): void {
    this.isDone = true;
    clearTimeout(this.timer);
    this.request.off('data', this.onData);
    this.request.off('end', this.onEnd);
    this.request.off('error', this.onAbort);
    this.request.off('close', this.onAbort);
  }

  private data(chunk: Buffer): void {
    this.receivedBytes += chunk.length;
    if (this.receivedBytes > this.maxBodyBytes) {
      this.fail({ ok: false, reason: 'TooLarge' });
      return;
    }
    this.chunks.push(chunk);
    const wanted = Math.min(chunk.length, this.budgetBytes - this.heldBytes);
    if (wanted <= 0) return;
    // The first chunk queues in arrival order; later ones go first (see AcquireOptions.isPriority).
    const isPriority = this.heldBytes > 0;
    if (tryTakeAll(this.budgets, this.held, wanted, isPriority)) {
      this.heldBytes += wanted;
      return;
    }
    // No room now: stop reading, wait in line for these bytes, then carry on.
    this.request.pause();
    this.disarm();
    void acquireAll(this.budgets, wanted, isPriority).then((granted) => {
      if (!granted.ok) {
        this.fail({ ok: false, reason: granted.reason });
        return;
      }
      if (this.isDone) {
        granted.release();
        return;
      }
      this.heldBytes += wanted;
      this.releases.push(granted.release);
      this.arm();
      this.request.resume();
    });
  }

  private end(): void {
    if (this.isDone) return;
    this.detach();
    this.resolve({ ok: true, body: Buffer.concat(this.chunks, this.receivedBytes), release: this.releaseAll.bind(this) });
  }

  private abort(): void {
    this.fail({ ok: false, reason: 'Aborted' });
  }
}
