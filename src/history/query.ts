// Reading the history back: the runs in time order (filtered by name and labels), one run in full, and a
// phase's figures run by run (what trend reads).
import { HistoryError } from '../errors.js';
import type { Db } from './open.js';
import type { Row } from './record.js';

export interface RunFilter {
  /** Only runs of this workload name. */
  name?: string;
  /** Only runs carrying every one of these labels with these values. */
  labels?: Record<string, string>;
}

/** A `runs` row (`cells`, by column) with the fields most read taken out, its labels parsed. */
export interface RunRow {
  runId: string;
  name: string;
  startedAt: string | null;
  dir: string | null;
  labels: Record<string, string>;
  cells: Row;
}

function parseLabels(text: unknown): Record<string, string> {
  try {
    const value = JSON.parse(typeof text === 'string' ? text : '{}') as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function matches(run: RunRow, filter: RunFilter): boolean {
  if (filter.name !== undefined && run.name !== filter.name) return false;
  return Object.entries(filter.labels ?? {}).every(([k, v]) => run.labels[k] === v);
}

function runRowOf(cells: Row): RunRow {
  return {
    runId: String(cells.run_id),
    name: String(cells.name),
    startedAt: typeof cells.started_at === 'string' ? cells.started_at : null,
    dir: typeof cells.dir === 'string' ? cells.dir : null,
    labels: parseLabels(cells.labels),
    cells,
  };
}

/** Runs in the order they started (then the order they were added). */
export function listRuns(db: Db, filter: RunFilter = {}): RunRow[] {
  const rows = db.prepare('SELECT * FROM runs ORDER BY started_at, added_at, run_id').all() as Row[];
  return rows.map(runRowOf).filter((r) => matches(r, filter));
}

/** How a key named a run: `run id`, `run id starts with "3fa2"`, `results folder …`, `label commit=d6`. */
function howNamed(run: RunRow, key: string): string | null {
  if (run.runId === key) return 'run id';
  if (run.runId.startsWith(key)) return `run id starts with "${key}"`;
  if (run.dir !== null && (run.dir === key || run.dir.endsWith(`/${key}`))) return `results folder ${run.dir}`;
  const eq = key.indexOf('=');
  const label = Object.entries(run.labels).find(([k, v]) => (eq > 0 ? k === key.slice(0, eq) && v === key.slice(eq + 1) : v === key));
  return label === undefined ? null : `label ${label[0]}=${label[1]}`;
}

/** The run `key` names: its id, the first characters of it, its results folder (the name or the path), or a
 * label (`commit=d6`, or a label's value alone: `d6`), and how it named it.
 * @throws HistoryError when none matches, or several (each listed with how it matched). */
function resolveRun(db: Db, key: string): { run: RunRow; by: string } {
  const rows = listRuns(db);
  const exact = rows.find((r) => r.runId === key);
  if (exact !== undefined) return { run: exact, by: 'run id' };
  const found = rows.flatMap((run) => {
    const by = howNamed(run, key);
    return by === null ? [] : [{ run, by }];
  });
  if (found.length === 1) return found[0]!;
  if (found.length === 0)
    throw new HistoryError(`no run "${key}" in the history: no run id, results folder or label matches it (\`roundload history ls\` lists the runs with their labels)`, { context: { key } });
  const listed = found.map(({ run, by }) => `${run.runId} (started ${run.startedAt ?? 'unknown'}; ${by})`).join(', ');
  throw new HistoryError(`"${key}" matches ${found.length} runs: ${listed}; give one's run id (or more of it)`, { context: { key } });
}

/** The run `key` names (see resolveRun). @throws HistoryError when none or several match. */
export function findRun(db: Db, key: string): RunRow {
  return resolveRun(db, key).run;
}

export interface RunDetail {
  run: RunRow;
  /** How the key named it (`run id`, `label commit=d6`, …). */
  namedBy: string;
  figures: Row[];
  failures: Row[];
  gauges: Row[];
  thresholds: Row[];
}

export function runDetail(db: Db, key: string): RunDetail {
  const { run, by } = resolveRun(db, key);
  const of = (sql: string): Row[] => db.prepare(sql).all(run.runId) as Row[];
  return {
    run,
    namedBy: by,
    figures: of('SELECT * FROM figures WHERE run_id = ? ORDER BY phase, round'),
    failures: of('SELECT * FROM failures WHERE run_id = ? ORDER BY kind, count DESC'),
    gauges: of('SELECT * FROM gauges WHERE run_id = ? ORDER BY target, name'),
    thresholds: of('SELECT * FROM thresholds WHERE run_id = ? ORDER BY name'),
  };
}

/** One run's figures for one phase (round 0: the whole phase) beside its run row. */
export interface PhasePoint {
  run: RunRow;
  figures: Row;
}

/** A phase's whole-phase figures, run by run in time order (runs without that phase left out). */
export function phasePoints(db: Db, phase: string, filter: RunFilter = {}): PhasePoint[] {
  const statement = db.prepare('SELECT * FROM figures WHERE run_id = ? AND phase = ? AND round = 0');
  const points: PhasePoint[] = [];
  for (const run of listRuns(db, filter)) {
    const figures = statement.get(run.runId, phase) as Row | undefined;
    if (figures !== undefined) points.push({ run, figures });
  }
  return points;
}

/** The phases the history holds, most frequent first. */
export function phaseNames(db: Db): string[] {
  return (db.prepare('SELECT phase, count(*) AS n FROM figures WHERE round = 0 GROUP BY phase ORDER BY n DESC, phase').all() as { phase: string }[]).map((r) => r.phase);
}
