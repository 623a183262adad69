import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateThresholds, DEFAULT_THRESHOLDS, SummaryBuilder, type ThresholdInput, type ThresholdLimits, type WindowFigures } from '../../src/analysis/index.js';
import type { Percentiles } from '../../src/metrics/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { plainRecord } from '../report/fixtures.js';

const p = (p99: number, count = 100): Percentiles => ({ count, p50_ms: p99 / 2, p90_ms: p99 * 0.9, p99_ms: p99, max_ms: p99, mean_ms: p99 / 2 });

function win(start: number, over: Partial<WindowFigures> = {}): WindowFigures {
  return {
    phase: 'main',
    start_s: start,
    end_s: start + 60,
    requests: 100,
    ok: 100,
    errors: 0,
    hangs: 0,
    output_tokens: 6000,
    output_tokens_per_s: 100,
    ttft_p50_ms: 100,
    ttft_p99_ms: 400,
    e2e_p50_ms: 900,
    e2e_p99_ms: 2000,
    steady: true,
    ...over,
  };
}

const input: ThresholdInput = { requests: 1000, errors: 5, hangs: 0, output_tokens_per_s: 250, ttft: p(400), itl: p(20), e2e: p(2000), windows: [win(0), win(60), win(120)] };
const none: ThresholdLimits = { ...DEFAULT_THRESHOLDS, hangs: null, error_rate: null };

/** The verdict on `limits` alone: the always-on check (it passes on `input`) left out of the results. */
function only(limits: Partial<ThresholdLimits>, over: Partial<ThresholdInput> = {}) {
  const v = evaluateThresholds({ ...none, ...limits }, { ...input, ...over });
  return { ok: v.ok, results: v.results.filter((r) => r.always_on !== true) };
}

test('no limits set: the verdict is ok with only the always-on check', () => {
  const v = evaluateThresholds(none, input);
  assert.equal(v.ok, true);
  assert.deepEqual(
    v.results.map((r) => [r.name, r.ok, r.always_on]),
    [['ok_requests', true, true]],
  );
  assert.equal(v.results[0]!.message, '995 of 1000 requests ended ok (at least 1 must)');
});

test('the default limits fail a run with one hang or errors on more than 1% of requests, and pass a clean run', () => {
  const pass = evaluateThresholds(DEFAULT_THRESHOLDS, input);
  assert.equal(pass.ok, true);
  assert.deepEqual(
    pass.results.map((r) => [r.name, r.limit, r.actual, r.ok]),
    [
      ['ok_requests', 1, 995, true],
      ['hangs', 0, 0, true],
      ['error_rate', 0.01, 0.005, true],
    ],
  );
  const fail = evaluateThresholds(DEFAULT_THRESHOLDS, { ...input, hangs: 1 });
  assert.equal(fail.ok, false);
  assert.equal(fail.results[1]!.message, '1 hung request > limit 0');
  const errors = evaluateThresholds(DEFAULT_THRESHOLDS, { ...input, errors: 11 });
  assert.equal(errors.ok, false);
  assert.deepEqual(
    errors.results.filter((r) => !r.ok).map((r) => r.name),
    ['error_rate'],
  );
});

test('a run with no ok request fails whatever the thresholds say, naming what happened instead', () => {
  const allFailed = evaluateThresholds(none, { ...input, requests: 32, ok: 0, errors: 32, hangs: 0, errors_by_class: { http_5xx: 30, connection_refused: 2 } });
  assert.equal(allFailed.ok, false);
  assert.deepEqual(
    allFailed.results.map((r) => [r.name, r.ok, r.actual]),
    [['ok_requests', false, 0]],
  );
  assert.equal(allFailed.results[0]!.message, 'no request ended ok: of 32, 32 ended in error (http_5xx 30, connection_refused 2)');
  const lenient = evaluateThresholds({ ...none, error_rate: 1, hangs: 100 }, { ...input, requests: 4, ok: 0, errors: 1, hangs: 3 });
  assert.equal(lenient.ok, false, 'lenient limits cannot pass a run where nothing worked');
  assert.match(lenient.results[0]!.message, /of 4, 1 ended in error and 3 hung/);
  const nothing = evaluateThresholds(none, { ...input, requests: 0, ok: 0, errors: 0, hangs: 0 });
  assert.equal(nothing.ok, false);
  assert.match(nothing.results[0]!.message, /no request was sent/);
});

test('hangs: a count at the limit passes, one more fails', () => {
  assert.equal(only({ hangs: 2 }, { hangs: 2 }).ok, true);
  assert.equal(only({ hangs: 2 }, { hangs: 3 }).ok, false);
});

test("error_rate is the share of requests ending in error: hangs are left to `hangs`, the run's own aborts left out", () => {
  const pass = only({ error_rate: 0.01 }, { errors: 10, hangs: 50 });
  assert.equal(pass.ok, true, 'hangs do not count in error_rate');
  assert.equal(pass.results[0]!.actual, 0.01);
  const fail = only({ error_rate: 0.01 }, { errors: 11, hangs: 1 });
  assert.equal(fail.ok, false);
  assert.equal(fail.results[0]!.actual, 0.011);
  assert.equal(fail.results[0]!.message, 'errors on 1.10% of requests (11 of 1000; hangs are checked by `hangs`) > limit 1.00%');
  const aborted = only({ error_rate: 0.01 }, { errors: 105, aborted: 100 });
  assert.equal(aborted.ok, true, 'requests the run aborted when it stopped are not errors of the server');
  assert.match(aborted.results[0]!.message, /5 of 900; 100 aborted by the run's stop not counted/);
});

test('each latency p99 limit passes at or below it and fails above it', () => {
  for (const [key, metric] of [
    ['ttft_p99_ms', 'ttft'],
    ['itl_p99_ms', 'itl'],
    ['e2e_p99_ms', 'e2e'],
  ] as const) {
    const value = input[metric].p99_ms;
    const pass = only({ [key]: value });
    assert.equal(pass.ok, true, key);
    assert.equal(pass.results[0]!.name, key);
    const fail = only({ [key]: value - 1 });
    assert.equal(fail.ok, false, key);
    assert.equal(fail.results[0]!.actual, value);
    assert.match(fail.results[0]!.message, new RegExp(`${metric} p99 ${value} ms > limit ${value - 1} ms`));
  }
});

test('a latency limit with nothing measured fails rather than passing silently', () => {
  const r = only({ ttft_p99_ms: 5000 }, { ttft: p(0, 0) });
  assert.equal(r.ok, false);
  assert.match(r.results[0]!.message, /no ttft was measured/);
});

test('decode_tokens_per_s_min passes at or above the minimum and fails below it', () => {
  assert.equal(only({ decode_tokens_per_s_min: 250 }).ok, true);
  const fail = only({ decode_tokens_per_s_min: 300 });
  assert.equal(fail.ok, false);
  assert.equal(fail.results[0]!.message, 'output 250.0 tokens/s < minimum 300 tokens/s');
  assert.equal(fail.results[0]!.estimated, undefined);
});

test('a tokens/s limit checked on estimated token counts says it is estimated', () => {
  const r = only({ decode_tokens_per_s_min: 100, per_window: true }, { tokens_estimated: 7 });
  assert.deepEqual(
    r.results.map((x) => [x.name, x.estimated]),
    [
      ['decode_tokens_per_s_min', true],
      ['decode_tokens_per_s_min per window', true],
    ],
  );
  assert.match(r.results[0]!.message, /\(estimated: 7 requests had no usage chunk; their tokens were counted from the text/);
  assert.match(r.results[1]!.message, /estimated/);
});

test('per_window fails a limit when one window breaks it, even though the whole run passes', () => {
  const windows = [win(0), win(60, { ttft_p99_ms: 6120, errors: 10, output_tokens_per_s: 20 }), win(120), win(180, { output_tokens_per_s: 1 })];
  const limits = { ttft_p99_ms: 5000, error_rate: 0.05, decode_tokens_per_s_min: 50, e2e_p99_ms: 3000 };
  const whole = only(limits, { windows });
  assert.equal(whole.ok, true, 'per_window off: only the run figures count');
  const r = only({ ...limits, per_window: true }, { windows });
  assert.equal(r.ok, false);
  const byName = new Map(r.results.map((x) => [x.name, x]));
  const ttft = byName.get('ttft_p99_ms per window')!;
  assert.equal(ttft.ok, false);
  assert.equal(ttft.actual, 6120);
  assert.equal(ttft.message, '1 of 4 windows past limit 5000 ms; worst 6120 ms at 60–120 s');
  assert.equal(byName.get('error_rate per window')!.ok, false);
  const decode = byName.get('decode_tokens_per_s_min per window')!;
  assert.equal(decode.ok, false);
  assert.equal(decode.actual, 20, 'the last, partial window (1 token/s) is not held against the minimum');
  assert.equal(byName.get('e2e_p99_ms per window')!.ok, true);
  assert.match(byName.get('e2e_p99_ms per window')!.message, /^all 4 windows within limit 3000 ms/);
});

test('per_window passes when every window is within its limits, skipping windows with nothing measured', () => {
  const r = only({ ttft_p99_ms: 5000, per_window: true }, { windows: [win(0), win(60, { requests: 0, ok: 0, ttft_p99_ms: null })] });
  assert.equal(r.ok, true);
  assert.match(r.results[1]!.message, /^all 1 windows within/);
});

/** A plain request: the shared fixture with this file's round figures (ttft 100 ms, e2e 1 s, 50 tokens). */
function record(over: Partial<RequestRecord>): RequestRecord {
  return plainRecord({ ...over });
}

test('SummaryBuilder fills summary.thresholds from its limits (a hang fails by default)', () => {
  const run = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 't', path: 'direct', labels: {} };
  const plain = new SummaryBuilder({ itlFromRecords: true });
  plain.add(record({}));
  plain.add(record({ status: 'hang', ttft_ms: null, completion_tokens: null, hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 1, last_byte_age_ms: 1 } }));
  const s = plain.build(run);
  assert.equal(s.thresholds.ok, false);
  assert.deepEqual(
    s.thresholds.results.filter((r) => !r.ok).map((r) => r.name),
    ['hangs'],
  );

  const limited = new SummaryBuilder({ itlFromRecords: true, thresholds: { ...none, ttft_p99_ms: 50 } });
  limited.add(record({ ttft_ms: 120 }));
  const t = limited.build(run).thresholds;
  assert.equal(t.ok, false);
  assert.equal(t.results[1]!.name, 'ttft_p99_ms');
  assert.ok(Math.abs(t.results[1]!.actual - 120) < 0.2, String(t.results[1]!.actual));
});

test('SummaryBuilder: a run of nothing but HTTP 500s fails the always-on check with the class counts', () => {
  const run = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 't', path: 'direct', labels: {} };
  const b = new SummaryBuilder({ itlFromRecords: true, thresholds: none });
  for (let i = 0; i < 4; i += 1) b.add(record({ status: 'error', http_status: 500, ttft_ms: null, completion_tokens: null, error: { class: 'http_5xx', message: 'HTTP 500: boom', code: '500' } }));
  const t = b.build(run).thresholds;
  assert.equal(t.ok, false);
  assert.equal(t.results[0]!.message, 'no request ended ok: of 4, 4 ended in error (http_5xx 4)');
});

test('buffered_streams fails a run whose streams arrive whole past the limit, and passes one that streams', () => {
  const fail = only({ buffered_streams: 0.1 }, { buffering: { judged: 46, buffered: 46 } });
  assert.equal(fail.ok, false);
  assert.equal(fail.results[0]!.message, "46 of 46 streams arrived whole (100.00%) > limit 10.00%: the path buffers streams, so TTFT and ITL are the proxy's");
  assert.equal(only({ buffered_streams: 0.1 }, { buffering: { judged: 46, buffered: 1 } }).ok, true);
  assert.equal(only({ buffered_streams: 0.1 }).results[0]!.message, '0 of 0 streams arrived whole (0.00%) ≤ limit 10.00%: the path streams');
});

test('ttfc_p99_ms is checked against the first-content p99, and fails when no content was measured', () => {
  const pass = only({ ttfc_p99_ms: 1000 }, { ttfc: p(900) });
  assert.deepEqual(
    pass.results.map((r) => [r.name, r.ok, r.message]),
    [['ttfc_p99_ms', true, 'ttfc p99 900 ms ≤ limit 1000 ms (100 samples)']],
  );
  assert.equal(only({ ttfc_p99_ms: 1000 }, { ttfc: p(1500) }).ok, false);
  const nothing = only({ ttfc_p99_ms: 1000 }, {});
  assert.equal(nothing.ok, false);
  assert.match(nothing.results[0]!.message, /no ttfc was measured/);
});

test('empty answers count as errors in the error rate: over 1% of them fails the default limits, the sentence says how many were empty', () => {
  const v = evaluateThresholds(DEFAULT_THRESHOLDS, { ...input, errors: 0, empty_answers: 20 });
  const rate = v.results.find((r) => r.name === 'error_rate');
  assert.equal(v.ok, false);
  assert.deepEqual([rate?.actual, rate?.ok], [0.02, false]);
  assert.equal(rate?.message, 'errors on 2.00% of requests (20 of 1000, 20 of them empty answers with no content, reasoning or tool call; hangs are checked by `hangs`) > limit 1.00%');
  assert.equal(evaluateThresholds({ ...DEFAULT_THRESHOLDS, error_rate: null }, { ...input, empty_answers: 20 }).ok, true, 'error_rate: null turns it off');
  const perWindow = only({ error_rate: 0.01, per_window: true }, { errors: 0, windows: [win(0), win(60, { empty_answers: 5 })] });
  const window = perWindow.results.find((r) => r.name === 'error_rate per window');
  assert.deepEqual([window?.ok, window?.actual], [false, 0.05], 'a window of empty answers fails per_window');
});

test('SummaryBuilder: a run of nothing but empty answers keeps them ok (warned empty_answer) and fails error_rate by default', () => {
  const run = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 't', path: 'direct', labels: {} };
  const b = new SummaryBuilder({ itlFromRecords: true });
  for (let i = 0; i < 4; i += 1) b.add(plainRecord({ completion_tokens: 0, warnings: ['empty_answer', 'no_finish_reason'] }));
  const s = b.build(run);
  assert.deepEqual([s.totals.ok, s.totals.errors], [4, 0]);
  assert.deepEqual(
    s.thresholds.results.map((r) => [r.name, r.ok]),
    [
      ['ok_requests', true],
      ['hangs', true],
      ['error_rate', false],
    ],
  );
  assert.equal(
    s.windows.reduce((n, w) => n + (w.empty_answers ?? 0), 0),
    4,
    'the windows count them too',
  );
});
