// The recorder on a trace volume that is full, stalled or unusable: forwarding never waits for the trace;
// recording stops with one warning and a count of what the trace misses; an unusable --out is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startRecorder, readTrace, traceStats, formatTraceStats } from '../../src/trace/index.js';
import { RoundloadError } from '../../src/errors.js';
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
