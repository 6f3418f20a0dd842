/**
 * How many AdmissionReviews the server works on at once, how many body bytes it holds, and
 * the queues in front of both.
 *
 * A review holds its body (up to `maxBodyBytes`), the parsed object and its defaulted copy, so a
 * handful of large ones at once is what drives memory (four 6.3 MiB UPDATE reviews took the
 * process from ~100 MB to 310 MB RSS). The server therefore takes two things in turn: body bytes
 * from a byte budget (the declared Content-Length) before reading, then a review slot once the
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

export interface ReviewQueue {
  /** Waits for `units` (default 1) of capacity, FIFO. Never rejects. Call `release` exactly once when done. */
  acquire(units?: number): Promise<SlotResult>;
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

  return {
    get active() {
      return active;
    },
    get queued() {
      return waiters.length;
    },
    acquire(requested = 1): Promise<SlotResult> {
      const units = Math.min(Math.max(1, Math.ceil(requested)), maxConcurrent);
      if (waiters.length === 0 && active + units <= maxConcurrent) {
        active += units;
        return Promise.resolve(slot(units));
      }
      if (waiters.length >= maxQueued) return Promise.resolve({ ok: false, reason: 'QueueFull' });
      return new Promise<SlotResult>((resolve) => {
        const waiter: Waiter = {
          units,
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
        waiters.push(waiter);
      });
    },
  };
}
