// The verdict on one figure between two arms, with runs as the unit: each run is one number (figures.ts),
// and the interval is across runs — paired when the runs alternated (A B, B A …: each pair's difference
// cancels drift slower than a pair), Welch's across the two arms' runs otherwise, Student's t at the real
// degrees of freedom either way. Time windows never count as independent evidence: a run's windows share its
// restart, its placement and its warm caches, which is what differs from one run to the next. Pure.
//
// One rule for every comparison: the four calls of sequential.ts (better, worse, equivalent within the margin,
// or not yet / inconclusive with how much more data would settle it), at a fixed-sample level for `compare`
// and an ab file's `repeats`, or at the stopping rule's per-look level (looked at after every pair, a call
// once made is kept) for an ab with `until`.
import type { DeltaKind, BetterWhen } from './figures.js';
import { decide, fixedLevels, MIN_PAIRS, sequentialCall, sequentialLevels, type Estimate, type Levels, type SequentialCall, type SequentialVerdict } from './sequential.js';
import { mean, sampleSd, tQuantile } from './stats.js';

/** `insufficient data`: fewer than two runs a side (or two pairs): no interval across runs at all. */
export type Verdict = SequentialVerdict | 'insufficient data';

/** A call with the verdict widened to `insufficient data`. */
export interface Call extends Omit<SequentialCall, 'verdict'> {
  verdict: Verdict;
}

/** How the calls are made: margins, family-wise alpha of this comparison, and when it is looked at. */
export interface Rule {
  /** Smallest difference that matters for relative figures, in % of A. @default 3 */
  minEffectPct: number;
  /** Smallest difference that matters for a rate (errors+hangs), in percentage points. @default 1 */
  minEffectPoints: number;
  /** Error of this comparison: 0.05, or 0.05 split over the arms compared with one baseline. */
  alpha: number;
  /** `fixed`: one look at all the runs; `sequential`: a look after every pair, up to `maxPairs`, the last
   * look `final` (a limit came: not yet becomes inconclusive). */
  looks: { kind: 'fixed' } | { kind: 'sequential'; maxPairs: number; final: boolean };
}

export const DEFAULT_MIN_EFFECT_PCT = 3;
export const DEFAULT_MIN_EFFECT_POINTS = 1;

/** A figure's calls between two arms: the method, and the call after each look (fixed: one). */
export interface FigureCalls {
  method: 'paired' | 'welch';
  calls: Call[];
}

/** The values of the two arms' runs, in run order, and which runs pair (index in A, index in B), or null. */
export interface ArmValues {
  a: readonly (number | null)[];
  b: readonly (number | null)[];
  pairs: readonly (readonly [number, number])[] | null;
  /** A covariate per run the change should not move (decode: tokens per request), same order as a and b. */
  covariate?: { name: string; a: readonly (number | null)[]; b: readonly (number | null)[] };
}

/** One pair's difference: B − A in % of A (relative) or in the figure's unit; null when either lacks it. */
export function difference(a: number | null | undefined, b: number | null | undefined, kind: DeltaKind): number | null {
  if (a === null || a === undefined || b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) return null;
  if (kind === 'absolute') return b - a;
  return a === 0 ? null : ((b - a) / a) * 100;
}

export function marginOf(rule: Pick<Rule, 'minEffectPct' | 'minEffectPoints'>, kind: DeltaKind): number {
  return kind === 'relative' ? rule.minEffectPct : rule.minEffectPoints;
}

/** The calls on one figure between two arms under `rule`. */
export function callFigure(values: ArmValues, spec: { kind: DeltaKind; betterWhen: BetterWhen }, rule: Rule): FigureCalls {
  if (values.pairs !== null) return { method: 'paired', calls: pairedCalls(values, values.pairs, spec, rule) };
  return { method: 'welch', calls: [welchCall(values, spec, rule)] };
}

function pairedCalls(values: ArmValues, pairs: readonly (readonly [number, number])[], spec: { kind: DeltaKind; betterWhen: BetterWhen }, rule: Rule): Call[] {
  const margin = marginOf(rule, spec.kind);
  const levels: Levels = rule.looks.kind === 'fixed' ? fixedLevels(rule.alpha) : sequentialLevels(rule.alpha, rule.looks.maxPairs);
  const maxPairs = rule.looks.kind === 'fixed' ? pairs.length : rule.looks.maxPairs;
  const diffs: number[] = [];
  const covariate: number[] = [];
  const calls: Call[] = [];
  const looks = rule.looks;
  pairs.forEach(([i, j], k) => {
    const d = difference(values.a[i], values.b[j], spec.kind);
    if (d !== null) {
      diffs.push(d);
      // A pair without the covariate ends the adjustment (the differences must line up).
      covariate.push(values.covariate === undefined ? NaN : (difference(values.covariate.a[i], values.covariate.b[j], 'relative') ?? NaN));
    }
    const last = k === pairs.length - 1;
    if (looks.kind === 'fixed' && !last) return;
    // A figure once decided keeps its call: the interval is valid at the look that decided it.
    const before = calls.at(-1);
    if (before !== undefined && decided(before)) {
      calls.push(before);
      return;
    }
    const final = looks.kind === 'fixed' || (looks.final && last);
    const aligned = values.covariate !== undefined && covariate.every(Number.isFinite) ? { covariate: { name: values.covariate.name, differences: covariate } } : {};
    const call = sequentialCall(diffs, { minEffect: margin, maxPairs, betterWhen: spec.betterWhen, final, levels, lowest: lowestOf(spec.kind), ...aligned });
    calls.push(diffs.length < 2 && final ? insufficient(diffs.length, 'pair', diffs[0] ?? null) : call);
  });
  if (calls.length === 0) calls.push(insufficient(0, 'pair', null));
  return calls;
}

/** Fewer than two runs (pairs) with the figure: no spread across runs, so no interval and no verdict (the one
 * difference seen, if any, is shown as it is). */
function insufficient(n: number, unit: 'pair' | 'run per arm', seen: number | null): Call {
  const none = n === 0;
  const what = unit === 'pair' ? `${n} pair${n === 1 ? '' : 's'}` : `${n} run${n === 1 ? '' : 's'} in the smaller arm`;
  const needs = unit === 'pair' ? `${MIN_PAIRS} alternated pairs (A B, B A, A B)` : `${MIN_PAIRS} runs per arm`;
  return {
    verdict: 'insufficient data',
    pairs: n,
    estimate: seen,
    low: null,
    high: null,
    // No run with the figure at all: more runs of the same kind would not give one (longer runs would).
    more_pairs: none ? null : MIN_PAIRS - n,
    text: none
      ? 'insufficient data: no run has this figure (no steady window, or too few requests for the percentile): longer runs would give it one'
      : `insufficient data: ${what} with this figure: no verdict across runs; at least ${needs} give one`,
  };
}

function decided(c: Call): boolean {
  return c.verdict === 'better' || c.verdict === 'worse' || c.verdict === 'equivalent';
}

/** Welch's difference of the arms' means (relative: in % of A, its standard error by the delta method). */
function welchEstimate(a: readonly number[], b: readonly number[], kind: DeltaKind): { e: Estimate; sdA: number; sdB: number } {
  const ma = mean(a);
  const mb = mean(b);
  // Relative: each arm's spread in % of its own mean, so the delta method's variance is a sum of squares.
  const scaleA = kind === 'relative' ? 100 / ma : 1;
  const scaleB = kind === 'relative' ? 100 / mb : 1;
  const sdA = sampleSd(a, ma) * Math.abs(scaleA);
  const sdB = sampleSd(b, mb) * Math.abs(scaleB);
  const ua = (sdA * sdA) / a.length;
  const ub = (sdB * sdB) / b.length;
  const ratio = kind === 'relative' ? mb / ma : 1;
  const m = kind === 'relative' ? (ratio - 1) * 100 : mb - ma;
  const se = Math.abs(ratio) * Math.sqrt(ua + ub);
  // Welch–Satterthwaite; with no spread at all, the pooled degrees of freedom.
  const df = ua + ub === 0 ? a.length + b.length - 2 : (ua + ub) ** 2 / ((ua * ua) / (a.length - 1) + (ub * ub) / (b.length - 1));
  return { e: { m, se, df, adjusted: null }, sdA, sdB };
}

function welchCall(values: ArmValues, spec: { kind: DeltaKind; betterWhen: BetterWhen }, rule: Rule): Call {
  const present = (xs: readonly (number | null)[]) => xs.filter((x): x is number => x !== null && Number.isFinite(x));
  const a = present(values.a);
  const b = present(values.b);
  const n = Math.min(a.length, b.length);
  if (n < 2 || (spec.kind === 'relative' && (mean(a) === 0 || mean(b) === 0))) return insufficient(n, 'run per arm', n === 0 ? null : difference(mean(a), mean(b), spec.kind));
  const { e, sdA, sdB } = welchEstimate(a, b, spec.kind);
  const ratio = spec.kind === 'relative' ? mean(b) / mean(a) : 1;
  const levels = fixedLevels(rule.alpha);
  // With k runs in each arm at the spreads seen.
  const halfWidthAt = (k: number, tail: number) => tQuantile(1 - tail, 2 * k - 2) * Math.abs(ratio) * Math.sqrt((sdA * sdA + sdB * sdB) / k);
  return decide(e, n, { minEffect: marginOf(rule, spec.kind), betterWhen: spec.betterWhen, levels, pending: 'inconclusive', unit: 'run per arm', halfWidthAt, lowest: lowestOf(spec.kind) });
}

/** A relative delta of a positive figure (tokens/s, a latency) is at least −100%: B is not below 0. */
function lowestOf(kind: DeltaKind): number {
  return kind === 'relative' ? -100 : -Infinity;
}

/**
 * Which runs of two arms pair: when, ordered by start, the runs come two by two with one of each arm in every
 * two (A B, B A, A B …, as `ab` runs them), the i-th two are pair i. Null otherwise (then Welch's interval):
 * unequal counts, a start not recorded, or two runs of one arm back to back.
 */
export function alternatedPairs(a: readonly { startedAt: string | null }[], b: readonly { startedAt: string | null }[]): [number, number][] | null {
  if (a.length !== b.length || a.length === 0) return null;
  const all = [...a.map((r, i) => ({ arm: 'a' as const, i, t: Date.parse(r.startedAt ?? '') })), ...b.map((r, i) => ({ arm: 'b' as const, i, t: Date.parse(r.startedAt ?? '') }))];
  if (all.some((r) => !Number.isFinite(r.t))) return null;
  all.sort((x, y) => x.t - y.t);
  const pairs: [number, number][] = [];
  for (let k = 0; k < all.length; k += 2) {
    const [x, y] = [all[k]!, all[k + 1]!];
    if (x.arm === y.arm) return null;
    pairs.push(x.arm === 'a' ? [x.i, y.i] : [y.i, x.i]);
  }
  return pairs;
}
