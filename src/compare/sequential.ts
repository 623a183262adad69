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
import { mean, tQuantile } from './stats.js';

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
  /** True when a limit (pairs or time) ends the sequence now: `undecided` becomes `inconclusive`. */
  final?: boolean;
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
}

/** Half-width of an interval for `n` pairs with standard deviation `sd` at a tail probability `tail`. */
function halfWidth(sd: number, n: number, tail: number): number {
  return (tQuantile(1 - tail, n - 1) * sd) / Math.sqrt(n);
}

/** The call on the pairs so far (differences B − A, in the figure's unit). */
export function sequentialCall(differences: readonly number[], options: SequentialOptions): SequentialCall {
  const n = differences.length;
  const alpha = options.alpha ?? 0.05;
  // Tail probabilities of one look: each side of the two-sided interval, and each one-sided equivalence test.
  const twoSided = lookAlpha(alpha, options.maxPairs, MIN_PAIRS, 2) / 2;
  const oneSided = lookAlpha(alpha, options.maxPairs, MIN_PAIRS, 1);
  const pending: SequentialVerdict = options.final === true ? 'inconclusive' : 'undecided';
  if (n < 2) return { verdict: pending, pairs: n, estimate: null, low: null, high: null, more_pairs: null, text: `${n} pair${n === 1 ? '' : 's'}: at least ${MIN_PAIRS} to tell` };
  const m = mean(differences);
  const sd = Math.sqrt(differences.reduce((s, d) => s + (d - m) ** 2, 0) / (n - 1));
  const h = halfWidth(sd, n, twoSided);
  const low = m - h;
  const high = m + h;
  const call = { pairs: n, estimate: m, low, high };
  const margin = options.minEffect;
  // Two pairs give an interval but no verdict: their spread is too often small by luck.
  if (n < MIN_PAIRS) return { ...call, verdict: pending, more_pairs: null, text: `${head(pending)}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}] after ${n} pairs: at least ${MIN_PAIRS} to tell` };
  // Beyond 0 is not enough to sell an effect as one that matters: the estimate passes the margin and the
  // interval clears half of it, so an effect well under the margin is not called better on a lucky run.
  if ((low >= margin / 2 || high <= -margin / 2) && Math.abs(m) >= margin) {
    const up = low > 0;
    const verdict = up === (options.betterWhen === 'higher') ? 'better' : 'worse';
    return { ...call, verdict, more_pairs: null, text: `${verdict}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}], past ±${margin} and clear of ±${margin / 2}, after ${n} pairs` };
  }
  // Equivalent: both one-sided tests reject a difference of ±margin (the narrower one-sided interval).
  const e = halfWidth(sd, n, oneSided);
  if (m - e > -margin && m + e < margin)
    return { ...call, low: m - e, high: m + e, verdict: 'equivalent', more_pairs: null, text: `equivalent within ±${margin}: ${fmt(m)} [${fmt(m - e)}, ${fmt(m + e)}] after ${n} pairs` };
  const more = morePairs(m, sd, n, margin, twoSided, oneSided);
  const needs = more === null ? 'more pairs would hardly settle it at this spread' : `about ${more} more pair${more === 1 ? '' : 's'} would likely settle it`;
  return { ...call, verdict: pending, more_pairs: more, text: `${head(pending)}: ${fmt(m)} [${fmt(low)}, ${fmt(high)}] after ${n} pairs, wider than ±${margin}: ${needs}` };
}

/** Pairs to add until, at the spread seen and the same look's level, the interval would clear half the margin
 * around the estimate (when it passes the margin) or fit inside ±margin (when it does not). */
function morePairs(m: number, sd: number, n: number, margin: number, twoSided: number, oneSided: number): number | null {
  if (sd === 0) return 1;
  const beyond = Math.abs(m) >= margin;
  const room = beyond ? Math.abs(m) - margin / 2 : margin - Math.abs(m);
  if (room <= 0) return null;
  for (let k = n + 1; k <= n + 1000; k += 1) if (halfWidth(sd, k, beyond ? twoSided : oneSided) < room) return k - n;
  return null;
}

/** The fewest pairs that may decide. */
const MIN_PAIRS = 3;

function head(v: SequentialVerdict): string {
  return v === 'inconclusive' ? 'inconclusive' : 'not yet';
}

function fmt(v: number): string {
  return `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
}
