// trend.html: self-contained (the chart library inlined, a CSP that allows no request), a chart per figure
// with its values, the levels between change points and a marker where each began, and the verdict.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTrend, metricOf, trendHtml } from '../../src/trend/index.js';
import type { PhasePoint } from '../../src/history/index.js';

const ASSETS = { js: 'window.uPlot = function () {};', css: '.uplot{}' };

function points(values: number[]): PhasePoint[] {
  return values.map((v, i) => ({
    run: { runId: `r${i + 1}`, name: 'nightly', startedAt: `2026-12-${String(i + 1).padStart(2, '0')}T02:00:00Z`, dir: null, labels: { night: String(i + 1) }, cells: {} },
    figures: { itl_p50_ms: v },
  }));
}

test('trend.html carries a chart per figure: values, the level of each stretch, a change-point marker at night 8, and the verdict', () => {
  const values = [6.0, 6.1, 5.9, 6.0, 6.05, 5.95, 6.0, 6.6, 6.65, 6.55, 6.6, 6.62];
  const html = trendHtml([{ trend: buildTrend('main', points(values), [metricOf('itl_p50')!]), source: 'nightly.db' }], ASSETS);
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
  assert.ok(html.includes(ASSETS.js), 'the chart library inlined');
  const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!) as {
    charts: { id: string; x: number[]; series: { label: string; values: number[] }[]; markers: { x: number }[]; marker_noun: string }[];
  };
  const [chart] = data.charts;
  assert.equal(chart!.id, 'trend-itl_p50');
  assert.deepEqual(chart!.x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(chart!.series[0]!.values, values);
  const level = chart!.series[1]!.values;
  assert.ok(level.slice(0, 7).every((v) => Math.abs(v - 6) < 0.01) && level.slice(7).every((v) => Math.abs(v - 6.604) < 0.01), JSON.stringify(level));
  assert.deepEqual(
    chart!.markers.map((m) => m.x),
    [8],
  );
  assert.equal(chart!.marker_noun, 'change point');
  assert.match(html, /REGRESSION in the newest 5 runs:/);
  assert.match(html, /<td>8<\/td><td>2026-12-08T02:00:00Z<\/td><td><code>r8<\/code><\/td><td>night=8<\/td>/);
});
