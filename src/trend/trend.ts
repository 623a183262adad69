// A trend: for each figure, its values run by run in time order (one phase, runs filtered by name and labels),
// its change points, each called a regression or an improvement by the figure's direction, and the verdict
// `--fail-on regression` acts on: does a recent run start a regression that still holds?
//
// Two tests find the change points. E-divisive means (change-points.ts) reads the whole history, for steps
// with at least NEWEST_NIGHTS + 1 runs after them; the newest-nights test (newest-step.ts) judges each recent
// run as the start of a new level from its first two runs against the level before them — "confirmed" the
// second night of a step, and the newest night alone "suspected" (shown, never acted on).
import type { PhasePoint } from '../history/index.js';
import { changePoints, type ChangePoint, type ChangePointOptions } from './change-points.js';
import { DEFAULT_MAX_PVALUE } from './edivisive.js';
import type { TrendMetric } from './metrics.js';
import { MAX_BASELINE, newestStep, stepStatistic, type NewestStepOptions } from './newest-step.js';

export interface TrendOptions extends ChangePointOptions {
  /** A change point counts for `--fail-on regression` when it starts within this many newest runs; the
   * newest-nights test looks at as many. @default 5 */
  recentRuns?: number;
  /** p-value at or under which the newest-nights test suspects (one night) or confirms (two) a step: the
   * share of nights of a steady figure that raise one. @default 0.02 */
  alertPValue?: number;
  /** Which labels name a run in the output (`--name-by commit`); null: all of them. @default null */
  nameBy?: readonly string[] | null;
}

/** The nightly drift (AR(1) lag-1 correlation) a trend stays quiet under unless told otherwise (`--drift`). */
export const DEFAULT_DRIFT = 0.6;
/** The newest-nights test's false-alarm rate a night and figure unless told otherwise (`--alert-pvalue`). */
export const DEFAULT_ALERT_PVALUE = 0.02;
/** The nights a step is confirmed on. */
export const NEWEST_NIGHTS = 2;

export interface TrendRun {
  runId: string;
  startedAt: string | null;
  labels: Record<string, string>;
  /** The run's results folder, when the history knows it. */
  dir: string | null;
}

/** The newest night alone off its level: shown, not acted on; the next night confirms it or drops it. */
export interface Suspected {
  /** Index of the newest run. */
  index: number;
  value: number;
  /** The level it left: the mean of the runs since the last change point. */
  level: number;
  change: number | null;
  pValue: number;
  kind: 'regression' | 'improvement';
  run: TrendRun;
}

export interface FigureChange extends ChangePoint {
  kind: 'regression' | 'improvement';
  /** The run where the new level began. */
  run: TrendRun;
  /** Which test found it: E-divisive over the history, or the newest-nights test on its first two runs. */
  test: 'e-divisive' | 'newest-nights';
}

export interface FigureTrend {
  metric: TrendMetric;
  /** One value per run (null: the run has no such figure). */
  values: (number | null)[];
  changes: FigureChange[];
  /** The newest change point when it is a regression starting within the recent runs, else null. */
  recentRegression: FigureChange | null;
  /** The newest night alone off its level (a step the next night confirms or drops), else null. */
  suspected: Suspected | null;
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
  alertPValue: number;
  /** E-divisive's largest p-value of a change point. */
  maxPValue: number;
  /** The labels that name a run (null: all). */
  nameBy: readonly string[] | null;
}

interface Resolved {
  options: TrendOptions;
  step: NewestStepOptions;
  recentRuns: number;
}

/** Where the level before index `at` begins: the newest change point before it, or the start. */
function levelStart(found: readonly ChangePoint[], at: number): number {
  return found.filter((c) => c.index < at).reduce((start, c) => Math.max(start, c.index), 0);
}

/**
 * The steps the newest-nights test confirms among the recent runs (series indices from `firstRecent`), oldest
 * first, as the nightly job met them: each candidate night judged on its first NEWEST_NIGHTS runs against the
 * level before it (since the last change point, at most MAX_BASELINE runs), and kept while the same test over
 * every run since it (to the next change point) still finds the step — a false alarm the nights after walk back
 * from is dropped, a step that holds gains evidence. E-divisive's change points stand where it found one
 * within a night of the candidate.
 */
function newestChanges(x: readonly number[], divisive: readonly ChangePoint[], firstRecent: number, r: Resolved): ChangePoint[] {
  const found: ChangePoint[] = [];
  for (let c = Math.max(1, firstRecent); c + NEWEST_NIGHTS <= x.length; c += 1) {
    if (divisive.some((d) => Math.abs(d.index - c) <= 1)) continue;
    const start = Math.max(levelStart([...divisive, ...found], c), c - MAX_BASELINE);
    const baseline = x.slice(start, c);
    const step = newestStep(baseline, x.slice(c, c + NEWEST_NIGHTS), r.step);
    if (step === null) continue;
    const next = divisive.find((d) => d.index > c)?.index ?? x.length;
    const since = next - c > NEWEST_NIGHTS ? newestStep(baseline, x.slice(c, next), r.step) : step;
    if (since === null || since.after > since.before !== step.after > step.before) continue;
    // Confirmed on a night that sat near the old level and the step after it: the new level begins where the
    // nights since split best (a night or two later).
    const at = bestStart(x, start, c, next, r.step.drift);
    const level = mean(x.slice(start, at));
    const after = mean(x.slice(at, next));
    found.push({ index: at, pValue: step.pValue, before: level, after, change: level === 0 ? null : (after - level) / Math.abs(level) });
    c = at;
  }
  return found;
}

/** Of the runs from `c` to at most NEWEST_NIGHTS before `next`, the one a step most likely began at: the
 * largest step statistic over the runs from `start`. */
function bestStart(x: readonly number[], start: number, c: number, next: number, drift: number): number {
  let best = c;
  let strongest = Math.abs(stepStatistic(x.slice(start, next), c - start, drift));
  for (let at = c + 1; at <= next - NEWEST_NIGHTS; at += 1) {
    const s = Math.abs(stepStatistic(x.slice(start, next), at - start, drift));
    if (s > strongest) [best, strongest] = [at, s];
  }
  return best;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

function figureTrend(metric: TrendMetric, values: (number | null)[], runs: readonly TrendRun[], r: Resolved): FigureTrend {
  // Runs without the figure are left out of the search; change points map back to their runs.
  const present = values.flatMap((v, i) => (v === null ? [] : [i]));
  const series = present.map((i) => values[i]!);
  const divisive = changePoints(series, { ...r.options, minAfter: NEWEST_NIGHTS + 1 });
  const firstRecent = present.findIndex((i) => i >= runs.length - r.recentRuns);
  const newest = firstRecent === -1 ? [] : newestChanges(series, divisive, firstRecent, r);
  const direction = (up: boolean): 'regression' | 'improvement' => (up === (metric.worse === 'up') ? 'regression' : 'improvement');
  const tagged = [...divisive.map((c) => ({ c, test: 'e-divisive' as const })), ...newest.map((c) => ({ c, test: 'newest-nights' as const }))].sort((a, b) => a.c.index - b.c.index);
  const changes = tagged.map(({ c, test }): FigureChange => {
    const at = present[c.index]!;
    return { ...c, index: at, kind: direction(c.after > c.before), run: runs[at]!, test };
  });
  const latest = changes.at(-1);
  const recentRegression = latest !== undefined && latest.kind === 'regression' && latest.index >= runs.length - r.recentRuns ? latest : null;
  const lastAt = present.at(-1);
  const all = tagged.map((t) => t.c);
  const off =
    lastAt === undefined || lastAt !== runs.length - 1 ? null : newestStep(series.slice(Math.max(levelStart(all, series.length - 1), series.length - 1 - MAX_BASELINE), -1), series.slice(-1), r.step);
  const suspected = off === null ? null : { index: lastAt!, value: off.after, level: off.before, change: off.change, pValue: off.pValue, kind: direction(off.after > off.before), run: runs[lastAt!]! };
  return { metric, values, changes, recentRegression, suspected };
}

/** The trend of `metrics` over `runs`, given each figure's values run by run (oldest first). */
export function buildTrendOfValues(phase: string, runs: readonly TrendRun[], columns: readonly { metric: TrendMetric; values: (number | null)[] }[], options: TrendOptions = {}): Trend {
  const drift = options.drift ?? DEFAULT_DRIFT;
  const alertPValue = options.alertPValue ?? DEFAULT_ALERT_PVALUE;
  const recentRuns = options.recentRuns ?? 5;
  const resolved: Resolved = { options: { ...options, drift }, step: { drift, minChange: options.minChange ?? 0.03, alertPValue }, recentRuns };
  const figures = columns.map((c) => figureTrend(c.metric, c.values, runs, resolved));
  return {
    phase,
    runs: [...runs],
    figures,
    regressions: figures.filter((f) => f.recentRegression !== null),
    recentRuns,
    drift,
    alertPValue,
    maxPValue: options.maxPValue ?? DEFAULT_MAX_PVALUE,
    nameBy: options.nameBy ?? null,
  };
}

/** The trend of `metrics` over `points` (one phase's figures, run by run in time order). */
export function buildTrend(phase: string, points: readonly PhasePoint[], metrics: readonly TrendMetric[], options: TrendOptions = {}): Trend {
  const runs = points.map((p): TrendRun => ({ runId: p.run.runId, startedAt: p.run.startedAt, labels: p.run.labels, dir: p.run.dir }));
  return buildTrendOfValues(
    phase,
    runs,
    metrics.map((m) => ({ metric: m, values: points.map((p) => m.value(p.figures)) })),
    options,
  );
}
