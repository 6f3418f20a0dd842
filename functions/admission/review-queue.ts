/**
 * How many AdmissionReviews the server works on at once, and the queue in front of them.
 *
 * A review holds its body (up to `maxBodyBytes`), the parsed object and its defaulted copy, so a
 * handful of large ones at once is what drives memory (four 6.3 MiB UPDATE reviews took the
 * process from ~100 MB to 310 MB RSS). A slot is taken before the body is read, so a queued
 * review holds a socket and its headers, not its body: TCP backpressure keeps the rest in the
 * client.
 *
 * Why a queue and not a 429: under `failurePolicy: Fail` the API server fails the user's write
 * on any webhook error, 429 included (admission webhooks are not retried). Waiting a moment for
 * a slot costs latency; refusing costs the write. The wait is bounded (well under the webhook's
 * `timeoutSeconds`, infra/admission/webhooks.yaml), and so is the queue, so a burst beyond both
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
  /** Waits for a slot (FIFO). Never rejects. Call `release` exactly once when done. */
  acquire(): Promise<SlotResult>;
  /** Reviews holding a slot now. */
  readonly active: number;
  /** Reviews waiting for a slot now. */
  readonly queued: number;
}

/**
 * Creates a FIFO semaphore with a bounded, time-limited queue.
 * Failures: throws RangeError for a bad option (a startup error, not a request one).
 */
export function createReviewQueue(options: ReviewQueueOptions): ReviewQueue {
  const { maxConcurrent, maxQueued, queueTimeoutMs } = options;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new RangeError(`maxConcurrent must be an integer >= 1, got ${maxConcurrent}`);
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`maxQueued must be an integer >= 0, got ${maxQueued}`);
  if (!Number.isFinite(queueTimeoutMs) || queueTimeoutMs < 0) throw new RangeError(`queueTimeoutMs must be >= 0, got ${queueTimeoutMs}`);

  let active = 0;
  const waiters: ((granted: boolean) => void)[] = [];

  const slot = (): SlotResult => {
    let isReleased = false;
    return {
      ok: true,
      release: () => {
        if (isReleased) return;
        isReleased = true;
        const next = waiters.shift();
        // The slot passes straight to the next waiter, so `active` stays the same.
        if (next === undefined) active -= 1;
        else next(true);
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
    acquire(): Promise<SlotResult> {
      if (active < maxConcurrent) {
        active += 1;
        return Promise.resolve(slot());
      }
      if (waiters.length >= maxQueued) return Promise.resolve({ ok: false, reason: 'QueueFull' });
      return new Promise<SlotResult>((resolve) => {
        const waiter = (granted: boolean): void => {
          clearTimeout(timer);
          resolve(granted ? slot() : { ok: false, reason: 'QueueTimedOut' });
        };
        const timer = setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index !== -1) waiters.splice(index, 1);
          waiter(false);
        }, queueTimeoutMs);
        waiters.push(waiter);
      });
    },
  };
}
