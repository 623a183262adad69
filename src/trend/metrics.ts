// The figures a trend can follow, as types/figures.ts declares them (every latency column the history keeps,
// then the throughputs, the error rate and hangs), each with how its value is read from a history row: its
// column, or for the error rate, computed from the row's counts.
import { TREND_FIGURES, type ComputedTrendFigureName, type TrendFigureInfo } from '../types/index.js';
import type { Row } from '../history/index.js';

export interface TrendMetric {
  /** As given to `--metric`, e.g. `ttft_p99`. */
  name: string;
  unit: TrendFigureInfo['unit'];
  /** The direction that is a regression. */
  worse: TrendFigureInfo['worse'];
  /** The value from a phase's figures row; null when the run has none. */
  value(figures: Row): number | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The figures with no history column of their own: their value from the row's other columns (one left out
 * does not compile). */
const COMPUTED: Record<ComputedTrendFigureName, TrendMetric['value']> = {
  error_rate: (f) => {
    const requests = num(f.requests);
    return requests === null || requests === 0 ? null : (100 * (num(f.errors) ?? 0)) / requests;
  },
};

function metric(info: TrendFigureInfo): TrendMetric {
  const column = info.column;
  // A figure without a column is one of COMPUTED's, by ComputedTrendFigureName's definition.
  const value = column === null ? COMPUTED[info.figure as ComputedTrendFigureName] : (f: Row) => num(f[column]);
  return { name: info.name, unit: info.unit, worse: info.worse, value };
}

export const TREND_METRICS: readonly TrendMetric[] = TREND_FIGURES.map(metric);

/** What `trend` shows without `--metric`. */
export const DEFAULT_METRICS: readonly string[] = TREND_FIGURES.filter((f) => f.default).map((f) => f.name);

/** The metric of a name, or undefined. */
export function metricOf(name: string): TrendMetric | undefined {
  return TREND_METRICS.find((m) => m.name === name);
}
