// The progress display: what its lines say, when announcements come, how the live line fits a terminal,
// and colour. Time is fake: a clock the test moves and a ticker the test fires.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { progressDisplay, DEFAULT_PROGRESS_MS, colorWanted, type ProgressPlan, type ProgressStream } from '../../src/report/index.js';
import type { ClientSampleEvent, RunEvent } from '../../src/types/index.js';
import { gauge, hangRecord, record, scrape } from './fixtures.js';

/** A stream that keeps what was written; a terminal of `columns` when given. */
function fakeStream(columns?: number): ProgressStream & { text: string } {
  const s = {
    text: '',
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
    ...(columns === undefined ? {} : { isTTY: true, columns }),
  };
  return s;
}

/** A display on a fake clock and a hand-fired ticker. */
function harness(plan: Partial<ProgressPlan> = {}, stream = fakeStream(), options: { color?: boolean; intervalMs?: number } = {}) {
  let nowMs = 1000;
  let fire: (() => void) | null = null;
  let intervalMs: number | null = null;
  const display = progressDisplay(stream, {
    plan: { plannedRequests: null, phaseMs: null, phases: 1, ...plan },
    clock: () => nowMs,
    ticker: (ms, tick) => {
      intervalMs = ms;
      fire = tick;
      return { stop: () => (fire = null) };
    },
    ...options,
  });
  return {
    stream,
    display,
    emit: (...events: RunEvent[]) => events.forEach((e) => display.onEvent(e)),
    advance: (ms: number) => (nowMs += ms),
    tick: () => {
      assert.ok(fire !== null, 'the ticker runs');
      fire();
    },
    intervalMs: () => intervalMs,
    lines: () => stream.text.split('\n').filter((l) => l !== ''),
  };
}

const runStart: RunEvent = { kind: 'run_start', t: '2026-01-01T00:00:00.000Z', target: 'http://x', path: 'direct', agents: 4, rounds: 8 };
const phase = (name = 'main'): RunEvent => ({ kind: 'phase', t: '2026-01-01T00:00:00.000Z', run_ms: 0, name });
const start = (agent: number): RunEvent => ({ kind: 'request_start', agent, conversation: `a${agent}-c1`, round: 1, run_ms: 0 });
const done = (agent: number, over: Parameters<typeof record>[0] = {}): RunEvent => ({ kind: 'request', record: record({ agent, conversation: `a${agent}-c1`, ...over }) });
const sample = (over: Partial<ClientSampleEvent> = {}): ClientSampleEvent => ({
  kind: 'client_sample',
  t: '',
  run_ms: 0,
  window_ms: 1000,
  loop_delay_p99_ms: 3,
  loop_delay_max_ms: 5,
  loop_utilization: 0.2,
  in_flight: 4,
  rss_bytes: 1,
  ...over,
});

test("piped, a line every interval says elapsed, requests done of planned, the last interval's rates, TTFT so far, errors, hangs, in flight with the oldest's age, and the key gauges", () => {
  const h = harness({ plannedRequests: 32 });
  h.emit(runStart, phase(), start(0), start(1), start(2));
  h.advance(500);
  h.emit(done(0, { ttft_ms: 20, completion_tokens: 100 }), done(1, { ttft_ms: 40, completion_tokens: 50 }), start(0));
  h.emit(done(2, { status: 'error', ttft_ms: null, completion_tokens: null, error: { class: 'http_5xx', message: 'HTTP 500', code: null } }));
  h.emit(scrape(400, [gauge('sglang:num_running_reqs', 3), gauge('sglang:num_queue_reqs', 1), gauge('sglang:gen_throughput', 900)]));
  h.advance(1500);
  h.tick();
  const line = h.lines().at(-1)!;
  assert.equal(line, '[0:02] 3/32 req · 1.5 req/s · 75.0 tok/s · TTFT p50 20 ms p99 40 ms · 1 error · 0 hangs · 1 in flight · oldest 1.5 s · running=3 · queue=1');
  // The next interval has its own rates.
  h.advance(2000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:04\] 3\/32 req · 0\.0 req\/s · 0\.0 tok\/s · TTFT p50 20 ms p99 40 ms/);
});

test('long answers still streaming: tok/s from the live token count, TTFT from first tokens, how many stream; nothing counted twice when they end', () => {
  const h = harness();
  const first = (agent: number, ttft: number): RunEvent => ({ kind: 'first_token', agent, round: 1, run_ms: ttft, ttft_ms: ttft });
  h.emit(runStart, phase(), start(0), start(1), start(2));
  h.advance(300);
  h.emit(first(0, 200), first(1, 300));
  // Two worker threads report their live counts; neither request has ended.
  h.emit(sample({ thread: 0, streamed_tokens: 400 }), sample({ thread: 1, streamed_tokens: 300 }));
  h.advance(700);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:01\] 0 req · 0\.0 req\/s · 700 tok\/s · TTFT p50 200 ms p99 300 ms · 0 errors · 0 hangs · 3 in flight · 2 streaming, ~350 tok\/s each · oldest 1\.0 s$/);
  h.emit(sample({ thread: 0, streamed_tokens: 1400 }), sample({ thread: 1, streamed_tokens: 1300 }));
  h.advance(1000);
  h.tick();
  assert.match(h.lines().at(-1)!, / · 2000 tok\/s · /);
  // They end: their TTFT is not counted again, their tokens were counted as they came.
  h.emit(done(0, { ttft_ms: 200, completion_tokens: 1400 }), done(1, { ttft_ms: 300, completion_tokens: 1300 }));
  h.emit(sample({ thread: 0, streamed_tokens: 1400 }), sample({ thread: 1, streamed_tokens: 1300 }));
  h.advance(1000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:03\] 2 req · 2\.0 req\/s · 0\.0 tok\/s · TTFT p50 200 ms p99 300 ms · 0 errors · 0 hangs · 1 in flight · oldest 3\.0 s$/);
});

test('before any sample TTFT shows –, and a duration run counts the time left from its phase start, then says it is finishing', () => {
  const h = harness({ phaseMs: 25_000 });
  h.emit(runStart);
  h.advance(200);
  h.emit(phase(), start(0));
  h.advance(10_000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:10\] 0:15 left · 0 req · 0\.0 req\/s · 0\.0 tok\/s · TTFT – · 0 errors · 0 hangs · 1 in flight · oldest 10\.0 s$/);
  h.advance(20_000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:30\] time up, finishing · /);
});

test("a sweep's time left runs over the phases still to come, and the line names the phase", () => {
  const h = harness({ phaseMs: 10_000, phases: 3 });
  h.emit(runStart, phase('c4'));
  h.advance(4000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:04\] 0:26 left · phase c4 · /);
  h.advance(6000);
  h.emit(phase('c8'));
  h.advance(1000);
  h.tick();
  assert.match(h.lines().at(-1)!, /^\[0:11\] 0:19 left · phase c8 · /);
});

test('the default interval is 10 s piped and 1 s on a terminal; nothing is drawn before the run starts', () => {
  const piped = harness();
  assert.equal(piped.intervalMs(), null, 'no timer before run_start');
  piped.emit(runStart);
  assert.equal(piped.intervalMs(), DEFAULT_PROGRESS_MS.plain);
  assert.equal(DEFAULT_PROGRESS_MS.plain, 10_000);
  const tty = harness({}, fakeStream(80));
  tty.emit(runStart);
  assert.equal(tty.intervalMs(), 1000);
  const set = harness({}, fakeStream(), { intervalMs: 2000 });
  set.emit(runStart);
  assert.equal(set.intervalMs(), 2000, '--progress 2s');
});

test('a hang is announced on its own line the moment its event comes, between two progress lines', () => {
  const h = harness();
  h.emit(runStart, phase(), start(3));
  h.advance(10_000);
  h.tick();
  h.advance(2500);
  h.emit({
    kind: 'hang',
    t: '',
    run_ms: 12_500,
    record: hangRecord({ agent: 3, conversation: 'a3-c1', round: 5, hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 10_000, last_byte_age_ms: 10_004, chunks: 3, policy: 'abort' } }),
  });
  const lines = h.lines();
  assert.equal(lines.length, 2, 'announced at once, not at the next tick');
  assert.equal(lines[1], '[0:12] HANG a3-c1 round 5 (agent 3): mid_stream hang (stall_ms = 10000 ms), silent 10.0 s, 3 chunks in · socket c2 request 3');
  h.advance(7500);
  h.tick();
  assert.match(h.lines()[2]!, /· 1 hang · /, 'counted from its event (under on_hang: wait the record comes later)');
});

test('the first error of each class is announced once, on one line however long its message', () => {
  const h = harness();
  h.emit(runStart);
  const error = (cls: string, message: string): RunEvent => ({ kind: 'error', t: '', run_ms: 0, agent: 1, conversation: 'a1-c1', round: 2, class: cls, message });
  h.emit(error('http_5xx', 'HTTP 500\nInternal Server Error'), error('http_5xx', 'again'), error('keepalive_race', 'x'.repeat(500)));
  const lines = h.lines();
  assert.equal(lines.length, 2);
  assert.equal(lines[0], '[0:00] ERROR first of class http_5xx: a1-c1 round 2 (agent 1): HTTP 500 Internal Server Error');
  assert.match(lines[1]!, /^\[0:00\] ERROR first of class keepalive_race: a1-c1 round 2 \(agent 1\): x{199}…$/);
});

test("a monitor target going down and coming back is announced once each way; several targets' gauges are named by target", () => {
  const h = harness();
  h.emit(runStart);
  const ok = (target: string, running: number) => scrape(0, [gauge('sglang:num_running_reqs', running)], { target });
  h.emit(ok('prefill', 2), ok('decode', 40));
  h.advance(3000);
  const down = scrape(0, [], { target: 'decode', ok: false, error: 'ECONNREFUSED', url: 'http://127.0.0.1:9/metrics' });
  h.emit(down, down, down);
  h.tick();
  h.advance(12_000);
  h.emit(ok('decode', 38));
  const lines = h.lines();
  assert.equal(lines[0], '[0:03] MONITOR decode down (last good scrape 3.0 s ago): ECONNREFUSED (http://127.0.0.1:9/metrics)');
  assert.match(lines[1]!, /· DOWN decode · prefill\.running=2 · decode\.running=40$/, 'the last good gauges stay, the target marked down');
  assert.equal(lines[2], '[0:15] MONITOR decode back up after 12.0 s down');
  assert.equal(lines.length, 3);
  const never = harness();
  never.emit(runStart, scrape(0, [], { target: 'router', ok: false, error: 'timeout' }));
  assert.match(never.lines()[0]!, /MONITOR router not answering: timeout/);
});

test('a saturated client is announced where a saturated stretch starts, not every second of it', () => {
  const h = harness();
  h.emit(
    runStart,
    sample(),
    sample({ loop_delay_p99_ms: 85, loop_utilization: 0.95, in_flight: 200 }),
    sample({ loop_delay_p99_ms: 120 }),
    sample({ loop_utilization: 0.97 }),
    sample(),
    sample({ loop_utilization: 0.99 }),
  );
  const lines = h.lines();
  assert.equal(lines.length, 2);
  assert.equal(lines[0], '[0:00] CLIENT saturated: event-loop delay p99 85 ms, utilisation 95%, 200 in flight: the client is the bottleneck, latencies now are suspect');
  // Worker threads are tracked apart.
  const w = harness();
  w.emit(runStart, sample({ thread: 1, loop_utilization: 0.95 }), sample({ thread: 2, loop_utilization: 0.95 }));
  assert.match(w.lines()[1]!, /CLIENT saturated \(worker 2\)/);
});

test('a client late but not busy is announced as held back by its host, with its run-queue wait, never as the bottleneck', () => {
  const h = harness();
  h.emit(runStart, sample(), sample({ loop_delay_p99_ms: 56, loop_utilization: 0.13, in_flight: 3, cpu_wait_ms: 420 }));
  const lines = h.lines();
  assert.equal(lines.length, 1);
  assert.equal(
    lines[0],
    '[0:00] CLIENT late: event-loop delay p99 56 ms at utilisation 13%, waited 420 ms of 1.0 s for a CPU, 3 in flight: not busy, the host held it back (other processes on its cores, a CPU limit); latencies now are suspect',
  );
  assert.doesNotMatch(lines[0], /bottleneck/);
});

/** Busy figures from three targets: far wider than any terminal. */
function busy(h: ReturnType<typeof harness>): void {
  h.emit(runStart, phase());
  for (let a = 0; a < 12; a += 1) h.emit(start(a));
  h.emit(done(0), { kind: 'hang', t: '', run_ms: 0, record: hangRecord() });
  for (const target of ['router', 'prefill', 'decode']) {
    h.emit(
      scrape(0, [gauge('sglang:num_running_reqs', 41), gauge('sglang:num_queue_reqs', 7), gauge('sglang:num_prefill_inflight_queue_reqs', 2), gauge('sglang:num_decode_transfer_queue_reqs', 3)], {
        target,
      }),
    );
  }
}

test('the live line never exceeds the terminal width at 40, 80 and 200 columns: whole fields dropped, least important first', () => {
  for (const columns of [40, 80, 200]) {
    // The same run drawn on a terminal and piped: the piped line keeps every field.
    const tty = harness({ plannedRequests: 1000, phaseMs: 600_000 }, fakeStream(columns), { color: false });
    const piped = harness({ plannedRequests: 1000, phaseMs: 600_000 });
    for (const h of [tty, piped]) {
      busy(h);
      for (let i = 0; i < 3; i += 1) {
        h.advance(61_000 / 3);
        h.tick();
      }
    }
    const fields = piped
      .lines()
      .at(-1)!
      .replace(/^\[1:01\] /, '')
      .split(' · ');
    assert.ok(fields.length > 15, 'the piped line keeps every field');
    // Each redraw goes back to column 0 (ESC [1G): what follows the last one is on the screen.
    const frames = tty.stream.text
      .split('\n')
      .at(-1)!
      .split('\x1b[1G')
      .filter((f) => f !== '');
    assert.equal(frames.length, 3, 'one frame per tick');
    const last = stripVTControlCharacters(frames.at(-1)!);
    assert.ok(last.length <= columns - 1, `${columns} columns: "${last}" is ${last.length} wide`);
    assert.ok(last.length > columns - 30 || columns === 200, `${columns} columns: the line uses the width ("${last}")`);
    assert.ok(last.startsWith('[1:01]'), 'the time is always there');
    const shown = last
      .replace(/^\[1:01\] ?/, '')
      .split(' · ')
      .filter((f) => f !== '');
    for (const f of shown) assert.ok(fields.includes(f), `${columns} columns: "${f}" is a whole field`);
    if (columns <= 80) {
      assert.ok(shown.includes('1 hang'), `${columns}: hangs kept before the rest`);
      assert.ok(!shown.some((f) => f.includes('=')), `${columns}: gauges go first`);
    } else {
      assert.ok(
        shown.some((f) => f.startsWith('TTFT p50')),
        '200 columns keep the latencies',
      );
    }
  }
});

test('on a terminal, an announcement clears the live line, goes above it, and the live line is drawn again; stop clears it', () => {
  const h = harness({}, fakeStream(100), { color: false });
  h.emit(runStart, phase(), start(0));
  h.advance(1000);
  h.tick();
  const before = h.stream.text.length;
  h.emit({ kind: 'hang', t: '', run_ms: 0, record: hangRecord() });
  const after = h.stream.text.slice(before);
  assert.match(after, /^\x1b\[1G\x1b\[2K\[0:01\] HANG [^\n]+\n\x1b\[1G\[0:01\] 0 req · 0\.0 req\/s · 0\.0 tok\/s · TTFT – · 0 errors · 1 hang · /, "the redraw keeps the last interval's rates");
  h.display.print('a notice of the run');
  assert.match(h.stream.text, /\x1b\[2Ka notice of the run\n\x1b\[1G\[0:01\]/);
  h.display.stop();
  assert.ok(h.stream.text.endsWith('\x1b[1G\x1b[2K'), 'the line is cleared for what follows');
});

test('colour only on a terminal with NO_COLOR unset or empty; the text is the same without it', () => {
  assert.equal(colorWanted({ isTTY: true }, {}), true);
  assert.equal(colorWanted({ isTTY: true }, { NO_COLOR: '1' }), false);
  assert.equal(colorWanted({ isTTY: true }, { NO_COLOR: '' }), true, 'no-color.org: set and not empty');
  assert.equal(colorWanted({ isTTY: false }, {}), false);
  assert.equal(colorWanted({}, {}), false);
  const sgr = /\x1b\[[0-9;]*m/;
  const colored = harness({}, fakeStream(120), { color: true });
  const plain = harness({}, fakeStream(120), { color: false });
  for (const h of [colored, plain]) {
    busy(h);
    h.advance(1000);
    h.tick();
  }
  assert.match(colored.stream.text, sgr);
  assert.doesNotMatch(plain.stream.text, sgr);
  assert.equal(stripVTControlCharacters(colored.stream.text), stripVTControlCharacters(plain.stream.text));
});

/** A conversation of an open-loop run starting (or ending) at `runMs`. */
function convStart(n: number, runMs: number, lagMs: number, delayed = false): RunEvent {
  return { kind: 'conversation_start', t: '2026-01-01T00:00:00.000Z', run_ms: runMs, scheduled_ms: runMs - lagMs, start_lag_ms: lagMs, delayed, phase: 's2-r4', agent: n, conversation: `a${n}-c1` };
}
const convEnd = (n: number, runMs: number): RunEvent => ({ kind: 'conversation_end', t: '2026-01-01T00:00:00.000Z', run_ms: runMs, agent: n, conversation: `a${n}-c1`, requests: 3 });

test('an open-loop run: the line shows conversations started per second, active ones and their start lag; the first delayed one is announced', () => {
  const h = harness({ phases: 2, lengthMs: 20_000 });
  h.emit(runStart, { kind: 'phase', t: '', run_ms: 0, name: 's1-r2', load: { kind: 'arrival', from: 2, to: 2, ramp: 'step', length_ms: 10_000 } });
  h.tick();
  assert.doesNotMatch(h.lines().at(-1)!, /active/, 'nothing about arrivals before the first one');
  assert.match(h.lines().at(-1)!, /0:20 left · phase s1-r2/, 'time left counts the whole schedule');
  h.emit(convStart(0, 100, 1), convStart(1, 600, 3), convStart(2, 900, 40), convEnd(0, 950));
  h.advance(2000);
  h.tick();
  assert.match(h.lines().at(-1)!, /\[0:02\] 0:18 left · phase s1-r2 · .* · 1\.5 conv\/s · 2 active · lag p99 40 ms/);
  assert.doesNotMatch(h.lines().at(-1)!, /delayed/);
  h.emit(convStart(3, 2100, 250, true), convStart(4, 2200, 300, true));
  const notices = h.lines().filter((l) => l.includes('ARRIVALS'));
  assert.equal(notices.length, 1, 'announced once');
  assert.match(notices[0]!, /ARRIVALS max_active reached: a3-c1 \(s2-r4\) waited 250 ms for a slot with 3 conversations running/);
  h.advance(1000);
  h.tick();
  assert.match(h.lines().at(-1)!, /2\.0 conv\/s · 4 active · lag p99 300 ms · 2 delayed/);
  h.advance(1000);
  h.tick();
  assert.match(h.lines().at(-1)!, /0\.0 conv\/s · 4 active · lag – · 2 delayed/, 'no start in the last interval: no lag to show');
});
