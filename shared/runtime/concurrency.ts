/**
 * Bounded concurrency for the resync: reconcile many objects, at most `limit` at a time.
 * @module
 */

/**
 * Calls `fn` on every item with at most `limit` calls pending at once, and resolves with
 * the results in input order.
 * In: `items` (not mutated), `limit` (integer >= 1), `fn(item, index)`.
 * Out: `R[]`, `result[i] = await fn(items[i], i)`.
 * Failures: throws RangeError for a bad `limit`. If a call rejects, no further calls start and
 * the promise rejects with that error once the calls already started have settled (so nothing
 * keeps running behind the caller's back). Callers that want every item tried catch inside `fn`.
 * Source: DESIGN.md "Events in, answers out" (resync with bounded concurrency).
 * No I/O of its own; as pure as `fn`.
 * @example
 * await mapWithConcurrency([1, 2, 3], 2, async (n) => n * 2) // [2, 4, 6]
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency limit must be an integer >= 1, got ${limit}`);
  }
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;

  async function worker(): Promise<void> {
    while (failure === undefined && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  }

  const workers = Array.from({ length: Math.min(limit, items.length) }, () => worker());
  await Promise.all(workers);
  if (failure !== undefined) throw failure.error;
  return results;
}
