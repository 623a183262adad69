// A step on the newest nights: are the last one or two nights of a figure on a new level, judged against
// the nights before them as nights that drift (AR(1) noise of unknown lag-1 correlation)? The night a step
// appears it may be "suspected" (the newest night alone), the next night "confirmed" (both nights) — long
// before E-divisive, which needs several nights after a change, could tell.
//
// The statistic is a likelihood ratio with the step modelled jointly with the drift: the nights are a level,
// a step of unknown size from the candidate night on, and gaussian AR(1) noise whose ρ and spread are
// estimated from the same nights (exact maximum likelihood with the spread profiled out, ρ searched from −0.5
// to `drift`, for the model with the step and for the one without: the drift is read with the step taken
// out). Its signed root is calibrated by simulation: the same statistic of seeded gaussian AR(1) surrogates,
// at ρ 0, `drift`/2 and `drift`, the p-value the largest of the three — so it holds for nights that do not
// wander and for nights that wander up to `drift`. The statistic does not change with the series' level or
// spread, so surrogates of unit spread stand for any figure. Measured (bench/trend-power.ts, docs/history.md):
// a 10% step under 3% noise after 10 nights is flagged by its second night in 85% of histories with
// independent nights (81% at its first night, the rest a night early) and 89% with ρ 0.6, where the
// worst-drift E-divisive found 11-32%; A/A alerts on the newest nights 0.9-1.2%. Issue 43's 90% for
// independent nights is not reached: a test that stays quiet on nights drifting at ρ 0.6 pays for it on
// nights that do not (docs/history.md measures how much).
import { partitionPoint, Rng } from '../util/index.js';
import { ar1 } from './ar1.js';

const mean = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

/** Fewest nights on the level before a candidate step for it to be judged. */
export const MIN_BASELINE = 4;
/** Most nights before a candidate step that are used (the newest ones): a level older than a month is not
 * tonight's forecast, and the surrogates' cost grows with it. */
export const MAX_BASELINE = 30;
/** Surrogates per drift value of the calibration (pooled over both tails: 20,000 a drift value). */
const SURROGATES = 10_000;
const RHO_LOW = -0.5;
const RHO_STEP = 0.05;

/** The grid of ρ over which the likelihood is maximized. */
function rhoGrid(drift: number): number[] {
  const out: number[] = [];
  for (let r = RHO_LOW; r <= drift + 1e-9; r += RHO_STEP) out.push(Math.round(r * 100) / 100);
  return out;
}

interface Fit {
  /** Log-likelihood (σ profiled, constants left out) without and with the step. */
  l0: number;
  l1: number;
  /** The step's estimate. */
  step: number;
}

/**
 * The fit of x as level + step from `at` + AR(1) noise of lag-1 correlation `r`, by the Prais–Winsten
 * transform (exact for the first night): generalized least squares on the transformed intercept and step.
 */
function fitAt(x: readonly number[], at: number, r: number): Fit {
  const a = Math.sqrt(1 - r * r);
  let suu = 0;
  let suv = 0;
  let svv = 0;
  let suy = 0;
  let svy = 0;
  let syy = 0;
  for (let t = 0; t < x.length; t += 1) {
    const y = t === 0 ? a * x[0]! : x[t]! - r * x[t - 1]!;
    const u = t === 0 ? a : 1 - r;
    const stepNow = t >= at ? 1 : 0;
    const v = t === 0 ? a * stepNow : stepNow - (t - 1 >= at ? r : 0);
    suu += u * u;
    suv += u * v;
    svv += v * v;
    suy += u * y;
    svy += v * y;
    syy += y * y;
  }
  const n = x.length;
  const det = suu * svv - suv * suv;
  const b0 = (svv * suy - suv * svy) / det;
  const b1 = (suu * svy - suv * suy) / det;
  // A residual sum of 0 (a series flat on each side) would be an infinite likelihood: floored, relative to the data.
  const floor = 1e-12 * (syy + 1e-300);
  const rss1 = Math.max(syy - b0 * suy - b1 * svy, floor);
  const rss0 = Math.max(syy - (suy * suy) / suu, floor);
  const jacobian = 0.5 * Math.log(1 - r * r);
  return { l0: (-n / 2) * Math.log(rss0) + jacobian, l1: (-n / 2) * Math.log(rss1) + jacobian, step: b1 };
}

/** The signed root of the restricted likelihood ratio for a step at `at` (positive: the step goes up). */
export function stepStatistic(x: readonly number[], at: number, drift: number): number {
  let l0 = -Infinity;
  let l1 = -Infinity;
  let step = 0;
  for (const r of rhoGrid(drift)) {
    const f = fitAt(x, at, r);
    l0 = Math.max(l0, f.l0);
    if (f.l1 > l1) {
      l1 = f.l1;
      step = f.step;
    }
  }
  return Math.sign(step) * Math.sqrt(Math.max(0, 2 * (l1 - l0)));
}

/** Nights on a step up to which each must be past its midpoint (statisticOf). */
const EVERY_NIGHT_UP_TO = 2;

/** The statistic of a step at `at`. On one or two nights, 0 unless each is nearer the new level than the old
 * (past the midpoint between the mean before and the mean since): a step is every night of it off the level,
 * not one wild night carrying the mean — a spike on the newest night is suspected, never confirmed by a night
 * before it that sits on the level. The rule does not depend on the level or spread, so the surrogates follow
 * it. Over more nights (a step still holding) the mean of them is judged. */
function statisticOf(x: readonly number[], at: number, drift: number): number {
  const before = mean(x.slice(0, at));
  const newest = x.slice(at);
  const midpoint = (before + mean(newest)) / 2;
  const up = midpoint > before;
  if (midpoint === before || (newest.length <= EVERY_NIGHT_UP_TO && newest.some((v) => v > midpoint !== up || v === midpoint))) return 0;
  const s = stepStatistic(x, at, drift);
  return s > 0 === up ? s : 0;
}

const nullCache = new Map<string, Float64Array[]>();

/** Per drift value of the calibration, the statistic's absolute values over the surrogates, sorted (the null
 * is symmetric: both tails pooled). Seeded and cached: the same arguments, the same answer. */
function nullOf(baseline: number, newest: number, drift: number): Float64Array[] {
  const key = `${baseline}:${newest}:${drift}`;
  const known = nullCache.get(key);
  if (known !== undefined) return known;
  const rhos = drift > 0 ? [0, drift / 2, drift] : [0];
  const out = rhos.map((rho, k) => {
    const rng = Rng.from('newest-step', baseline, newest, drift, k);
    const stats = new Float64Array(SURROGATES);
    for (let i = 0; i < SURROGATES; i += 1) stats[i] = Math.abs(statisticOf(ar1(baseline + newest, rho, rng), baseline, drift));
    return stats.sort();
  });
  if (nullCache.size > 200) nullCache.clear();
  nullCache.set(key, out);
  return out;
}

/** One-sided p-value of a statistic `s` in the direction of its sign: the largest over the drift values. */
function pValueOf(s: number, baseline: number, newest: number, drift: number): number {
  let p = 0;
  for (const sorted of nullOf(baseline, newest, drift)) {
    const lo = partitionPoint(sorted, (v) => v < Math.abs(s));
    // The null is symmetric: each surrogate S stands for S and −S, 2N draws of which those at least as far out
    // as |s| on s's side are the surrogates with |S| ≥ |s|.
    p = Math.max(p, (sorted.length - lo + 1) / (2 * sorted.length + 1));
  }
  return Math.min(1, p);
}

export interface NewestStep {
  /** The mean of the nights before the step (the level) and of the nights tested. */
  before: number;
  after: number;
  /** (after − before) / |before|; null when `before` is 0. */
  change: number | null;
  pValue: number;
}

export interface NewestStepOptions {
  drift: number;
  /** Smallest shift kept, relative to the level (or absolute from a level of 0). */
  minChange: number;
  /** p-value at or under which the step is kept. */
  alertPValue: number;
}

/**
 * Whether `newest` (the last one or two nights) start a new level after `baseline` (the nights before them,
 * oldest first): past `minChange`, every newest night on the step's side of the level, and the step's p-value
 * at most `alertPValue`. Null when not, or when the baseline is shorter than MIN_BASELINE.
 */
export function newestStep(baseline: readonly number[], newest: readonly number[], options: NewestStepOptions): NewestStep | null {
  if (baseline.length < MIN_BASELINE || newest.length === 0) return null;
  const level = baseline.slice(-MAX_BASELINE);
  const before = mean(level);
  const after = mean(newest);
  const change = before === 0 ? null : (after - before) / Math.abs(before);
  if (Math.abs(change ?? after) < options.minChange) return null;
  const s = statisticOf([...level, ...newest], level.length, options.drift);
  if (s === 0 || s > 0 !== after > before) return null;
  const pValue = pValueOf(s, level.length, newest.length, options.drift);
  return pValue <= options.alertPValue ? { before, after, change, pValue } : null;
}
