// The recorder on a trace volume that is full, stalled or unusable: forwarding never waits for the trace;
// recording stops with one warning and a count of what the trace misses; an unusable --out is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startRecorder, readTrace, traceStats, formatTraceStats } from '../../src/trace/index.js';
import { RoundloadError } from '../../src/errors.js';
import { replaySchema } from '../../src/config/schema.js';
import { planReplay } from '../../src/run/index.js';
import { TraceWriter } from '../../src/trace/trace-writer.js';
import type { TraceLine } from '../../src/trace/types.js';
import { chatBurst, modelsStatus } from '../helpers/chat-burst.js';
import { fakeChat, okAnswer } from '../helpers/fake-chat.js';
import { withTmpfs } from '../helpers/mount.js';
import { tempDir } from '../helpers/tmp.js';

const REQUESTS = 120;

test('a trace volume that fills up stops the recording with one warning, every request is still answered, and the trace ends saying what it misses', async (t) => {
  const upstream = await fakeChat(t, (_, res) => okAnswer(res));
  await withTmpfs(t, '64k', async (mount) => {
    const out = join(mount, 'trace.jsonl');
    const notices: string[] = [];
    const recorder = await startRecorder({ upstream: upstream.url, out, log: (line) => notices.push(line) });
    t.after(() => recorder.close());
    assert.equal(await chatBurst(recorder.url, REQUESTS), REQUESTS, 'every request answered in time');
    assert.equal(await modelsStatus(recorder.url), 200);
    await recorder.close();
    assert.equal(notices.length, 1, notices.join('\n'));
    assert.match(notices[0]!, /recording STOPPED: cannot write .*trace\.jsonl: no space left on device \(ENOSPC\).*still forwarded/);
    const tally = recorder.tally();
    assert.equal(tally.requests, REQUESTS);
    assert.ok(tally.not_recorded > 0 && tally.not_recorded < REQUESTS, `${tally.not_recorded} not recorded`);
    assert.match(tally.stopped?.reason ?? '', /ENOSPC/);

    const trace = readTrace(out);
    assert.ok(trace.incomplete !== null, 'the closing line found room (a few lines are given back for it)');
    assert.equal(trace.incomplete.requests_not_recorded, tally.not_recorded);
    assert.equal(trace.requests.length + tally.not_recorded, REQUESTS, 'the trace and the count account for every request');
    assert.match(formatTraceStats(traceStats(trace)), /INCOMPLETE: recording stopped at \d+\.\d s \(cannot write .*ENOSPC\)\); \d+ requests it forwarded are not in this trace/);
    // A replay of it knows (`run --replay` says so).
    assert.equal(planReplay(replaySchema.parse({ file: out })).incomplete?.requestsNotRecorded, tally.not_recorded);
  });
});

test('a FIFO nobody reads stalls the trace, never the forwarding: past its bound recording stops, and close stays bounded', async (t) => {
  const upstream = await fakeChat(t, (_, res) => okAnswer(res));
  const fifo = join(tempDir(t), 'trace.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  // A reader that never reads: the pipe takes 64 KiB, then every write(2) blocks.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.after(() => closeSync(reader));
  const notices: string[] = [];
  const recorder = await startRecorder({ upstream: upstream.url, out: fifo, maxQueueBytes: 4 * 1024, log: (line) => notices.push(line) });
  t.after(() => recorder.close());
  assert.equal(await chatBurst(recorder.url, REQUESTS), REQUESTS, 'every request answered in time');
  assert.equal(await modelsStatus(recorder.url), 200);
  const closing = performance.now();
  await recorder.close();
  assert.ok(performance.now() - closing < 10_000, 'close does not wait for the stalled volume');
  assert.equal(notices.filter((n) => /recording STOPPED/.test(n)).length, 1, notices.join('\n'));
  assert.match(notices.join('\n'), /recording STOPPED: the trace volume fell more than 4 KiB behind \(stalled or too slow\)/);
  const tally = recorder.tally();
  assert.ok(tally.not_recorded > 0 && tally.not_recorded < REQUESTS, `${tally.not_recorded} not recorded (what the pipe took is recorded)`);
});

test('an --out that cannot take the trace is refused before listening (ERR_RESULTS, exit 4): /dev/full, a missing folder, a FIFO with no reader', async (t) => {
  const upstream = await fakeChat(t, (_, res) => okAnswer(res));
  const dir = tempDir(t);
  const fifo = join(dir, 'nobody.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const cases: [string, RegExp][] = [
    ['/dev/full', /cannot write the trace \/dev\/full: no space left on device \(ENOSPC\)/],
    [join(dir, 'missing', 'trace.jsonl'), /cannot open the trace .*missing\/trace\.jsonl: no such file or folder \(ENOENT\); create the folder first/],
    [fifo, /cannot open the trace .*nobody\.fifo: no process has the FIFO open for reading \(ENXIO\); start the process that reads the FIFO first/],
  ];
  for (const [out, message] of cases) {
    await assert.rejects(startRecorder({ upstream: upstream.url, out }), (error: unknown) => {
      assert.ok(error instanceof RoundloadError);
      assert.equal(error.code, 'ERR_RESULTS');
      assert.equal(error.exitCode, 4);
      assert.match(error.message, message);
      return true;
    });
  }
  assert.equal(upstream.requests.length, 0);
});

test('a recorder that cannot listen leaves its --out empty, so the same file can be used once the address is fixed', async (t) => {
  const upstream = await fakeChat(t, (_, res) => okAnswer(res));
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.after(() => busy.close());
  const out = join(tempDir(t), 'trace.jsonl');
  writeFileSync(out, '');
  await assert.rejects(startRecorder({ upstream: upstream.url, out, port: (busy.address() as { port: number }).port }), /EADDRINUSE/);
  assert.equal(statSync(out).size, 0);
});

test('a stalled trace volume is noticed once; when its reader comes back the waiting lines are written and nothing is lost', async (t) => {
  const fifo = join(tempDir(t), 'trace.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.after(() => closeSync(reader));
  const notices: string[] = [];
  const header = {
    kind: 'header',
    format: 'roundload-trace',
    version: 1,
    roundload: 'test',
    started_at: new Date().toISOString(),
    source: 'record',
    upstream: null,
    tls: false,
    content: false,
    session_header: null,
    hash: 'hmac-sha256-64',
  } as const;
  const writer = await TraceWriter.open(fifo, header, { stallNoticeMs: 300, log: (line) => notices.push(line) });
  t.after(() => writer.close(() => null, 100));
  // More than the pipe takes (64 KiB): the writer blocks in write(2) with lines still waiting.
  const close = { kind: 'close', connection: 1, at_ms: 1, served: 1, idle_ms: null, by: 'client', padding: 'x'.repeat(1000) } as unknown as TraceLine;
  for (let i = 0; i < 100; i += 1) writer.write(close);
  for (let i = 0; i < 100 && notices.length === 0; i += 1) await new Promise((r) => setTimeout(r, 100));
  assert.match(notices[0] ?? '', /the trace volume has taken no line for \d+ s; \d+ lines \(\d+ KiB\) wait in memory, and recording stops past 16\.0 MiB/);
  // The reader comes back.
  let read = 0;
  const buf = Buffer.alloc(65536);
  const drain = setInterval(() => {
    try {
      for (let n = readSync(reader, buf); n > 0; n = readSync(reader, buf)) read += n;
    } catch {
      // EAGAIN: the pipe is empty for now
    }
  }, 20);
  t.after(() => clearInterval(drain));
  const result = await writer.close(() => null, 10_000);
  assert.deepEqual(result, { requestsNotRecorded: 0, linesNotRecorded: 0, stopped: null, finished: false });
  assert.equal(notices.length, 2, notices.join('\n'));
  assert.match(notices[1]!, /the trace volume takes lines again/);
  for (let i = 0; i < 50 && read < 101 * 1000; i += 1) await new Promise((r) => setTimeout(r, 20));
  assert.ok(read > 100 * 1000, `${read} bytes read: every line`);
});
