// File-system failures on the results folder, as ERR_RESULTS (exit 4): the path, the OS reason in words, and
// what to do. Plain data first (`FsFailure`), so the writer thread can post it to the main thread.
import { ResultsError } from '../errors.js';

/** What went wrong, on what, in words: everything a ResultsError is made of. */
export interface FsFailure {
  path: string;
  /** What was attempted: `write`, `read`, `create the results folder`… */
  doing: string;
  reason: string;
  hint: string | null;
  osCode: string | null;
}

const CHANGE_OUT = 'or give `run --out` a folder elsewhere';

/** OS codes a results folder meets, in words, with what to do. */
const REASONS: Record<string, { reason: string; hint: string }> = {
  ENOSPC: { reason: 'no space left on device (ENOSPC)', hint: `free space on that volume ${CHANGE_OUT}` },
  EDQUOT: { reason: 'disk quota exceeded (EDQUOT)', hint: `free space or raise the quota, ${CHANGE_OUT}` },
  EACCES: { reason: 'permission denied (EACCES)', hint: `check the owner and permissions of the folder (ls -ld), ${CHANGE_OUT}` },
  EPERM: { reason: 'operation not permitted (EPERM)', hint: `check the owner and permissions of the folder (ls -ld), ${CHANGE_OUT}` },
  EROFS: { reason: 'read-only file system (EROFS)', hint: `mount the volume read-write, ${CHANGE_OUT}` },
  ENOTDIR: { reason: 'a part of the path is a file, not a folder (ENOTDIR)', hint: 'give a folder path' },
  EEXIST: { reason: 'a file is in the way (EEXIST)', hint: 'give a folder path' },
  EISDIR: { reason: 'it is a folder, a file was expected (EISDIR)', hint: 'remove that folder' },
  ENOENT: { reason: 'no such file or folder (ENOENT)', hint: 'was the folder removed while roundload used it?' },
  EIO: { reason: 'input/output error (EIO)', hint: 'the volume is failing or went away (a network volume?)' },
  ENAMETOOLONG: { reason: 'the path is too long (ENAMETOOLONG)', hint: 'use a shorter path' },
  EMFILE: { reason: 'too many open files (EMFILE)', hint: 'raise the open-file limit (ulimit -n)' },
  ENFILE: { reason: 'too many open files on the system (ENFILE)', hint: 'raise the open-file limit' },
  ESTALE: { reason: 'stale network file handle (ESTALE)', hint: 'the network volume was remounted or went away' },
};

/** The OS code of a Node fs error, or null when `error` is not one. */
export function osCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && (error as { syscall?: unknown }).syscall !== undefined ? code : null;
}

/** `error` as an FsFailure when it is an OS error of the file system, else null (a bug, kept as is). */
export function fsFailure(error: unknown, path: string, doing: string): FsFailure | null {
  const code = osCode(error);
  if (code === null) return null;
  const known = REASONS[code];
  const message = error instanceof Error ? error.message : String(error);
  return { path, doing, reason: known?.reason ?? `${message.replace(/^[A-Z0-9]+: /, '').split(',')[0]} (${code})`, hint: known?.hint ?? null, osCode: code };
}

export function toResultsError(f: FsFailure, cause?: unknown): ResultsError {
  return new ResultsError(f.path, f.doing, f.reason, { osCode: f.osCode, ...(f.hint === null ? {} : { hint: f.hint }), ...(cause === undefined ? {} : { cause }) });
}

/** Rethrows `error` as a ResultsError when it is a file-system failure on `path`; anything else as is. */
export function rethrowFs(error: unknown, path: string, doing: string): never {
  if (error instanceof ResultsError) throw error;
  const f = fsFailure(error, path, doing);
  throw f === null ? error : toResultsError(f, error);
}

/** Runs `fn`, turning a file-system failure on `path` into a ResultsError. */
export function onResultsFs<T>(path: string, doing: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    rethrowFs(error, path, doing);
  }
}
