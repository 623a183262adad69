// Change points of one figure's series: E-divisive's significant splits, each described by the mean of the
// runs before and after it (up to the neighbouring change points) and the relative shift; splits whose shift
// is below the smallest change worth telling are dropped and their neighbours re-described, the weakest
// first (as Otava does with its minimum magnitude), so what is left are steps a person would call steps.
import { eDivisive, type EDivisiveOptions } from './edivisive.js';

export interface ChangePointOptions extends EDivisiveOptions {
  /** Smallest shift kept, relative to the mean before (0.03 = 3%). @default 0.03 */
  minChange?: number;
  /** Fewest runs from a change point to the end of the series for it to be kept: a step on the newest nights
   * is left to the newest-nights test (newest-step.ts), which judges it sooner. @default 2 */
  minAfter?: number;
}

export interface ChangePoint {
  /** Index (0-based) of the first value of the new level. */
  index: number;
  pValue: number;
  /** Mean of the values since the previous change point (or the start) up to this one. */
  before: number;
  /** Mean of the values from this change point to the next one (or the end). */
  after: number;
  /** (after − before) / before; null when `before` is 0. */
  change: number | null;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

function describe(x: readonly number[], splits: readonly { index: number; pValue: number }[]): ChangePoint[] {
  return splits.map((s, i) => {
    const before = mean(x.slice(splits[i - 1]?.index ?? 0, s.index));
    const after = mean(x.slice(s.index, splits[i + 1]?.index ?? x.length));
    return { index: s.index, pValue: s.pValue, before, after, change: before === 0 ? null : (after - before) / Math.abs(before) };
  });
}

/** A shift too small to tell: relative, or from a level of 0 to a level below `minChange` in absolute terms. */
function tooSmall(c: ChangePoint, minChange: number): boolean {
  return c.change === null ? Math.abs(c.after) < minChange : Math.abs(c.change) < minChange;
}

/** Change points of `x` in index order, each significant (p ≤ maxPValue) and at least `minChange` in size. */
export function changePoints(x: readonly number[], options: ChangePointOptions = {}): ChangePoint[] {
  const minChange = options.minChange ?? 0.03;
  const minAfter = options.minAfter ?? 2;
  let splits = eDivisive(x, options).filter((s) => x.length - s.index >= minAfter);
  for (;;) {
    const described = describe(x, splits);
    const weak = described.filter((c) => tooSmall(c, minChange));
    if (weak.length === 0) return described;
    const weakest = weak.reduce((a, b) => (Math.abs(a.change ?? a.after) <= Math.abs(b.change ?? b.after) ? a : b));
    splits = splits.filter((s) => s.index !== weakest.index);
  }
}
