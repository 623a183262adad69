import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WindowBuilder } from '../../src/analysis/index.js';

const base = { phase: 'main', status: 'ok', ttft_ms: 0 } as const;

test('a stream spanning three windows spreads its output tokens by overlap', () => {
  const w = new WindowBuilder(1);
  // Decode from 0.5 s to 2.5 s: 25% in window 0, 50% in window 1, 25% in window 2.
  w.add({ ...base, run_ms: 500, e2e_ms: 2000, completion_tokens: 100 });
  const out = w.build();
  assert.deepEqual(out.map((x) => x.output_tokens), [25, 50, 25]);
  assert.deepEqual(out.map((x) => x.requests), [0, 0, 1], 'the request counts in the window it ended in');
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
  assert.deepEqual(after.map((x) => x.start_s), [0, 1, 2, 3]);
  assert.equal(after[3]!.e2e_p50_ms, 10, 'the newest windows are still open');
});
