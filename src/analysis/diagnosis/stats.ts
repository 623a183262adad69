// The small statistics the diagnosis needs to compare two canary legs: Fisher's exact test on a 2×2 table
// and the Wilson score interval of a proportion. Pure and exact (log-factorials summed, no approximation).

const logFactorials: number[] = [0];

function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i += 1) logFactorials.push(logFactorials[i - 1]! + Math.log(i));
  return logFactorials[n]!;
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/**
 * One-sided Fisher exact test: the probability, with both groups' margins fixed, of group A having at least
 * `failedA` failures of `totalA` when A and B fail alike (small: A really fails more often than B).
 * @returns 1 when either group is empty.
 */
export function fisherGreater(failedA: number, totalA: number, failedB: number, totalB: number): number {
  if (totalA <= 0 || totalB <= 0) return 1;
  const failed = failedA + failedB;
  const total = totalA + totalB;
  // At or below the fewest failures A can have with these margins: certain.
  if (failedA <= Math.max(0, failed - totalB)) return 1;
  const denominator = logChoose(total, failed);
  let p = 0;
  for (let k = failedA; k <= Math.min(totalA, failed); k += 1) {
    if (failed - k > totalB) continue;
    p += Math.exp(logChoose(totalA, k) + logChoose(totalB, failed - k) - denominator);
  }
  return Math.min(1, p);
}

/** Wilson score interval (95%) of `failed` of `total`; [0, 1] when total is 0. */
export function wilson(failed: number, total: number, z = 1.96): { low: number; high: number } {
  if (total <= 0) return { low: 0, high: 1 };
  const p = failed / total;
  const z2 = z * z;
  const centre = (p + z2 / (2 * total)) / (1 + z2 / total);
  const half = (z * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))) / (1 + z2 / total);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
