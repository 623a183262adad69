import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WindowBuilder, SummaryBuilder } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { plainRecord } from '../report/fixtures.js';

const base = { phase: 'c4', status: 'ok', ttft_ms: 10, completion_tokens: 10 } as const;

test('windows are steady only after the last warm-up send and before the first agent is done', () => {
  const w = new WindowBuilder(1);
  // Agent 0 and 1 send from 0 s; warm-up sends up to 1.5 s; agent 1 is done at 6.2 s, agent 0 at 8.4 s.
  w.add({ ...base, agent: 0, run_ms: 0, e2e_ms: 900, warmup: true });
  w.add({ ...base, agent: 1, run_ms: 1500, e2e_ms: 900, warmup: true });
  for (let s = 2; s < 6; s += 1) w.add({ ...base, agent: 1, run_ms: s * 1000, e2e_ms: 900 });
  w.add({ ...base, agent: 1, run_ms: 6000, e2e_ms: 200 });
  for (let s = 2; s < 8; s += 1) w.add({ ...base, agent: 0, run_ms: s * 1000 + 100, e2e_ms: 900 });
  w.add({ ...base, agent: 0, run_ms: 8000, e2e_ms: 400 });
  const out = w.build();
  const steady = out.filter((x) => x.steady).map((x) => x.start_s);
  // Window 1 holds the last warm-up send (1.5 s); window 6 ends after 6.2 s.
  assert.deepEqual(steady, [2, 3, 4, 5]);
  assert.equal(out.find((x) => x.start_s === 1)!.steady, false);
  assert.equal(out.find((x) => x.start_s === 7)!.steady, false);
});

test('without warm-up, the window of the first send is an edge (the phase may start mid-window)', () => {
  const w = new WindowBuilder(1);
  for (let s = 0; s < 5; s += 1) w.add({ ...base, phase: 'main', agent: 0, run_ms: s * 1000 + 300, e2e_ms: 900 });
  // Sends at 0.3 … 4.3 s, the last end at 5.2 s: windows 1-4 are steady, 0 and 5 are edges.
  assert.deepEqual(
    w.build().map((x) => x.steady),
    [false, true, true, true, true, false],
  );
});

/** A plain request: the shared fixture with this file's round figures (ttft 100 ms, e2e 1 s, 50 tokens). */
function record(over: Partial<RequestRecord>): RequestRecord {
  return plainRecord({ t: '2026-01-01T00:00:00.000Z', phase: 'c4', ...over });
}

test('warm-up requests stay out of the phase figures but in the totals, and a warm-up hang is never hidden', () => {
  const s = new SummaryBuilder({ itlFromRecords: true, windowS: 1 });
  s.add(record({ warmup: true, ttft_ms: 9000, e2e_ms: 9500 }));
  s.add(record({ warmup: true, status: 'hang', ttft_ms: null, completion_tokens: null, hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 1000, last_byte_age_ms: 1000 } }));
  for (let i = 0; i < 4; i += 1) s.add(record({ run_ms: 2000 + i * 100, ttft_ms: 100 + i }));
  const summary = s.build({ name: 'w', status: 'completed', started_at: null, ended_at: null, wall_s: 3, target: 't', path: 'direct', labels: {} });
  const phase = summary.phases[0]!;
  assert.equal(phase.requests, 4);
  assert.equal(phase.hangs, 0);
  assert.deepEqual(phase.warmup, { requests: 2, ok: 1, errors: 0, hangs: 1 });
  assert.ok(phase.ttft.max_ms < 200, 'the 9 s warm-up TTFT is not in the phase percentiles');
  assert.equal(summary.totals.requests, 6);
  assert.equal(summary.totals.hangs, 1);
  assert.equal(summary.hangs.total, 1);
});
