import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';

function rec(over: Partial<RequestRecord>): RequestRecord {
  return {
    t: '2026-01-01T00:00:00.000Z', run_ms: 0, agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', path: 'direct', status: 'ok',
    http_status: 200, headers_ms: 5, ttft_ms: 20, e2e_ms: 220, server_ttft_ms: null, itl: { count: 10, mean_ms: 20, p50_ms: 20, p99_ms: 30, max_ms: 30 }, chunks: 12,
    bytes: 2000, request_bytes: 5000, prompt_tokens: 1000, completion_tokens: 11, cached_tokens: 500, tokens_estimated: false,
    finish_reason: 'stop', tool_calls: [], content_chars: 40, reasoning_chars: 0, error: null, hang: null,
    connection: { id: 'c1', nth: 1, local_port: 5000, age_ms: 0, idle_ms: null, tls: null },
    ...over,
  };
}

const run = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 't', path: 'direct', labels: {} };

test('totals, per-round figures, errors by class and hangs by phase, round and reuse are counted', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1, run_ms: 0 }));
  b.add(rec({ round: 2, run_ms: 300, prompt_tokens: 2000, cached_tokens: 1500, connection: { id: 'c1', nth: 2, local_port: 5000, age_ms: 300, idle_ms: 80, tls: null } }));
  // No socket: a second first-request (nth 1) on socket c1 could not happen, and sockets are counted by their first request.
  b.add(rec({ round: 2, agent: 1, status: 'error', error: { class: 'http_5xx', message: 'x', code: '500' }, ttft_ms: null, connection: null }));
  b.add(rec({ round: 3, status: 'hang', hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 100, last_byte_age_ms: 100 }, connection: { id: 'c1', nth: 3, local_port: 5000, age_ms: 600, idle_ms: 10, tls: null } }));
  const s = b.build(run);
  assert.equal(s.totals.requests, 4);
  assert.equal(s.totals.ok, 2);
  assert.equal(s.totals.errors, 1);
  assert.equal(s.totals.hangs, 1);
  assert.equal(s.totals.error_rate, 0.5);
  assert.equal(s.totals.prompt_tokens, 3000);
  assert.equal(s.totals.cache_hit_ratio, round(2000 / 3000));
  assert.deepEqual(s.errors_by_class, { http_5xx: 1 });
  assert.deepEqual(s.hangs.by_phase, { mid_stream: 1 });
  assert.deepEqual(s.hangs.by_round, { '3': 1 });
  assert.deepEqual(s.hangs.by_connection_reuse, { '3': 1 });
  const phase = s.phases[0]!;
  assert.deepEqual(phase.rounds.map((r) => r.round), [1, 2, 3]);
  assert.equal(phase.rounds[1]!.prompt_tokens_mean, 2000);
  assert.equal(phase.rounds[1]!.errors, 1);
  assert.equal(phase.ttft.count, 2, 'only ok requests enter the latency figures');
  assert.equal(s.connections.distinct, 1);
  assert.equal(s.connections.requests_on_reused, 2);
  // 10 tokens after the first over 200 ms of decode: 50 tokens/s per stream.
  assert.equal(phase.rounds[0]!.stream_tokens_per_s_mean, 50);
});

test('throughput is completion tokens over the span from first send to last end', () => {
  const b = new SummaryBuilder({ itlFromRecords: false });
  b.add(rec({ run_ms: 0, e2e_ms: 1000, completion_tokens: 100 }));
  b.add(rec({ run_ms: 1000, e2e_ms: 1000, completion_tokens: 300 }));
  const s = b.build(run);
  assert.equal(s.throughput.output_tokens_per_s, 200);
  assert.equal(s.throughput.requests_per_s, 1);
});

test('client windows with a saturated event loop are counted', () => {
  const b = new SummaryBuilder({ itlFromRecords: false });
  const sample = { kind: 'client_sample' as const, t: '', run_ms: 0, window_ms: 1000, loop_delay_max_ms: 0, in_flight: 0, rss_bytes: 0 };
  b.addClientSample({ ...sample, loop_delay_p99_ms: 2, loop_utilization: 0.3 });
  b.addClientSample({ ...sample, loop_delay_p99_ms: 120, loop_utilization: 0.99 });
  const s = b.build(run);
  assert.equal(s.client.saturated_windows, 1);
  assert.equal(s.client.loop_delay_p99_ms_max, 120);
});

function round(v: number) {
  return Math.round(v * 1000) / 1000;
}
