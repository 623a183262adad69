// `history export --csv`: one line per run × phase × round (round 0: the whole phase), the run's own columns
// first, then its counts and every figure's columns, for a spreadsheet or a notebook.
import { HISTORY_FIGURE_COLUMNS } from '../types/index.js';
import type { Db } from './open.js';

/** A figures row's counts, before its figures (a count that is a figure too, `hangs`, is not written twice). */
const COUNTS = ['requests', 'ok', 'errors', 'hangs'];
/** Every figure column of the history (types/figures.ts), in its order. */
const FIGURE_COLUMNS = HISTORY_FIGURE_COLUMNS.filter((c) => !COUNTS.includes(c));

function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? String(value) : value;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The whole history as CSV text (header line first). */
export function historyCsv(db: Db): string {
  const statement = db.prepare(
    `SELECT r.run_id, r.started_at, r.name, r.status, r.verdict, r.exit_code, r.target, r.labels, r.diagnosis, r.diagnosis_confidence, r.thresholds_ok,
            f.phase, f.round, ${[...COUNTS, ...FIGURE_COLUMNS].map((c) => `f.${c}`).join(', ')}
       FROM runs r JOIN figures f ON f.run_id = r.run_id
      ORDER BY r.started_at, r.run_id, f.phase, f.round`,
  );
  const columns = statement.columns().map((c) => c.name);
  const lines = [columns.join(',')];
  for (const row of statement.all() as Record<string, string | number | null>[]) lines.push(columns.map((c) => csvCell(row[c])).join(','));
  return `${lines.join('\n')}\n`;
}
