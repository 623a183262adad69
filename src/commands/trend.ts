// `roundload trend FILE`: the history's figures run by run for one phase and one workload, a sparkline and the
// change points of each, trend.html, and with `--fail-on regression` exit 1 when the newest runs start one.
import { dirname, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { listRuns, phaseNames, phasePoints, type PhasePoint, withHistory } from '../history/index.js';
import { buildTrend, DEFAULT_METRICS, formatTrend, metricOf, TREND_METRICS, trendHtml, type TrendMetric, type TrendOptions } from '../trend/index.js';
import { onResultsFs, writeTextAtomic } from '../results/index.js';
import { UsageError } from '../errors.js';
import { labelFilter } from './history.js';
import * as flag from './flags.js';

export interface TrendCommandOptions {
  metric: string[];
  phase?: string;
  label: string[];
  name?: string;
  failOn?: string;
  /** trend.html path. @default "trend.html" */
  out?: string;
  minChange?: string;
  maxPvalue?: string;
  permutations?: string;
  recent?: string;
  seed?: string;
  /** The nightly drift to stay quiet under (AR(1) lag-1 correlation, 0 to 0.9). @default 0.6 */
  drift?: string;
  /** Labels that name a run (repeatable or comma-separated); default all. */
  nameBy?: string[];
  json?: boolean;
}

function metricsOf(names: readonly string[]): TrendMetric[] {
  const wanted = names
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  return (wanted.length === 0 ? [...DEFAULT_METRICS] : wanted).map((name) => {
    const metric = metricOf(name);
    if (metric === undefined) throw new UsageError(`--metric: unknown figure "${name}"; one of ${TREND_METRICS.map((m) => m.name).join(', ')}`);
    return metric;
  });
}

function numberFlag(flag: string, value: string | undefined, check: (n: number) => boolean, expected: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.trim().replace(/%$/, '')) / (value.trim().endsWith('%') ? 100 : 1);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag} must be ${expected}, got "${value}"`);
  return n;
}

function trendOptions(opts: TrendCommandOptions): TrendOptions {
  const minChange = numberFlag('--min-change', opts.minChange, (n) => n >= 0 && n < 10, 'a share such as 0.03 or 3%');
  const maxPValue = numberFlag('--max-pvalue', opts.maxPvalue, (n) => n > 0 && n <= 1, 'a p-value in (0, 1]');
  const permutations = numberFlag('--permutations', opts.permutations, (n) => Number.isInteger(n) && n >= 19, 'a whole number ≥ 19');
  const recentRuns = numberFlag('--recent', opts.recent, (n) => Number.isInteger(n) && n >= 1, 'a whole number ≥ 1');
  const seed = numberFlag('--seed', opts.seed, (n) => Number.isInteger(n) && n >= 0, 'a whole number ≥ 0');
  const drift = numberFlag('--drift', opts.drift, (n) => n >= 0 && n <= 0.9, 'a lag-1 correlation from 0 to 0.9');
  const nameBy = (opts.nameBy ?? [])
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  return {
    ...(drift === undefined ? {} : { drift }),
    ...(nameBy.length === 0 ? {} : { nameBy }),
    ...(minChange === undefined ? {} : { minChange }),
    ...(maxPValue === undefined ? {} : { maxPValue }),
    ...(permutations === undefined ? {} : { permutations }),
    ...(recentRuns === undefined ? {} : { recentRuns }),
    ...(seed === undefined ? {} : { seed }),
  };
}

/** The points to follow: the phase asked for (default `main`, else the most common), the workload asked for
 * (default the newest run's), runs carrying the labels. */
async function pointsOf(file: string, opts: TrendCommandOptions): Promise<{ phase: string; name: string | null; points: PhasePoint[] }> {
  return withHistory(file, { create: false }, (db) => {
    const phases = phaseNames(db);
    const phase = opts.phase ?? (phases.includes('main') ? 'main' : (phases[0] ?? 'main'));
    if (opts.phase !== undefined && !phases.includes(opts.phase)) throw new UsageError(`--phase ${opts.phase}: no run in ${file} has that phase (${phases.join(', ') || 'no phases at all'})`);
    const labels = labelFilter(opts.label);
    const name = opts.name ?? listRuns(db, { labels }).at(-1)?.name ?? null;
    const points = phasePoints(db, phase, { labels, ...(name === null ? {} : { name }) });
    // Interrupted and failed runs are in the history but not in a trend: a night cut short is not a level.
    return { phase, name, points: points.filter((p) => p.run.cells.status === 'completed') };
  });
}

export async function trendCommand(file: string, opts: TrendCommandOptions): Promise<number> {
  if (opts.failOn !== undefined) flag.oneOf('--fail-on', opts.failOn, ['regression']);
  const metrics = metricsOf(opts.metric);
  const options = trendOptions(opts);
  const { phase, name, points } = await pointsOf(file, opts);
  const trend = buildTrend(phase, points, metrics, options);
  const source = `${file}${name === null ? '' : ` · ${name}`}`;
  const html = resolve(opts.out ?? 'trend.html');
  onResultsFs(dirname(html), 'create the folder', () => mkdirSync(dirname(html), { recursive: true }));
  writeTextAtomic(html, trendHtml(trend, source));
  if (opts.json === true) process.stdout.write(`${JSON.stringify(trend, null, 2)}\n`);
  else process.stdout.write(`${formatTrend(trend, source)}\n\nwritten ${html}\n`);
  if (points.length < 4) process.stderr.write(`roundload: note: ${points.length} run${points.length === 1 ? '' : 's'} to follow; change points need at least 4 (2 on each side)\n`);
  return opts.failOn === 'regression' && trend.regressions.length > 0 ? 1 : 0;
}
