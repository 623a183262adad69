// The sequential A/B call on one figure: after every pair of runs (A B, then B A, …) the pairs' differences
// give an interval valid however often it is looked at, and a verdict a person can act on — better, worse,
// equivalent within the margin they named, or not yet (with how many more pairs would likely settle it). Pure.
//
// Anytime-valid by a group-sequential boundary: `maxPairs` is known in advance, and every look from
// MIN_PAIRS on is a paired t test at one nominal level calibrated so that all looks together err with
// probability alpha (a Pocock boundary: boundary.ts). `better`/`worse` use the two-sided interval at that
// level; `equivalent` is a two-one-sided test (Schuirmann 1987) at the one-sided level calibrated the same
// way. Each look is on the per-pair differences: a pair's difference cancels drift slower than a pair, and a
// run's own windows are reduced to one figure per run first, so their autocorrelation never counts as
// independent evidence.
import { lookAlpha } from './boundary.js';
import { mean, sampleSd, tQuantile } from './stats.js';

export const SEQUENTIAL_VERDICTS = ['better', 'worse', 'equivalent', 'undecided', 'inconclusive'] as const;
/** `undecided`: not yet, more pairs may settle it; `inconclusive`: the limit was reached first. */
export type SequentialVerdict = (typeof SEQUENTIAL_VERDICTS)[number];

export interface SequentialOptions {
  /** The smallest difference that matters, in the figure's unit (percent for relative figures). */
  minEffect: number;
  /** The most pairs the rule may take: alpha is split over its looks. */
  maxPairs: number;
  /** Whether higher is better (decode tok/s) or lower (latencies, error rate). */
  betterWhen: 'higher' | 'lower';
  /** Family-wise error over all looks. @default 0.05 */
  alpha?: number;
  /** The levels of this look, when not the sequential ones of `alpha` and `maxPairs` (a fixed-sample call). */
  levels?: Levels;
  /** True when a limit (pairs or time) ends the sequence now: `undecided` becomes `inconclusive`. */
  final?: boolean;
  /** Per pair, the difference (B − A, % of A) of a covariate the change should not move — tokens per request
   * for decode tok/s — to adjust for (CUPED-style regression, see `estimate`); same length as the differences. */
  covariate?: { name: string; differences: readonly number[] };
  /** The least the difference can be: −100 for B − A in % of A of a positive figure (B cannot go below 0). The
   * interval is clipped there; the calls do not change (they look at ± the margin). @default -Infinity */
  lowest?: number;
}

/** A covariate adjustment made: which, its slope, and the spread it took out. */
export interface Adjustment {
  covariate: string;
  /** Slope of the figure's pair difference on the covariate's. */
  theta: number;
  /** Standard error of the estimate without and with the adjustment. */
  se_before: number;
  se_after: number;
}

export interface SequentialCall {
  verdict: SequentialVerdict;
  pairs: number;
  /** Mean of the pairs' differences (B − A) and the anytime-valid interval around it; null below 2 pairs. */
  estimate: number | null;
  low: number | null;
  high: number | null;
  /** For `undecided` and `inconclusive`: more pairs that would likely settle it at the spread seen (null
   * when none within 1,000 would, or fewer than 2 pairs). */
  more_pairs: number | null;
  /** Plain words for the terminal. */
  text: string;
  /** Set when the estimate was adjusted for a covariate. */
  adjusted?: Adjustment;
}

/** Half-width of an interval for `n` pairs with standard deviation `sd` at a tail probability `tail`. */
export function halfWidth(sd: number, n: number, tail: number): number {
  return (tQuantile(1 - tail, n - 1) * sd) / Math.sqrt(n);
}

/** A difference's estimate, its standard error, degrees of freedom and any covariate adjustment. */
export interface Estimate {
  m: number;
  se: number;
  df: number;
  adjusted: Adjustment | null;
}

/** Pairs from which a covariate adjustment may be made: a slope costs a degree of freedom and is noisy on few. */
const ADJUST_FROM = 5;

/**
 * Whether a sequence adjusts for its covariate: decided once, on the covariate alone over its first
 * ADJUST_FROM pairs, and kept at every later look — a rule fixed before the figure is looked at, never a choice
 * per look. The adjustment is unbiased only when the change does not move the covariate, so it is made unless
 * the covariate's mean difference over those pairs is outside its 95% interval of 0 (a setting that makes
 * answers longer keeps the tok/s that brings). Choosing at each look whichever interval was narrower, as
 * roundload did before, gave every look a second chance to cross: simulated, an A/A with no margin crossed in
 * 7.8% of 4,000 sequences of 10 pairs, 6.5% with the rule fixed, 5.7% unadjusted (docs/ab.md).
 */
export function adjusts(x: readonly number[]): boolean {
  if (x.length < ADJUST_FROM) return false;
  const first = x.slice(0, ADJUST_FROM);
  const xm = mean(first);
  const sd = sampleSd(first, xm);
  if (sd === 0) return false;
  return Math.abs(xm) <= tQuantile(0.975, ADJUST_FROM - 1) * (sd / Math.sqrt(ADJUST_FROM));
}

/**
 * The plain estimate (mean and standard error of the differences), or — with a covariate the sequence adjusts
 * for (`adjusts`), from ADJUST_FROM pairs — the regression-adjusted one: the differences regressed on the
 * covariate's differences, read at a covariate difference of 0 (the intercept), with n − 2 degrees of freedom.
 * That is CUPED (Deng, Xu, Kohavi & Walker 2013, "Improving the sensitivity of online controlled experiments by
 * utilizing pre-experiment data") on paired differences.
 */
export function estimate(d: readonly number[], covariate?: { name: string; differences: readonly number[] }): Estimate {
  const n = d.length;
  const m = mean(d);
  const sd = sampleSd(d, m);
  const plain: Estimate = { m, se: sd / Math.sqrt(n), df: n - 1, adjusted: null };
  const x = covariate?.differences;
  if (x === undefined || x.length !== n || !adjusts(x)) return plain;
  const xm = mean(x);
  const sxx = x.reduce((s, v) => s + (v - xm) ** 2, 0);
  const theta = d.reduce((s, v, i) => s + (v - m) * (x[i]! - xm), 0) / sxx;
  const residual = d.reduce((s, v, i) => s + (v - m - theta * (x[i]! - xm)) ** 2, 0) / (n - 2);
  const se = Math.sqrt(residual * (1 / n + (xm * xm) / sxx));
  return { m: m - theta * xm, se, df: n - 2, adjusted: { covariate: covariate!.name, theta, se_before: plain.se, se_after: se } };
}

/** Tail probabilities of one look: each side of the two-sided interval (better/worse), and each one-sided
 * equivalence test. */
export interface Levels {
  twoSided: number;
  oneSided: number;
}

/** The levels of one look of a sequential rule: alpha spread over the looks from MIN_PAIRS to `maxPairs`. */
export function sequentialLevels(alpha: number, maxPairs: number): Levels {
  return { twoSided: lookAlpha(alpha, maxPairs, MIN_PAIRS, 2) / 2, oneSided: lookAlpha(alpha, maxPairs, MIN_PAIRS, 1) };
}

/** The levels of a single look at a fixed number of runs: a 95% interval, a 90% one for equivalence (TOST). */
export function fixedLevels(alpha: number): Levels {
  return { twoSided: alpha / 2, oneSided: alpha };
}

/** The call on the pairs so far (differences B − A, in the figure's unit). */
export function sequentialCall(differences: readonly number[], options: SequentialOptions): SequentialCall {
  const n = differences.length;
  const levels = options.levels ?? sequentialLevels(options.alpha ?? 0.05, options.maxPairs);
  const pending: SequentialVerdict = options.final === true ? 'inconclusive' : 'undecided';
  if (n < 2) return { verdict: pending, pairs: n, estimate: null, low: null, high: null, more_pairs: null, text: `${n} pair${n === 1 ? '' : 's'}: at least ${MIN_PAIRS} to tell` };
  const e = estimate(differences, options.covariate);
  // The standard deviation of one pair that the estimate's spread amounts to (for "how many more pairs").
  const sd = e.se * Math.sqrt(n);
  return decide(e, n, { ...options, levels, pending, unit: 'pair', halfWidthAt: (k, tail) => halfWidth(sd, k, tail) });
}

/** How a call is made from an estimate: the levels, what a unit of data is, and the half-width its interval
 * would have with `k` units at a tail probability (for "about N more"). */
export interface DecideOptions {
  minEffect: number;
  betterWhen: 'higher' | 'lower';
  levels: Levels;
  pending: SequentialVerdict;
  /** `pair` (paired runs) or `run per arm` (Welch). */
  unit: 'pair' | 'run per arm';
  halfWidthAt: (k: number, tail: number) => number;
  /** As `SequentialOptions.lowest`. @default -Infinity */
  lowest?: number;
}

/** The four calls on an estimate with `n` units of data (pairs, or the smaller arm's runs). */
export function decide(e: Estimate, n: number, options: DecideOptions): SequentialCall {
  const { levels, pending, unit } = options;
  const units = (k: number) => (unit === 'pair' ? `${k} pair${k === 1 ? '' : 's'}` : `${k} run${k === 1 ? '' : 's'} per arm`);
  const m = e.m;
  const width = (tail: number): number => tQuantile(1 - tail, e.df) * e.se;
  const h = width(levels.twoSided);
  const lowest = options.lowest ?? -Infinity;
  const low = Math.max(lowest, m - h);
  const high = m + h;
  const adjusted = e.adjusted === null ? '' : `, adjusted for ${e.adjusted.covariate}`;
  const call = { pairs: n, estimate: m, low, high, ...(e.adjusted === null ? {} : { adjusted: e.adjusted }) };
  const margin = options.minEffect;
  // Two runs a side give an interval but no verdict: their spread is too often small by luck.
  if (n < MIN_PAIRS)
    return { ...call, verdict: pending, more_pairs: MIN_PAIRS - n, text: `${head(pending)}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}] after ${units(n)}: at least ${units(MIN_PAIRS)} to tell` };
  // Beyond 0 is not enough to sell an effect as one that matters: the estimate passes the margin and the
  // interval clears half of it, so an effect well under the margin is not called better on a lucky run.
  if ((low >= margin / 2 || high <= -margin / 2) && Math.abs(m) >= margin) {
    const up = low > 0;
    const verdict = up === (options.betterWhen === 'higher') ? 'better' : 'worse';
    return { ...call, verdict, more_pairs: null, text: `${verdict}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}], past ±${margin} and clear of ±${margin / 2}, after ${units(n)}${adjusted}` };
  }
  // Equivalent: both one-sided tests reject a difference of ±margin (the narrower one-sided interval).
  const q = width(levels.oneSided);
  if (m - q > -margin && m + q < margin)
    return {
      ...call,
      low: Math.max(lowest, m - q),
      high: m + q,
      verdict: 'equivalent',
      more_pairs: null,
      text: `equivalent within ±${margin}: ${fmt(m)} [${fmt(Math.max(lowest, m - q))}, ${fmt(m + q)}] after ${units(n)}${adjusted}`,
    };
  const more = moreUnits(m, n, margin, levels, options.halfWidthAt);
  const plural = unit === 'pair' ? (more === 1 ? 'pair' : 'pairs') : `run${more === 1 ? '' : 's'} per arm`;
  const needs = more === null ? `more ${unit === 'pair' ? 'pairs' : 'runs'} would hardly settle it at this spread` : `about ${more} more ${plural} would likely settle it`;
  return { ...call, verdict: pending, more_pairs: more, text: `${head(pending)}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}] after ${units(n)}${adjusted}, wider than ±${margin}: ${needs}` };
}

/** Units to add until, at the spread seen and the same look's level, the interval would clear half the margin
 * around the estimate (when it passes the margin) or fit inside ±margin (when it does not). */
function moreUnits(m: number, n: number, margin: number, levels: Levels, halfWidthAt: (k: number, tail: number) => number): number | null {
  const beyond = Math.abs(m) >= margin;
  const room = beyond ? Math.abs(m) - margin / 2 : margin - Math.abs(m);
  if (room <= 0) return null;
  for (let k = n + 1; k <= n + 1000; k += 1) if (halfWidthAt(k, beyond ? levels.twoSided : levels.oneSided) < room) return k - n;
  return null;
}

/** The fewest pairs that may decide. */
export const MIN_PAIRS = 3;

function head(v: SequentialVerdict): string {
  return v === 'inconclusive' ? 'inconclusive' : 'not yet';
}

function fmt(v: number): string {
  return `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
}
