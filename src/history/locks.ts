// Who holds a history file locked, read from Linux's /proc/locks: SQLite locks a database with POSIX byte-range
// locks at fixed offsets (the PENDING, RESERVED and SHARED bytes), so a lock's range says which of SQLite's
// locks a process holds. Where there is no /proc/locks (macOS), nobody is named and the message says less.
import { readFileSync, statSync } from 'node:fs';

/** SQLite's lock bytes (os_unix.c): one past 1 GiB, so they never overlap the data. */
const PENDING_BYTE = 0x40000000;
const RESERVED_BYTE = PENDING_BYTE + 1;
const SHARED_FIRST = PENDING_BYTE + 2;
const SHARED_SIZE = 510;

/** SQLite's locks, weakest first. */
export const SQLITE_LOCKS = ['shared', 'reserved', 'pending', 'exclusive'] as const;
export type SqliteLock = (typeof SQLITE_LOCKS)[number];

export interface LockHolder {
  pid: number;
  /** The strongest lock the process holds on the file. */
  lock: SqliteLock;
}

/** The device and inode a /proc/locks line names a file by. */
export interface FileId {
  major: number;
  minor: number;
  inode: bigint;
}

/** What a byte-range lock means to SQLite, or null for a range it does not use. */
function lockOf(type: string, start: number, end: number): SqliteLock | null {
  if (type === 'WRITE' && start <= SHARED_FIRST && end >= SHARED_FIRST + SHARED_SIZE - 1) return 'exclusive';
  if (type === 'WRITE' && start <= PENDING_BYTE && end >= PENDING_BYTE) return 'pending';
  if (type === 'WRITE' && start <= RESERVED_BYTE && end >= RESERVED_BYTE) return 'reserved';
  if (type === 'READ' && start >= SHARED_FIRST && start < SHARED_FIRST + SHARED_SIZE) return 'shared';
  return null;
}

/** The processes holding SQLite locks on `file`, from the text of /proc/locks; waiters (`->`) are left out. */
export function parseLockHolders(procLocks: string, file: FileId): LockHolder[] {
  const held = new Map<number, SqliteLock>();
  for (const line of procLocks.split('\n')) {
    // `1: POSIX  ADVISORY  WRITE 4242 00:2f:12 1073741825 1073741825`
    const m = /^\d+:\s+POSIX\s+\S+\s+(READ|WRITE)\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s+(\d+)\s+(\d+|EOF)\s*$/.exec(line);
    if (m === null) continue;
    const [, type, pid, major, minor, inode, start, end] = m as unknown as [string, string, string, string, string, string, string, string];
    if (parseInt(major, 16) !== file.major || parseInt(minor, 16) !== file.minor || BigInt(inode) !== file.inode) continue;
    const lock = lockOf(type, Number(start), end === 'EOF' ? Number.MAX_SAFE_INTEGER : Number(end));
    if (lock === null) continue;
    const before = held.get(Number(pid));
    if (before === undefined || SQLITE_LOCKS.indexOf(lock) > SQLITE_LOCKS.indexOf(before)) held.set(Number(pid), lock);
  }
  return [...held].map(([pid, lock]) => ({ pid, lock }));
}

/** The device and inode of `file` as /proc/locks writes them (glibc's major/minor split of st_dev). */
function fileId(file: string): FileId {
  const st = statSync(file, { bigint: true });
  const dev = st.dev;
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  return { major, minor, inode: st.ino };
}

/** The processes (not this one) holding SQLite locks on `file` now; none when that cannot be known. */
export function lockHolders(file: string): LockHolder[] {
  try {
    return parseLockHolders(readFileSync('/proc/locks', 'utf8'), fileId(file)).filter((h) => h.pid !== process.pid);
  } catch {
    return [];
  }
}

const MEANING: Record<SqliteLock, string> = {
  shared: 'is reading it (SHARED lock)',
  reserved: 'has a write transaction open on it (RESERVED lock)',
  pending: 'is about to write it and holds new readers off (PENDING lock)',
  exclusive: 'is writing it (EXCLUSIVE lock)',
};

function processName(pid: number): string {
  try {
    return ` (${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()})`;
  } catch {
    return '';
  }
}

/** The holders in words, strongest lock first: `process 4242 (sqlite3) has a write transaction open on it (RESERVED lock)`. */
export function describeHolders(holders: readonly LockHolder[]): string | null {
  if (holders.length === 0) return null;
  return [...holders]
    .sort((a, b) => SQLITE_LOCKS.indexOf(b.lock) - SQLITE_LOCKS.indexOf(a.lock))
    .map((h) => `process ${h.pid}${processName(h.pid)} ${MEANING[h.lock]}`)
    .join(', and ');
}
