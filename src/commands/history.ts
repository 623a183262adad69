// `roundload history ls|show|import|export`: the runs database — list it, show one run, add results folders
// made earlier, export it as CSV — and the append a run makes at its end (`run --history`).
import { writeFileSync } from 'node:fs';
import { appendRun, historyCsv, historyRunFromFolder, listRuns, runDetail, withHistory, type RunFilter, type RunRow } from '../history/index.js';
import { RoundloadError, UsageError } from '../errors.js';
import { onResultsFs } from '../results/index.js';
import { HISTORY_SHOW_COLUMNS } from '../types/index.js';
import { oneLine, shellCommand } from '../util/index.js';

/** `--label k=v` flags as a map. @throws UsageError on a flag without `=`. */
export function labelFilter(entries: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new UsageError(`--label must be key=value, got "${entry}"`);
    out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

// What the database holds came from run folders (names, labels, messages, gauge labels): a cell is one line,
// without the controls it may hold.
const cell = (v: string | number | null | undefined): string => (v === null || v === undefined ? '—' : typeof v === 'number' ? String(Math.round(v * 100) / 100) : oneLine(v));

function table(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((r) => r.map(oneLine));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function lsRow(r: RunRow): string[] {
  const c = r.cells;
  const labels = Object.entries(r.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const diagnosis = c.diagnosis === 'none' ? '—' : `${cell(c.diagnosis)}${c.diagnosis_confidence === null ? '' : ` ${cell(c.diagnosis_confidence)}`}`;
  return [r.runId, cell(r.startedAt), r.name, cell(c.verdict), cell(c.requests), `${cell(c.ok)}/${cell(c.errors)}/${cell(c.hangs)}`, cell(c.output_tokens_per_s), diagnosis, labels];
}

export interface HistoryLsOptions {
  label: string[];
  name?: string;
  json?: boolean;
}

/** Lists the runs, oldest first. */
export async function historyLsCommand(file: string, opts: HistoryLsOptions): Promise<number> {
  const filter: RunFilter = { labels: labelFilter(opts.label), ...(opts.name === undefined ? {} : { name: opts.name }) };
  const runs = await withHistory(file, { create: false }, (db) => listRuns(db, filter));
  if (opts.json === true)
    process.stdout.write(
      `${JSON.stringify(
        runs.map((r) => ({ ...r.cells, labels: r.labels })),
        null,
        2,
      )}\n`,
    );
  else if (runs.length === 0) process.stdout.write(`no runs in ${file}${Object.keys(filter.labels ?? {}).length > 0 || opts.name !== undefined ? ' matching the filter' : ''}\n`);
  else process.stdout.write(`${table(['run id', 'started', 'name', 'verdict', 'req', 'ok/err/hang', 'tok/s', 'diagnosis', 'labels'], runs.map(lsRow))}\n`);
  return 0;
}

/** One run: its fields, figures per phase and round, failures, gauge verdicts and thresholds. */
export async function historyShowCommand(file: string, run: string, opts: { json?: boolean }): Promise<number> {
  const { namedBy, ...detail } = await withHistory(file, { create: false }, (db) => runDetail(db, run));
  // Found by more than its id: say which run it is (stderr: the page on stdout stays the run's).
  if (!namedBy.startsWith('run id')) process.stderr.write(`"${run}": run ${detail.run.runId} (${namedBy})\n`);
  if (opts.json === true) {
    process.stdout.write(`${JSON.stringify({ ...detail, run: { ...detail.run.cells, labels: detail.run.labels } }, null, 2)}\n`);
    return 0;
  }
  const fields = Object.entries(detail.run.cells).map(([k, v]) => `${k.padEnd(22)}${cell(v)}`);
  const figures = table(
    ['phase', 'round', 'req', 'ok', 'err', 'hang', 'tok/s', ...HISTORY_SHOW_COLUMNS.map((c) => c.replace(/_ms$/, ''))],
    detail.figures.map((f) => [
      cell(f.phase),
      f.round === 0 ? 'all' : cell(f.round),
      cell(f.requests),
      cell(f.ok),
      cell(f.errors),
      cell(f.hangs),
      cell(f.output_tokens_per_s ?? f.stream_tokens_per_s),
      ...HISTORY_SHOW_COLUMNS.map((c) => cell(f[c])),
    ]),
  );
  const failures = detail.failures.map((f) => `${cell(f.kind)} ${cell(f.class)}: ${cell(f.count)}`);
  const gauges = detail.gauges.map((g) => `${cell(g.target)} ${cell(g.name)} ${g.labels === '{}' ? '' : `${cell(g.labels)} `}${cell(g.verdict)}`);
  const thresholds = detail.thresholds.map((t) => `${t.ok === 1 ? 'ok  ' : 'FAIL'} ${cell(t.message)}`);
  const sections = [
    fields.join('\n'),
    figures,
    ['failures', ...(failures.length === 0 ? ['none'] : failures)],
    ['gauges', ...(gauges.length === 0 ? ['none'] : gauges)],
    ['thresholds', ...thresholds],
  ];
  process.stdout.write(`${sections.map((s) => (Array.isArray(s) ? s.join('\n  ') : s)).join('\n\n')}\n`);
  return 0;
}

/** Adds results folders; a folder that is not a finished run is named on stderr and the others still go in
 * (exit 2 at the end when any was refused). */
export async function historyImportCommand(file: string, dirs: readonly string[]): Promise<number> {
  let refused = 0;
  await withHistory(file, { create: true }, (db) => {
    for (const dir of dirs) {
      try {
        const run = historyRunFromFolder(dir);
        const outcome = appendRun(db, run);
        process.stdout.write(`${outcome === 'added' ? 'added  ' : 'already'} ${oneLine(run.run.run_id)}  ${oneLine(dir)}\n`);
      } catch (error) {
        if (!(error instanceof RoundloadError)) throw error;
        refused += 1;
        process.stderr.write(`roundload: not imported: ${error.message}\n`);
      }
    }
  });
  return refused > 0 ? 2 : 0;
}

/** The history as CSV, to `out` or stdout. */
export async function historyExportCommand(file: string, opts: { csv?: boolean; out?: string }): Promise<number> {
  if (opts.csv !== true) throw new UsageError('history export writes CSV only: pass --csv (the file itself opens in sqlite3 for anything else)');
  const csv = await withHistory(file, { create: false }, historyCsv);
  if (opts.out === undefined) process.stdout.write(csv);
  else {
    const out = opts.out;
    onResultsFs(out, 'write', () => writeFileSync(out, csv));
    process.stderr.write(`written ${out}\n`);
  }
  return 0;
}

/**
 * Appends a finished run (its folder, summary.json written) to a history. Never fails the run: whatever goes
 * wrong is one line on stderr, and the run's exit code stands.
 * @returns whether the run is in the history now.
 */
export async function appendToHistory(file: string, dir: string, log: (line: string) => void): Promise<boolean> {
  try {
    const run = historyRunFromFolder(dir);
    const outcome = await withHistory(file, { create: true }, (db) => appendRun(db, run));
    log(`history: run ${run.run.run_id} ${outcome === 'added' ? 'added to' : 'already in'} ${file}`);
    return true;
  } catch (error) {
    log(
      `roundload: warning: the run was not added to the history ${file}: ${error instanceof Error ? error.message : String(error)} (add it later: ${shellCommand('roundload', 'history', 'import', file, dir)})`,
    );
    return false;
  }
}
