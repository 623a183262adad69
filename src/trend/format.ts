// The terminal view of a trend: a line per figure with its first and last value, a sparkline of every run
// (oldest left) and its change points, then the verdict for the nightly job.
import type { FigureChange, FigureTrend, Suspected, Trend, TrendRun } from './trend.js';
import { oneLine, printable } from '../util/index.js';

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

/** `p=0.004`, or `p<0.001` below what three decimals show. */
const pText = (p: number): string => (p < 0.001 ? 'p<0.001' : `p=${p.toFixed(3)}`);

const shift = (change: number | null, before: number, after: number): string => (change === null ? `${number(before)} → ${number(after)}` : `${change > 0 ? '+' : ''}${(change * 100).toFixed(1)}%`);

/** How a run is named: its labels (those of `nameBy`, or all), else its id; then its results folder. */
export function runName(run: TrendRun, nameBy: readonly string[] | null): string {
  const labels = Object.entries(run.labels).filter(([k]) => nameBy === null || nameBy.includes(k));
  const name = labels.length === 0 ? run.runId : labels.map(([k, v]) => `${k}=${v}`).join(' ');
  return run.dir === null || run.dir === undefined || run.dir === '' ? name : `${name}, ${run.dir}`;
}

/** `run 8 (2026-12-08, commit=c07, results/nightly-08): +10.2% regression, p=0.005` — with `, confirmed by
 * its second night` when the newest-nights test found it. */
export function changeText(c: FigureChange, nameBy: readonly string[] | null = null): string {
  const day = c.run.startedAt?.slice(0, 10) ?? 'no date';
  const how = c.test === 'newest-nights' ? ', confirmed by its second night' : '';
  return `run ${c.index + 1} (${day}, ${runName(c.run, nameBy)}): ${shift(c.change, c.before, c.after)} ${c.kind}, ${pText(c.pValue)}${how}`;
}

/** `run 12 (…): +11.0% regression suspected on the newest night alone, p=0.004: the next night confirms or drops it`. */
export function suspectedText(u: Suspected, nameBy: readonly string[] | null = null): string {
  const day = u.run.startedAt?.slice(0, 10) ?? 'no date';
  return `run ${u.index + 1} (${day}, ${runName(u.run, nameBy)}): ${shift(u.change, u.level, u.value)} ${u.kind} suspected on the newest night alone, ${pText(u.pValue)}: the next night confirms or drops it`;
}

function figureLine(f: FigureTrend, widths: { name: number; spark: number }, nameBy: readonly string[] | null): string {
  const present = f.values.filter((v): v is number => v !== null);
  const name = `${f.metric.name} ${f.metric.unit}`.padEnd(widths.name);
  const found = [...f.changes.map((c) => changeText(c, nameBy)), ...(f.suspected === null ? [] : [suspectedText(f.suspected, nameBy)])];
  const changes = found.length === 0 ? '—' : found.join('; ');
  return `${name}  ${number(present[0]).padStart(9)}  ${number(present.at(-1)).padStart(9)}  ${sparkline(f.values).padEnd(widths.spark)}  ${changes}`;
}

/** The verdict line(s): the figures whose newest runs start a regression, or that none does; then any
 * regression suspected on the newest night alone (shown, never acted on). */
export function verdictLines(trend: Trend): string[] {
  const pending = trend.figures.filter((f) => f.suspected?.kind === 'regression');
  const waiting =
    pending.length === 0
      ? []
      : ['suspected (the next night confirms or drops it; --fail-on does not act on it):', ...pending.map((f) => `  ${f.metric.name}: ${suspectedText(f.suspected!, trend.nameBy)}`)];
  if (trend.regressions.length === 0) return [`no regression starts in the newest ${trend.recentRuns} runs`, ...waiting];
  return [`REGRESSION in the newest ${trend.recentRuns} runs:`, ...trend.regressions.map((f) => `  ${f.metric.name}: ${changeText(f.recentRegression!, trend.nameBy)}`), ...waiting];
}

/** The whole table, headed by what it covers. */
export function formatTrend(figures: Trend, database: string): string {
  // Run names and labels came from run folders: one line each, no controls.
  const trend = printable(figures);
  const source = oneLine(database);
  const first = trend.runs[0]?.startedAt?.slice(0, 10) ?? '?';
  const last = trend.runs.at(-1)?.startedAt?.slice(0, 10) ?? '?';
  const head = `roundload trend · ${source} · phase ${trend.phase} · ${trend.runs.length} run${trend.runs.length === 1 ? '' : 's'}, ${first} → ${last} · ${testsText(trend)}`;
  const widths = { name: Math.max(6, ...trend.figures.map((f) => f.metric.name.length + f.metric.unit.length + 1)), spark: Math.max(20, trend.runs.length) };
  const header = `${'figure'.padEnd(widths.name)}  ${'first'.padStart(9)}  ${'last'.padStart(9)}  ${'runs, oldest → newest'.padEnd(widths.spark)}  change points`;
  return [head, '', header, ...trend.figures.map((f) => figureLine(f, widths, trend.nameBy)), '', ...verdictLines(trend)].join('\n');
}

/** What the change points were tested against, in words. */
export function driftText(drift: number): string {
  return drift > 0 ? `quiet on nights drifting up to AR(1) ρ ${drift}` : 'nights taken as exchangeable (--drift 0)';
}

/** The trend's tests in words (the header). */
export function testsText(trend: Trend): string {
  return `${driftText(trend.drift)}; newest nights judged at p ≤ ${trend.alertPValue}`;
}
