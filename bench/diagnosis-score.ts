// The fault matrix's scores beyond top-1: the reliability table (calls binned by confidence: how often each
// bin was right) and the leave-one-family-out score of the one thing fitted to the matrix, the confidence's
// temperature — each family's calls scored with the temperature fitted on the other families' runs.
import { wilson } from '../src/analysis/index.js';
import { printTable } from './lib.js';

/** One run of a scenario, as the score needs it. */
export interface ScoredRun {
  family: string;
  right: boolean;
  verdict: string;
  confidence: number | null;
  /** The main episode's summed bits per verdict (absent in files written before them). */
  scores?: Readonly<Record<string, number>>;
}

/** The verdicts the softmax runs over when a run's scores leave some out (they are 0 bits: nothing said). */
const VERDICTS = 6;

/** Calls (a verdict other than unknown, none, failed) with a confidence. */
function calls(runs: readonly ScoredRun[]): (ScoredRun & { confidence: number })[] {
  return runs.filter((r): r is ScoredRun & { confidence: number } => r.confidence !== null && !['unknown', 'none', 'failed'].includes(r.verdict));
}

export interface Bin {
  from: number;
  to: number;
  count: number;
  right: number;
  meanConfidence: number;
}

/** Calls binned by confidence: [0, 0.5), then tenths up to 1 (the last bin holds 1). */
export function reliability(runs: readonly ScoredRun[]): Bin[] {
  const edges = [0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001];
  const made = calls(runs);
  return edges.slice(0, -1).map((from, i) => {
    const to = edges[i + 1]!;
    const inBin = made.filter((r) => r.confidence >= from && r.confidence < to);
    return {
      from,
      to: Math.min(1, to),
      count: inBin.length,
      right: inBin.filter((r) => r.right).length,
      meanConfidence: inBin.length === 0 ? 0 : inBin.reduce((s, r) => s + r.confidence, 0) / inBin.length,
    };
  });
}

/** Bins with at least `minCount` calls whose mean confidence lies more than `points` outside their hit rate's
 * 95% interval: a handful of calls cannot pin a hit rate to ten points, so a bin drifts only when its calls
 * say so (16 right of 16 is a hit rate of 0.81 or more; 0.62 is off by 19 points). */
export function drifted(bins: readonly Bin[], points = 0.1, minCount = 5): Bin[] {
  return bins.filter((b) => {
    if (b.count < minCount) return false;
    const { low, high } = wilson(b.right, b.count);
    return b.meanConfidence < low - points || b.meanConfidence > high + points;
  });
}

/** The confidence of the call at temperature `t`: the softmax of its scores × t (the called verdict's share). */
function tempered(r: ScoredRun, t: number): number | null {
  if (r.scores === undefined) return null;
  const values = Object.values(r.scores);
  const top = r.scores[r.verdict];
  if (top === undefined) return null;
  const mass = values.reduce((s, v) => s + 2 ** (t * (v - top)), 0) + (VERDICTS - values.length) * 2 ** (-t * top);
  return 1 / mass;
}

/** Mean Brier score of the calls at temperature `t` (lower is better). */
function brier(runs: readonly ScoredRun[], t: number): number | null {
  const scored = calls(runs).flatMap((r) => {
    const c = tempered(r, t);
    return c === null ? [] : [(c - (r.right ? 1 : 0)) ** 2];
  });
  return scored.length === 0 ? null : scored.reduce((a, b) => a + b, 0) / scored.length;
}

const TEMPERATURES = Array.from({ length: 36 }, (_, i) => 0.25 + i * 0.05);

/** The temperature with the least Brier score on `runs` (1 when none can be scored). */
function fitTemperature(runs: readonly ScoredRun[]): number {
  let best = 1;
  let bestScore = Infinity;
  for (const t of TEMPERATURES) {
    const b = brier(runs, t);
    if (b !== null && b < bestScore) [best, bestScore] = [t, b];
  }
  return best;
}

export interface FamilyScore {
  family: string;
  runs: number;
  right: number;
  unknown: number;
  /** Brier of its calls at the model's own temperature (1), at the one fitted on all runs, and at the one fitted
   * on the other families only (held out): null when no call of it carries scores. */
  brierModel: number | null;
  brierInSample: number | null;
  brierHeldOut: number | null;
  heldOutTemperature: number;
}

/** Each family scored in-sample and with the temperature fitted without it. */
export function leaveOneFamilyOut(runs: readonly ScoredRun[]): { temperature: number; families: FamilyScore[] } {
  const all = fitTemperature(runs);
  const families = [...new Set(runs.map((r) => r.family))].sort();
  return {
    temperature: all,
    families: families.map((family) => {
      const mine = runs.filter((r) => r.family === family);
      const t = fitTemperature(runs.filter((r) => r.family !== family));
      return {
        family,
        runs: mine.length,
        right: mine.filter((r) => r.right).length,
        unknown: mine.filter((r) => r.verdict === 'unknown').length,
        brierModel: brier(mine, 1),
        brierInSample: brier(mine, all),
        brierHeldOut: brier(mine, t),
        heldOutTemperature: t,
      };
    }),
  };
}

const f2 = (v: number | null): string => (v === null ? '-' : v.toFixed(3));

function hitRate(b: Bin): string {
  const { low, high } = wilson(b.right, b.count);
  return `${(b.right / b.count).toFixed(2)} (${low.toFixed(2)}-${high.toFixed(2)})`;
}

/** Prints both tables; returns the bins that drifted more than 10 points. */
export function printCalibration(runs: readonly ScoredRun[]): Bin[] {
  const bins = reliability(runs);
  printTable(
    'reliability (calls by confidence: how often right)',
    ['confidence', 'calls', 'right', 'hit rate (95% interval)', 'mean confidence'],
    bins.map((b) => [`${b.from.toFixed(1)}-${b.to.toFixed(1)}`, b.count, b.right, b.count === 0 ? '-' : hitRate(b), b.count === 0 ? '-' : b.meanConfidence.toFixed(2)]),
  );
  const lofo = leaveOneFamilyOut(runs);
  printTable(
    `leave one family out (top-1 needs no fitting: each family's is its own; the confidence's temperature, fitted on all runs ${lofo.temperature.toFixed(2)}, is refitted without the family and its calls' Brier score compared)`,
    ['family', 'runs', 'right', 'unknown', 'Brier at 1', 'Brier in-sample', 'Brier held out', 'temperature held out'],
    lofo.families.map((f) => [f.family, f.runs, `${f.right}/${f.runs}`, f.unknown, f2(f.brierModel), f2(f.brierInSample), f2(f.brierHeldOut), f.heldOutTemperature.toFixed(2)]),
  );
  return drifted(bins);
}
