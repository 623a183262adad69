import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, RequestWatch, backstopTimeouts, BACKSTOP_SLACK_MS, type Deadlines } from '../../src/watchdog/index.js';
import type { HangVerdict } from '../../src/watchdog/index.js';

const deadlines: Deadlines = { connectMs: 1000, headersMs: 5000, firstTokenMs: 20_000, stallMs: 3000, totalMs: 60_000 };

function watch() {
  const clock = new FakeClock();
  const hangs: HangVerdict[] = [];
  const w = new RequestWatch(deadlines, clock, (h) => hangs.push(h));
  return { clock, hangs, w };
}

test('a request that never gets a socket hangs in the connect phase at connect_ms', () => {
  const { clock, hangs, w } = watch();
  w.start();
  clock.advance(999);
  assert.equal(hangs.length, 0);
  clock.advance(5);
  assert.equal(hangs.length, 1);
  assert.equal(hangs[0]!.phase, 'connect');
  assert.equal(hangs[0]!.deadline, 'connect_ms');
});

test('no response headers within headers_ms is a headers hang', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.connected();
  clock.advance(4990);
  assert.equal(hangs.length, 0);
  clock.advance(20);
  assert.deepEqual(
    hangs.map((h) => h.phase),
    ['headers'],
  );
});

test('silence before the first token is judged by first_token_ms, not stall_ms (a long prefill is not a stall)', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.connected();
  w.headers();
  clock.advance(10_000);
  assert.equal(hangs.length, 0, 'stall_ms (3 s) must not apply before the first token');
  clock.advance(10_010);
  assert.equal(hangs[0]?.phase, 'first_token');
});

test('a stream stalled after some chunks is a mid-stream hang with the last byte age', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.connected();
  w.headers();
  w.firstToken();
  for (let i = 0; i < 3; i += 1) {
    clock.advance(100);
    w.bytes();
  }
  clock.advance(2990);
  assert.equal(hangs.length, 0);
  clock.advance(20);
  assert.equal(hangs.length, 1);
  assert.equal(hangs[0]!.phase, 'mid_stream');
  assert.ok(hangs[0]!.last_byte_age_ms >= 3000);
});

test('a slow but moving stream (a byte every 2 s) is not a hang until the total deadline', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.connected();
  w.headers();
  w.firstToken();
  for (let t = 0; t < 58_000; t += 2000) {
    clock.advance(2000);
    w.bytes();
  }
  assert.equal(hangs.length, 0);
  clock.advance(2100);
  assert.equal(hangs[0]?.phase, 'total');
});

test('a stopped watch never fires and leaves no timer behind', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.connected();
  w.stop();
  clock.advance(100_000);
  assert.equal(hangs.length, 0);
  assert.equal(clock.pendingTimers, 0);
});

test('bytes alone do not create timers (one timer per request, not per chunk)', () => {
  const { clock, w } = watch();
  w.start();
  w.connected();
  w.headers();
  w.firstToken();
  for (let i = 0; i < 1000; i += 1) w.bytes();
  assert.equal(clock.pendingTimers, 1);
});

test('under on_hang wait the watch goes on after a stall and fires once more, as total, at total_ms since send', () => {
  const clock = new FakeClock();
  const hangs: HangVerdict[] = [];
  const w = new RequestWatch(deadlines, clock, (h) => {
    hangs.push(h);
    if (hangs.length === 1) w.waitForTotal();
  });
  w.start();
  w.connected();
  w.headers();
  w.firstToken();
  clock.advance(3010);
  assert.deepEqual(
    hangs.map((h) => h.phase),
    ['mid_stream'],
  );
  // Bytes and a "first token" after the verdict change nothing: only the total deadline is left.
  w.bytes();
  w.firstToken();
  clock.advance(50_000);
  assert.equal(hangs.length, 1);
  assert.equal(clock.pendingTimers, 1, 'one timer while waiting');
  clock.advance(7000);
  assert.deepEqual(
    hangs.map((h) => h.phase),
    ['mid_stream', 'total'],
  );
  assert.equal(hangs[1]!.deadline, 'total_ms');
  assert.equal(clock.pendingTimers, 0);
});

test('waitForTotal outside a hang callback does nothing, and a stop while waiting leaves no timer', () => {
  const { clock, hangs, w } = watch();
  w.start();
  w.waitForTotal();
  w.connected();
  clock.advance(5010);
  assert.deepEqual(
    hangs.map((h) => h.phase),
    ['headers'],
    'the watch judged normally',
  );
  const clock2 = new FakeClock();
  const w2 = new RequestWatch(deadlines, clock2, () => w2.waitForTotal());
  w2.start();
  clock2.advance(1001);
  assert.equal(clock2.pendingTimers, 1);
  w2.stop();
  assert.equal(clock2.pendingTimers, 0);
});

test('undici backstops never fire before a watchdog deadline: the body timer covers a silent prefill, and wait keeps both to total_ms', () => {
  const w = { connect_ms: 10_000, headers_ms: 60_000, first_token_ms: 120_000, stall_ms: 30_000, total_ms: 600_000, on_hang: 'abort' as const };
  // Regression: bodyTimeout was stall_ms + 5 s, so a 40 s prefill (within first_token_ms) became an `other` error.
  assert.deepEqual(backstopTimeouts(w), { headersTimeoutMs: 60_000 + BACKSTOP_SLACK_MS, bodyTimeoutMs: 120_000 + BACKSTOP_SLACK_MS });
  assert.deepEqual(backstopTimeouts({ ...w, first_token_ms: 1000 }).bodyTimeoutMs, 30_000 + BACKSTOP_SLACK_MS);
  assert.deepEqual(backstopTimeouts({ ...w, on_hang: 'wait' }), { headersTimeoutMs: 600_000 + BACKSTOP_SLACK_MS, bodyTimeoutMs: 600_000 + BACKSTOP_SLACK_MS });
});

test('first_token_ms runs from send: with headers_ms 20 s and first_token_ms 3 s a request with no headers hangs at 3 s', () => {
  const clock = new FakeClock();
  const hangs: HangVerdict[] = [];
  const w = new RequestWatch({ connectMs: 10_000, headersMs: 20_000, firstTokenMs: 3000, stallMs: 30_000, totalMs: 60_000 }, clock, (h) => hangs.push(h));
  w.start();
  w.connected();
  clock.advance(2990);
  assert.equal(hangs.length, 0);
  clock.advance(20);
  assert.equal(hangs.length, 1, 'not left waiting for headers_ms');
  assert.deepEqual({ phase: hangs[0]!.phase, deadline: hangs[0]!.deadline, deadline_ms: hangs[0]!.deadline_ms }, { phase: 'headers', deadline: 'first_token_ms', deadline_ms: 3000 });
});

test('first_token_ms shorter than connect_ms ends a request still without a socket, as a connect-phase hang', () => {
  const clock = new FakeClock();
  const hangs: HangVerdict[] = [];
  const w = new RequestWatch({ connectMs: 10_000, headersMs: 20_000, firstTokenMs: 2000, stallMs: 30_000, totalMs: 60_000 }, clock, (h) => hangs.push(h));
  w.start();
  clock.advance(2010);
  assert.deepEqual(
    hangs.map((h) => [h.phase, h.deadline]),
    [['connect', 'first_token_ms']],
  );
});

test('headers before first_token_ms keep the first-token deadline counted from send, not from the headers', () => {
  const clock = new FakeClock();
  const hangs: HangVerdict[] = [];
  const w = new RequestWatch({ connectMs: 10_000, headersMs: 20_000, firstTokenMs: 3000, stallMs: 30_000, totalMs: 60_000 }, clock, (h) => hangs.push(h));
  w.start();
  w.connected();
  clock.advance(2000);
  w.headers();
  clock.advance(990);
  assert.equal(hangs.length, 0);
  clock.advance(20);
  assert.deepEqual(
    hangs.map((h) => [h.phase, h.deadline]),
    [['first_token', 'first_token_ms']],
  );
});

test('a request that moves on to later deadlines keeps its one timer; an earlier deadline re-arms it', () => {
  const clock = new FakeClock();
  let set = 0;
  const counting = { now: () => clock.now(), setTimer: (fn: () => void, ms: number) => (set++, clock.setTimer(fn, ms)), clearTimer: (h: unknown) => clock.clearTimer(h) };
  const hangs: HangVerdict[] = [];
  // connect 1 s, headers 5 s, first token 20 s after send, stall 30 s: each phase's deadline is later.
  const w = new RequestWatch({ ...deadlines, stallMs: 30_000 }, counting, (h) => hangs.push(h));
  w.start();
  w.connected();
  w.headers();
  assert.equal(set, 1, 'connected and headers set no timer of their own');
  clock.advance(900);
  w.firstToken();
  assert.equal(set, 1);
  // The connect timer fires at 1 s, finds nothing due, and re-arms once for the stall deadline.
  clock.advance(200);
  assert.equal(set, 2);
  assert.equal(hangs.length, 0);
  clock.advance(30_000);
  assert.equal(hangs.length, 1);
  assert.equal(hangs[0]!.phase, 'mid_stream');

  // The first token deadline is earlier than a pending total-only timer: re-armed at once.
  const v = watch();
  const short = new RequestWatch({ ...deadlines, connectMs: 50_000, headersMs: 50_000, firstTokenMs: 50_000, stallMs: 100 }, v.clock, (h) => v.hangs.push(h));
  short.start();
  short.connected();
  short.headers();
  short.firstToken();
  v.clock.advance(150);
  assert.equal(v.hangs.length, 1, 'the stall deadline, earlier than the pending timer, hung on time');
  assert.equal(v.hangs[0]!.phase, 'mid_stream');
  assert.equal(v.hangs[0]!.last_byte_age_ms, 101, 'at the deadline (+1 ms), not at the pending timer');
});
