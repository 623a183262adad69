// The terminal view of a trend: a line per figure with its first and last value, a sparkline of every run
// (oldest left) and its change points, then the verdict for the nightly job.
import type { FigureChange, FigureTrend, Trend } from './trend.js';

const BARS = '▁▂▃▄▅▆▇█';

/** One character per value, scaled from the series' lowest (▁) to its highest (█); a space for a missing value. */
export function sparkline(values: readonly (number | null)[]): string {
  const present = values.filter((v): v is number => v !== null);
  if (present.length === 0) return ' '.repeat(values.length);
  const low = Math.min(...present);
  const span = Math.max(...present) - low;
  return values.map((v) => (v === null ? ' ' : span === 0 ? BARS[3] : BARS[Math.min(7, Math.floor(((v - low) / span) * 8))])).join('');
}

function number(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  const abs = Math.abs(v);
  return abs >= 100 ? v.toFixed(0) : abs >= 10 ? v.toFixed(1) : v.toFixed(2);
}

const percent = (c: FigureChange): string => (c.change === null ? `${number(c.before)} → ${number(c.after)}` : `${c.change > 0 ? '+' : ''}${(c.change * 100).toFixed(1)}%`);

/** `run 8 (2026-12-08, 3fa2c1b0e9a1): +10.2% regression, p=0.005`. */
export function changeText(c: FigureChange): string {
  const day = c.run.startedAt?.slice(0, 10) ?? 'no date';
  return `run ${c.index + 1} (${day}, ${c.run.runId}): ${percent(c)} ${c.kind}, p=${c.pValue.toFixed(3)}`;
}

function figureLine(f: FigureTrend, widths: { name: number; spark: number }): string {
  const present = f.values.filter((v): v is number => v !== null);
  const name = `${f.metric.name} ${f.metric.unit}`.padEnd(widths.name);
  const changes = f.changes.length === 0 ? '—' : f.changes.map(changeText).join('; ');
  return `${name}  ${number(present[0]).padStart(9)}  ${number(present.at(-1)).padStart(9)}  ${sparkline(f.values).padEnd(widths.spark)}  ${changes}`;
}

/** The verdict line(s): the figures whose newest runs start a regression, or that none does. */
export function verdictLines(trend: Trend): string[] {
  if (trend.regressions.length === 0) return [`no regression starts in the newest ${trend.recentRuns} runs`];
  return [`REGRESSION in the newest ${trend.recentRuns} runs:`, ...trend.regressions.map((f) => `  ${f.metric.name}: ${changeText(f.recentRegression!)}`)];
}

/** The whole table, headed by what it covers. */
export function formatTrend(trend: Trend, source: string): string {
  const first = trend.runs[0]?.startedAt?.slice(0, 10) ?? '?';
  const last = trend.runs.at(-1)?.startedAt?.slice(0, 10) ?? '?';
  const head = `roundload trend · ${source} · phase ${trend.phase} · ${trend.runs.length} run${trend.runs.length === 1 ? '' : 's'}, ${first} → ${last}`;
  const widths = { name: Math.max(6, ...trend.figures.map((f) => f.metric.name.length + f.metric.unit.length + 1)), spark: Math.max(20, trend.runs.length) };
  const header = `${'figure'.padEnd(widths.name)}  ${'first'.padStart(9)}  ${'last'.padStart(9)}  ${'runs, oldest → newest'.padEnd(widths.spark)}  change points`;
  return [head, '', header, ...trend.figures.map((f) => figureLine(f, widths)), '', ...verdictLines(trend)].join('\n');
}
