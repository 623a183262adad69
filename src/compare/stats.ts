// A/B statistics, pure: a seeded PRNG, quantiles, and a moving-block bootstrap of the difference between
// two arms whose observations are time windows (clusters of requests), never single requests.
//
// Why windows and blocks: requests that overlap in time share the engine's batch, so they are correlated;
// a window of `window_s` seconds is the unit that is roughly independent of the next few. Roughly: a long
// stream spreads its tokens over neighbouring windows and load drifts slowly, so neighbouring windows are
// still autocorrelated. A moving-block bootstrap (Künsch 1989) resamples runs of `blockLength(n)`
// consecutive windows, keeping that short-range correlation inside each resample; blocks never cross from
// one run (repeat) to another. The block length grows like n^(1/3), the order that minimises the error of
// a block-bootstrap variance estimate (Hall, Horowitz & Jing 1995).
//
// Percentile intervals from a dozen windows are too narrow: the bootstrap spread of a mean is (m-1)/m of
// its unbiased variance (m blocks), its quantiles are normal ones where Student's t applies, and blocks miss
// correlation longer than themselves. Each arm's resampled statistic is therefore moved away from its
// estimate by sqrt(m/(m-1)) · t(m-1)/z · an AR(1) block correction (log scale for latencies and
// throughput, so they stay positive). In simulation (AR(1) windows, lag-1 autocorrelation 0 to 0.6, 8 to
// 40 windows per arm) A/A intervals then hold 0 in 92-99% of cases at the nominal 95% (exact t); without it, 68-93%.
import studentTQuantile from '@stdlib/stats-base-dists-t-quantile';
import { Rng, round3 } from '../util/index.js';

/** The resampling generator: util's Rng, seeded from the comparison's `seed`. */
export class SeededRandom extends Rng {
  constructor(seed: number) {
    super(Math.trunc(seed) ^ 0x9e3779b9);
  }
}

/** The p-quantile (0 ≤ p ≤ 1) of `values` by linear interpolation between order statistics; NaN when empty. */
export function quantile(values: ArrayLike<number>, p: number): number {
  const n = values.length;
  if (n === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const at = Math.min(n - 1, Math.max(0, p * (n - 1)));
  const lo = Math.floor(at);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

/**
 * The p-quantile of values, each with a weight (e.g. a request's inter-token gaps): the smallest value whose
 * cumulative weight reaches p of the total. NaN when there is no weight.
 */
export function weightedQuantile(values: ArrayLike<number>, weights: ArrayLike<number>, p: number): number {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  let total = 0;
  for (let i = 0; i < n; i += 1) total += Math.max(0, weights[i]!);
  if (total <= 0) return NaN;
  const target = p * total;
  let cum = 0;
  for (const i of order) {
    cum += Math.max(0, weights[i]!);
    if (cum >= target) return values[i]!;
  }
  return values[order[n - 1]!]!;
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lowP = 0.02425;
  if (p < lowP || p > 1 - lowP) {
    const q = Math.sqrt(-2 * Math.log(p < lowP ? p : 1 - p));
    const x = (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
    return p < lowP ? x : -x;
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/** Quantile of Student's t with `df` degrees of freedom (df > 0, fractional too), exact to double precision
 * (stdlib inverts the regularized incomplete beta function); NaN for df ≤ 0. */
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

/** Block length for n consecutive windows: about n^(1/3), at least 1 and at most n. */
export function blockLength(n: number): number {
  if (n <= 1) return 1;
  return Math.max(1, Math.min(n, Math.round(Math.cbrt(n))));
}

/** One arm's observations: one series per run (repeat), each a list of windows in time order. */
export type ArmSeries<W> = readonly (readonly W[])[];

export interface BootstrapOptions<W = unknown> {
  /** Resamples. @default 2000 */
  resamples?: number;
  /** PRNG seed: the same seed, the same interval. @default 1 */
  seed?: number;
  /** Two-sided confidence level. @default 0.95 */
  level?: number;
  /** Force a block length instead of the data-driven choice. */
  blockLength?: number;
  /** A number per window (tokens/s) whose lag-1 autocorrelation sets the block length and the widening;
   * without it the windows are taken as uncorrelated. */
  seriesValue?: (window: W) => number;
}

/** How a difference is expressed: `relative` in % of A (latency, throughput), `absolute` in B − A (a rate). */
export type DeltaKind = 'relative' | 'absolute';

export interface DeltaEstimate {
  a: number;
  b: number;
  /** B vs A: (b / a − 1) × 100 for `relative`, b − a for `absolute`. NaN when undefined (a = 0, no data). */
  delta: number;
  /** Percentile bootstrap interval of `delta` at `level`; NaN when it cannot be computed. */
  low: number;
  high: number;
  /** Windows per arm, and the block length used. */
  windowsA: number;
  windowsB: number;
  block: number;
  /** Lag-1 autocorrelation of the windows the block length and widening used (0: taken as uncorrelated). */
  autocorrelation: number;
}

/** All windows of an arm, and the start index of every block of `len` that fits inside one series. */
function blocksOf<W>(arm: ArmSeries<W>, len: number): { flat: W[]; starts: number[]; n: number } {
  const flat: W[] = [];
  const starts: number[] = [];
  for (const series of arm) {
    const base = flat.length;
    for (let i = 0; i + len <= series.length; i += 1) starts.push(base + i);
    // A series shorter than the block still contributes, as one short block.
    if (series.length > 0 && series.length < len) starts.push(base);
    flat.push(...series);
  }
  return { flat, starts, n: flat.length };
}

/** Draws about n windows of an arm as blocks of `len` consecutive windows from one series each. */
function resampleArm<W>(b: { flat: W[]; starts: number[]; n: number }, len: number, rng: SeededRandom, seriesEnd: Int32Array): W[] {
  const out: W[] = [];
  while (out.length < b.n) {
    const start = b.starts[rng.below(b.starts.length)]!;
    const end = Math.min(start + len, seriesEnd[start]!);
    for (let i = start; i < end && out.length < b.n; i += 1) out.push(b.flat[i]!);
  }
  return out;
}

/** For each flat index, the flat index one past the end of its series (a block stops there). */
function seriesEnds<W>(arm: ArmSeries<W>): Int32Array {
  const total = arm.reduce((s, x) => s + x.length, 0);
  const ends = new Int32Array(total);
  let base = 0;
  for (const series of arm) {
    for (let i = 0; i < series.length; i += 1) ends[base + i] = base + series.length;
    base += series.length;
  }
  return ends;
}

/** A resampled statistic moved `w` times further from the estimate: on a log scale for a relative figure
 * (a latency or a throughput stays positive), linearly for an absolute one (a rate). */
function widened(kind: DeltaKind, estimate: number, resampled: number, w: number): number {
  if (kind === 'relative' && estimate > 0 && resampled > 0) return estimate * Math.exp(w * Math.log(resampled / estimate));
  return estimate + (resampled - estimate) * w;
}

function deltaOf(kind: DeltaKind, a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return NaN;
  if (kind === 'absolute') return b - a;
  return a === 0 ? NaN : (b / a - 1) * 100;
}

/**
 * Bootstraps the difference of `statistic` between arm B and arm A. `statistic` maps a list of windows
 * (a resample, or all of them) to a number (mean tokens/s, a pooled latency percentile, an error rate).
 */
/**
 * Lag-1 autocorrelation of windows, pooled over series (each about its own mean), with the usual small-sample
 * bias correction (an estimate from n values runs about (1 + 3ρ)/n low); clamped to [0, 0.95].
 */
export function lag1Autocorrelation(series: readonly (readonly number[])[]): number {
  let num = 0;
  let den = 0;
  let n = 0;
  let count = 0;
  for (const x of series) {
    if (x.length < 2) continue;
    const m = mean(x);
    for (let t = 0; t < x.length; t += 1) {
      den += (x[t]! - m) ** 2;
      if (t + 1 < x.length) num += (x[t]! - m) * (x[t + 1]! - m);
    }
    n += x.length;
    count += 1;
  }
  if (den === 0 || count === 0) return 0;
  const r = num / den;
  return Math.min(0.95, Math.max(0, r + (1 + 3 * Math.max(0, r)) / (n / count)));
}

/** Block length for n windows with lag-1 autocorrelation ρ: n^(1/3), or longer when the correlation takes
 * longer to fade (ρ^L ≤ 0.1), at most n/2. */
export function chooseBlockLength(n: number, rho: number): number {
  let len = blockLength(n);
  if (rho > 0.05) len = Math.max(len, Math.ceil(Math.log(0.1) / Math.log(rho)));
  return Math.max(1, Math.min(len, Math.floor(n / 2)));
}

/**
 * How much wider an interval must be when blocks of `len` miss part of an AR(1) correlation ρ: the square root
 * of the long-run variance factor (1 + ρ)/(1 − ρ) over what a moving block keeps, 1 + 2 Σ_{k<len} (1 − k/len) ρ^k.
 */
export function blockCorrection(len: number, rho: number): number {
  if (rho <= 0) return 1;
  let kept = 1;
  for (let k = 1; k < len; k += 1) kept += 2 * (1 - k / len) * rho ** k;
  return Math.sqrt((1 + rho) / (1 - rho) / kept);
}

export function bootstrapDelta<W>(armA: ArmSeries<W>, armB: ArmSeries<W>, statistic: (windows: readonly W[]) => number, kind: DeltaKind, options: BootstrapOptions<W> = {}): DeltaEstimate {
  const resamples = options.resamples ?? 2000;
  const level = options.level ?? 0.95;
  const rng = new SeededRandom(options.seed ?? 1);
  const nA = armA.reduce((s, x) => s + x.length, 0);
  const nB = armB.reduce((s, x) => s + x.length, 0);
  const value = options.seriesValue;
  const rho = value === undefined ? 0 : lag1Autocorrelation([...armA, ...armB].map((series) => series.map(value)));
  const len = options.blockLength ?? chooseBlockLength(Math.min(nA, nB), rho);
  const corrected = blockCorrection(len, rho);
  const allA = armA.flat();
  const allB = armB.flat();
  const a = nA === 0 ? NaN : statistic(allA);
  const b = nB === 0 ? NaN : statistic(allB);
  const delta = deltaOf(kind, a, b);
  const result: DeltaEstimate = { a, b, delta, low: NaN, high: NaN, windowsA: nA, windowsB: nB, block: len, autocorrelation: round3(rho) };
  if (nA < 2 || nB < 2 || !Number.isFinite(delta)) return result;
  const blocksA = blocksOf(armA, len);
  const blocksB = blocksOf(armB, len);
  const endsA = seriesEnds(armA);
  const endsB = seriesEnds(armB);
  // Small-sample widening (see the header): m is the number of non-overlapping blocks the data holds.
  const z = normalQuantile(1 - (1 - level) / 2);
  const widen = (n: number): number => {
    const m = Math.max(2, n / len);
    return Math.sqrt(m / (m - 1)) * (tQuantile(1 - (1 - level) / 2, m - 1) / z) * corrected;
  };
  const wA = widen(nA);
  const wB = widen(nB);
  const deltas: number[] = [];
  for (let i = 0; i < resamples; i += 1) {
    const sa = statistic(resampleArm(blocksA, len, rng, endsA));
    const sb = statistic(resampleArm(blocksB, len, rng, endsB));
    const d = deltaOf(kind, widened(kind, a, sa, wA), widened(kind, b, sb, wB));
    if (Number.isFinite(d)) deltas.push(d);
  }
  // Too many undefined resamples (a rate of zero in A, say) and the interval says nothing.
  if (deltas.length < resamples * 0.9) return result;
  const tail = (1 - level) / 2;
  result.low = quantile(deltas, tail);
  result.high = quantile(deltas, 1 - tail);
  return result;
}

export const VERDICTS = ['better', 'worse', 'no significant difference', 'insufficient data'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Which way is better for a figure: throughput `higher`, latency and errors `lower`. */
export type BetterWhen = 'higher' | 'lower';

/**
 * The widest interval that still says something, by how the delta is expressed: 100 points of A for a
 * relative delta (an interval from −50% to +50%, or −61% to +1476%, could hold any real change), 10
 * percentage points for an absolute one (an error rate). Wider and holding 0, it is `insufficient data`, not
 * `no significant difference`: the data cannot tell a large change from none.
 */
export const MAX_INTERVAL_WIDTH: Readonly<Record<DeltaKind, number>> = { relative: 100, absolute: 10 };

/** better / worse when the interval excludes 0; no significant difference when it holds 0 and is narrow
 * enough to mean it ({@link MAX_INTERVAL_WIDTH}); else insufficient data. */
export function verdictOf(estimate: Pick<DeltaEstimate, 'low' | 'high'>, betterWhen: BetterWhen, kind: DeltaKind = 'relative'): Verdict {
  const { low, high } = estimate;
  if (!Number.isFinite(low) || !Number.isFinite(high)) return 'insufficient data';
  if (low > 0) return betterWhen === 'higher' ? 'better' : 'worse';
  if (high < 0) return betterWhen === 'higher' ? 'worse' : 'better';
  if (high - low > MAX_INTERVAL_WIDTH[kind]) return 'insufficient data';
  return 'no significant difference';
}

/** Whether an interval holding 0 is too wide to call the arms alike ({@link MAX_INTERVAL_WIDTH}). */
export function tooWide(estimate: Pick<DeltaEstimate, 'low' | 'high'>, kind: DeltaKind): boolean {
  const { low, high } = estimate;
  return Number.isFinite(low) && Number.isFinite(high) && low <= 0 && high >= 0 && high - low > MAX_INTERVAL_WIDTH[kind];
}
