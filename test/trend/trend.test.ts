// A trend over history points: regressions told from improvements by each figure's direction, the verdict
// `--fail-on regression` reads, sparklines, and the terminal table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTrend, changePoints, formatTrend, metricOf, sparkline } from '../../src/trend/index.js';
import type { PhasePoint } from '../../src/history/index.js';

/** History points with these figures, one a night from 2026-12-01. */
function points(figures: Record<string, number>[]): PhasePoint[] {
  return figures.map((f, i) => {
    const startedAt = `2026-12-${String(i + 1).padStart(2, '0')}T02:00:00.000Z`;
    return { run: { runId: `run${String(i + 1).padStart(2, '0')}`, name: 'nightly', startedAt, dir: null, labels: {}, cells: { status: 'completed' } }, figures: f };
  });
}

/** 12 nights: ITL p50 and throughput with a little noise; from night `stepAt` ITL 10% slower and throughput 10% lower. */
function nights(stepAt: number): Record<string, number>[] {
  const wobble = [0.4, -1.1, 0.9, -0.3, 1.4, -0.8, 0.2, -1.5, 0.7, 1.1, -0.5, 0.1];
  return wobble.map((w, i) => {
    const slow = i + 1 >= stepAt ? 1.1 : 1;
    return { itl_p50_ms: 6 * slow * (1 + w / 100), output_tokens_per_s: (500 / slow) * (1 - w / 100), ttft_p99_ms: 90 * (1 + w / 50) };
  });
}

const metrics = ['itl_p50', 'output_tok_s', 'ttft_p99'].map((n) => metricOf(n)!);

test('decode 10% slower from night 8: ITL up and throughput down are both regressions starting at night 8; ttft is flat', () => {
  const trend = buildTrend('main', points(nights(8)), metrics);
  const [itl, tokens, ttft] = trend.figures;
  assert.deepEqual(
    itl!.changes.map((c) => [c.index + 1, c.kind, c.run.runId]),
    [[8, 'regression', 'run08']],
  );
  assert.deepEqual(
    tokens!.changes.map((c) => [c.index + 1, c.kind]),
    [[8, 'regression']],
  );
  assert.equal(ttft!.changes.length, 0);
  assert.deepEqual(
    trend.regressions.map((f) => f.metric.name),
    ['itl_p50', 'output_tok_s'],
  );
});

test('the same step read the other way (faster decode) is an improvement, and --fail-on has nothing to act on', () => {
  const faster = nights(8).map((f, i) => (i >= 7 ? { ...f, itl_p50_ms: f.itl_p50_ms! / 1.21, output_tokens_per_s: f.output_tokens_per_s! * 1.21 } : f));
  const trend = buildTrend('main', points(faster), metrics);
  assert.deepEqual(
    trend.figures[0]!.changes.map((c) => c.kind),
    ['improvement'],
  );
  assert.equal(trend.regressions.length, 0);
});

test('a regression that began before the newest runs (--recent 3) no longer fails the night', () => {
  const trend = buildTrend('main', points(nights(8)), metrics, { recentRuns: 3 });
  assert.equal(trend.regressions.length, 0);
  assert.equal(trend.figures[0]!.changes.length, 1, 'still shown as a change point');
});

test('a run without a figure is skipped by the search and the change point maps back to its run', () => {
  const figures = nights(7).map((f, i) => (i === 2 ? { ttft_p99_ms: f.ttft_p99_ms! } : f));
  const itl = buildTrend('main', points(figures), metrics).figures[0]!;
  assert.equal(itl.values[2], null);
  assert.deepEqual(
    itl.changes.map((c) => c.index + 1),
    [7],
  );
});

test('a sparkline runs from ▁ (lowest) to █ (highest), a blank for a missing value, ▄ for a flat series', () => {
  assert.equal(sparkline([1, 2, 3, 4, 5, 6, 7, 8]), '▁▂▃▄▅▆▇█');
  assert.equal(sparkline([1, null, 8]), '▁ █');
  assert.equal(sparkline([3, 3, 3]), '▄▄▄');
});

test('the table names the phase and span, a line per figure with its change points, and the verdict', () => {
  const text = formatTrend(buildTrend('main', points(nights(8)), metrics), 'h.db');
  assert.match(text, /^roundload trend · h\.db · phase main · 12 runs, 2026-12-01 → 2026-12-12 · quiet on nights drifting up to AR\(1\) ρ 0\.6; newest nights judged at p ≤ 0\.02$/m);
  assert.match(text, /^itl_p50 ms +6\.0\d +6\.\d\d +[▁▂▃]{7}[▆▇█]{5} +run 8 \(2026-12-08, run08\): \+\d+\.\d% regression, (?:p=0\.0\d\d|p<0\.001)$/m);
  assert.match(text, /^ttft_p99 ms .* —$/m);
  assert.match(text, /^REGRESSION in the newest 5 runs:\n {2}itl_p50: run 8/m);
  assert.ok(changePoints([1, 1, 1]).length === 0);
});
