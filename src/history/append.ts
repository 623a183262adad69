// Writing runs into the history: one transaction per run, keyed by its run id, so adding a run that is
// already there (a re-import, a run appended at its end and imported later) changes nothing.
import type { Db } from './open.js';
import type { HistoryRun, Row } from './record.js';

export type AppendOutcome = 'added' | 'exists';

function insertAll(db: Db, table: string, rows: readonly Row[]): void {
  const first = rows[0];
  if (first === undefined) return;
  const columns = Object.keys(first);
  const statement = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
  for (const row of rows) statement.run(row);
}

/** Adds one run and its figures, gauges, failures and thresholds; `exists` (nothing written) when the
 * history already holds its run id. */
export function appendRun(db: Db, run: HistoryRun): AppendOutcome {
  return db
    .transaction((): AppendOutcome => {
      const held = db.prepare('SELECT 1 FROM runs WHERE run_id = ?').get(run.run.run_id);
      if (held !== undefined) return 'exists';
      insertAll(db, 'runs', [run.run]);
      insertAll(db, 'figures', run.figures);
      insertAll(db, 'failures', run.failures);
      insertAll(db, 'gauges', run.gauges);
      insertAll(db, 'thresholds', run.thresholds);
      return 'added';
    })
    .immediate();
}
