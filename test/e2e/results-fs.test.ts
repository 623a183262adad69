// Bad days for the results folder and for ports, as a user meets them on the command line: a clean
// `roundload: …` line naming the path (or address) and the OS reason, the documented exit code, no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { runCli, tempDir, type CliResult } from '../helpers/tmp.js';
import { withTmpfs } from '../helpers/mount.js';
import { cliArgs, ROOT } from '../helpers/root.js';

function assertClean(res: CliResult, code: number, message: RegExp): void {
  assert.equal(res.code, code, `exit ${res.code}: ${res.stderr}`);
  assert.match(res.stderr, message);
  assert.doesNotMatch(res.stderr, /unexpected error|\n\s+at /, 'no stack trace without --debug');
}

/** A quick run: 2 agents × 2 rounds on the embedded engine, no monitor. */
function quickWorkload(dir: string): string {
  const file = join(dir, 'quick.yaml');
  writeFileSync(file, 'name: quick\nagents: {count: 2, rounds: 2, think_time_ms: 0}\nmonitor: {enabled: false}\n');
  return file;
}

test('`run --out` naming a file is ERR_RESULTS, exit 4, with the path', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'not-a-folder');
  writeFileSync(file, 'x');
  const res = await runCli(['run', quickWorkload(dir), '--out', file]);
  assertClean(res, 4, new RegExp(`roundload: cannot use the results folder ${file}: it is a file, not a folder`));
});

test('`run --out` into a folder that already holds a run is refused (exit 2) and the folder is left as it was', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'used');
  mkdirSync(out);
  writeFileSync(join(out, 'run.json'), '{"name":"quick","status":"completed"}\n');
  writeFileSync(join(out, 'requests.jsonl'), '{"a":1}\n');
  const res = await runCli(['run', quickWorkload(dir), '--out', out]);
  assertClean(res, 2, /--out .*used is not empty \(requests\.jsonl, run\.json\): a run writes into a folder of its own; .*roundload report/);
  assert.deepEqual(readdirSync(out).sort(), ['requests.jsonl', 'run.json']);
  assert.equal(readFileSync(join(out, 'requests.jsonl'), 'utf8'), '{"a":1}\n', 'nothing appended');
});

test('`run --out` on a read-only volume (a read-only tmpfs) is ERR_RESULTS, exit 4, naming EROFS', async (t) => {
  const dir = tempDir(t);
  const workload = quickWorkload(dir);
  await withTmpfs(
    t,
    '1m',
    async (mount) => {
      const inside = await runCli(['run', workload, '--out', join(mount, 'run')]);
      assertClean(inside, 4, new RegExp(`cannot create the results folder ${mount}/run: read-only file system \\(EROFS\\)`));
      const itself = await runCli(['run', workload, '--out', mount]);
      assertClean(itself, 4, new RegExp(`cannot write into the results folder ${mount}: read-only file system \\(EROFS\\)`));
    },
    { readOnly: true },
  );
});

test('`run --out` in a folder this user may not write (run as nobody) is ERR_RESULTS, exit 4, naming EACCES', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to run the CLI as another user');
    return;
  }
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const workload = quickWorkload(dir);
  const locked = join(dir, 'locked');
  mkdirSync(locked, { mode: 0o555 });
  chmodSync(locked, 0o555);
  const res = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs('run', workload, '--out', join(locked, 'run')), {
      cwd: ROOT,
      uid: 65534,
      gid: 65534,
      env: { ...process.env, HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  assertClean(res, 4, new RegExp(`cannot create the results folder ${locked}/run: permission denied \\(EACCES\\)`));
});

test('a disk that fills up mid-run (a 128 KiB tmpfs) stops the run: exit 4, run.json "failed", and `report` there says the disk is full (exit 4)', async (t) => {
  const dir = tempDir(t);
  const workload = join(dir, 'fill.yaml');
  writeFileSync(workload, 'name: fill\nduration: 2m\nagents: {count: 8, rounds: 6, think_time_ms: 0}\nconversation: {tools: none}\nengine: {decode_step_ms: 1}\nmonitor: {interval_ms: 100}\n');
  await withTmpfs(t, '128k', async (mount) => {
    const out = join(mount, 'run');
    const res = await runCli(['run', workload, '--out', out], { timeoutMs: 90_000 });
    assertClean(res, 4, new RegExp(`roundload: cannot write ${out}/\\w+\\.jsonl: no space left on device \\(ENOSPC\\); free space on that volume`));
    assert.match(res.stderr, /stopping the run/);
    const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string; ended_at: string | null };
    assert.equal(manifest.status, 'failed', 'run.json says failed, even on a full disk');
    assert.ok(manifest.ended_at !== null);
    // What is on disk stays readable, line by line.
    for (const f of readdirSync(out).filter((n) => n.endsWith('.jsonl'))) {
      const text = readFileSync(join(out, f), 'utf8');
      assert.ok(text === '' || text.endsWith('\n'), `${f} ends with a whole line`);
    }
    const report = await runCli(['report', out]);
    assertClean(report, 4, new RegExp(`roundload: cannot write ${out}/summary\\.json: no space left on device \\(ENOSPC\\)`));
  });
});

async function takenPort(t: { after: (fn: () => void) => void }): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as { port: number }).port;
}

test('a port in use is ERR_SERVER_START naming the address, exit 2: `engine --port`, `hop --listen`, `run --metrics-port`, `run --dashboard`', async (t) => {
  const port = await takenPort(t);
  const inUse = new RegExp(`could not start the %s on 127\\.0\\.0\\.1:${port}: the address is already in use \\(EADDRINUSE\\)`.replace('%s', '(engine|hop|client metrics endpoint|live dashboard)'));
  // The router's metrics on any free port: its default, 29000 as a real router's, may be taken on a shared machine.
  assertClean(await runCli(['engine', '--port', String(port), '--router-metrics-port', '0']), 2, inUse);
  assertClean(await runCli(['hop', '--listen', `127.0.0.1:${port}`, '--upstream', 'http://127.0.0.1:9']), 2, inUse);
  const dir = tempDir(t);
  const res = await runCli(['run', quickWorkload(dir), '--metrics-port', String(port), '--out', join(dir, 'run')]);
  assertClean(res, 2, inUse);
  assert.ok(existsSync(join(dir, 'run', 'run.json')));
  assert.equal((JSON.parse(readFileSync(join(dir, 'run', 'run.json'), 'utf8')) as { status: string }).status, 'failed');
  assertClean(await runCli(['run', quickWorkload(dir), '--dashboard', String(port), '--out', join(dir, 'run2')]), 2, inUse);
});
