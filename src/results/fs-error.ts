// File-system failures on the results folder, as ERR_RESULTS (exit 4): the path, the OS reason in words, and
// what to do. Plain data first (`FsFailure`), so the writer thread can post it to the main thread.
import { ResultsError } from '../errors.js';
import { fsReason, osCode } from '../util/index.js';

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

/** What to do about the OS codes a results folder meets (the reason in words is util's fsReason). */
const HINTS: Record<string, string> = {
  ENOSPC: `free space on that volume ${CHANGE_OUT}`,
  EDQUOT: `free space or raise the quota, ${CHANGE_OUT}`,
  EACCES: `check the owner and permissions of the folder (ls -ld), ${CHANGE_OUT}`,
  EPERM: `check the owner and permissions of the folder (ls -ld), ${CHANGE_OUT}`,
  EROFS: `mount the volume read-write, ${CHANGE_OUT}`,
  ENOTDIR: 'give a folder path',
  EEXIST: 'give a folder path',
  EISDIR: 'remove that folder',
  ENOENT: 'was the folder removed while roundload used it?',
  EIO: 'the volume is failing or went away (a network volume?)',
  ENAMETOOLONG: 'use a shorter path',
  EMFILE: 'raise the open-file limit (ulimit -n)',
  ENFILE: 'raise the open-file limit',
  ESTALE: 'the network volume was remounted or went away',
};

/** `error` as an FsFailure when it is an OS error of the file system, else null (a bug, kept as is). */
export function fsFailure(error: unknown, path: string, doing: string): FsFailure | null {
  const code = osCode(error);
  if (code === null) return null;
  return { path, doing, reason: fsReason(error), hint: HINTS[code] ?? null, osCode: code };
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
