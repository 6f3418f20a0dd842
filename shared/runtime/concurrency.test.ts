import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from './concurrency.js';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('mapWithConcurrency', () => {
  it.each([
    { name: 'limit below the item count', items: 20, limit: 3, wantMax: 3 },
    { name: 'limit of one runs in series', items: 5, limit: 1, wantMax: 1 },
    { name: 'limit above the item count', items: 4, limit: 10, wantMax: 4 },
    { name: 'no items', items: 0, limit: 8, wantMax: 0 },
  ])('$name: results in order, never more than the limit pending', async ({ items, limit, wantMax }) => {
    let pending = 0;
    let maxPending = 0;
    const input = Array.from({ length: items }, (_, index) => index);
    const results = await mapWithConcurrency(input, limit, async (item, index) => {
      pending += 1;
      maxPending = Math.max(maxPending, pending);
      // Later items finish sooner, so order comes from the index, not completion.
      await new Promise((resolve) => setTimeout(resolve, (items - index) % 4));
      pending -= 1;
      return item * 10;
    });
    expect(results).toEqual(input.map((item) => item * 10));
    expect(maxPending).toBe(wantMax);
  });

  it('stops starting calls after one rejects, waits for those started, and rejects with that error', async () => {
    const started: number[] = [];
    let settled = 0;
    const failure = new Error('boom');
    const run = mapWithConcurrency([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      await tick();
      settled += 1;
      if (item === 1) throw failure;
      return item;
    });
    await expect(run).rejects.toBe(failure);
    expect(started).toEqual([0, 1, 2]);
    expect(settled).toBe(started.length);
  });

  it.each([
    { name: 'zero', limit: 0 },
    { name: 'fraction', limit: 1.5 },
    { name: 'NaN', limit: Number.NaN },
  ])('rejects a limit that is $name', async ({ limit }) => {
    await expect(mapWithConcurrency([1], limit, async (item) => item)).rejects.toThrow(RangeError);
  });
});
