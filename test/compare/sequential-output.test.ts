// A sequential A/B's outputs besides the terminal: compare.html's table and one chart per figure of the
// interval narrowing pair by pair against ±min_effect; junit.xml with a failed test case for a figure that
// ended worse and passing ones otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sequentialCall } from '../../src/compare/sequential.js';
import { sequentialCharts, sequentialHtml, sequentialJunit, type SequentialRun } from '../../src/compare/sequential-output.js';
import type { FigureCalls } from '../../src/compare/ab-sequential.js';

function figure(name: string, diffs: number[], betterWhen: 'higher' | 'lower', kind: 'relative' | 'points' = 'relative'): FigureCalls {
  const calls = diffs.map((_, i) => sequentialCall(diffs.slice(0, i + 1), { minEffect: 3, maxPairs: 10, betterWhen }));
  return { name, family: kind === 'points' ? 'errors' : 'decode', betterWhen, kind, calls };
}

const run: SequentialRun = {
  figures: [figure('c96 decode tok/s', [5.9, 6.2, 5.4, 6.0, 5.8], 'higher'), figure('c96 itl p50', [5.9, 6.2, 5.4, 6.0, 5.8], 'lower'), figure('errors+hangs %', [0, 0, 0, 0, 0], 'lower', 'points')],
  minEffectPct: 3,
  maxPairs: 10,
  a: 'reverted',
  b: 'ctas512',
};

test('the calls are what the outputs are drawn from: better, worse (lower is better for latency), equivalent', () => {
  assert.deepEqual(
    run.figures.map((f) => f.calls.at(-1)!.verdict),
    ['better', 'worse', 'equivalent'],
  );
});

test('compare.html: a chart per figure, x the pairs, the estimate inside its interval, the margins either side', () => {
  const charts = sequentialCharts(run);
  assert.equal(charts.length, 3);
  const decode = charts[0]!;
  assert.deepEqual(decode.x, [1, 2, 3, 4, 5]);
  assert.match(decode.title, /^c96 decode tok\/s: better · ctas512 vs reverted$/);
  const [estimate, low, high, plus, minus] = decode.series;
  assert.equal(estimate!.values[0], null, 'no interval from one pair');
  for (let i = 1; i < 5; i += 1) {
    assert.ok(low!.values[i]! <= estimate!.values[i]! && estimate!.values[i]! <= high!.values[i]!, `pair ${i + 1}`);
  }
  assert.ok(high!.values[4]! - low!.values[4]! < high!.values[1]! - low!.values[1]!, 'the interval narrows');
  assert.deepEqual(plus!.values, [3, 3, 3, 3, 3]);
  assert.deepEqual(minus!.values, [-3, -3, -3, -3, -3]);
  assert.equal(charts[2]!.y_label, 'B − A pt');
  const html = sequentialHtml(run);
  assert.match(html, /<h1>Sequential A\/B: ctas512 vs reverted<\/h1>/);
  assert.match(html, /<td>c96 itl p50<\/td><td class="v worse">worse<\/td>/);
  assert.match(html, /min_effect ±3%, max_pairs 10/);
});

test('junit.xml: one test case per figure, the one that ended worse failed with its interval', () => {
  const xml = sequentialJunit(run);
  assert.match(xml, /<testsuites name="roundload" tests="3" failures="1" errors="0">/);
  assert.match(xml, /<testcase classname="roundload.ab.ctas512-vs-reverted" name="c96 decode tok\/s" time="0"\/>/);
  assert.match(xml, /name="c96 itl p50" time="0">\n {6}<failure type="worse" message="c96 itl p50: worse: \+5\.9 \[/);
  assert.match(xml, /name="errors\+hangs %" time="0"\/>/);
  const clean = sequentialJunit({ ...run, figures: [run.figures[0]!, run.figures[2]!] });
  assert.match(clean, /tests="2" failures="0"/);
});
