// An A/B's outputs besides the comparison table, all drawn from the same calls: the log's lines, compare.html's
// head (the rule, why it ended, a chart per headline figure of the interval narrowing pair by pair against
// ±min_effect) and junit.xml (a failed test case for a figure that ended worse, passing ones otherwise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareArms } from '../../src/compare/index.js';
import { abHtml, abJunit, callLines, pairCharts, type AbSummary } from '../../src/compare/ab-output.js';
import { run } from './helpers.js';

const PAIRS = 5;
// B decodes ~6% faster and its latencies are 6% longer: better on decode, worse on latency, equivalent on errors.
const noise = [0.4, -0.3, 0.1, -0.2, 0.3];
const a = {
  name: 'reverted',
  runs: noise.map((e, i) =>
    run(
      `a${i}`,
      Array.from({ length: 10 }, () => 100 * (1 + e / 100)),
    ),
  ),
};
const b = {
  name: 'ctas512',
  runs: noise.map((e, i) =>
    run(
      `b${i}`,
      Array.from({ length: 10 }, () => 106 * (1 - e / 100)),
      { latencyScale: 1.06 },
    ),
  ),
};
const pairs = Array.from({ length: PAIRS }, (_, i): [number, number] => [i, i]);
const comparison = compareArms(a, b, { pairs, rule: { looks: { kind: 'sequential', maxPairs: 10, final: false } } });
const summary: AbSummary = { looks: 'sequential', minEffectPct: 3, minEffectPoints: 1, maxPairs: 10, alpha: 0.05, pairs: PAIRS, ended: 'every figure waited for decided after 3 pairs' };

const row = (figure: string) => comparison.phases[0]!.rows.find((r) => r.figure === figure)!;

test('the calls the outputs are drawn from: decode better, latency worse (lower is better), errors equivalent', () => {
  assert.equal(comparison.method, 'paired');
  assert.equal(row('decode_tokens_per_s').verdict, 'better');
  assert.equal(row('ttft_p50_ms').verdict, 'worse');
  assert.equal(row('error_rate').verdict, 'equivalent');
  // Decided at the third look and kept: later looks repeat the call that decided.
  const calls = row('decode_tokens_per_s').calls;
  assert.equal(calls.length, PAIRS);
  assert.equal(calls[2]!.verdict, 'better');
  assert.deepEqual(calls[4], calls[2]);
});

test('the log: a headline figure a line, with its call in words and its unit', () => {
  const lines = callLines([comparison]);
  assert.equal(lines.length, 5, lines.join('\n'));
  assert.match(lines[0]!, /^ {2}main decode tok\/s +better: \+\d\.\d \[.*after 3 pairs.* \(%\)$/);
  assert.match(lines.at(-1)!, /main errors\+hangs % +equivalent within ±1: .* \(points\)$/);
});

test('compare.html: a chart per headline figure, x the pairs, the estimate inside its interval, the margins either side', () => {
  const charts = pairCharts([comparison], summary);
  assert.equal(charts.length, 5);
  const decode = charts[0]!;
  assert.deepEqual(decode.x, [2, 3, 4, 5], 'a point a look; the call made at 3 pairs is kept, drawn flat');
  assert.match(decode.title, /^main decode tok\/s: better · ctas512 vs reverted$/);
  const [estimate, low, high, plus, minus] = decode.series;
  for (let i = 0; i < decode.x.length; i += 1) assert.ok(low!.values[i]! <= estimate!.values[i]! && estimate!.values[i]! <= high!.values[i]!, `look ${i}`);
  assert.deepEqual(plus!.values, [3, 3, 3, 3]);
  assert.deepEqual(minus!.values, [-3, -3, -3, -3]);
  assert.equal(charts.at(-1)!.y_label, 'B − A pt');
  assert.deepEqual(charts.at(-1)!.series[3]!.values[0], 1, 'a rate is drawn against its margin in points');
  const html = abHtml([comparison], summary);
  assert.match(html, /<h1>A\/B: ctas512 vs reverted<\/h1>/);
  assert.match(html, /<td>main ttft p50<\/td><td class="v worse">worse<\/td>/);
  assert.match(html, /Ended after 5 pairs: every figure waited for decided after 3 pairs/);
});

test('junit.xml: one test case per figure and phase; those that ended worse failed with their interval', () => {
  const xml = abJunit([comparison], summary);
  const worse = comparison.phases[0]!.rows.filter((r) => r.verdict === 'worse').length;
  assert.ok(worse >= 2, `${worse} worse`);
  assert.match(xml, new RegExp(`<testsuites name="roundload" tests="12" failures="${worse}" errors="0">`));
  assert.match(xml, /<testcase classname="roundload.ab.ctas512-vs-reverted" name="main decode tok\/s" time="0"\/>/);
  assert.match(xml, /name="main ttft p50 ms" time="0">\n {6}<failure type="worse" message="main ttft p50 ms: worse: \+6\.\d \[/);
  const clean = abJunit([compareArms(a, a, { pairs })], summary);
  assert.match(clean, /tests="12" failures="0"/);
});
