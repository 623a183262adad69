// A trend: for each figure, its values run by run in time order (one phase, runs filtered by name and labels),
// its change points, each called a regression or an improvement by the figure's direction, and the verdict
// `--fail-on regression` acts on: does a recent run start a regression that still holds?
import type { PhasePoint } from '../history/index.js';
import { changePoints, type ChangePoint, type ChangePointOptions } from './change-points.js';
import type { TrendMetric } from './metrics.js';

export interface TrendOptions extends ChangePointOptions {
  /** A change point counts for `--fail-on regression` when it starts within this many newest runs. @default 5 */
  recentRuns?: number;
}

export interface TrendRun {
  runId: string;
  startedAt: string | null;
  labels: Record<string, string>;
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
}

export interface Trend {
  phase: string;
  runs: TrendRun[];
  figures: FigureTrend[];
  /** Figures whose newest runs start a regression. */
  regressions: FigureTrend[];
  recentRuns: number;
}

function figureTrend(metric: TrendMetric, points: readonly PhasePoint[], runs: readonly TrendRun[], options: TrendOptions): FigureTrend {
  const values = points.map((p) => metric.value(p.figures));
  // Runs without the figure are left out of the search; change points map back to their runs.
  const present = values.flatMap((v, i) => (v === null ? [] : [i]));
  const found = changePoints(
    present.map((i) => values[i]!),
    options,
  );
  const changes = found.map((c): FigureChange => {
    const at = present[c.index]!;
    const up = c.after > c.before;
    return { ...c, index: at, kind: up === (metric.worse === 'up') ? 'regression' : 'improvement', run: runs[at]! };
  });
  const newest = changes.at(-1);
  const recent = options.recentRuns ?? 5;
  const recentRegression = newest !== undefined && newest.kind === 'regression' && newest.index >= runs.length - recent ? newest : null;
  return { metric, values, changes, recentRegression };
}

/** The trend of `metrics` over `points` (one phase's figures, run by run in time order). */
export function buildTrend(phase: string, points: readonly PhasePoint[], metrics: readonly TrendMetric[], options: TrendOptions = {}): Trend {
  const runs = points.map((p): TrendRun => ({ runId: p.run.runId, startedAt: p.run.startedAt, labels: p.run.labels }));
  const figures = metrics.map((m) => figureTrend(m, points, runs, options));
  return { phase, runs, figures, regressions: figures.filter((f) => f.recentRegression !== null), recentRuns: options.recentRuns ?? 5 };
}
