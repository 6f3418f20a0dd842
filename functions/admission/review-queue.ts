/**
 * How many AdmissionReviews the server works on at once, how many body bytes it holds, and
 * the queues in front of both.
 *
 * A review holds its body (up to `maxBodyBytes`), the parsed object and its defaulted copy, so a
 * handful of large ones at once is what drives memory (four 6.3 MiB UPDATE reviews took the
 * process from ~100 MB to 310 MB RSS). The server therefore takes two things in turn: body bytes
 * from a byte budget (counted as they arrive: ./body-budget.ts), then a review slot once the
 * body is in. A slow or stalled body holds only its bytes, for at most the short body deadline,
 * never a review slot: six slow-body clients could otherwise starve valid reviews (issue 12).
 * A request waiting for bytes holds a socket and its headers, not its body: TCP backpressure
 * keeps the rest in the client.
 *
 * Why a queue and not a 429: under `failurePolicy: Fail` the API server fails the user's write
 * on any webhook error, 429 included (admission webhooks are not retried). Waiting a moment for
 * a slot costs latency; refusing costs the write. The wait is bounded (well under the webhook's
 * `timeoutSeconds`, infra/chart/templates/admission/webhooks.yaml), and so is the queue, so a burst beyond both
 * still gets an answer (429) rather than the API server's own timeout.
 * @module
 */

/** A slot, or why there is none. */
export type SlotResult =
  | { readonly ok: true; readonly release: () => void }
  /** `maxQueued` reviews are already waiting. */
  | { readonly ok: false; readonly reason: 'QueueFull' }
  /** No slot freed up within `queueTimeoutMs`. */
  | { readonly ok: false; readonly reason: 'QueueTimedOut' };

export interface ReviewQueueOptions {
  /** Reviews worked on at once, >= 1. */
  readonly maxConcurrent: number;
  /** Reviews waiting for a slot, >= 0; one more is refused at once. */
  readonly maxQueued: number;
  /** How long a queued review waits for a slot, in milliseconds. */
  readonly queueTimeoutMs: number;
}

export interface AcquireOptions {
  /**
   * Goes ahead of every ordinary waiter (behind earlier priority ones), and takes free units
   * even while ordinary ones wait. For a body already being read: it holds bytes that the
   * waiters ahead of it may be waiting for, so making it queue behind them would deadlock.
   */
  readonly isPriority?: boolean;
}

export interface ReviewQueue {
  /** Waits for `units` (default 1) of capacity, FIFO. Never rejects. Call `release` exactly once when done. */
  acquire(units?: number, options?: AcquireOptions): Promise<SlotResult>;
  /** Takes `units` at once when they are free and nobody waits ahead; otherwise undefined (nothing taken, nothing queued). */
  tryAcquire(units: number, options?: AcquireOptions): { readonly release: () => void } | undefined;
  /**
   * {@link tryAcquire} without a slot object, for a caller that counts what it holds (a body's
   * bytes, chunk by chunk): the units taken (`units` as {@link acquire} counts them), or 0 when
   * none were. Give them back with {@link give}.
   */
  tryTake(units: number, options?: AcquireOptions): number;
  /** Gives back units taken with {@link tryTake} (the sum of several takes at once is fine), letting waiters in. */
  give(units: number): void;
  /** Units held now (reviews, or bytes for a byte budget). */
  readonly active: number;
  /** Reviews waiting for a slot now. */
  readonly queued: number;
}

/**
 * Creates a FIFO semaphore with a bounded, time-limited queue. `acquire(units)` takes that many
 * units of `maxConcurrent` (1 by default; more than `maxConcurrent` is taken as all of them), so
 * the same queue counts reviews or bytes.
 * Failures: throws RangeError for a bad option (a startup error, not a request one).
 */
export function createReviewQueue(options: ReviewQueueOptions): ReviewQueue {
  const { maxConcurrent, maxQueued, queueTimeoutMs } = options;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new RangeError(`maxConcurrent must be an integer >= 1, got ${maxConcurrent}`);
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`maxQueued must be an integer >= 0, got ${maxQueued}`);
  if (!Number.isFinite(queueTimeoutMs) || queueTimeoutMs < 0) throw new RangeError(`queueTimeoutMs must be >= 0, got ${queueTimeoutMs}`);

  let active = 0;
  interface Waiter {
    readonly units: number;
    readonly isPriority: boolean;
    readonly grant: (granted: boolean) => void;
  }
  const waiters: Waiter[] = [];

  // FIFO: the oldest waiter goes first, even when a younger, smaller one would fit.
  const admitWaiters = (): void => {
    for (let next = waiters[0]; next !== undefined && active + next.units <= maxConcurrent; next = waiters[0]) {
      waiters.shift();
      active += next.units;
      next.grant(true);
    }
  };

  const slot = (units: number): SlotResult => {
    let isReleased = false;
    return {
      ok: true,
      release: () => {
        if (isReleased) return;
        isReleased = true;
        active -= units;
        admitWaiters();
      },
    };
  };

  const tryTake = (requested: number, options?: AcquireOptions): number => {
    const units = Math.min(Math.max(1, Math.ceil(requested)), maxConcurrent);
    const isAheadOfUs = options?.isPriority === true ? waiters[0]?.isPriority === true : waiters.length > 0;
    if (isAheadOfUs || active + units > maxConcurrent) return 0;
    active += units;
    return units;
  };

  const tryAcquire = (requested: number, options: AcquireOptions = {}): { readonly release: () => void } | undefined => {
    const units = tryTake(requested, options);
    return units === 0 ? undefined : (slot(units) as { readonly release: () => void });
  };

  return {
    get active() {
      return active;
    },
    get queued() {
      return waiters.length;
    },
    tryAcquire,
    tryTake,
    give(units: number): void {
      if (units <= 0) return;
      active -= units;
      admitWaiters();
    },
    acquire(requested = 1, options: AcquireOptions = {}): Promise<SlotResult> {
      const units = Math.min(Math.max(1, Math.ceil(requested)), maxConcurrent);
      const isPriority = options.isPriority === true;
      const immediate = tryAcquire(units, options);
      if (immediate !== undefined) return Promise.resolve({ ok: true, release: immediate.release });
      // A priority waiter is never refused for a full queue: it already holds what others wait for.
      if (!isPriority && waiters.length >= maxQueued) return Promise.resolve({ ok: false, reason: 'QueueFull' });
      return new Promise<SlotResult>((resolve) => {
        const waiter: Waiter = {
          units,
          isPriority,
          grant: (granted: boolean): void => {
            clearTimeout(timer);
            resolve(granted ? slot(units) : { ok: false, reason: 'QueueTimedOut' });
          },
        };
        const timer = setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index !== -1) waiters.splice(index, 1);
          waiter.grant(false);
          // The head may have left: the next one may fit now.
          admitWaiters();
        }, queueTimeoutMs);
        if (isPriority) {
          const firstOrdinary = waiters.findIndex((w) => !w.isPriority);
          waiters.splice(firstOrdinary === -1 ? waiters.length : firstOrdinary, 0, waiter);
        } else waiters.push(waiter);
      });
    },
  };
}
