import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WindowBuilder, autoWindowS, plannedLengthS, windowSettingOf, AUTO_MIN_WINDOWS } from '../../src/analysis/index.js';

const base = { phase: 'main', status: 'ok', ttft_ms: 0 } as const;

test('a stream spanning three windows spreads its output tokens by overlap', () => {
  const w = new WindowBuilder(1);
  // Decode from 0.5 s to 2.5 s: 25% in window 0, 50% in window 1, 25% in window 2.
  w.add({ ...base, run_ms: 500, e2e_ms: 2000, completion_tokens: 100 });
  const out = w.build();
  assert.deepEqual(
    out.map((x) => x.output_tokens),
    [25, 50, 25],
  );
  assert.deepEqual(
    out.map((x) => x.requests),
    [0, 0, 1],
    'the request counts in the window it ended in',
  );
  assert.equal(out[1]!.output_tokens_per_s, 50);
});

test('windows keep phases apart and count outcomes and latency percentiles', () => {
  const w = new WindowBuilder(10);
  for (let i = 0; i < 10; i += 1) w.add({ ...base, run_ms: i * 100, e2e_ms: 100 + i, ttft_ms: 10 + i, completion_tokens: 10 });
  w.add({ ...base, status: 'hang', run_ms: 0, e2e_ms: 200, ttft_ms: null, completion_tokens: null });
  w.add({ ...base, phase: 'p2', run_ms: 10_000, e2e_ms: 100, completion_tokens: 5 });
  const out = w.build();
  assert.equal(out.length, 2);
  assert.equal(out[0]!.phase, 'main');
  assert.equal(out[0]!.ok, 10);
  assert.equal(out[0]!.hangs, 1);
  assert.equal(out[0]!.ttft_p50_ms, 15);
  assert.equal(out[0]!.e2e_p99_ms, 109);
  assert.equal(out[1]!.phase, 'p2');
  assert.equal(out[1]!.start_s, 10);
});

test('a window two behind the newest request end is closed: its percentiles stay, its latencies are freed', () => {
  const w = new WindowBuilder(1);
  for (let i = 0; i < 100; i += 1) w.add({ ...base, run_ms: i * 5, e2e_ms: 10 + i, ttft_ms: 1 + i, completion_tokens: 0 });
  const before = w.build()[0]!;
  // Requests ending in windows 1, 2 and 3 close window 0 (and 1); a straggler ending in window 0 counts but
  // no longer moves its percentiles.
  for (const endMs of [1500, 2500, 3500]) w.add({ ...base, run_ms: endMs - 10, e2e_ms: 10, ttft_ms: 5, completion_tokens: 0 });
  w.add({ ...base, run_ms: 0, e2e_ms: 900, ttft_ms: 899, completion_tokens: 0 });
  const after = w.build();
  assert.equal(after[0]!.requests, 101);
  assert.deepEqual([after[0]!.ttft_p50_ms, after[0]!.ttft_p99_ms, after[0]!.e2e_p50_ms, after[0]!.e2e_p99_ms], [before.ttft_p50_ms, before.ttft_p99_ms, before.e2e_p50_ms, before.e2e_p99_ms]);
  assert.equal(before.e2e_p99_ms, 109);
  assert.deepEqual(
    after.map((x) => x.start_s),
    [0, 1, 2, 3],
  );
  assert.equal(after[3]!.e2e_p50_ms, 10, 'the newest windows are still open');
});

test('window_s auto picks the largest of 1, 2, 5, 10 s that leaves at least 20 windows, 1 s the least', () => {
  assert.deepEqual([6, 25, 39.9, 40, 99, 100, 120, 199, 200, 3600, 8 * 3600].map(autoWindowS), [1, 1, 1, 2, 2, 5, 5, 5, 10, 10, 10]);
  for (const lengthS of [20, 25, 40, 59, 100, 150, 200, 1000]) assert.ok(lengthS / autoWindowS(lengthS) >= AUTO_MIN_WINDOWS, `${lengthS} s gives ${lengthS / autoWindowS(lengthS)} windows`);
});

test('a run planned to last 2 min gets 5 s windows from the start, and the choice says why', () => {
  const w = new WindowBuilder('auto', plannedLengthS({ duration: '2m' }));
  assert.equal(w.windowMs, 5000);
  for (let i = 0; i < 120; i += 1) w.add({ ...base, run_ms: i * 1000, e2e_ms: 500, completion_tokens: 5 });
  const out = w.build(121);
  assert.equal(out.length, 24, 'the last request ends at 119.5 s');
  assert.equal(out[1]!.start_s, 5);
  assert.deepEqual(w.choice(121), { window_s: 5, auto: true, basis: 'auto: 5 s for a planned 2 min run' });
});

test('a run of rounds under auto is binned by the second and re-binned at the end to at least 20 windows, percentiles exact', () => {
  const w = new WindowBuilder('auto', null);
  assert.equal(w.windowMs, 1000);
  // 50 s of requests, one ending every 100 ms, e2e growing with time.
  for (let i = 0; i < 500; i += 1) w.add({ ...base, run_ms: i * 100, e2e_ms: 50 + (i % 10), ttft_ms: 10 + (i % 10), completion_tokens: 4 });
  const out = w.build(50.2);
  assert.deepEqual(w.choice(50.2), { window_s: 2, auto: true, basis: 'auto: 2 s for a 50.2 s run (no duration: 1 s windows re-binned at the end)' });
  assert.equal(out.length, 25, 'windows of 2 s over 0-50 s');
  assert.ok(out.every((x) => x.end_s - x.start_s === 2));
  assert.equal(
    out.reduce((s, x) => s + x.requests, 0),
    500,
    'every request still counted once',
  );
  // Window [2, 4) s holds the requests ending in it (20): e2e 50..59 twice; p50 of the pool, not of a half.
  const second = out[1]!;
  assert.equal(second.requests, 20);
  assert.equal(second.e2e_p50_ms, 55);
  assert.equal(second.e2e_p99_ms, 59);
  assert.equal(second.output_tokens_per_s, 40, '80 tokens over 2 s');
});

test("the planned length is duration, or a timed sweep's levels × phase_duration; a run of rounds has none", () => {
  assert.equal(plannedLengthS({ duration: '25s' }), 25);
  assert.equal(plannedLengthS({ duration: 90 }), 90);
  assert.equal(plannedLengthS({ duration: null, sweep: { agents: [4, 8, 16], phase_duration: '1m' } }), 180);
  assert.equal(plannedLengthS({ duration: null, sweep: { agents: [4, 8], phase_duration: null } }), null);
  assert.equal(plannedLengthS({ duration: null }), null);
  assert.equal(windowSettingOf({ window_s: 'auto' }), 'auto');
  assert.equal(windowSettingOf({ window_s: 60 }), 60);
  assert.equal(windowSettingOf({}), 10, 'run.json of a run from before auto: the old default');
});
