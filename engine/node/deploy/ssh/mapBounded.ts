/**
 * `fn` over `items` with at most `limit` running at once; results in input order. `fn` is expected to
 * report its own failures in its result: one item's trouble must never stop the others (a rejection is
 * still propagated, but only after every item has finished).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  const errors: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (errors.length > 0) throw errors[0];
  return results;
}
