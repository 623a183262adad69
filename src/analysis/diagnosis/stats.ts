// The small statistics the diagnosis needs to compare two canary legs: Fisher's exact test on a 2×2 table
// and the Wilson score interval of a proportion. Pure and exact (log-factorials summed, no approximation).
import { partitionPoint } from '../../util/index.js';

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

// ── Measurements as evidence (docs/diagnosis.md, "The model") ─────────────────────────────────────────

/** Nats in a bit: the diagnosis states log-likelihood ratios in bits (1 bit: the observation twice as likely). */
const NATS_PER_BIT = Math.LN2;

/** The standard normal quantile (Abramowitz & Stegun 26.2.23, error under 4.5e-4): z with Φ(z) = p. */
export function normalQuantile(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  const q = p < 0.5 ? p : 1 - p;
  const t = Math.sqrt(-2 * Math.log(q));
  const z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
  return p < 0.5 ? -z : z;
}

/** Student's t quantile with `df` degrees of freedom (Cornish–Fisher expansion about the normal one). */
export function tQuantile(p: number, df: number): number {
  const z = normalQuantile(p);
  if (!Number.isFinite(df) || df <= 0) return z;
  const z3 = z ** 3;
  const z5 = z ** 5;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df) + (3 * z ** 7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3);
}

/** A measured effect: its estimate, standard error, and the degrees of freedom behind the error. */
export interface Effect {
  estimate: number;
  se: number;
  df: number;
}

function meanVar(xs: readonly number[]): { mean: number; variance: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.length < 2 ? 0 : xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, variance };
}

/**
 * Welch's difference of means, `a` − `b`, with its standard error and Welch–Satterthwaite degrees of freedom.
 * Each group's variance is at least `minSd`² — two identical samples do not make a certain difference.
 */
export function welch(a: readonly number[], b: readonly number[], minSd: number): Effect {
  const x = meanVar(a);
  const y = meanVar(b);
  const va = Math.max(x.variance, minSd * minSd) / a.length;
  const vb = Math.max(y.variance, minSd * minSd) / b.length;
  const se = Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / Math.max(1, a.length - 1) + vb ** 2 / Math.max(1, b.length - 1));
  return { estimate: x.mean - y.mean, se, df };
}

/** Mann–Whitney: the AUC (the chance that a value of `a` exceeds one of `b`, ties half) and its z (no tie
 * correction: with ties the true variance is smaller, so this z is conservative). */
export function mannWhitney(a: readonly number[], b: readonly number[]): { auc: number; z: number } {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return { auc: 0.5, z: 0 };
  const sorted = [...b].sort((x, y) => x - y);
  let u = 0;
  for (const x of a) {
    // Values of b below x, and equal to it: two binary searches.
    const below = partitionPoint(sorted, (v) => v < x);
    const upTo = partitionPoint(sorted, (v) => v <= x);
    u += below + (upTo - below) / 2;
  }
  const z = (u - (n1 * n2) / 2) / Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
  return { auc: u / (n1 * n2), z };
}

/**
 * The log-likelihood ratio, in bits, that a measurement credits: the likelihood of the effect at the lower end
 * of its one-sided confidence interval against none, for a normal estimate — ½ (z − z_crit)² nats, 0 when z
 * does not pass z_crit — at most `capBits`. Few samples (a wide interval, a large z_crit) credit little.
 */
export function creditedBits(z: number, zCrit: number, capBits: number): number {
  if (!(z > zCrit)) return 0;
  return Math.min(capBits, (z - zCrit) ** 2 / 2 / NATS_PER_BIT);
}

/** The standard error of creditedBits: half its change over z ± 1 (z's own standard error), 0 at the cap. */
export function creditedSe(z: number, zCrit: number, capBits: number): number {
  return (creditedBits(z + 1, zCrit, capBits) - creditedBits(z - 1, zCrit, capBits)) / 2;
}

/** Bits as a sentence writes them: one decimal, or one significant digit below 0.05 (a vote of 0.003 bits is
 * not "0.0 bits"); with its standard error when given. */
export function bitsText(bits: number, se?: number): string {
  const one = (x: number): string => (x === 0 || Math.abs(x) >= 0.05 ? x.toFixed(1) : x.toPrecision(1));
  return se === undefined ? `${one(bits)} bits` : `${one(bits)} ± ${one(se)} bits`;
}
