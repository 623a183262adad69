// `trend --json`: the contract a nightly job reads (docs/history.md, "--json"). Per workload its change points
// (figure, the run that began the new level, the shift, the p-value, whether it is a regression, whether it is
// among the --recent runs) and what the newest night alone suspects. Version 1; a field is only ever added.
import { runName } from './format.js';
import type { FigureChange, Suspected, Trend } from './trend.js';

/** What a change point and a suspected step both say: the figure, the run, the shift and its p-value. */
interface TrendJsonStep {
  /** The figure, as `--metric` names it. */
  figure: string;
  /** The run where the new level began: its labels (those of --name-by) or its id, as the table names it. */
  run: string;
  run_id: string;
  /** 1-based position of that run in the workload's runs, oldest first. */
  run_number: number;
  started_at: string | null;
  /** Shift in % of the level before; null from a level of 0. */
  change_pct: number | null;
  p_value: number;
  /** True when the shift is a regression (the figure's worse direction), false for an improvement. */
  worse: boolean;
}

export interface TrendJsonChange extends TrendJsonStep {
  /** The means of the runs before (since the previous change point) and since (to the next one). */
  before: number;
  after: number;
  /** Among the newest --recent runs (a regression there fails --fail-on regression when it is the newest). */
  recent: boolean;
  /** `e-divisive` (over the history) or `newest-nights` (confirmed by its second night). */
  test: FigureChange['test'];
}

/** A step on the newest night alone. */
export interface TrendJsonSuspected extends TrendJsonStep {
  /** The level it left and the newest night's value. */
  level: number;
  value: number;
}

export interface TrendJsonWorkload {
  /** The workload (a run's name in a database, the `workload` column of a CSV); null for a database whose
   * runs have no name. */
  workload: string | null;
  phase: string;
  runs: number;
  /** What `--fail-on regression` acts on for this workload. */
  regression: boolean;
  change_points: TrendJsonChange[];
  /** Steps on the newest night alone, to be confirmed or dropped by the next night; never fail the job. */
  suspected: TrendJsonSuspected[];
}

export interface TrendJson {
  version: 1;
  source: string;
  recent_runs: number;
  drift: number;
  /** The newest-nights test's p-value (`--alert-pvalue`). */
  alert_pvalue: number;
  /** E-divisive's largest p-value (`--max-pvalue`); null with no workload. */
  max_pvalue: number | null;
  /** Any workload's `regression`: `--fail-on regression` exits 1 when true. */
  regression: boolean;
  workloads: TrendJsonWorkload[];
}

const pct = (change: number | null): number | null => (change === null ? null : Math.round(change * 1e4) / 100);
const p = (v: number): number => Math.round(v * 1e5) / 1e5;

/** What a change point and a suspected step both say (TrendJsonStep) from either. */
function stepOf(trend: Trend, figure: string, x: FigureChange | Suspected): TrendJsonStep {
  return {
    figure,
    run: runName({ ...x.run, dir: null }, trend.nameBy),
    run_id: x.run.runId,
    run_number: x.index + 1,
    started_at: x.run.startedAt,
    change_pct: pct(x.change),
    p_value: p(x.pValue),
    worse: x.kind === 'regression',
  };
}

function changeOf(trend: Trend, figure: string, c: FigureChange): TrendJsonChange {
  return { ...stepOf(trend, figure, c), before: c.before, after: c.after, recent: c.index >= trend.runs.length - trend.recentRuns, test: c.test };
}

function suspectedOf(trend: Trend, figure: string, s: Suspected): TrendJsonSuspected {
  return { ...stepOf(trend, figure, s), level: s.level, value: s.value };
}

/** The JSON of the trends of one file's workloads. */
export function trendJson(source: string, trends: readonly { workload: string | null; trend: Trend }[]): TrendJson {
  const workloads = trends.map(({ workload, trend }): TrendJsonWorkload => ({
    workload,
    phase: trend.phase,
    runs: trend.runs.length,
    regression: trend.regressions.length > 0,
    change_points: trend.figures.flatMap((f) => f.changes.map((c) => changeOf(trend, f.metric.name, c))).sort((a, b) => a.run_number - b.run_number),
    suspected: trend.figures.flatMap((f) => (f.suspected === null ? [] : [suspectedOf(trend, f.metric.name, f.suspected)])),
  }));
  const first = trends[0]?.trend;
  return {
    version: 1,
    source,
    recent_runs: first?.recentRuns ?? 5,
    drift: first?.drift ?? 0,
    alert_pvalue: first?.alertPValue ?? 0,
    max_pvalue: first?.maxPValue ?? null,
    regression: workloads.some((w) => w.regression),
    workloads,
  };
}
