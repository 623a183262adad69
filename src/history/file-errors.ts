// A history file that fails, as its user needs to hear it: better-sqlite3's SqliteError (its code) and the OS's
// view of the file turned into one HistoryError naming the file, the cause and what to do — corrupt, locked
// (by whom, for how long it waited), read-only, full, not SQLite. Errors of roundload's own pass through.
import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { HistoryError, RoundloadError } from '../errors.js';
import { fsReason, shellCommand } from '../util/index.js';
import { describeHolders, lockHolders } from './locks.js';

/** What roundload was doing with the file when it failed. */
export interface HistoryAttempt {
  file: string;
  /** Writing (import, a run's append) or only reading (ls, show, export, trend). */
  writing: boolean;
  /** How long the attempt had run when it failed: for a lock, how long it waited. */
  waitedMs: number;
}

const hasCode = (error: unknown): error is Error & { code: string } => error instanceof Error && typeof (error as { code?: unknown }).code === 'string';

/** Why `path` (or, when it does not exist, its folder) cannot be written, or null when it can. */
function unwritable(path: string): string | null {
  const target = existsSync(path) ? path : dirname(path);
  try {
    accessSync(target, constants.W_OK);
    return null;
  } catch (error) {
    return `${target === path ? '' : `its folder ${target}: `}${fsReason(error)}`;
  }
}

/** True when the file's volume has no block left for an unprivileged writer. */
function volumeFull(file: string): boolean {
  try {
    return statfsSync(existsSync(file) ? file : dirname(file)).bavail === 0;
  } catch {
    return false;
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function locked(attempt: HistoryAttempt, sqlite: string): string {
  const { file } = attempt;
  const holders = describeHolders(lockHolders(file)) ?? 'another process holds its lock';
  return (
    `${file} is locked: ${holders}; waited ${seconds(attempt.waitedMs)} to ${attempt.writing ? 'write' : 'read'} it (SQLite: ${sqlite}). ` +
    'Run again once that ends: another `roundload run --history`, `merge --history` or `history import` writing the file, or a sqlite3 shell with a transaction open'
  );
}

/** A damaged file: `found` is what SQLite said (its error, or quick_check's first problem). */
export function corruptHistory(file: string, found: string, cause?: unknown): HistoryError {
  const message =
    `${file} is corrupt: SQLite found a damaged page (${found}); roundload neither reads nor writes it. ` +
    `Restore it from a copy, or salvage its rows with \`${shellCommand('sqlite3', file, '.recover')}\`; runs whose results folders are kept go back with \`roundload history import FILE DIR…\` into a new file`;
  return new HistoryError(message, { context: { file }, ...(cause === undefined ? {} : { cause }) });
}

function readOnly(file: string, why: string | null): string {
  return (
    `cannot write ${file}: ${why ?? 'SQLite opened it read-only'}; nothing was written. ` +
    `Put the history on a writable volume${existsSync(file) ? ' (copy it there)' : ''}, or remount the volume read-write${existsSync(file) ? '; reading it (ls, show, export, trend) still works' : ''}`
  );
}

function full(file: string, sqlite: string): string {
  return `cannot write ${file}: no space left on its volume (SQLite: ${sqlite}); what was being added was rolled back, nothing half-written. Free space on the volume holding it, or move the history to another one`;
}

/** The HistoryError of a failed attempt on a history file; an error of roundload's own, or one that is no
 * SQLite or file-system failure (a bug), is returned as it is. */
export function historyFailure(cause: unknown, attempt: HistoryAttempt): unknown {
  if (cause instanceof RoundloadError || !hasCode(cause)) return cause;
  const { file } = attempt;
  const code = cause.code;
  const sqlite = `${cause.message}, ${code}`;
  const make = (message: string): HistoryError => new HistoryError(message, { context: { file, code }, cause });
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return make(locked(attempt, sqlite));
  if (code.startsWith('SQLITE_CORRUPT')) return corruptHistory(file, sqlite, cause);
  if (code === 'SQLITE_NOTADB') return make(`${file} is not a roundload history: ${cause.message} (not SQLite at all); give a history file, or a new path to start one`);
  if (code.startsWith('SQLITE_READONLY')) return make(readOnly(file, unwritable(file)));
  if (code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && volumeFull(file))) return make(full(file, sqlite));
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH')) {
    const why = unwritable(file);
    if (why !== null && attempt.writing) return make(readOnly(file, why));
    return make(`cannot open ${file} as a history (SQLite: ${sqlite})${why === null ? '' : `: ${why}`}; check the path and its permissions`);
  }
  if (code.startsWith('SQLITE_IOERR'))
    return make(`cannot ${attempt.writing ? 'write' : 'read'} ${file}: its volume failed (SQLite: ${sqlite}); check the disk (dmesg), then restore the file from a copy if it is damaged`);
  if (code.startsWith('SQLITE_')) return make(`cannot use the history ${file} (SQLite: ${sqlite})`);
  return cause;
}
