import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder } from '../../src/analysis/index.js';
import { record as rec } from '../report/fixtures.js';

const run = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 't', path: 'direct', labels: {} };

test('totals, per-round figures, errors by class and hangs by phase, round and reuse are counted', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1, run_ms: 0 }));
  b.add(rec({ round: 2, run_ms: 300, prompt_tokens: 2000, cached_tokens: 1500, connection: { id: 'c1', nth: 2, local_port: 5000, age_ms: 300, idle_ms: 80, tls: null } }));
  // No socket: a second first-request (nth 1) on socket c1 could not happen, and sockets are counted by their first request.
  b.add(rec({ round: 2, agent: 1, status: 'error', error: { class: 'http_5xx', message: 'x', code: '500' }, ttft_ms: null, connection: null }));
  b.add(
    rec({
      round: 3,
      status: 'hang',
      hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 100, last_byte_age_ms: 100 },
      connection: { id: 'c1', nth: 3, local_port: 5000, age_ms: 600, idle_ms: 10, tls: null },
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    }),
  );
  const s = b.build(run);
  // The hung request's trace, to open in Jaeger or Tempo.
  assert.deepEqual(s.hangs.trace_ids, ['4bf92f3577b34da6a3ce929d0e0e4736']);
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
  assert.deepEqual(
    phase.rounds.map((r) => r.round),
    [1, 2, 3],
  );
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

test('cached tokens the server never reported are null ("not reported"), never 0 or 0% cached', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1, cached_tokens: null }));
  b.add(rec({ round: 2, cached_tokens: null }));
  const s = b.build(run);
  assert.equal(s.totals.cached_tokens, null);
  assert.equal(s.totals.cache_hit_ratio, null);
  assert.equal(s.totals.cached_tokens_reported, 0);
  assert.deepEqual(
    s.phases[0]!.rounds.map((r) => r.cached_tokens_mean),
    [null, null],
  );
});

test('once the server reports cached tokens for some requests, the others count 0 (SGLang omits a zero count)', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1, prompt_tokens: 1000, cached_tokens: null }));
  b.add(rec({ round: 2, prompt_tokens: 3000, cached_tokens: 1000 }));
  // An estimated request (no usage chunk) is not in the ratio's prompt tokens: nothing was said about it.
  b.add(rec({ round: 2, prompt_tokens: 5000, cached_tokens: null, tokens_estimated: true }));
  const s = b.build(run);
  assert.equal(s.totals.cached_tokens, 1000);
  assert.equal(s.totals.cache_hit_ratio, 0.25);
  assert.equal(s.totals.cached_tokens_reported, 1);
  assert.deepEqual(
    s.phases[0]!.rounds.map((r) => r.cached_tokens_mean),
    [0, 500],
  );
});

test('estimated token counts are counted per round, per phase and in the throughput', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1 }));
  b.add(rec({ round: 2, tokens_estimated: true }));
  const s = b.build(run);
  assert.equal(s.totals.tokens_estimated, 1);
  assert.equal(s.throughput.tokens_estimated, 1);
  assert.equal(s.phases[0]!.tokens_estimated, 1);
  assert.deepEqual(
    s.phases[0]!.rounds.map((r) => r.tokens_estimated),
    [0, 1],
  );
});

test('the first error of each class keeps its message, status, URL path and when, with the class count', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  const e500 = (run_ms: number, message: string) =>
    rec({ run_ms, status: 'error', http_status: 500, ttft_ms: null, error: { class: 'http_5xx', message, code: '500', url_path: '/v1/chat/completions' } });
  b.add(e500(100, 'HTTP 500: first'));
  b.add(e500(200, 'HTTP 500: second'));
  b.add(
    rec({
      run_ms: 300,
      agent: 2,
      conversation: 'a2-c1',
      round: 3,
      status: 'error',
      http_status: 404,
      error: { class: 'http_4xx', message: 'HTTP 404: Not Found', code: '404', url_path: '/v1/v1/chat/completions' },
    }),
  );
  const s = b.build(run);
  assert.deepEqual(s.first_errors, [
    { class: 'http_5xx', count: 2, message: 'HTTP 500: first', http_status: 500, code: '500', url_path: '/v1/chat/completions', run_ms: 320, agent: 0, conversation: 'a0-c1', round: 1 },
    { class: 'http_4xx', count: 1, message: 'HTTP 404: Not Found', http_status: 404, code: '404', url_path: '/v1/v1/chat/completions', run_ms: 520, agent: 2, conversation: 'a2-c1', round: 3 },
  ]);
});

test('requests/s counts only the requests of the span it divides by (warm-up requests are out of both)', () => {
  const b = new SummaryBuilder({ itlFromRecords: false });
  // Ten warm-up requests in the first second, then two steady ones over 2 s.
  for (let i = 0; i < 10; i += 1) b.add(rec({ run_ms: i * 50, e2e_ms: 50, warmup: true }));
  b.add(rec({ run_ms: 1000, e2e_ms: 1000 }));
  b.add(rec({ run_ms: 2000, e2e_ms: 1000 }));
  const s = b.build(run);
  assert.equal(s.totals.requests, 12);
  assert.equal(s.throughput.requests_per_s, 1);
});

test('finish reasons, tool calls per round, warnings and context-capped conversations are counted', () => {
  const b = new SummaryBuilder({ itlFromRecords: true, plannedRequests: 16 });
  const call = { name: 'read_file', arguments_bytes: 20 };
  b.add(rec({ round: 1, finish_reason: 'tool_calls', tool_calls: [call, call] }));
  b.add(rec({ round: 1, agent: 1, conversation: 'a1-c1', finish_reason: 'stop', warnings: ['tool_markup_in_content'] }));
  b.add(rec({ round: 2, finish_reason: 'tool_calls', tool_calls: [call], context_cap: { context_tokens: 2100, rounds_left: 6 } }));
  b.add(rec({ round: 2, agent: 1, conversation: 'a1-c1', status: 'error', finish_reason: 'length', error: { class: 'truncated_tool_call', message: 'cut', code: null } }));
  b.add(rec({ round: 2, agent: 1, conversation: 'a1-c1', attempt: 2, recovery: 'truncated_tool_call', finish_reason: 'stop', warnings: ['tool_markup_in_content'] }));
  const s = b.build(run);
  assert.deepEqual(s.finish_reasons, { tool_calls: 2, stop: 2, length: 1 });
  assert.deepEqual(
    s.phases[0]!.rounds.map((r) => [r.tool_calls, r.tool_call_answers]),
    [
      [2, 1],
      [1, 1],
    ],
  );
  assert.equal(s.totals.tool_calls, 3);
  assert.equal(s.warnings?.length, 1);
  assert.equal(s.warnings[0]!.count, 2);
  assert.deepEqual(s.warnings[0]!.first, { run_ms: 220, conversation: 'a1-c1', round: 1 });
  assert.match(s.warnings[0]!.meaning, /tool-call or reasoning parser/);
  assert.deepEqual(s.conversations, { rounds_sent: 4, context_capped: 1, rounds_not_sent: 6, requests_planned: 16 });
});

test('answers wrong in shape (a tool call cut by max_tokens, bad tool JSON) are counted as errors but make no diagnosis episode; an HTTP 502 beside them does', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  for (let i = 0; i < 5; i += 1) b.add(rec({ run_ms: i * 100 }));
  b.add(rec({ run_ms: 600, status: 'error', finish_reason: 'length', error: { class: 'truncated_tool_call', message: 'cut', code: null } }));
  b.add(rec({ run_ms: 700, status: 'error', error: { class: 'invalid_tool_arguments', message: 'bad json', code: null } }));
  const shapeOnly = b.build(run);
  assert.equal(shapeOnly.totals.errors, 2);
  assert.equal(shapeOnly.diagnosis.verdict, 'none', shapeOnly.diagnosis.evidence.join('\n'));
  b.add(rec({ run_ms: 800, status: 'error', http_status: 502, ttft_ms: null, error: { class: 'http_5xx', message: 'HTTP 502: bad gateway', code: '502' } }));
  const withPath = b.build(run);
  assert.notEqual(withPath.diagnosis.verdict, 'none');
  assert.equal(
    withPath.diagnosis.episodes!.reduce((n, e) => n + e.requests, 0),
    1,
    'only the 502 is in an episode',
  );
});

test('reasoning figures per round and phase: TTFC, TPOT and reasoning time percentiles, mean reasoning tokens, tokens per event, reasoning-only answers', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(rec({ round: 1, ttft_ms: 20, ttfc_ms: 220, reasoning_ms: 190, reasoning_tokens: 40, reasoning_tokens_estimated: false, tokens_per_event: 1, tpot_ms: 5 }));
  b.add(rec({ round: 1, agent: 1, ttft_ms: 30, ttfc_ms: 330, reasoning_ms: 290, reasoning_tokens: 60, reasoning_tokens_estimated: true, tokens_per_event: 3, tpot_ms: 7 }));
  // Cut by max_tokens while thinking: no content, so no TTFC.
  b.add(rec({ round: 2, ttft_ms: 25, ttfc_ms: null, reasoning_ms: 400, reasoning_tokens: 256, reasoning_tokens_estimated: false, tokens_per_event: 2, tpot_ms: 6, finish_reason: 'length' }));
  // A record from before these fields: counted, with no TTFC/TPOT figures.
  b.add(rec({ round: 2, agent: 1 }));
  const s = b.build(run);
  const [r1, r2] = s.phases[0]!.rounds;
  // HDR buckets keep 3 significant digits.
  assert.deepEqual([r1!.ttfc!.count, Math.round(r1!.ttfc!.p50_ms), Math.round(r1!.ttfc!.max_ms)], [2, 220, 330]);
  assert.deepEqual([r1!.tpot!.count, r1!.reasoning!.count], [2, 2]);
  assert.equal(r1!.reasoning_tokens_mean, 50);
  assert.equal(r1!.reasoning_tokens_estimated, 1);
  assert.equal(r1!.tokens_per_event_mean, 2);
  assert.equal(r2!.ttfc!.count, 0, 'no content came in round 2');
  assert.equal(r2!.reasoning_tokens_mean, 128, 'over both ok answers, the old record counting 0');
  assert.deepEqual([s.totals.reasoning_tokens, s.totals.reasoning_tokens_estimated, s.totals.reasoning_answers, s.totals.reasoning_only_answers], [356, 1, 3, 1]);
  assert.equal(s.phases[0]!.ttfc!.count, 2);
  assert.equal(s.phases[0]!.tpot!.count, 3);
  assert.equal(s.phases[0]!.reasoning_tokens_mean, 89);
});

test('warnings are counted per class and per answer, and answer_warnings judges their share of ok answers', () => {
  const thresholds = {
    hangs: 0,
    error_rate: null,
    ttft_p99_ms: null,
    itl_p99_ms: null,
    e2e_p99_ms: null,
    decode_tokens_per_s_min: null,
    answer_warnings: { tool_call_without_name: 0.2, wrapped_tool_arguments: 0 },
    per_window: false,
  };
  const b = new SummaryBuilder({ itlFromRecords: true, thresholds });
  for (let i = 0; i < 8; i += 1) b.add(rec({ agent: i }));
  b.add(rec({ agent: 8, warnings: ['wrapped_tool_arguments', 'tool_call_without_name'] }));
  b.add(rec({ agent: 9, warnings: ['tool_call_without_name'] }));
  const s = b.build(run);
  assert.deepEqual(
    s.warnings!.map((w) => [w.class, w.count]),
    [
      ['tool_call_without_name', 2],
      ['wrapped_tool_arguments', 1],
    ],
  );
  assert.match(s.warnings![0]!.meaning, /sglang#35563/);
  const byName = new Map(s.thresholds.results.map((r) => [r.name, r]));
  assert.equal(byName.get('answer_warnings.tool_call_without_name')!.ok, true);
  assert.equal(byName.get('answer_warnings.tool_call_without_name')!.message, 'tool_call_without_name on 20.00% of ok answers (2 of 10) ≤ limit 20.00%');
  assert.equal(byName.get('answer_warnings.wrapped_tool_arguments')!.ok, false);
  assert.equal(s.thresholds.ok, false);
  // One share for any warning: 2 of the 10 answers carried one (not 3, the warnings).
  const any = new SummaryBuilder({ itlFromRecords: true, thresholds: { ...thresholds, answer_warnings: 0.1 } });
  for (let i = 0; i < 8; i += 1) any.add(rec({ agent: i }));
  any.add(rec({ agent: 8, warnings: ['wrapped_tool_arguments', 'tool_call_without_name'] }));
  any.add(rec({ agent: 9, warnings: ['tool_call_without_name'] }));
  const anyResult = any.build(run).thresholds.results.find((r) => r.name === 'answer_warnings')!;
  assert.deepEqual([anyResult.actual, anyResult.ok], [0.2, false]);
});
