// `history export --csv`: one line per run × phase × round (round 0: the whole phase), the run's own columns
// first, for a spreadsheet or a notebook.
import type { Db } from './open.js';

function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? String(value) : value;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The whole history as CSV text (header line first). */
export function historyCsv(db: Db): string {
  const statement = db.prepare(
    `SELECT r.run_id, r.started_at, r.name, r.status, r.verdict, r.exit_code, r.target, r.labels, r.diagnosis, r.diagnosis_confidence, r.thresholds_ok,
            f.phase, f.round, f.requests, f.ok, f.errors, f.hangs, f.output_tokens_per_s, f.stream_tokens_per_s,
            f.ttft_p50_ms, f.ttft_p90_ms, f.ttft_p99_ms, f.ttfc_p50_ms, f.ttfc_p90_ms, f.ttfc_p99_ms, f.itl_p50_ms, f.itl_p90_ms, f.itl_p99_ms,
            f.tpot_p50_ms, f.tpot_p90_ms, f.tpot_p99_ms, f.e2e_p50_ms, f.e2e_p90_ms, f.e2e_p99_ms
       FROM runs r JOIN figures f ON f.run_id = r.run_id
      ORDER BY r.started_at, r.run_id, f.phase, f.round`,
  );
  const columns = statement.columns().map((c) => c.name);
  const lines = [columns.join(',')];
  for (const row of statement.all() as Record<string, string | number | null>[]) lines.push(columns.map((c) => csvCell(row[c])).join(','));
  return `${lines.join('\n')}\n`;
}
