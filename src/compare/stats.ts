// Statistics for comparisons across runs, pure: a seeded PRNG (the boundary calibration's simulations),
// Student's t quantiles, the mean and the sample standard deviation.
import { Rng } from '../util/index.js';
import { studentTQuantile } from './student-t.js';

/** A seeded generator: util's Rng. */
export class SeededRandom extends Rng {
  constructor(seed: number) {
    super(Math.trunc(seed) ^ 0x9e3779b9);
  }
}

/** Quantile of Student's t with `df` degrees of freedom (df > 0, fractional too), to about 1e-13 relative
 * (student-t.ts inverts the regularized incomplete beta function); NaN for df ≤ 0. */
export function tQuantile(p: number, df: number): number {
  // The sequential calls ask for the same few (p, df) after every pair, and the simulations thousands of
  // times: inverting the incomplete beta function each time was most of their cost.
  const key = `${p}:${df}`;
  const known = T_QUANTILES.get(key);
  if (known !== undefined) return known;
  const q = studentTQuantile(p, df);
  if (T_QUANTILES.size >= 10_000) T_QUANTILES.clear();
  T_QUANTILES.set(key, q);
  return q;
}

const T_QUANTILES = new Map<string, number>();

export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN;
  let sum = 0;
  for (let i = 0; i < values.length; i += 1) sum += values[i]!;
  return sum / values.length;
}

/** Sample standard deviation (n − 1) of `values` around their mean `m`. */
export function sampleSd(values: readonly number[], m: number): number {
  return Math.sqrt(values.reduce((s, v) => s + (v - m) ** 2, 0) / (values.length - 1));
}
