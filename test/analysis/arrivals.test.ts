import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder } from '../../src/analysis/index.js';
import type { ArrivalsEndEvent, ClientSampleEvent, ConversationEndEvent, ConversationStartEvent, PhaseEvent, RequestRecord } from '../../src/types/index.js';
import { laggingText } from '../../src/report/table.js';

const T = '2026-01-01T00:00:00.000Z';

function stage(name: string, runMs: number, from: number, to: number, lengthMs: number): PhaseEvent {
  return { kind: 'phase', t: T, run_ms: runMs, name, load: { kind: 'arrival', from, to, ramp: 'step', length_ms: lengthMs } };
}

function start(n: number, runMs: number, lagMs: number, phase: string, delayed = false): ConversationStartEvent {
  return { kind: 'conversation_start', t: T, run_ms: runMs, scheduled_ms: runMs - lagMs, start_lag_ms: lagMs, delayed, phase, agent: n, conversation: `a${n}-c1` };
}

function end(n: number, runMs: number): ConversationEndEvent {
  return { kind: 'conversation_end', t: T, run_ms: runMs, agent: n, conversation: `a${n}-c1`, requests: 1 };
}

function request(agent: number, runMs: number, e2eMs: number, phase: string): RequestRecord {
  return {
    t: T,
    run_ms: runMs,
    agent,
    conversation: `a${agent}-c1`,
    round: 1,
    phase,
    path: 'direct',
    status: 'ok',
    http_status: 200,
    headers_ms: 5,
    ttft_ms: 10,
    e2e_ms: e2eMs,
    server_ttft_ms: null,
    itl: null,
    chunks: 3,
    bytes: 100,
    request_bytes: 100,
    prompt_tokens: 10,
    completion_tokens: 5,
    cached_tokens: null,
    tokens_estimated: false,
    finish_reason: 'stop',
    tool_calls: [],
    content_chars: 20,
    reasoning_chars: 0,
    error: null,
    hang: null,
    connection: null,
  };
}

test('per stage: arrivals, their rate, delays, never started, start lag, active conversations (time-weighted), and the lagging flag', () => {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1, plannedS: 4, thinkTimeMs: 100 });
  b.addLoad(stage('s1-r2', 0, 2, 2, 2000));
  // Stage 1: 4 conversations on time, each 1 s long, starting every 500 ms → 2 active most of the time.
  // Events come in time order, as a run writes them.
  for (let i = 0; i < 4; i += 1) {
    if (i >= 2) b.addLoad(end(i - 2, i * 500));
    b.addLoad(start(i, i * 500, 1, 's1-r2'));
    b.add(request(i, i * 500, 900, 's1-r2'));
  }
  b.addLoad(stage('s2-r4', 2000, 4, 4, 2000));
  b.addLoad(end(2, 2000));
  // Stage 2: 8 came due; 5 started, 3 of them late (up to 400 ms), and 3 never started.
  b.addLoad(start(4, 2000, 2, 's2-r4'));
  b.addLoad(start(5, 2250, 2, 's2-r4'));
  b.addLoad(end(3, 2500));
  b.addLoad(start(6, 2900, 400, 's2-r4', true));
  b.addLoad(start(7, 3200, 300, 's2-r4', true));
  b.addLoad(start(8, 3500, 350, 's2-r4', true));
  for (const n of [4, 5, 6, 7, 8]) b.add(request(n, 3000, 500, 's2-r4'));
  for (const n of [4, 5, 6, 7, 8]) b.addLoad(end(n, 4000));
  const counts = { scheduled: 0, started: 0, delayed: 0 };
  b.addLoad({ kind: 'arrivals_end', t: T, run_ms: 4000, phases: { 's1-r2': { ...counts, not_started: 0 }, 's2-r4': { ...counts, not_started: 3 } } } satisfies ArrivalsEndEvent);
  const s = b.build({ name: 'x', status: 'completed', started_at: T, ended_at: T, wall_s: 4.2, target: 'http://x', path: 'direct', labels: {} });
  const [p1, p2] = s.phases;
  assert.deepEqual(
    s.phases.map((p) => p.phase),
    ['s1-r2', 's2-r4'],
  );
  assert.deepEqual(p1!.load, { kind: 'arrival', from: 2, to: 2, ramp: 'step', length_ms: 2000, start_ms: 0 });
  const a1 = p1!.arrivals!;
  assert.deepEqual([a1.scheduled, a1.started, a1.delayed, a1.not_started, a1.arrivals_per_s], [4, 4, 0, 0, 2]);
  // Active over stage 1 (0–2 s): 1 on 0–0.5, 2 on 0.5–1.0, 2 on 1.0–1.5, 2 on 1.5–2.0 → area 3.5 s over 2 s.
  assert.equal(a1.active_mean, 1.75);
  assert.equal(a1.active_max, 2);
  assert.equal(a1.lagging, false);
  const a2 = p2!.arrivals!;
  assert.deepEqual([a2.scheduled, a2.started, a2.delayed, a2.not_started, a2.arrivals_per_s], [8, 5, 3, 3, 4]);
  assert.equal(a2.start_lag.count, 5);
  assert.ok(Math.abs(a2.start_lag.max_ms - 400) < 1);
  assert.equal(a2.lag_limit_ms, 250, 'one arrival gap at 4/s, longer than one think time (100 ms)');
  assert.equal(a2.lagging, true, 'start lag p99 400 ms > 250 ms');
  assert.equal(a2.active_max, 5);
  const run = s.arrivals!;
  assert.deepEqual([run.scheduled, run.started, run.delayed, run.not_started], [12, 9, 3, 3]);
  assert.deepEqual(run.lagging_phases, ['s2-r4']);
  assert.equal(run.lag_limit_ms, 100);
  assert.deepEqual(
    run.windows.map((w) => [w.start_s, w.starts, w.delayed, w.active_max]),
    [
      [0, 2, 0, 2],
      [1, 2, 0, 2],
      [2, 3, 1, 3],
      [3, 2, 2, 5],
    ],
  );
  assert.equal(run.windows[0]!.active_mean, 1.5, '1 active for 0.5 s then 2 for 0.5 s');
  assert.equal(run.windows[3]!.start_lag_max_ms, 350);
});

test('a think time of 0 still needs 10 ms of start lag to call a stage lagging; a killed run has not_started unknown', () => {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1, plannedS: 2, thinkTimeMs: 0 });
  b.addLoad(stage('main', 0, 5, 5, 2000));
  for (let i = 0; i < 10; i += 1) b.addLoad(start(i, i * 200, 5, 'main'));
  const s = b.build({ name: 'x', status: 'killed', started_at: T, ended_at: T, wall_s: 2, target: 'http://x', path: 'direct', labels: {} });
  assert.equal(s.arrivals!.lag_limit_ms, 10);
  assert.equal(s.phases[0]!.arrivals!.lagging, false, 'a 5 ms lag is timer slack, not a verdict');
  assert.equal(s.arrivals!.not_started, null, 'no arrivals_end: never-started arrivals are not known, not 0');
  assert.equal(s.phases[0]!.arrivals!.not_started, null);
  assert.equal(s.arrivals!.active_max, 10, 'conversations never seen ending count active until the end');
});

/** A client health sample of one second ending at `runMs`. */
function sample(runMs: number, loopDelayP99Ms: number): ClientSampleEvent {
  return { kind: 'client_sample', t: T, run_ms: runMs, window_ms: 1000, loop_delay_p99_ms: loopDelayP99Ms, loop_delay_max_ms: loopDelayP99Ms, loop_utilization: 0.3, in_flight: 2, rss_bytes: 1e8 };
}

const RUN = { name: 'x', status: 'completed', started_at: T, ended_at: T, wall_s: 4, target: 'http://x', path: 'direct', labels: {} } as const;

/** One 4 s stage at `ratePerS` (constant arrivals) with a 50 ms think time: each start `lagMs(i)` late, `delayed`
 * as given, and a client sample a second whose event-loop delay p99 is `loopDelayMs`. */
function busyStage(ratePerS: number, lagMs: (i: number) => number, loopDelayMs: number, delayed = false) {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1, plannedS: 4, thinkTimeMs: 50 });
  b.addLoad(stage('s1', 0, ratePerS, ratePerS, 4000));
  const gap = 1000 / ratePerS;
  for (let i = 0; i < 4 * ratePerS; i += 1) {
    if (i > 0 && (i * gap) % 1000 === 0) b.addClientSample(sample(i * gap, loopDelayMs));
    b.addLoad(start(i, i * gap + lagMs(i), lagMs(i), 's1', delayed && i % 2 === 1));
  }
  b.addClientSample(sample(4000, loopDelayMs));
  return b.build(RUN).phases[0]!.arrivals!;
}

test('a 50 ms think time on a busy host is no hair trigger: 120 ms of start lag at 4 arrivals/s is within one arrival gap (250 ms)', () => {
  const a = busyStage(4, (i) => 40 + (i % 5) * 20, 90);
  assert.ok(a.start_lag.p99_ms > 100, `p99 ${a.start_lag.p99_ms} ms: over the think time, which flagged it before`);
  assert.equal(a.lag_limit_ms, 250);
  assert.equal(a.lagging, false);
  // At 40 arrivals a second the same lag is two arrival gaps: the arrivals no longer come as planned.
  const fast = busyStage(40, (i) => 40 + (i % 5) * 20, 3);
  assert.equal(fast.lag_limit_ms, 50, 'one think time: longer than the 25 ms gap');
  assert.equal(fast.lagging, true);
});

test("a stage lagging because the client itself was late says so (its event-loop delay, recorded, about the lag's size)", () => {
  const a = busyStage(4, (i) => 300 + (i % 4) * 30, 280);
  assert.equal(a.lagging, true);
  assert.equal(a.client_loop_delay_p99_ms, 280);
  assert.equal(a.client_late, true);
  assert.equal(
    laggingText(a, 50),
    `LAGGING: start lag p99 ${Math.round(a.start_lag.p99_ms)} ms > 250 ms (one arrival gap at 4/s): the client itself was late (event-loop delay p99 up to 280 ms): a busy or starved client host, not the server, held the starts back`,
  );
});

test('a stage lagging while the client was on time blames the slots its conversations waited for, not the client', () => {
  const a = busyStage(4, (i) => 300 + (i % 4) * 30, 3, true);
  assert.equal(a.lagging, true);
  assert.equal(a.client_late, false);
  assert.match(laggingText(a, 50), /> 250 ms \(one arrival gap at 4\/s\): 8 conversations waited for a slot \(max_active\): the server cannot keep up with the arrivals$/);
  // A summary written before stages had their own limit: the run's, one think time.
  const { lag_limit_ms: _limit, client_late: _late, client_loop_delay_p99_ms: _delay, ...old } = a;
  assert.match(laggingText(old, 100), /^LAGGING: start lag p99 \d+ ms > 100 ms \(one think time\): 8 conversations waited/);
});

test('a closed-loop run has no arrival figures; an open-loop phase stays steady until its last request was sent', () => {
  const closed = new SummaryBuilder({ itlFromRecords: true, windowS: 1 });
  closed.add(request(0, 0, 500, 'main'));
  assert.equal(closed.build({ name: 'x', status: 'completed', started_at: T, ended_at: T, wall_s: 1, target: 'http://x', path: 'direct', labels: {} }).arrivals, undefined);
  const open = new SummaryBuilder({ itlFromRecords: true, windowS: 1, plannedS: 10 });
  open.addLoad(stage('main', 0, 1, 1, 10_000));
  // One short conversation early (its agent is "done" at 1.2 s) and steady arrivals after it.
  open.addLoad(start(0, 0, 1, 'main'));
  open.add(request(0, 0, 1200, 'main'));
  for (let i = 1; i < 9; i += 1) {
    open.addLoad(start(i, i * 1000, 1, 'main'));
    open.add(request(i, i * 1000, 800, 'main'));
  }
  const s = open.build({ name: 'x', status: 'completed', started_at: T, ended_at: T, wall_s: 10, target: 'http://x', path: 'direct', labels: {} });
  const steady = s.windows.filter((w) => w.steady === true).map((w) => w.start_s);
  assert.deepEqual(steady, [0, 1, 2, 3, 4, 5, 6, 7], 'steady from the first send to the last (8 s), not cut when agent 0 was done');
});
