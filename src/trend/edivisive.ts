// E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014), the method of Apache Otava (Hunter) and MongoDB's performance signal
// processing: the split of a series that most separates the two sides in energy distance, found by
// bisection, each split kept only when chance rarely makes one as strong. Pure and deterministic: the
// permutations and surrogates come from a seeded generator.
//
// "Chance" is the null the nights are tested against. A permutation test assumes the nights exchangeable;
// nights that drift (a slow wander of the machine, the driver, the neighbours: AR(1) noise) are not, and a
// wander looks like a step to it — at lag-1 correlation 0.5, 8.5% of 12-night A/A histories got a change point.
// With `drift` ρ > 0 the null is an AR(1) series of lag-1 correlation ρ instead: the split's statistic, scaled
// by the segment's mean absolute difference (so no level or spread has to be assumed), is compared with the
// same statistic of seeded gaussian AR(1) surrogates of the segment's length. Twelve nights cannot tell their
// own ρ from a step (the estimate from so few is biased low by the wander it should measure), so ρ is the most
// drift the trend must stay quiet under, not an estimate: valid for any wander up to it, at the cost of power
// on nights that do not wander (docs/history.md gives both).
import { partitionPoint, Rng } from '../util/index.js';
import { ar1 } from './ar1.js';

export interface EDivisiveOptions {
  /** Permutations of the significance test (enough that a p-value near 0.01 is told from one near 0.02). @default 999 */
  permutations?: number;
  /** Largest p-value a split may have to be kept. @default 0.01 */
  maxPValue?: number;
  /** Fewest points on each side of a split. @default 2 */
  minSize?: number;
  /** Seed of the permutations. @default 1 */
  seed?: number;
  /** The lag-1 correlation of nightly drift the test must stay quiet under: 0 tests against exchangeable
   * nights (a permutation test), ρ > 0 against AR(1) surrogates of that ρ. @default 0 */
  drift?: number;
}

/** E-divisive's largest p-value of a split kept unless told otherwise (`--max-pvalue`). */
export const DEFAULT_MAX_PVALUE = 0.01;

/** A split found significant: the series is different from `index` on (0-based), with the test's p-value. */
export interface Split {
  index: number;
  pValue: number;
}

interface Candidate {
  /** Absolute index where the new segment starts. */
  index: number;
  q: number;
  from: number;
  to: number;
}

/**
 * The best split of the first `k` values of `x`: the largest Q(τ, k) = τ(k−τ)/k · (2·mean|A−B| − mean|A−A'| −
 * mean|B−B'|), A the values before τ and B those from τ to k, with at least `minSize` each side (α = 1).
 * O(k²): each step moves one point from B to A and updates the three sums of distances by its row.
 */
function bestSplitOfPrefix(x: readonly number[], k: number, minSize: number): { tau: number; q: number } | null {
  let total = 0;
  for (let i = 0; i < k; i += 1) for (let j = i + 1; j < k; j += 1) total += Math.abs(x[i]! - x[j]!);
  let withinA = 0;
  let withinB = total;
  let cross = 0;
  let best: { tau: number; q: number } | null = null;
  for (let tau = 1; tau <= k - minSize; tau += 1) {
    // Point tau − 1 moves from B to A.
    const m = tau - 1;
    let toA = 0;
    let toB = 0;
    for (let i = 0; i < m; i += 1) toA += Math.abs(x[i]! - x[m]!);
    for (let j = m + 1; j < k; j += 1) toB += Math.abs(x[m]! - x[j]!);
    withinA += toA;
    withinB -= toB;
    cross += toB - toA;
    if (tau < minSize) continue;
    const a = tau;
    const b = k - tau;
    const between = (2 * cross) / (a * b);
    const meanA = a > 1 ? withinA / ((a * (a - 1)) / 2) : 0;
    const meanB = b > 1 ? withinB / ((b * (b - 1)) / 2) : 0;
    const q = ((a * b) / k) * (between - meanA - meanB);
    if (best === null || q > best.q) best = { tau, q };
  }
  return best;
}

/**
 * The best split of `x` and its statistic, with the part after the split running to the end of the segment
 * (κ = n, as Otava fixes it: the segment's other end is its own bound, so the search is O(n²)). Returns null
 * when no split leaves `minSize` points each side.
 */
export function bestSplit(x: readonly number[], minSize: number): { tau: number; q: number } | null {
  return x.length < 2 * minSize ? null : bestSplitOfPrefix(x, x.length, minSize);
}

/** Fisher–Yates shuffle of a copy. */
function shuffled(x: readonly number[], rng: Rng): number[] {
  const out = [...x];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = rng.below(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Mean absolute difference between the values of `x` (0 for fewer than two). */
function spread(x: readonly number[]): number {
  let total = 0;
  for (let i = 0; i < x.length; i += 1) for (let j = i + 1; j < x.length; j += 1) total += Math.abs(x[i]! - x[j]!);
  return x.length < 2 ? 0 : total / ((x.length * (x.length - 1)) / 2);
}

const surrogateCache = new Map<string, Float64Array>();

/** The scaled best-split statistic of `count` AR(1) surrogates of length `n`, sorted; the same for the same
 * arguments (seeded, cached). */
function surrogateStatistics(n: number, rho: number, minSize: number, count: number, seed: number): Float64Array {
  const key = `${n}:${rho}:${minSize}:${count}:${seed}`;
  const known = surrogateCache.get(key);
  if (known !== undefined) return known;
  const rng = new Rng(seed * 7919 + n);
  const out = new Float64Array(count);
  for (let k = 0; k < count; k += 1) {
    const x = ar1(n, rho, rng);
    const best = bestSplit(x, minSize);
    out[k] = best === null ? 0 : best.q / spread(x);
  }
  out.sort();
  if (surrogateCache.size > 1000) surrogateCache.clear();
  surrogateCache.set(key, out);
  return out;
}

/** Share of AR(1) surrogates whose scaled best split is at least as strong as the segment's (with the +1). */
function surrogatePValue(segment: readonly number[], q: number, minSize: number, rho: number, count: number, seed: number): number {
  const scale = spread(segment);
  if (scale === 0) return 1;
  const observed = q / scale;
  const null_ = surrogateStatistics(segment.length, rho, minSize, count, seed);
  // Sorted: the first index at or above `observed`, by bisection.
  const lo = partitionPoint(null_, (v) => v < observed);
  return (null_.length - lo + 1) / (count + 1);
}

/** Share of permutations of the segment whose best split is at least as strong (with the +1 of an exact test). */
function permutationPValue(segment: readonly number[], q: number, minSize: number, permutations: number, rng: Rng): number {
  let asStrong = 0;
  for (let r = 0; r < permutations; r += 1) {
    const best = bestSplit(shuffled(segment, rng), minSize);
    if (best !== null && best.q >= q) asStrong += 1;
  }
  return (asStrong + 1) / (permutations + 1);
}

function candidateIn(x: readonly number[], from: number, to: number, minSize: number): Candidate | null {
  const best = bestSplit(x.slice(from, to), minSize);
  return best === null ? null : { index: from + best.tau, q: best.q, from, to };
}

/**
 * The significant splits of `x`, in index order. Hierarchical: the strongest split over every current
 * segment is tested (its segment permuted); kept, it cuts its segment in two and the search goes on; the
 * first one that fails the test ends it.
 */
export function eDivisive(x: readonly number[], options: EDivisiveOptions = {}): Split[] {
  const permutations = options.permutations ?? 999;
  const maxPValue = options.maxPValue ?? DEFAULT_MAX_PVALUE;
  const minSize = options.minSize ?? 2;
  const seed = options.seed ?? 1;
  const drift = options.drift ?? 0;
  const rng = new Rng(seed);
  const splits: Split[] = [];
  const bounds = [0, x.length];
  for (;;) {
    let strongest: Candidate | null = null;
    for (let i = 0; i + 1 < bounds.length; i += 1) {
      const c = candidateIn(x, bounds[i]!, bounds[i + 1]!, minSize);
      if (c !== null && c.q > 0 && (strongest === null || c.q > strongest.q)) strongest = c;
    }
    if (strongest === null) break;
    const segment = x.slice(strongest.from, strongest.to);
    const pValue = drift > 0 ? surrogatePValue(segment, strongest.q, minSize, drift, permutations, seed) : permutationPValue(segment, strongest.q, minSize, permutations, rng);
    if (pValue > maxPValue) break;
    splits.push({ index: strongest.index, pValue });
    bounds.push(strongest.index);
    bounds.sort((a, b) => a - b);
  }
  return splits.sort((a, b) => a.index - b.index);
}
