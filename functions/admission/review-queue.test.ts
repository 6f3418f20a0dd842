// Tests for ./review-queue.ts: slots, FIFO hand-over, the bounded queue and its wait.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReviewQueue, type SlotResult } from './review-queue.js';

function release(result: SlotResult): void {
  if (!result.ok) throw new Error(`expected a slot, got ${result.reason}`);
  result.release();
}

describe('createReviewQueue', () => {
  it('grants maxConcurrent slots at once and hands a released slot to the oldest waiter', async () => {
    const queue = createReviewQueue({ maxConcurrent: 2, maxQueued: 4, queueTimeoutMs: 5000 });
    const first = await queue.acquire();
    const second = await queue.acquire();
    const order: string[] = [];
    const third = queue.acquire().then((result) => (order.push('third'), result));
    const fourth = queue.acquire().then((result) => (order.push('fourth'), result));
    expect({ active: queue.active, queued: queue.queued }).toEqual({ active: 2, queued: 2 });

    release(first);
    release(await third);
    release(second);
    release(await fourth);

    expect(order).toEqual(['third', 'fourth']);
    expect({ active: queue.active, queued: queue.queued }).toEqual({ active: 0, queued: 0 });
  });

  it('ignores a second release of the same slot', async () => {
    const queue = createReviewQueue({ maxConcurrent: 1, maxQueued: 0, queueTimeoutMs: 0 });
    const slot = await queue.acquire();
    release(slot);
    release(slot);
    expect(queue.active).toBe(0);
  });

  it.each([
    { name: 'the queue is full', options: { maxConcurrent: 1, maxQueued: 0, queueTimeoutMs: 5000 }, want: 'QueueFull' },
    { name: 'no slot frees up in time', options: { maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 50 }, want: 'QueueTimedOut' },
  ])('refuses a review when $name', async ({ options, want }) => {
    const queue = createReviewQueue(options);
    const holder = await queue.acquire();
    expect(await queue.acquire()).toEqual({ ok: false, reason: want });
    expect(queue.queued).toBe(0);
    release(holder);
    await sleep(0);
    expect(queue.active).toBe(0);
  });

  it.each([
    { name: 'no slots', options: { maxConcurrent: 0, maxQueued: 1, queueTimeoutMs: 1 } },
    { name: 'a negative queue', options: { maxConcurrent: 1, maxQueued: -1, queueTimeoutMs: 1 } },
    { name: 'a negative wait', options: { maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: -1 } },
  ])('throws RangeError for $name', ({ options }) => {
    expect(() => createReviewQueue(options)).toThrow(RangeError);
  });

  it('tryAcquire takes free units at once, and never jumps an ordinary waiter unless it has priority', async () => {
    const queue = createReviewQueue({ maxConcurrent: 10, maxQueued: 4, queueTimeoutMs: 5000 });
    const held = queue.tryAcquire(6);
    expect(held).toBeDefined();
    const waiting = queue.acquire(8);
    expect(queue.tryAcquire(2)).toBeUndefined();
    const priority = queue.tryAcquire(2, { isPriority: true });
    expect(priority).toBeDefined();
    expect(queue.active).toBe(8);
    priority?.release();
    held?.release();
    release(await waiting);
    expect({ active: queue.active, queued: queue.queued }).toEqual({ active: 0, queued: 0 });
  });

  it('a priority waiter goes ahead of ordinary ones and is never refused for a full queue (a body being read holds what they wait for)', async () => {
    const queue = createReviewQueue({ maxConcurrent: 10, maxQueued: 1, queueTimeoutMs: 5000 });
    const held = await queue.acquire(10);
    const order: string[] = [];
    const ordinary = queue.acquire(5).then((result) => (order.push('ordinary'), result));
    expect(await queue.acquire(5)).toEqual({ ok: false, reason: 'QueueFull' });
    const priority = queue.acquire(5, { isPriority: true }).then((result) => (order.push('priority'), result));
    expect(queue.queued).toBe(2);
    release(held);
    release(await priority);
    release(await ordinary);
    expect(order).toEqual(['priority', 'ordinary']);
  });
});
