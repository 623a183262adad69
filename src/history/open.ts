// Opening a history file: better-sqlite3 is loaded here, on first use only (a run without --history never
// pays for the native module), the file is checked to be a roundload history (or new), and migrated up to
// the schema this roundload writes. `withHistory` is the one way commands use a file: any failure is a
// located HistoryError (file-errors.ts).
import { existsSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { HistoryError } from '../errors.js';
import { corruptHistory, historyFailure } from './file-errors.js';
import { HISTORY_APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { shellQuote } from '../util/index.js';

export type Db = BetterSqlite3.Database;

/** How long one statement waits for another process holding the file (two nightly jobs ending together);
 * `ROUNDLOAD_HISTORY_BUSY_MS` changes it (the tests wait less). @default 10000 */
function busyTimeoutMs(): number {
  const set = Number(process.env.ROUNDLOAD_HISTORY_BUSY_MS);
  return Number.isInteger(set) && set >= 0 ? set : 10_000;
}

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

/** Refuses a damaged file before anything reads or writes it (a history is small: the check takes
 * milliseconds), so a bad page is found on every command, not only on those that read that page. */
function checkIntact(db: Db, file: string): void {
  const problems = db.pragma('quick_check(1)') as { quick_check: string }[];
  const found = problems[0]?.quick_check ?? 'ok';
  if (found !== 'ok') throw corruptHistory(file, found.replace(/^\*\*\* in database main \*\*\*\n/, '').replace(/\n/g, '; '));
}

/** Applies the migrations the file lacks, in one IMMEDIATE transaction that reads the version it starts
 * from under the write lock: two processes creating one new file both succeed, the second finding it made. */
function migrate(db: Db, file: string): void {
  if (pragmaNumber(db, 'user_version') >= SCHEMA_VERSION) return;
  db.transaction(() => {
    checkIdentity(db, file);
    const from = pragmaNumber(db, 'user_version');
    for (let v = from; v < SCHEMA_VERSION; v += 1) db.exec(MIGRATIONS[v]!);
    db.pragma(`application_id = ${HISTORY_APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Opens (with `create`, creates) a history file, migrated to the current schema.
 * @throws HistoryError when the file is missing (without `create`), not SQLite, another application's
 * database, newer than this roundload, corrupt, locked past the busy timeout, read-only or on a full volume.
 */
export async function openHistory(file: string, options: { create: boolean }): Promise<Db> {
  if (!options.create && !existsSync(file)) {
    throw new HistoryError(`${file}: no such history file (\`roundload history import ${shellQuote(file)} RUN_DIR…\` or \`roundload run WORKLOAD --history ${shellQuote(file)}\` starts one)`, {
      context: { file },
    });
  }
  const Database = await sqlite();
  const startMs = performance.now();
  let db: Db;
  try {
    db = new Database(file, { timeout: busyTimeoutMs() });
  } catch (cause) {
    throw historyFailure(cause, { file, writing: options.create, waitedMs: performance.now() - startMs });
  }
  try {
    checkIdentity(db, file);
    checkIntact(db, file);
    db.pragma('foreign_keys = ON');
    migrate(db, file);
  } catch (cause) {
    db.close();
    throw historyFailure(cause, { file, writing: options.create, waitedMs: performance.now() - startMs });
  }
  return db;
}

/**
 * Opens the history, hands it to `use`, closes it. `create` opens it to write (creating it when missing);
 * without it the file is only read.
 * @throws HistoryError for any failure of the file, opening it or in `use` (see `openHistory`).
 */
export async function withHistory<T>(file: string, options: { create: boolean }, use: (db: Db) => T): Promise<T> {
  const db = await openHistory(file, options);
  const startMs = performance.now();
  try {
    return use(db);
  } catch (cause) {
    throw historyFailure(cause, { file, writing: options.create, waitedMs: performance.now() - startMs });
  } finally {
    db.close();
  }
}
