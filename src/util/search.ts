// Binary search over a sorted sequence: where a predicate that holds for a prefix stops holding.

/** The index of the first item of `items` for which `before` is false, `before` being true for a prefix of them
 * and false for the rest (sorted data: `x < v` gives the first item at or after v; `x <= v` the first past it). */
export function partitionPoint<T>(items: ArrayLike<T>, before: (x: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(items[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
