// `roundload trend FILE`: the figures of a history (a SQLite database, or a CSV of nightly numbers from
// anywhere) run by run for one phase and one workload (every workload with `--all`), a sparkline and the change
// points of each, trend.html, `--json` (the contract in docs/history.md), and with `--fail-on regression`
// exit 1 when the newest runs of any workload start one.
import { dirname, resolve } from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import { listRuns, phaseNames, phasePoints, type PhasePoint, withHistory } from '../history/index.js';
import {
  buildTrend,
  buildTrendOfValues,
  DEFAULT_METRICS,
  formatTrend,
  metricOf,
  parseTrendCsv,
  TREND_METRICS,
  trendHtml,
  trendJson,
  type Trend,
  type TrendMetric,
  type TrendOptions,
} from '../trend/index.js';
import { onResultsFs, writeTextAtomic } from '../results/index.js';
import { UsageError } from '../errors.js';
import { fsReason } from '../util/index.js';
import { labelFilter } from './history.js';
import * as flag from './flags.js';

export interface TrendCommandOptions {
  metric: string[];
  phase?: string;
  label: string[];
  name?: string;
  /** Every workload of the file, one table each. */
  all?: boolean;
  failOn?: string;
  /** trend.html path. @default "trend.html" */
  out?: string;
  minChange?: string;
  maxPvalue?: string;
  /** The newest-nights test's p-value (its false alarms a night and figure). @default 0.02 */
  alertPvalue?: string;
  permutations?: string;
  recent?: string;
  seed?: string;
  /** The nightly drift to stay quiet under (AR(1) lag-1 correlation, 0 to 0.9). @default 0.6 */
  drift?: string;
  /** Labels that name a run (repeatable or comma-separated); default all. */
  nameBy?: string[];
  json?: boolean;
}

/** The names `--metric` asks for (none: null). */
function wantedNames(names: readonly string[]): string[] | null {
  const wanted = names
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  return wanted.length === 0 ? null : wanted;
}

function metricsOf(names: readonly string[]): TrendMetric[] {
  return (wantedNames(names) ?? [...DEFAULT_METRICS]).map((name) => {
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
  const alertPValue = numberFlag('--alert-pvalue', opts.alertPvalue, (n) => n > 0 && n <= 1, 'a p-value in (0, 1]');
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
    ...(alertPValue === undefined ? {} : { alertPValue }),
    ...(permutations === undefined ? {} : { permutations }),
    ...(recentRuns === undefined ? {} : { recentRuns }),
    ...(seed === undefined ? {} : { seed }),
  };
}

/** One workload's trend and what names it in the output. */
interface Followed {
  workload: string | null;
  trend: Trend;
}

/** The points to follow in a database: the phase asked for (default `main`, else the most common), the
 * workloads asked for (`--name`, every one with `--all`, default the newest run's), runs carrying the labels. */
async function fromDatabase(file: string, opts: TrendCommandOptions, options: TrendOptions): Promise<Followed[]> {
  const metrics = metricsOf(opts.metric);
  return withHistory(file, { create: false }, (db) => {
    const phases = phaseNames(db);
    const phase = opts.phase ?? (phases.includes('main') ? 'main' : (phases[0] ?? 'main'));
    if (opts.phase !== undefined && !phases.includes(opts.phase)) throw new UsageError(`--phase ${opts.phase}: no run in ${file} has that phase (${phases.join(', ') || 'no phases at all'})`);
    const labels = labelFilter(opts.label);
    const runs = listRuns(db, { labels });
    const names = opts.all === true ? [...new Set(runs.map((r) => r.name))] : [opts.name ?? runs.at(-1)?.name ?? null];
    return names.map((name): Followed => {
      const points = phasePoints(db, phase, { labels, ...(name === null ? {} : { name }) });
      // Interrupted and failed runs are in the history but not in a trend: a night cut short is not a level.
      const completed = points.filter((p: PhasePoint) => p.run.cells.status === 'completed');
      return { workload: name, trend: buildTrend(phase, completed, metrics, options) };
    });
  });
}

/** The workloads of a CSV file: `--name` (default the last line's workload) or every one with `--all`; the
 * figures of `--metric`, default every figure column of the file. */
function fromCsv(file: string, opts: TrendCommandOptions, options: TrendOptions): Followed[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${fsReason(error)}`, { cause: error });
  }
  if (opts.phase !== undefined) throw new UsageError('--phase: a CSV file has no phases (one line per run)');
  if (opts.label.length > 0) throw new UsageError('--label: a CSV file has no labels (one series per workload)');
  const all = parseTrendCsv(file, text);
  const wanted = wantedNames(opts.metric);
  for (const name of wanted ?? []) {
    if (metricOf(name) === undefined) throw new UsageError(`--metric: unknown figure "${name}"; one of ${TREND_METRICS.map((m) => m.name).join(', ')}`);
    if (!all.some((s) => s.columns.some((c) => c.metric.name === name))) throw new UsageError(`--metric ${name}: ${file} has no such column`);
  }
  const named = opts.name ?? all.at(-1)?.workload;
  const chosen = opts.all === true ? all : all.filter((s) => s.workload === named);
  if (opts.name !== undefined && chosen.length === 0) throw new UsageError(`--name ${opts.name}: ${file} has no such workload (${all.map((s) => s.workload).join(', ')})`);
  return chosen.map((s) => ({
    workload: s.workload,
    trend: buildTrendOfValues(
      'csv',
      s.runs,
      s.columns.filter((c) => wanted === null || wanted.includes(c.metric.name)),
      options,
    ),
  }));
}

export async function trendCommand(file: string, opts: TrendCommandOptions): Promise<number> {
  if (opts.failOn !== undefined) flag.oneOf('--fail-on', opts.failOn, ['regression']);
  if (opts.all === true && opts.name !== undefined) throw new UsageError('--all and --name: one or the other');
  const options = trendOptions(opts);
  const followed = file.toLowerCase().endsWith('.csv') ? fromCsv(file, opts, options) : await fromDatabase(file, opts, options);
  const sourceOf = (f: Followed) => `${file}${f.workload === null ? '' : ` · ${f.workload}`}`;
  const html = resolve(opts.out ?? 'trend.html');
  onResultsFs(dirname(html), 'create the folder', () => mkdirSync(dirname(html), { recursive: true }));
  writeTextAtomic(html, trendHtml(followed.map((f) => ({ trend: f.trend, source: sourceOf(f) }))));
  const failed = followed.some((f) => f.trend.regressions.length > 0);
  if (opts.json === true) process.stdout.write(`${JSON.stringify(trendJson(file, followed), null, 2)}\n`);
  else process.stdout.write(`${followed.map((f) => formatTrend(f.trend, sourceOf(f))).join('\n\n')}\n\nwritten ${html}\n`);
  for (const f of followed) {
    const n = f.trend.runs.length;
    if (n < 6) process.stderr.write(`roundload: note: ${f.workload ?? file}: ${n} run${n === 1 ? '' : 's'} to follow; a step needs at least 4 runs before it and 2 on it\n`);
  }
  return opts.failOn === 'regression' && failed ? 1 : 0;
}
