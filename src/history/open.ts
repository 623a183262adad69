// Opening a history file: better-sqlite3 is loaded here, on first use only (a run without --history never
// pays for the native module), the file is checked to be a roundload history (or new), and migrated up to
// the schema this roundload writes.
import { existsSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { HistoryError } from '../errors.js';
import { HISTORY_APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './schema.js';

export type Db = BetterSqlite3.Database;

/** How long a writer waits for another process holding the file (two nightly jobs ending together). */
const BUSY_TIMEOUT_MS = 10_000;

async function sqlite(): Promise<typeof BetterSqlite3> {
  const module = await import('better-sqlite3');
  return module.default;
}

function pragmaNumber(db: Db, name: string): number {
  return Number(db.pragma(name, { simple: true }));
}

/** Refuses a SQLite file that is not ours, or is newer than this roundload; an empty file is a new history. */
function checkIdentity(db: Db, file: string): void {
  const applicationId = pragmaNumber(db, 'application_id');
  const version = pragmaNumber(db, 'user_version');
  const tables = Number(db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get());
  if (applicationId === 0 && version === 0 && tables === 0) return;
  if (applicationId !== HISTORY_APPLICATION_ID) {
    throw new HistoryError(`${file} is a SQLite database but not a roundload history (its tables are someone else's); give a history file, or a new path to start one`, { context: { file } });
  }
  if (version > SCHEMA_VERSION) {
    throw new HistoryError(`${file} has history schema version ${version}, newer than this roundload's ${SCHEMA_VERSION}; use a newer roundload`, { context: { file, version } });
  }
}

/** Applies the migrations the file lacks, in one transaction. */
export function migrate(db: Db): void {
  const from = pragmaNumber(db, 'user_version');
  if (from >= SCHEMA_VERSION) return;
  db.transaction(() => {
    for (let v = from; v < SCHEMA_VERSION; v += 1) db.exec(MIGRATIONS[v]!);
    db.pragma(`application_id = ${HISTORY_APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Opens (with `create`, creates) a history file, migrated to the current schema.
 * @throws HistoryError when the file is missing (without `create`), not SQLite, another application's
 * database or newer than this roundload.
 */
export async function openHistory(file: string, options: { create: boolean }): Promise<Db> {
  if (!options.create && !existsSync(file)) {
    throw new HistoryError(`${file}: no such history file (\`roundload history import ${file} RUN_DIR…\` or \`run --history ${file}\` starts one)`, { context: { file } });
  }
  const Database = await sqlite();
  let db: Db;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (cause) {
    throw new HistoryError(`cannot open ${file} as a history: ${cause instanceof Error ? cause.message : String(cause)}`, { context: { file }, cause });
  }
  try {
    checkIdentity(db, file);
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (cause) {
    db.close();
    if (cause instanceof HistoryError) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new HistoryError(`${file} is not a roundload history: ${reason}`, { context: { file }, cause });
  }
  return db;
}
