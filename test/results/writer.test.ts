import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ResultsWriter, readJsonlFile } from '../../src/results/index.js';
import { POST_EVERY_MS } from '../../src/results/writer.js';
import { ResultsError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { withTmpfs } from '../helpers/mount.js';

const line = (i: number, pad = 20): string => `${JSON.stringify({ i, pad: 'x'.repeat(pad) })}\n`;

function lines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

test('lines reach each file whole and in order, and close() drains every one before resolving', async (t) => {
  const dir = tempDir(t);
  const w = new ResultsWriter({ files: { a: join(dir, 'a.jsonl'), b: join(dir, 'b.jsonl') }, maxFileBytes: null, compress: false });
  await w.ready(20_000);
  for (let i = 0; i < 2000; i += 1) {
    w.write(i % 2 === 0 ? 'a' : 'b', line(i));
    if (i % 500 === 0) await sleep(1);
  }
  const closed = await w.close({ drainTimeoutMs: 20_000, settleMs: 0 });
  assert.deepEqual(closed, { drained: true, undrainedLines: 0, droppedLines: 0, compressing: 0 });
  const a = lines(join(dir, 'a.jsonl')).map((l) => (JSON.parse(l) as { i: number }).i);
  const b = lines(join(dir, 'b.jsonl')).map((l) => (JSON.parse(l) as { i: number }).i);
  assert.deepEqual(
    a,
    Array.from({ length: 1000 }, (_, k) => 2 * k),
  );
  assert.deepEqual(
    b,
    Array.from({ length: 1000 }, (_, k) => 2 * k + 1),
  );
  assert.equal(w.write('a', line(1)), false, 'a line after close is ignored');
});

test('a line after a quiet spell goes to the writer thread at the end of its loop turn, and lines in quick succession share a post', async (t) => {
  const dir = tempDir(t);
  const w = new ResultsWriter({ files: { a: join(dir, 'a.jsonl') }, maxFileBytes: null, compress: false });
  await w.ready(20_000);
  w.write('a', line(0));
  await new Promise((r) => setImmediate(r));
  assert.equal(w.postedBatches, 1, 'the first line is posted at once');
  // A record every ~2 ms: posted one turn at a time, that is a wake-up of the thread per line.
  const started = performance.now();
  for (let i = 1; i <= 40; i += 1) {
    w.write('a', line(i));
    await sleep(2);
  }
  const elapsedMs = performance.now() - started;
  const closed = await w.close({ drainTimeoutMs: 20_000, settleMs: 0 });
  assert.equal(closed.drained, true);
  assert.equal(lines(join(dir, 'a.jsonl')).length, 41, 'every line reached the file');
  // Posts are at least POST_EVERY_MS apart (close() posts the rest once more): a bound that holds however slow the machine.
  const bound = 1 + Math.ceil(elapsedMs / POST_EVERY_MS) + 1;
  assert.ok(w.postedBatches <= bound, `${w.postedBatches} posts for 41 lines over ${Math.round(elapsedMs)} ms (at most ${bound})`);
});

test('a writer whose every write(2) takes 2 s never blocks the event loop, and its lag is sampled', async (t) => {
  const dir = tempDir(t);
  const w = new ResultsWriter({ files: { a: join(dir, 'a.jsonl') }, maxFileBytes: null, compress: false, writeDelayMs: 2000 });
  await w.ready(20_000);
  // A 10 ms ticker: its longest gap is how long the loop was blocked. A synchronous 2 s write would show ≥ 2000 ms.
  let last = performance.now();
  let worstGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - last);
    last = now;
  }, 10);
  t.after(() => clearInterval(ticker));
  const started = performance.now();
  let written = 0;
  while (performance.now() - started < 3000) {
    w.write('a', line(written));
    written += 1;
    await sleep(20);
  }
  const sample = w.sample();
  clearInterval(ticker);
  // Below the 2 s a blocking write would cost, with room for a loaded machine's scheduling gaps (seen up to ~400 ms).
  assert.ok(worstGapMs < 1800, `the event loop was blocked ${worstGapMs.toFixed(0)} ms`);
  assert.ok(sample.writer_lag_ms >= 1000, `lag sampled ${sample.writer_lag_ms} ms with 2 s writes`);
  assert.ok(sample.writer_queued_bytes > 0, 'lines are waiting');
  const closed = await w.close({ drainTimeoutMs: 30_000, settleMs: 0 });
  assert.equal(closed.drained, true);
  assert.equal(lines(join(dir, 'a.jsonl')).length, written, 'every line reached the disk once drained');
});

test('past maxQueueBytes new lines are dropped whole and counted, never queued without bound', async (t) => {
  const dir = tempDir(t);
  const notices: string[] = [];
  const w = new ResultsWriter({ files: { a: join(dir, 'a.jsonl') }, maxFileBytes: null, compress: false, writeDelayMs: 1500, maxQueueBytes: 2000, log: (l) => notices.push(l) });
  await w.ready(20_000);
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < 200; i += 1) {
    if (w.write('a', line(i, 60))) accepted += 1;
    else refused += 1;
    if (i % 20 === 0) await sleep(5);
  }
  assert.ok(refused > 0 && accepted > 0, `${accepted} accepted, ${refused} dropped`);
  assert.ok(w.sample().writer_queued_bytes <= 2000, 'the queue stays under its bound');
  assert.equal(w.sample().writer_dropped_lines, refused);
  assert.match(notices.join('\n'), /new lines are dropped until it catches up/);
  const closed = await w.close({ drainTimeoutMs: 30_000, settleMs: 0 });
  assert.equal(closed.droppedLines, refused);
  const onDisk = lines(join(dir, 'a.jsonl'));
  assert.equal(onDisk.length, accepted, 'what was accepted is on disk, whole');
  for (const l of onDisk) JSON.parse(l);
});

test('rotation and gzip of rotated parts work in the writer thread; the reader sees every line in order', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'requests.jsonl');
  const w = new ResultsWriter({ files: { requests: path }, maxFileBytes: 2000, compress: true });
  await w.ready(20_000);
  for (let i = 0; i < 600; i += 1) {
    w.write('requests', line(i, 40));
    if (i % 50 === 0) await sleep(2);
  }
  const closed = await w.close({ drainTimeoutMs: 20_000, settleMs: 20_000 });
  assert.equal(closed.drained, true);
  assert.equal(closed.compressing, 0);
  const files = readdirSync(dir);
  assert.ok(files.filter((f) => f.endsWith('.jsonl.gz')).length >= 10, files.join(' '));
  const values: { i: number }[] = [];
  await readJsonlFile(
    path,
    (v): v is { i: number } => typeof v === 'object' && v !== null,
    (v) => values.push(v),
  );
  assert.deepEqual(
    values.map((v) => v.i),
    Array.from({ length: 600 }, (_, i) => i),
  );
});

test('a file that cannot be opened rejects ready() with ERR_RESULTS (exit 4) naming the path and the OS reason', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'events.jsonl');
  mkdirSync(path); // a folder where the file should be: EISDIR
  const failures: ResultsError[] = [];
  const w = new ResultsWriter({ files: { events: path }, maxFileBytes: null, compress: false, onFailure: (e) => failures.push(e) });
  await assert.rejects(w.ready(20_000), (e: unknown) => e instanceof ResultsError && e.code === 'ERR_RESULTS' && e.exitCode === 4 && e.osCode === 'EISDIR' && e.message.includes(path));
  assert.equal(failures.length, 1);
  assert.equal(w.write('events', line(1)), false, 'later lines are dropped and counted');
  const closed = await w.close({ drainTimeoutMs: 5000, settleMs: 0 });
  assert.equal(closed.droppedLines, 1);
});

test('a disk that refuses a write (ENOSPC, through /dev/full) is reported once; the lines of that file are counted lost, the others still written', async (t) => {
  const dir = tempDir(t);
  symlinkSync('/dev/full', join(dir, 'full.jsonl'));
  const failures: ResultsError[] = [];
  const w = new ResultsWriter({ files: { full: join(dir, 'full.jsonl'), ok: join(dir, 'ok.jsonl') }, maxFileBytes: null, compress: false, onFailure: (e) => failures.push(e) });
  await w.ready(20_000);
  for (let i = 0; i < 10; i += 1) {
    w.write('full', line(i));
    w.write('ok', line(i));
  }
  const closed = await w.close({ drainTimeoutMs: 20_000, settleMs: 0 });
  assert.equal(failures.length, 1);
  assert.equal(failures[0]!.osCode, 'ENOSPC');
  assert.match(failures[0]!.message, /^cannot write .*full\.jsonl: no space left on device \(ENOSPC\); free space/);
  assert.equal(closed.droppedLines, 10);
  assert.equal(lines(join(dir, 'ok.jsonl')).length, 10);
});

test('a write cut short by a full disk (a real tiny tmpfs) leaves only whole lines in the file', async (t) => {
  await withTmpfs(t, '64k', async (mount) => {
    const path = join(mount, 'requests.jsonl');
    const failures: ResultsError[] = [];
    const w = new ResultsWriter({ files: { requests: path }, maxFileBytes: null, compress: false, onFailure: (e) => failures.push(e) });
    await w.ready(20_000);
    // Lines of 1000 bytes, written in batches: one batch crosses the end of the 64 KiB volume mid-line.
    for (let i = 0; i < 200; i += 1) {
      w.write('requests', line(i, 980));
      if (i % 7 === 0) await sleep(2);
    }
    const closed = await w.close({ drainTimeoutMs: 20_000, settleMs: 0 });
    assert.equal(failures[0]?.osCode, 'ENOSPC', failures[0]?.message);
    assert.ok(existsSync(path));
    const text = readFileSync(path, 'utf8');
    assert.ok(text.length > 0 && text.endsWith('\n'), `the file ends with a whole line (${text.length} bytes)`);
    const onDisk = lines(path).map((l) => (JSON.parse(l) as { i: number }).i);
    assert.deepEqual(
      onDisk,
      Array.from({ length: onDisk.length }, (_, i) => i),
    );
    assert.equal(closed.droppedLines, 200 - onDisk.length, 'every line not on disk is counted');
  });
});
