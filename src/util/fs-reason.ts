// The one mapper of file-system errors to words: the OS code of a Node fs error and what it means. The
// results folder (results/fs-error.ts) adds what to do about it; config files say it after their name.

/** OS codes a file or folder of roundload meets, in words. */
const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on device (ENOSPC)',
  EDQUOT: 'disk quota exceeded (EDQUOT)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'operation not permitted (EPERM)',
  EROFS: 'read-only file system (EROFS)',
  ENOTDIR: 'a part of the path is a file, not a folder (ENOTDIR)',
  EEXIST: 'a file is in the way (EEXIST)',
  EISDIR: 'it is a folder, a file was expected (EISDIR)',
  ENOENT: 'no such file or folder (ENOENT)',
  EIO: 'input/output error (EIO)',
  ENAMETOOLONG: 'the path is too long (ENAMETOOLONG)',
  EMFILE: 'too many open files (EMFILE)',
  ENFILE: 'too many open files on the system (ENFILE)',
  ESTALE: 'stale network file handle (ESTALE)',
};

/** The OS code of a Node fs error, or null when `error` is not one. */
export function osCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && (error as { syscall?: unknown }).syscall !== undefined ? code : null;
}

/** Why a file operation failed, in words: the OS reason of an fs error (with its code), else the message. */
export function fsReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = osCode(error);
  if (code === null) return message;
  return REASONS[code] ?? `${message.replace(/^[A-Z0-9]+: /, '').split(',')[0]} (${code})`;
}
