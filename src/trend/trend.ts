// A trend: for each figure, its values run by run in time order (one phase, runs filtered by name and labels),
// its change points, each called a regression or an improvement by the figure's direction, and the verdict
// `--fail-on regression` acts on: does a recent run start a regression that still holds?
import type { PhasePoint } from '../history/index.js';
import { tQuantile } from '../compare/index.js';
import { changePoints, type ChangePoint, type ChangePointOptions } from './change-points.js';
import type { TrendMetric } from './metrics.js';

export interface TrendOptions extends ChangePointOptions {
  /** A change point counts for `--fail-on regression` when it starts within this many newest runs. @default 5 */
  recentRuns?: number;
  /** Which labels name a run in the output (`--name-by commit`); null: all of them. @default null */
  nameBy?: readonly string[] | null;
}

/** The nightly drift (AR(1) lag-1 correlation) a trend stays quiet under unless told otherwise (`--drift`). */
export const DEFAULT_DRIFT = 0.6;

export interface TrendRun {
  runId: string;
  startedAt: string | null;
  labels: Record<string, string>;
  /** The run's results folder, when the history knows it. */
  dir: string | null;
}

/** The newest night alone off its level: shown, not acted on; the next night confirms it (a change point of
 * two nights) or drops it. */
export interface Unconfirmed {
  /** Index of the newest run. */
  index: number;
  value: number;
  /** The level it left: the mean of the runs since the last change point. */
  level: number;
  change: number | null;
  kind: 'regression' | 'improvement';
  run: TrendRun;
}

export interface FigureChange extends ChangePoint {
  kind: 'regression' | 'improvement';
  /** The run where the new level began. */
  run: TrendRun;
}

export interface FigureTrend {
  metric: TrendMetric;
  /** One value per run (null: the run has no such figure). */
  values: (number | null)[];
  changes: FigureChange[];
  /** The newest change point when it is a regression starting within the recent runs, else null. */
  recentRegression: FigureChange | null;
  /** The newest night alone off its level (a step no change point can hold yet), else null. */
  unconfirmed: Unconfirmed | null;
}

export interface Trend {
  phase: string;
  runs: TrendRun[];
  figures: FigureTrend[];
  /** Figures whose newest runs start a regression. */
  regressions: FigureTrend[];
  recentRuns: number;
  /** The drift the change points were tested against (0: exchangeable nights). */
  drift: number;
  /** The labels that name a run (null: all). */
  nameBy: readonly string[] | null;
}

function figureTrend(metric: TrendMetric, points: readonly PhasePoint[], runs: readonly TrendRun[], options: TrendOptions): FigureTrend {
  const values = points.map((p) => metric.value(p.figures));
  // Runs without the figure are left out of the search; change points map back to their runs.
  const present = values.flatMap((v, i) => (v === null ? [] : [i]));
  const series = present.map((i) => values[i]!);
  const found = changePoints(series, options);
  const direction = (up: boolean): 'regression' | 'improvement' => (up === (metric.worse === 'up') ? 'regression' : 'improvement');
  const changes = found.map((c): FigureChange => {
    const at = present[c.index]!;
    return { ...c, index: at, kind: direction(c.after > c.before), run: runs[at]! };
  });
  const newest = changes.at(-1);
  const recent = options.recentRuns ?? 5;
  const recentRegression = newest !== undefined && newest.kind === 'regression' && newest.index >= runs.length - recent ? newest : null;
  const lastAt = present.at(-1);
  const off = lastAt === undefined || lastAt !== runs.length - 1 ? null : newestOff(series, found.at(-1)?.index ?? 0, options);
  const unconfirmed = off === null ? null : { ...off, index: lastAt!, kind: direction(off.value > off.level), run: runs[lastAt!]! };
  return { metric, values, changes, recentRegression, unconfirmed };
}

/** Fewest runs on the level before the newest night for it to be judged. */
const NEWEST_MIN_LEVEL = 4;

/**
 * Whether the newest value is off the level of the runs since `from` (the last change point): past the smallest
 * change worth telling, and outside the one-step prediction interval at `maxPValue` both for nights that do not
 * wander (around the level) and for nights drifting at `drift` (from the night before) — so neither kind of
 * night makes it by chance. Null when it is on its level or there are too few runs to tell.
 */
function newestOff(x: readonly number[], from: number, options: TrendOptions): { value: number; level: number; change: number | null } | null {
  const level = x.slice(from, -1);
  const value = x.at(-1)!;
  const n = level.length;
  if (n < NEWEST_MIN_LEVEL) return null;
  const m = level.reduce((s, v) => s + v, 0) / n;
  const sd = Math.sqrt(level.reduce((s, v) => s + (v - m) ** 2, 0) / (n - 1));
  const change = m === 0 ? null : (value - m) / Math.abs(m);
  if (Math.abs(change ?? value) < (options.minChange ?? 0.03)) return null;
  const t = tQuantile(1 - (options.maxPValue ?? 0.01) / 2, n - 1);
  const rho = options.drift ?? DEFAULT_DRIFT;
  const previous = level.at(-1)!;
  // Independent nights: the level's mean and its own uncertainty. Drifting: from the night before, the
  // innovation's spread (1 − ρ²) of the marginal.
  const beyondLevel = Math.abs(value - m) > t * sd * Math.sqrt(1 + 1 / n);
  const beyondDrift = Math.abs(value - (m + rho * (previous - m))) > t * sd * Math.sqrt(1 - rho * rho) * Math.sqrt(1 + 1 / n);
  return beyondLevel && beyondDrift ? { value, level: m, change } : null;
}

/** The trend of `metrics` over `points` (one phase's figures, run by run in time order). */
export function buildTrend(phase: string, points: readonly PhasePoint[], metrics: readonly TrendMetric[], options: TrendOptions = {}): Trend {
  const resolved = { ...options, drift: options.drift ?? DEFAULT_DRIFT };
  const runs = points.map((p): TrendRun => ({ runId: p.run.runId, startedAt: p.run.startedAt, labels: p.run.labels, dir: p.run.dir }));
  const figures = metrics.map((m) => figureTrend(m, points, runs, resolved));
  return {
    phase,
    runs,
    figures,
    regressions: figures.filter((f) => f.recentRegression !== null),
    recentRuns: options.recentRuns ?? 5,
    drift: resolved.drift,
    nameBy: options.nameBy ?? null,
  };
}
