// The terminal summary: the verdict banner first and last, and phrases a newcomer can read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder, type Summary } from '../../src/analysis/index.js';
import { formatSummary, runVerdict } from '../../src/report/index.js';
import type { GaugeVerdict } from '../../src/types/index.js';
import { hangRecord, record } from './fixtures.js';

function summary(records = [record(), record({ agent: 1, run_ms: 300 })], options: { status?: string; thresholds?: ConstructorParameters<typeof SummaryBuilder>[0]['thresholds'] } = {}): Summary {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 'auto', plannedS: 25, ...(options.thresholds === undefined ? {} : { thresholds: options.thresholds }) });
  for (const r of records) b.add(r);
  return b.build({ name: 'smoke', status: options.status ?? 'completed', started_at: null, ended_at: null, wall_s: 25.2, target: 'http://127.0.0.1:1', path: 'direct', labels: {} });
}

test('a passing run\'s summary starts and ends with the PASS banner and the results folder', () => {
  const lines = formatSummary(summary(), '/tmp/results/x').split('\n');
  assert.equal(lines[0], 'PASS · results /tmp/results/x');
  assert.equal(lines.at(-1), 'PASS · results /tmp/results/x');
  assert.equal(lines.at(-2), '', 'set apart from the summary');
});

test('a failed threshold makes the banner FAIL (exit 1) naming what failed; the exit code comes from the same verdict', () => {
  const s = summary([record(), hangRecord({ agent: 1 }), hangRecord({ agent: 2 })], { thresholds: { hangs: 0, error_rate: 0.1, ttft_p99_ms: null, itl_p99_ms: null, e2e_p99_ms: null, decode_tokens_per_s_min: null, per_window: false } });
  const v = runVerdict(s);
  assert.deepEqual({ word: v.word, exitCode: v.exitCode }, { word: 'FAIL', exitCode: 1 });
  const text = formatSummary(s, 'DIR');
  const banner = 'FAIL (exit 1): 2 hung requests > limit 0; error rate 66.67% (0 errors + 2 hangs of 3) > limit 10.00% · results DIR';
  assert.equal(text.split('\n')[0], banner);
  assert.equal(text.split('\n').at(-1), banner);
});

test('an interrupted run is INTERRUPTED (exit 130), with what had failed so far', () => {
  assert.equal(formatSummary(summary(undefined, { status: 'interrupted' }), 'DIR').split('\n')[0], 'INTERRUPTED (exit 130) · results DIR');
  const v = runVerdict(summary([hangRecord()], { status: 'interrupted' }));
  assert.equal(v.exitCode, 130);
  assert.equal(formatSummary(summary([hangRecord()], { status: 'interrupted' }), 'DIR').split('\n')[0], 'INTERRUPTED (exit 130): thresholds failed so far: 1 hung request > limit 0 · results DIR');
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
  assert.match(round2, /^2 +1 +0 +0 +1 +0 +0 +– +– +– +– +– +– +–$/);
  assert.doesNotMatch(text, / - /, 'no ASCII dash placeholders');
  assert.match(text, /^requests {3}2 \(1 ok, 0 errors, 1 hang\)/m);
  assert.match(text, /^client {5}event-loop delay p99 –, utilisation – \(no sample: the run ended within the first second\)$/m, 'not "p99 ≤ 0.0 ms"');
  assert.match(text, /^windows {4}2 of 1 s {2}· {2}auto: 1 s for a planned 25 s run$/m);
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1 });
  b.add(record());
  for (const [delay, elu] of [[3, 0.2], [80, 0.5], [4, 0.3]] as const) b.addClientSample({ kind: 'client_sample', t: '', run_ms: 0, window_ms: 1000, loop_delay_p99_ms: delay, loop_delay_max_ms: delay, loop_utilization: elu, in_flight: 1, rss_bytes: 1 });
  const one = formatSummary(b.build({ name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 3, target: 't', path: 'direct', labels: {} }), 'DIR');
  assert.match(one, /^client {5}event-loop delay p99 ≤ 80\.0 ms, utilisation ≤ 50% {2}· {2}saturated in 1 of 3 one-second samples \(delay p99 over 50 ms or utilisation over 90%\): the client itself was the bottleneck there$/m, 'not "1 saturated windows"');
  assert.match(one, /^windows {4}1 of 1 s {2}· {2}window_s: 1 in the workload$/m);
});

test('rotating gauges read plainly: "changed at every scrape" rather than "non-zero 0.0 s at most", completions as requests completed while watched', () => {
  const s = summary();
  const v = (over: Partial<GaugeVerdict>): GaugeVerdict => ({ target: 'engine', name: 'sglang:num_running_reqs', labels: {}, verdict: 'rotating', samples: 20, window_s: 4, longest_nonzero_s: 0, dips: 1, last_value: 0, needed_s: null, evidence: [], flow: { counter: 'generation_tokens_total', counter_moved_intervals: 5, intervals: 19, completions: 31, in_flight_share: 0.9 }, ...over });
  s.gauges = [v({}), v({ name: 'sglang:num_used_tokens', longest_nonzero_s: 1.04, dips: 6, flow: { counter: 'generation_tokens_total', counter_moved_intervals: 5, intervals: 19, completions: 1, in_flight_share: 0.9 } })];
  const text = formatSummary(s, 'DIR');
  assert.match(text, /engine sglang:num_running_reqs rotating: changed at every scrape, 1 dip; generation_tokens_total moved, 31 requests completed while watched$/m);
  assert.match(text, /engine sglang:num_used_tokens rotating: held one non-zero value 1\.0 s at most, 6 dips; generation_tokens_total moved, 1 request completed while watched$/m);
  assert.doesNotMatch(text, /0\.0 s at most|\d completions/);
});
