// The terminal summary: the verdict banner first and last, phrases a newcomer can read, and what went wrong
// and what was not measured said so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder, type Summary } from '../../src/analysis/index.js';
import { formatSummary, runVerdict } from '../../src/report/index.js';
import type { GaugeVerdict, RequestRecord } from '../../src/types/index.js';
import { hangRecord, record } from './fixtures.js';

function summary(records = [record(), record({ agent: 1, run_ms: 300 })], options: { status?: string; thresholds?: ConstructorParameters<typeof SummaryBuilder>[0]['thresholds'] } = {}): Summary {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 'auto', plannedS: 25, ...(options.thresholds === undefined ? {} : { thresholds: options.thresholds }) });
  for (const r of records) b.add(r);
  return b.build({ name: 'smoke', status: options.status ?? 'completed', started_at: null, ended_at: null, wall_s: 25.2, target: 'http://127.0.0.1:1', path: 'direct', labels: {} });
}

test("a passing run's summary starts and ends with the PASS banner and the results folder", () => {
  const lines = formatSummary(summary(), '/tmp/results/x').split('\n');
  assert.equal(lines[0], 'PASS · results /tmp/results/x');
  assert.equal(lines.at(-1), 'PASS · results /tmp/results/x');
  assert.equal(lines.at(-2), '', 'set apart from the summary');
});

test('a failed threshold makes the banner FAIL (exit 1) naming what failed; the exit code comes from the same verdict', () => {
  const failed = record({ agent: 3, status: 'error', http_status: 500, ttft_ms: null, error: { class: 'http_5xx', message: 'HTTP 500: boom', code: '500' } });
  const s = summary([record(), hangRecord({ agent: 1 }), hangRecord({ agent: 2 }), failed], {
    thresholds: { hangs: 0, error_rate: 0.1, ttft_p99_ms: null, itl_p99_ms: null, e2e_p99_ms: null, decode_tokens_per_s_min: null, per_window: false },
  });
  const v = runVerdict(s);
  assert.deepEqual({ word: v.word, exitCode: v.exitCode }, { word: 'FAIL', exitCode: 1 });
  const text = formatSummary(s, 'DIR');
  const banner = 'FAIL (exit 1): 2 hung requests > limit 0; errors on 25.00% of requests (1 of 4; hangs are checked by `hangs`) > limit 10.00% · results DIR';
  assert.equal(text.split('\n')[0], banner);
  assert.equal(text.split('\n').at(-1), banner);
});

test('an interrupted run is INTERRUPTED (exit 130), with what had failed so far', () => {
  assert.equal(formatSummary(summary(undefined, { status: 'interrupted' }), 'DIR').split('\n')[0], 'INTERRUPTED (exit 130) · results DIR');
  const v = runVerdict(summary([record(), hangRecord({ agent: 1 })], { status: 'interrupted' }));
  assert.equal(v.exitCode, 130);
  assert.equal(
    formatSummary(summary([record(), hangRecord({ agent: 1 })], { status: 'interrupted' }), 'DIR').split('\n')[0],
    'INTERRUPTED (exit 130): thresholds failed so far: 1 hung request > limit 0 · results DIR',
  );
  assert.equal(runVerdict(summary(undefined, { status: 'failed' })).word, 'FAIL', 'a run that failed is never a pass');
});

test('the banner is coloured only when asked', () => {
  assert.match(formatSummary(summary(), 'DIR', { color: true }).split('\n')[0]!, /^\x1b\[1m\x1b\[32mPASS/);
  assert.doesNotMatch(formatSummary(summary(), 'DIR'), /\x1b\[/);
});

test('figures with no samples show –, counts of one read in the singular, and the windows line says how they were chosen', () => {
  // Round 2 has only a hang: no latency of it was measured.
  const s = summary([record(), hangRecord({ round: 2 })]);
  const text = formatSummary(s, 'DIR');
  const round2 = text.split('\n').find((l) => l.startsWith('2 '))!;
  assert.match(round2, /^2 +1 +0 +0 +1 +– +– +– +– +– +– +– +– +– +–$/, 'no token figure either: none ended ok');
  assert.doesNotMatch(text, / - /, 'no ASCII dash placeholders');
  assert.match(text, /^requests {3}2 \(1 ok, 0 errors, 1 hang\)/m);
  assert.match(text, /^client {5}event-loop delay p99 –, utilisation – \(no sample: the run ended within the first second\)$/m, 'not "p99 ≤ 0.0 ms"');
  assert.match(text, /^windows {4}2 of 1 s {2}· {2}auto: 1 s for a planned 25 s run$/m);
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1 });
  b.add(record());
  for (const [delay, elu] of [
    [3, 0.2],
    [80, 0.5],
    [4, 0.3],
  ] as const)
    b.addClientSample({ kind: 'client_sample', t: '', run_ms: 0, window_ms: 1000, loop_delay_p99_ms: delay, loop_delay_max_ms: delay, loop_utilization: elu, in_flight: 1, rss_bytes: 1 });
  const one = formatSummary(b.build({ name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 3, target: 't', path: 'direct', labels: {} }), 'DIR');
  assert.match(
    one,
    /^client {5}event-loop delay p99 ≤ 80\.0 ms, utilisation ≤ 50% {2}· {2}late or busy in 1 of 3 one-second samples \(delay p99 over 50 ms or utilisation over 90%\): latencies measured then are suspect \(the diagnosis says whether the client was busy or starved of CPU\)$/m,
    'not "1 saturated windows"',
  );
  assert.match(one, /^windows {4}1 of 1 s {2}· {2}window_s: 1 in the workload$/m);
});

test('rotating gauges read plainly: "changed at every scrape" rather than "non-zero 0.0 s at most", completions as requests completed while watched', () => {
  const s = summary();
  const v = (over: Partial<GaugeVerdict>): GaugeVerdict => ({
    target: 'engine',
    name: 'sglang:num_running_reqs',
    labels: {},
    verdict: 'rotating',
    samples: 20,
    window_s: 4,
    longest_nonzero_s: 0,
    dips: 1,
    last_value: 0,
    needed_s: null,
    evidence: [],
    flow: { counter: 'generation_tokens_total', counter_moved_intervals: 5, intervals: 19, completions: 31, in_flight_share: 0.9 },
    ...over,
  });
  s.gauges = [
    v({}),
    v({
      name: 'sglang:num_used_tokens',
      longest_nonzero_s: 1.04,
      dips: 6,
      flow: { counter: 'generation_tokens_total', counter_moved_intervals: 5, intervals: 19, completions: 1, in_flight_share: 0.9 },
    }),
  ];
  const text = formatSummary(s, 'DIR');
  assert.match(text, /engine sglang:num_running_reqs rotating: changed at every scrape, 1 dip; generation_tokens_total moved, 31 requests completed while watched$/m);
  assert.match(text, /engine sglang:num_used_tokens rotating: held one non-zero value 1\.0 s at most, 6 dips; generation_tokens_total moved, 1 request completed while watched$/m);
  assert.doesNotMatch(text, /0\.0 s at most|\d completions/);
});

const run = { name: 'smoke', status: 'completed', started_at: null, ended_at: null, wall_s: 2, target: 'http://127.0.0.1:1', path: 'direct', labels: {} };

function summaryText(records: RequestRecord[], plannedRequests: number | null = null): string {
  const b = new SummaryBuilder({ itlFromRecords: true, plannedRequests });
  for (const r of records) b.add(r);
  return formatSummary(b.build(run), '/tmp/run');
}

test('every request HTTP 500: the first error is quoted with its status and path, and the always-on check fails by name', () => {
  const failed = (i: number) =>
    record({
      run_ms: i * 10,
      status: 'error',
      http_status: 500,
      ttft_ms: null,
      completion_tokens: null,
      error: { class: 'http_5xx', message: 'HTTP 500: injected fault (type InternalServerError)', code: '500', url_path: '/v1/chat/completions' },
    });
  const out = summaryText([failed(0), failed(1), failed(2)]);
  assert.match(out, /^errors {5}http_5xx 3$/m);
  assert.match(out, /^ {11}· http_5xx ×3, first at 0\.2 s, a0-c1 round 1, HTTP 500, \/v1\/chat\/completions: HTTP 500: injected fault \(type InternalServerError\)$/m);
  assert.match(out, /^thresholds FAILED 2 of 3: ok_requests \(always on, whatever the thresholds\): no request ended ok: of 3, 3 ended in error \(http_5xx 3\)/m);
  assert.match(out, /error_rate: errors on 100\.00% of requests/);
});

test('cached tokens the server did not report are n/r and "not reported", never 0 or 0.0% cached', () => {
  const out = summaryText([record({ cached_tokens: null }), record({ round: 2, cached_tokens: null })]);
  assert.match(out, /cached tokens not reported by the server/);
  assert.doesNotMatch(out, /0\.0% cached/);
  assert.match(out, /^1 +1 +1 +0 +0 +1,000 +n\/r /m);
  assert.match(out, /n\/r: cached tokens not reported by the server/);
});

test('estimated token counts are marked with ~ in the table, the throughput and the tokens line', () => {
  const out = summaryText([record({ tokens_estimated: true, cached_tokens: null }), record({ round: 2 })]);
  assert.match(out, /^1 +1 +1 +0 +0 +~1,000 /m);
  assert.match(out, /~[\d.]+ output tokens\/s \(estimated\)/);
  assert.match(out, /~2,000 prompt \(.*\), ~22 completion {2}· {2}~ estimated for 1 of 2 requests \(no usage chunk\)/);
  assert.match(out, /~: token counts in part estimated/);
});

test('conversations ended at the context cap are counted against the plan, and warnings are explained', () => {
  const out = summaryText(
    [
      record({ finish_reason: 'tool_calls', tool_calls: [{ name: 'read_file', arguments_bytes: 10 }], context_cap: { context_tokens: 2100, rounds_left: 6 } }),
      record({ agent: 1, conversation: 'a1-c1', warnings: ['tool_markup_in_content'] }),
    ],
    16,
  );
  assert.match(out, /^planned {4}2 of 16 planned requests ran: 1 conversation ended at the context cap \(conversation\.max_context_tokens\), 6 rounds not sent$/m);
  assert.match(out, /^answers {4}finish tool_calls 1, stop 1 {2}· {2}1 tool calls in 2 ok answers$/m);
  assert.match(out, /^warning {4}tool_markup_in_content on 1 ok answer \(first a1-c1 round 1\): .*--tool-call-parser/m);
});

test('the reasoning and decode table: TTFC beside TTFT, TPOT beside ITL, tokens per event; an estimated reasoning count is marked ~ and reasoning-only answers are said', () => {
  const reasoned = (over: Partial<RequestRecord>) =>
    record({ ttft_ms: 20, ttfc_ms: 320, reasoning_ms: 290, reasoning_tokens: 64, reasoning_tokens_estimated: false, tokens_per_event: 2, tpot_ms: 9.5, ...over });
  const s = summary([
    reasoned({}),
    reasoned({ agent: 1, run_ms: 300, reasoning_tokens: 128, reasoning_tokens_estimated: true }),
    reasoned({ agent: 2, run_ms: 400, ttfc_ms: null, finish_reason: 'length' }),
  ]);
  const text = formatSummary(s, 'DIR');
  assert.match(text, /^round +reason tok +reason p50 +ttft p50 +ttfc p50 +ttfc p99 +itl p50 +tpot p50 +tpot p99 +tok\/event$/m);
  // Round 1: three answers, one of them estimated; TTFC from the two with content.
  assert.match(text, /^1 +~85 +290 +20\.0 +320 +320 +[\d.]+ +9\.5 +9\.5 +2\.00$/m);
  assert.match(text, /ttfc: send → first content or tool-call token, as bench_serving's chat TTFT/);
  assert.match(text, /~256 reasoning, in 3 of 3 answers; ~ the server gave no reasoning count for 1 answer: from the reasoning text/);
  assert.match(text, /1 answer was reasoning only, no content or tool call \(max_tokens reached while thinking\? no ttfc for it\)/);
});

/** Four streams through a proxy, each closed by it 2.0 s after their headers (nginx's proxy_read_timeout 2s). */
function cutRecords(): RequestRecord[] {
  return [0, 1, 2, 3].map((i) =>
    record({
      agent: i,
      run_ms: i * 500,
      path: 'proxy',
      status: 'error',
      ttft_ms: null,
      itl: null,
      chunks: 0,
      e2e_ms: 2010 + i,
      last_byte_ms: 8,
      finish_reason: null,
      error: { class: 'connection_reset', message: 'other side closed', code: 'UND_ERR_SOCKET' },
    }),
  );
}

test('failures cut at one duration: the diagnosis calls the path and a timeout line names the cut and its settings', () => {
  const text = formatSummary(summary(cutRecords()), 'DIR');
  assert.match(text, /^diagnosis {2}proxy \(confidence [\d.]+\): the path in front of the engine cuts requests at 2\.0 s: its timeout ended them/m);
  assert.match(text, /^timeout {4}the path cuts requests at 2\.0 s \(4 of 4 failures: connection_reset at 2\.0 ± 0\.00 s after the last byte\); the usual settings: nginx proxy_read_timeout/m);
});
