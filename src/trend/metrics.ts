// The figures a trend can follow, each with its column in the history (the latencies: every one it keeps), its
// unit and which way is worse: a latency or an error count going up is a regression, a throughput going down is one.
import { LATENCY_FIGURES, PERCENTILES, type Row } from '../history/index.js';

export interface TrendMetric {
  /** As given to `--metric`, e.g. `ttft_p99`. */
  name: string;
  unit: 'ms' | 'tok/s' | '%' | 'count';
  /** The direction that is a regression. */
  worse: 'up' | 'down';
  /** The value from a phase's figures row; null when the run has none. */
  value(figures: Row): number | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const latency = (figure: string, q: string): TrendMetric => ({ name: `${figure}_${q}`, unit: 'ms', worse: 'up', value: (f) => num(f[`${figure}_${q}_ms`]) });

export const TREND_METRICS: readonly TrendMetric[] = [
  // Every latency column the history keeps (history/schema.ts), p50/p90/p99.
  ...LATENCY_FIGURES.flatMap((f) => PERCENTILES.map((q) => latency(f, q))),
  { name: 'output_tok_s', unit: 'tok/s', worse: 'down', value: (f) => num(f.output_tokens_per_s) },
  { name: 'stream_tok_s', unit: 'tok/s', worse: 'down', value: (f) => num(f.stream_tokens_per_s) },
  {
    name: 'error_rate',
    unit: '%',
    worse: 'up',
    value: (f) => {
      const requests = num(f.requests);
      return requests === null || requests === 0 ? null : (100 * (num(f.errors) ?? 0)) / requests;
    },
  },
  { name: 'hangs', unit: 'count', worse: 'up', value: (f) => num(f.hangs) },
];

/** What `trend` shows without `--metric`. */
export const DEFAULT_METRICS = ['ttft_p50', 'ttft_p99', 'ttfc_p99', 'itl_p50', 'itl_p99', 'tpot_p50', 'e2e_p50', 'e2e_p99', 'output_tok_s', 'stream_tok_s', 'error_rate', 'hangs'] as const;

/** The metric of a name, or undefined. */
export function metricOf(name: string): TrendMetric | undefined {
  return TREND_METRICS.find((m) => m.name === name);
}
