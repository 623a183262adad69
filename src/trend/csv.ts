// `roundload trend FILE.csv`: nightly numbers from anywhere, as Otava reads them. A header line, then a line per
// run: a `workload` column (the series), a `run` column (its name), an optional `time` column (ISO 8601 or
// anything Date.parse reads; the runs of a workload are then taken in its order, else in the file's), and one
// column per figure named as `trend --metric` names them (`ttft_p99`, `output_tok_s`…), so which way is worse is
// known. An empty cell is a figure the run did not report. Anything else is refused, located (file:line:column).
import { HistoryError } from '../errors.js';
import { clip, oneLine } from '../util/index.js';
import { metricOf, TREND_METRICS, type TrendMetric } from './metrics.js';
import type { TrendRun } from './trend.js';

/** One workload's runs, oldest first, and each figure's values run by run. */
export interface CsvSeries {
  workload: string;
  runs: TrendRun[];
  columns: { metric: TrendMetric; values: (number | null)[] }[];
}

interface Cell {
  text: string;
  line: number;
  column: number;
}

/** The file's records (RFC 4180: quotes, doubled quotes, commas and line breaks inside quotes; CRLF or LF), each
 * cell with the 1-based line and column it starts at. Blank lines are skipped. */
function records(file: string, text: string): Cell[][] {
  const out: Cell[][] = [];
  let record: Cell[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let column = 1;
  let start = { line: 1, column: 1 };
  let blank = true;
  const endCell = () => {
    record.push({ text: cell, ...start });
    cell = '';
  };
  const endRecord = () => {
    endCell();
    if (!(blank && record.length === 1 && record[0]!.text === '')) out.push(record);
    record = [];
    blank = true;
  };
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
        column += 1;
      } else if (ch === '"') quoted = false;
      else cell += ch;
      if (ch === '\n') {
        line += 1;
        column = 0;
      }
    } else if (ch === '"' && cell === '') {
      quoted = true;
      blank = false;
    } else if (ch === ',') {
      endCell();
      blank = false;
      start = { line, column: column + 1 };
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
      endRecord();
      line += 1;
      column = 0;
      start = { line, column: 1 };
    } else {
      cell += ch;
      blank = false;
    }
    column += 1;
  }
  if (quoted) throw located(file, start, 'a quoted cell is not closed before the end of the file');
  if (cell !== '' || record.length > 0) endRecord();
  return out;
}

function located(file: string, at: { line: number; column: number }, message: string): HistoryError {
  return new HistoryError(`${file}:${at.line}:${at.column}: ${message}`, { context: { file, line: at.line, column: at.column } });
}

const shown = (text: string): string => JSON.stringify(clip(oneLine(text), 60));

/** What each header cell is: one of the run's columns or a figure. */
function headerOf(file: string, header: readonly Cell[]): { workload: number; run: number; time: number | null; figures: { at: number; metric: TrendMetric }[] } {
  const seen = new Map<string, Cell>();
  const figures: { at: number; metric: TrendMetric }[] = [];
  header.forEach((cell, at) => {
    const name = cell.text.trim();
    const before = seen.get(name);
    if (before !== undefined) throw located(file, cell, `column ${shown(name)} twice (also at column ${before.column})`);
    seen.set(name, cell);
    if (name === 'workload' || name === 'run' || name === 'time') return;
    const metric = metricOf(name);
    if (metric === undefined) throw located(file, cell, `unknown column ${shown(name)}: workload, run, time or a figure as trend --metric names it (${TREND_METRICS.map((m) => m.name).join(', ')})`);
    figures.push({ at, metric });
  });
  const index = (name: string): number | null => {
    const i = header.findIndex((c) => c.text.trim() === name);
    return i === -1 ? null : i;
  };
  const workload = index('workload');
  const run = index('run');
  if (workload === null || run === null)
    throw located(file, header[0] ?? { line: 1, column: 1 }, `the header has no ${workload === null ? '"workload"' : '"run"'} column (workload, run, optional time, then figures)`);
  if (figures.length === 0) throw located(file, header[0]!, 'the header names no figure: add a column per figure, named as trend --metric names it (ttft_p99, output_tok_s…)');
  return { workload, run, time: index('time'), figures };
}

function numberOf(file: string, cell: Cell): number | null {
  const text = cell.text.trim();
  if (text === '') return null;
  const n = Number(text);
  if (!Number.isFinite(n)) throw located(file, cell, `${shown(text)} is not a number (leave the cell empty for a figure the run did not report)`);
  return n;
}

interface Row {
  run: TrendRun;
  time: number | null;
  values: (number | null)[];
}

/** The workloads of a trend CSV's text, each with its runs in time order (the file's order without a `time`
 * column). Throws a located HistoryError for a bad file. */
export function parseTrendCsv(file: string, text: string): CsvSeries[] {
  const [header, ...lines] = records(file, text.replace(/^\uFEFF/, ''));
  if (header === undefined) throw located(file, { line: 1, column: 1 }, 'the file is empty: a header line (workload,run,figures…) and a line per run');
  const h = headerOf(file, header);
  const byWorkload = new Map<string, Row[]>();
  const names = new Map<string, Cell>();
  for (const cells of lines) {
    const first = cells[0]!;
    if (cells.length !== header.length) throw located(file, first, `${cells.length} cells where the header has ${header.length}`);
    const workload = cells[h.workload]!;
    const run = cells[h.run]!;
    if (workload.text.trim() === '') throw located(file, workload, 'the workload is empty');
    if (run.text.trim() === '') throw located(file, run, 'the run is empty');
    const key = `${workload.text.trim()}\u0000${run.text.trim()}`;
    const twice = names.get(key);
    if (twice !== undefined) throw located(file, run, `run ${shown(run.text.trim())} of workload ${shown(workload.text.trim())} twice (also on line ${twice.line})`);
    names.set(key, run);
    let time: number | null = null;
    let startedAt: string | null = null;
    if (h.time !== null) {
      const cell = cells[h.time]!;
      time = Date.parse(cell.text.trim());
      if (!Number.isFinite(time)) throw located(file, cell, `${shown(cell.text)} is not a time (ISO 8601, e.g. 2026-12-08T02:00:00Z)`);
      startedAt = new Date(time).toISOString();
    }
    const row: Row = { run: { runId: run.text.trim(), startedAt, labels: {}, dir: null }, time, values: h.figures.map((f) => numberOf(file, cells[f.at]!)) };
    const list = byWorkload.get(workload.text.trim()) ?? [];
    list.push(row);
    byWorkload.set(workload.text.trim(), list);
  }
  return [...byWorkload].map(([workload, rows]) => {
    // A stable sort: runs of the same time keep the file's order.
    const ordered = h.time === null ? rows : [...rows].sort((a, b) => a.time! - b.time!);
    return { workload, runs: ordered.map((r) => r.run), columns: h.figures.map((f, k) => ({ metric: f.metric, values: ordered.map((r) => r.values[k]!) })) };
  });
}
