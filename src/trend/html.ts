// trend.html: one self-contained page (uPlot and the data inlined, as report.html), a chart per figure with
// its values run by run, the level of each stretch between change points, and a dashed line where each
// change point began; then the runs it covers.
import { chartGrid, chartScripts, chartStyles, cspMeta, esc, loadChartAssets, type ChartAssets, type ChartSpec } from '../report/index.js';
import { changeText, driftText, suspectedText, verdictLines } from './format.js';
import type { FigureTrend, Trend } from './trend.js';

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1e293b;max-width:1400px}
table{border-collapse:collapse;margin:.6rem 0}td,th{border-bottom:1px solid #e2e8f0;padding:.2rem .6rem;text-align:left}
.meta{color:#555}.regression{color:#b3261e;font-weight:600}.improvement{color:#0a7d32}code{background:#f4f4f6;padding:0 .25rem}`;

/** The mean of each stretch between change points, as a series beside the values. */
function levels(f: FigureTrend): (number | null)[] {
  const bounds = [0, ...f.changes.map((c) => c.index), f.values.length];
  const out: (number | null)[] = f.values.map(() => null);
  for (let b = 0; b + 1 < bounds.length; b += 1) {
    const stretch = f.values.slice(bounds[b], bounds[b + 1]).filter((v): v is number => v !== null);
    const level = stretch.length === 0 ? null : stretch.reduce((s, v) => s + v, 0) / stretch.length;
    for (let i = bounds[b]!; i < bounds[b + 1]!; i += 1) out[i] = level;
  }
  return out;
}

function chartOf(f: FigureTrend, runs: number, nameBy: readonly string[] | null, prefix: string): ChartSpec {
  const said = [...f.changes.map((c) => changeText(c, nameBy)), ...(f.suspected === null ? [] : [suspectedText(f.suspected, nameBy)])];
  return {
    id: `trend-${prefix}${f.metric.name}`,
    title: `${f.metric.name} (${f.metric.unit}, ${f.metric.worse === 'up' ? 'lower' : 'higher'} is better)`,
    x_kind: 'round',
    x_label: 'run',
    y_label: f.metric.unit,
    y2_label: null,
    x: Array.from({ length: runs }, (_, i) => i + 1),
    series: [
      { label: f.metric.name, values: f.values, gaps: 'bridge', dots: true },
      { label: 'level', values: levels(f), gaps: 'bridge', color: '#94a3b8' },
    ],
    markers: f.changes.map((c) => ({ x: c.index + 1, label: changeText(c, nameBy) })),
    marker_noun: 'change point',
    note: said.length === 0 ? 'no change point' : said.join('; '),
  };
}

function runsTable(trend: Trend): string {
  const rows = trend.runs.map(
    (r, i) =>
      `<tr><td>${i + 1}</td><td>${esc(r.startedAt ?? '')}</td><td><code>${esc(r.runId)}</code></td><td>${esc(
        Object.entries(r.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(' '),
      )}</td><td>${esc(r.dir ?? '')}</td></tr>`,
  );
  return `<table><tr><th>run</th><th>started</th><th>run id</th><th>labels</th><th>results folder</th></tr>${rows.join('')}</table>`;
}

/** One trend's part of the page: its head, verdict, charts and runs. */
function section(trend: Trend, source: string, prefix: string): { html: string; charts: ChartSpec[] } {
  const charts = trend.figures.map((f) => chartOf(f, trend.runs.length, trend.nameBy, prefix));
  const verdict = verdictLines(trend)
    .map((l) => `<p class="${trend.regressions.length > 0 ? 'regression' : 'meta'}">${esc(l.trim())}</p>`)
    .join('');
  const html = `<h1>roundload trend · ${esc(source)} · phase ${esc(trend.phase)}</h1>
<p class="meta">${trend.runs.length} runs, oldest first. Change points by E-divisive means (Matteson &amp; James 2014), ${esc(driftText(trend.drift))}, and on the newest ${trend.recentRuns} runs by the newest-nights test (a step judged on its first two nights against the level before, p ≤ ${trend.alertPValue}); dashed lines mark where each began, the grey line is the level between them. A step on the newest night alone is shown as suspected until the next night confirms or drops it.</p>
${verdict}
${chartGrid(charts)}
<h2>Runs</h2>
${runsTable(trend)}`;
  return { html, charts };
}

/** The page: one section per trend (a workload each with `--all`). `assets`: the chart library (default
 * uPlot from node_modules). */
export function trendHtml(trends: readonly { trend: Trend; source: string }[], assets: ChartAssets = loadChartAssets()): string {
  const parts = trends.map((t, i) => section(t.trend, t.source, trends.length === 1 ? '' : `w${i}-`));
  const title = trends.length === 1 ? trends[0]!.source : `${trends.length} workloads`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
${cspMeta()}
<title>roundload trend: ${esc(title)}</title>
${chartStyles(assets)}
<style>${CSS}</style></head><body>
${parts.map((p) => p.html).join('\n')}
${chartScripts({ charts: parts.flatMap((p) => p.charts) }, assets)}
</body></html>
`;
}
