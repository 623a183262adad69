// A history file that fails, through the real CLI: a damaged page, a lock another process holds, a read-only
// volume, a full one, two processes creating one new file at once. Each is one located line and exit 2 (no
// stack), and `run --history` turns it into a warning while the run and its results stand.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readlinkSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { appendRun, historyRunFromFolder, openHistory } from '../../src/history/index.js';
import { runFolder } from '../history/fixtures.js';
import { withTmpfs } from '../helpers/mount.js';
import { ROOT } from '../helpers/root.js';
import { runCli, tempDir, type CliResult } from '../helpers/tmp.js';

const TINY = ['--agents', '1', '--rounds', '2', '--quiet', '--set', 'agents.think_time_ms=0'];
/** The tests wait 0.3 s for a lock, not 10. */
const SHORT_WAIT = { ROUNDLOAD_HISTORY_BUSY_MS: '300' };

/** A history of two nights in `dir`/h.db (written in this process, as any roundload would); their results
 * folders in a temporary folder of their own. */
async function twoNights(t: TestContext, dir: string): Promise<string> {
  const file = join(dir, 'h.db');
  const folders = tempDir(t);
  const db = await openHistory(file, { create: true });
  for (const day of ['2026-12-01', '2026-12-02']) appendRun(db, historyRunFromFolder(await runFolder(join(folders, day), { startedAt: `${day}T02:00:00.000Z` })));
  db.close();
  return file;
}

function assertLocated(res: CliResult, what: string, pattern: RegExp): void {
  assert.equal(res.code, 2, `${what}: ${res.stderr}`);
  assert.equal(res.stderr.trim().split('\n').length, 1, `${what}: one line, no stack: ${res.stderr}`);
  assert.doesNotMatch(res.stderr, /unexpected error|SqliteError|\n\s+at /, what);
  assert.match(res.stderr, pattern, what);
}

/** Another process holding `sql` (`BEGIN IMMEDIATE`, `BEGIN EXCLUSIVE`) on `file` until the test ends. */
function holdLock(t: TestContext, file: string, sql: string): Promise<{ pid: number; release: () => Promise<void> }> {
  const script = `const db = new (require('better-sqlite3'))(${JSON.stringify(file)}); db.exec(${JSON.stringify(sql)}); process.stdout.write('held\\n'); process.stdin.resume(); process.stdin.on('end', () => { db.exec('COMMIT'); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const release = async (): Promise<void> => {
    child.stdin.end();
    await gone;
  };
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return gone;
  });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve({ pid: child.pid!, release }));
    child.once('exit', (code) => reject(new Error(`the lock holder ended (${code}) before holding ${sql}`)));
  });
}

test('a history with a damaged page is a located error on every command: ls, show, export, trend and import exit 2 saying corrupt and what to do', async (t) => {
  const dir = tempDir(t);
  const file = await twoNights(t, dir);
  const raw = new Database(file, { readonly: true });
  const page = Number(raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'figures'").pluck().get());
  const pageBytes = Number(raw.pragma('page_size', { simple: true }));
  raw.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(pageBytes, 0xa5), 0, pageBytes, (page - 1) * pageBytes);
  closeSync(fd);
  const another = await runFolder(join(dir, 'new'), { startedAt: '2026-12-03T02:00:00.000Z' });
  for (const args of [
    ['history', 'ls', file],
    ['history', 'show', file, '2026-12-01'],
    ['history', 'export', file, '--csv'],
    ['trend', file, '--out', join(dir, 'trend.html')],
    ['history', 'import', file, another],
  ]) {
    assertLocated(await runCli(args), args.slice(0, 2).join(' '), new RegExp(`h\\.db is corrupt: SQLite found a damaged page \\(.*page ${page}.*\\); .*Restore it from a copy`));
  }
});

test('a lock another process holds past the wait: the writer and the reader name the holder, its lock and how long they waited; run --history warns and its run stands', async (t) => {
  const dir = tempDir(t);
  const file = await twoNights(t, dir);
  const another = await runFolder(join(dir, 'new'), { startedAt: '2026-12-03T02:00:00.000Z' });
  const writer = await holdLock(t, file, 'BEGIN IMMEDIATE');
  const importing = await runCli(['history', 'import', file, another], { env: SHORT_WAIT });
  assertLocated(importing, 'import', new RegExp(`h\\.db is locked: process ${writer.pid} \\(node\\) has a write transaction open on it \\(RESERVED lock\\); waited (\\d+\\.\\d) s to write it`));
  assert.ok(Number(/waited (\d+\.\d) s/.exec(importing.stderr)?.[1]) >= 0.3, importing.stderr);
  assert.equal((await runCli(['history', 'ls', file], { env: SHORT_WAIT })).code, 0, 'a write transaction still lets readers read');
  const out = join(dir, 'run');
  const run = await runCli(['run', 'workloads/smoke.yaml', ...TINY, '--out', out, '--history', file], { env: SHORT_WAIT });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(existsSync(join(out, 'summary.json')));
  assert.match(run.stderr, /warning: the run was not added to the history .*h\.db: .*is locked: process \d+ \(node\) has a write transaction open .*\(add it later: roundload history import /);
  await writer.release();

  const exclusive = await holdLock(t, file, 'BEGIN EXCLUSIVE');
  assertLocated(
    await runCli(['history', 'ls', file], { env: SHORT_WAIT }),
    'ls',
    new RegExp(`is locked: process ${exclusive.pid} \\(node\\) is writing it \\(EXCLUSIVE lock\\); waited \\d+\\.\\d s to read it`),
  );
  await exclusive.release();
  const after = await runCli(['history', 'import', file, another, out], { env: SHORT_WAIT });
  assert.equal(after.code, 0, `once the lock is gone the same import goes in: ${after.stderr}`);
  assert.equal(after.stdout.trim().split('\n').length, 2);
});

test('a history on a read-only volume: import and run --history say read-only (EROFS) and what to do; ls still reads it', async (t) => {
  await withTmpfs(t, '1m', async (mount) => {
    const file = await twoNights(t, mount);
    const another = await runFolder(join(tempDir(t), 'new'), { startedAt: '2026-12-03T02:00:00.000Z' });
    const remount = spawnSync('mount', ['-o', 'remount,ro', mount], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(remount.status, 0, remount.stderr);
    assertLocated(await runCli(['history', 'import', file, another]), 'import', /cannot write .*h\.db: read-only file system \(EROFS\); nothing was written\. Put the history on a writable volume/);
    assertLocated(await runCli(['history', 'import', join(mount, 'new.db'), another]), 'import to a new file', /cannot write .*new\.db: its folder .*: read-only file system \(EROFS\)/);
    const ls = await runCli(['history', 'ls', file]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout.trim().split('\n').length, 3, 'the header and the two nights');
    const out = join(tempDir(t), 'run');
    const run = await runCli(['run', 'workloads/smoke.yaml', ...TINY, '--out', out, '--history', file]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(join(out, 'summary.json')));
    assert.match(run.stderr, /warning: the run was not added to the history .*h\.db: cannot write .*read-only file system \(EROFS\).*\(add it later: roundload history import /);
  });
});

test('a history on a full volume: import says no space left and writes nothing; the history still reads whole', async (t) => {
  await withTmpfs(t, '256k', async (mount) => {
    const file = await twoNights(t, mount);
    const fd = openSync(join(mount, 'filler'), 'w');
    try {
      const block = Buffer.alloc(4096, 1);
      for (;;) writeSync(fd, block);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      closeSync(fd);
    }
    const another = await runFolder(join(tempDir(t), 'new'), { startedAt: '2026-12-03T02:00:00.000Z' });
    assertLocated(
      await runCli(['history', 'import', file, another]),
      'import',
      /cannot write .*h\.db: no space left on its volume \(SQLite: .*SQLITE_FULL\); what was being added was rolled back.*Free space/,
    );
    const ls = await runCli(['history', 'ls', file]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout.trim().split('\n').length, 3, 'the header and the two nights: the third was not written');
  });
});

/** Whether process `pid` has `file` open. */
function hasOpen(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

test('two processes creating one new history at once both succeed: the second waits for the first one’s schema and finds it made', async (t) => {
  if (!existsSync('/proc/self/fd')) {
    t.skip('needs /proc to see when both processes have the file open');
    return;
  }
  const dir = tempDir(t);
  const file = join(dir, 'new.db');
  // An empty file held under a write lock: both creators open it, find it new and queue for the lock to create
  // the schema; releasing it lets them race for it.
  closeSync(openSync(file, 'w'));
  const holder = await holdLock(t, file, 'BEGIN IMMEDIATE');
  const pids: number[] = [];
  const creators = ['2026-12-01', '2026-12-02'].map(async (day) =>
    runCli(['history', 'import', file, await runFolder(join(dir, day), { startedAt: `${day}T02:00:00.000Z` })], { onSpawn: (pid) => pids.push(pid) }),
  );
  for (let i = 0; i < 600 && !(pids.length === 2 && pids.every((pid) => hasOpen(pid, file))); i += 1) await sleep(50);
  assert.equal(pids.length, 2);
  assert.ok(
    pids.every((pid) => hasOpen(pid, file)),
    'both creators have the file open',
  );
  // Past their identity check (microseconds after the open), into the wait for the write lock.
  await sleep(500);
  await holder.release();
  const results = await Promise.all(creators);
  for (const res of results) assert.equal(res.code, 0, res.stderr);
  const ls = await runCli(['history', 'ls', file]);
  assert.equal(ls.stdout.trim().split('\n').length, 3, `both runs are in: ${ls.stdout}`);
});
