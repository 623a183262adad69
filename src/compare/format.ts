// A comparison for people: the terminal table (per phase: A, B, delta, interval, verdict) and a
// self-contained compare.html with the same tables, a forest plot of the deltas and the arms' time series.
import { basename } from 'node:path';
import { chartGrid, chartScripts, chartStyles, cspMeta, esc, loadChartAssets, type ChartAssets, type ChartSpec, type ForestSpec } from '../report/index.js';
import { comparisonCharts, type ArmPair, type PhaseCharts } from './charts.js';
import type { ArmArrivals, Comparison, FigureRow, PhaseComparison } from './compare.js';
import { sequentialCharts, sequentialHtml, type SequentialRun } from './sequential-output.js';

function num(v: number | null): string {
  if (v === null) return '-';
  const abs = Math.abs(v);
  const digits = abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 10 ? 2 : 3;
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function signed(v: number | null, unit: string): string {
  if (v === null) return '-';
  const digits = unit === ' pt' ? 2 : 1;
  return `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(digits)}${unit}`;
}

function unitOf(row: FigureRow): string {
  return row.kind === 'relative' ? '%' : ' pt';
}

/** The row cells: figure, A, B, delta, interval, verdict. */
export function rowCells(row: FigureRow): string[] {
  const unit = unitOf(row);
  const interval = row.low === null || row.high === null ? '-' : `${signed(row.low, unit)} … ${signed(row.high, unit)}`;
  return [row.label, num(row.a), num(row.b), signed(row.delta, unit), interval, row.verdict];
}

function table(rows: string[][], right: boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `A: smoke (run-dir)`; an arm already named by its role (`A:smoke`, two runs of one workload) once only. */
function armLabel(arm: Comparison['a'], role: 'A' | 'B'): string {
  const runs = arm.runs.length === 1 ? basename(arm.runs[0]!) : `${arm.runs.length} runs`;
  return `${arm.name.startsWith(`${role}:`) ? '' : `${role}: `}${arm.name} (${runs})`;
}

function phaseHead(p: PhaseComparison): string {
  return `phase ${p.phase} · steady windows A ${p.windowsA}, B ${p.windowsB} (${p.windowS} s each) · block ${p.block} · lag-1 autocorrelation ${p.autocorrelation.toFixed(2)}`;
}

function countsLine(p: PhaseComparison): string {
  const c = (x: PhaseComparison['countsA']) => `${x.requests.toLocaleString('en-US')} requests, ${x.errors} errors, ${x.hangs} hangs`;
  return `whole phase   A ${c(p.countsA)} · B ${c(p.countsB)}`;
}

/** An open-loop phase's arrivals, arm by arm: what came due, what started, how late. */
function arrivalsLine(p: PhaseComparison): string | null {
  if (p.arrivals === undefined) return null;
  const side = (x: ArmArrivals | null): string => {
    if (x === null) return 'no arrivals';
    const waiting = x.not_started === null ? ', waiting at the end not reported' : x.not_started > 0 ? `, ${x.not_started} never started` : '';
    const lag = x.start_lag_p99_ms.map((v) => num(v)).join(', ');
    return `${x.scheduled} due, ${x.started} started (${x.delayed} delayed${waiting}), start lag p99 ${lag} ms${x.lagging_runs > 0 ? ` LAGGING${x.runs > 1 ? ` in ${x.lagging_runs} of ${x.runs} runs` : ''}` : ''}`;
  };
  return `arrivals      A ${side(p.arrivals.a)} · B ${side(p.arrivals.b)}`;
}

/** The terminal comparison. */
export function formatComparison(c: Comparison): string {
  const out: string[] = [];
  out.push(`roundload compare · ${armLabel(c.a, 'A')} vs ${armLabel(c.b, 'B')} · workload ${c.a.hash}`);
  out.push(`deltas are B vs A; ${Math.round(c.level * 100)}% intervals from ${c.resamples} block-bootstrap resamples of time windows (seed ${c.seed})`);
  if (c.forced) out.push(`--force: the workloads differ (${c.differences.join('; ')}); read the deltas with that in mind`);
  for (const p of c.phases) {
    out.push('', phaseHead(p));
    const head = ['figure', 'A', 'B', 'delta', '95% interval', 'verdict'];
    out.push(table([head, ...p.rows.map(rowCells)], [false, true, true, true, true, false]));
    out.push(countsLine(p));
    const arrivals = arrivalsLine(p);
    if (arrivals !== null) out.push(arrivals);
    for (const note of p.notes) out.push(`note          ${note}`);
  }
  if (c.phases.length === 0) out.push('', 'no phase is present in both arms: nothing to compare');
  if (c.unmatched.length > 0) out.push('', `phases in only one arm (not compared): ${c.unmatched.join(', ')}`);
  return out.join('\n');
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:80rem}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.25rem .7rem;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
th:first-child,td:first-child,td.v{text-align:left}th{background:#f4f4f6}
td.better{color:#0a7d32;font-weight:600}td.worse{color:#b3261e;font-weight:600}td.insufficient{color:#8a6d00}
.meta{color:#555}code{background:#f4f4f6;padding:0 .25rem}
.phase-charts{margin:.8rem 0 1.2rem}.phase-charts .charts{margin-top:14px}
.u-legend th{text-align:left}`;

export interface ComparisonHtmlOptions {
  /** The arms of each comparison (same order): their runs' time series are drawn too. */
  arms?: readonly (ArmPair | undefined)[];
  /** The chart library; default uPlot from node_modules. */
  assets?: ChartAssets;
  /** A sequential A/B's calls: their table and the intervals pair by pair, above the comparisons. */
  sequential?: SequentialRun | null;
}

/** compare.html: self-contained (uPlot and the data inlined, a CSP allowing no request), one section per comparison. */
export function comparisonHtml(list: readonly Comparison[], options: ComparisonHtmlOptions = {}): string {
  const assets = options.assets ?? loadChartAssets();
  const title = list.map((c) => `${c.a.name} vs ${c.b.name}`).join(', ');
  const charts = list.map((c, i) => comparisonCharts(c, i, options.arms?.[i]));
  const sequential = options.sequential ?? null;
  const pairCharts = sequential === null ? [] : sequentialCharts(sequential);
  const head = sequential === null ? '' : `${sequentialHtml(sequential)}\n<div class="phase-charts">${chartGrid(pairCharts)}</div>\n`;
  const body = head + list.map((c, i) => section(c, charts[i]!)).join('\n');
  const all = charts.flat();
  const payload = { charts: [...pairCharts, ...all.flatMap((p): ChartSpec[] => p.series)], forests: all.flatMap((p): ForestSpec[] => p.forests) };
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
${cspMeta()}
<title>roundload compare: ${esc(title)}</title>
${chartStyles(assets)}
<style>${CSS}</style></head><body>
${body}
${chartScripts(payload, assets)}
</body></html>
`;
}

function section(c: Comparison, charts: readonly PhaseCharts[]): string {
  const parts: string[] = [];
  parts.push(`<h1>roundload compare: ${esc(armLabel(c.a, 'A'))} vs ${esc(armLabel(c.b, 'B'))}</h1>`);
  parts.push(
    `<p class="meta">Deltas are B vs A. ${Math.round(c.level * 100)}% intervals from ${c.resamples} block-bootstrap resamples of time windows (seed ${c.seed}); a verdict is <b>better</b> or <b>worse</b> only when the interval excludes zero. Workload <code>${esc(c.a.hash)}</code>.</p>`,
  );
  if (c.forced) parts.push(`<p class="meta"><b>--force:</b> the workloads differ: ${esc(c.differences.join('; '))}.</p>`);
  parts.push(`<p class="meta">A: ${c.a.runs.map((r) => `<code>${esc(r)}</code>`).join(', ')}<br>B: ${c.b.runs.map((r) => `<code>${esc(r)}</code>`).join(', ')}</p>`);
  c.phases.forEach((p, i) => {
    parts.push(`<h2>${esc(phaseHead(p))}</h2><table><tr><th>figure</th><th>A</th><th>B</th><th>delta</th><th>95% interval</th><th>verdict</th></tr>`);
    for (const row of p.rows) {
      const cells = rowCells(row);
      const cls = row.verdict === 'better' ? 'better' : row.verdict === 'worse' ? 'worse' : row.verdict === 'insufficient data' ? 'insufficient' : '';
      parts.push(
        `<tr>${cells
          .slice(0, 5)
          .map((x) => `<td>${esc(x)}</td>`)
          .join('')}<td class="v ${cls}">${esc(cells[5]!)}</td></tr>`,
      );
    }
    parts.push(`</table><p class="meta">${esc(countsLine(p))}</p>`);
    const arrivals = arrivalsLine(p);
    if (arrivals !== null) parts.push(`<p class="meta">${esc(arrivals)}</p>`);
    for (const note of p.notes) parts.push(`<p class="meta">note: ${esc(note)}</p>`);
    const ch = charts[i];
    if (ch !== undefined && ch.forests.length + ch.series.length > 0) parts.push(`<div class="phase-charts">${chartGrid([...ch.forests, ...ch.series])}</div>`);
  });
  if (c.unmatched.length > 0) parts.push(`<p class="meta">Phases in only one arm (not compared): ${esc(c.unmatched.join(', '))}</p>`);
  return parts.join('\n');
}
