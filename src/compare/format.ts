// A comparison for people: the terminal table (per phase: A, B, delta, interval, the call) and a
// self-contained compare.html with the same tables and calls, a forest plot of the deltas and the arms' time
// series (within-run description only).
import { basename } from 'node:path';
import { chartGrid, chartScripts, chartStyles, cspMeta, esc, loadChartAssets, type ChartAssets, type ChartSpec, type ForestSpec } from '../report/index.js';
import { comparisonCharts, type ArmPair, type PhaseCharts } from './charts.js';
import type { ArmArrivals, Comparison, FigureRow, PhaseComparison } from './compare.js';
import { abHtml, pairCharts, type AbSummary } from './ab-output.js';
import { fixedDigits, printable } from '../util/index.js';

/** A figure with fewer decimals the larger it is: none from 1,000, 1 from 100, 2 from 10, else 3 (`1,234`, `123.4`, `0.123`). */
function num(v: number | null): string {
  if (v === null) return '-';
  const abs = Math.abs(v);
  return fixedDigits(v, abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 10 ? 2 : 3);
}

function signed(v: number | null, unit: string): string {
  if (v === null) return '-';
  const digits = unit === ' pt' ? 2 : 1;
  return `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(digits)}${unit}`;
}

function unitOf(row: FigureRow): string {
  return row.kind === 'relative' ? '%' : ' pt';
}

/** The verdict cell: the call, and for one not made how much more data would likely make it. */
function verdictCell(row: FigureRow): string {
  const last = row.calls.at(-1);
  if ((row.verdict === 'inconclusive' || row.verdict === 'undecided' || row.verdict === 'insufficient data') && last?.more_pairs !== null && last?.more_pairs !== undefined) {
    return `${row.verdict} (~${last.more_pairs} more)`;
  }
  return row.verdict;
}

/** The row cells: figure, A, B (means of the runs' values), delta, interval, verdict. */
export function rowCells(row: FigureRow): string[] {
  const unit = unitOf(row);
  const interval = row.low === null || row.high === null ? '-' : `${signed(row.low, unit)} … ${signed(row.high, unit)}`;
  return [row.label, num(row.a), num(row.b), signed(row.delta, unit), interval, verdictCell(row)];
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
  return `phase ${p.phase} · within runs only (not a verdict): steady windows A ${p.windowsA}, B ${p.windowsB} (${p.windowS} s each)`;
}

/** How the deltas were taken: the runs, paired or Welch, the margins and the level. */
export function methodLine(c: Comparison): string {
  const runs = `${c.a.runs.length} run${c.a.runs.length === 1 ? '' : 's'} of A, ${c.b.runs.length} of B`;
  const how =
    c.method === 'paired'
      ? `paired: ${c.pairs.length} pair${c.pairs.length === 1 ? '' : 's'} of runs that alternated, the mean of each pair's difference`
      : "Welch's across runs (they did not alternate A B, B A …)";
  const looks = c.rule.looks === 'sequential' ? `intervals valid at every look of up to ${c.rule.max_pairs} pairs` : `95% intervals (90% for equivalence), t at the runs' degrees of freedom`;
  const alpha = c.rule.alpha < 0.05 ? `, alpha ${c.rule.alpha.toFixed(4)} (0.05 split over the arms)` : '';
  return `deltas are B vs A with runs as the unit (each run one value per figure): ${runs}; ${how}; ${looks}${alpha}; calls at ±${c.rule.min_effect_pct}% (±${c.rule.min_effect_points} point${c.rule.min_effect_points === 1 ? '' : 's'} for rates)`;
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

/** The interval column's head: a fixed look's level, or the stopping rule's (valid at every look). */
function intervalHead(c: Comparison): string {
  return c.rule.looks === 'fixed' ? '95% interval' : 'interval';
}

/** The terminal comparison. */
export function formatComparison(comparison: Comparison): string {
  // Run names, folders, labels and workload fields came from run folders: one line each, no controls.
  const c = printable(comparison);
  const out: string[] = [];
  out.push(`roundload compare · ${armLabel(c.a, 'A')} vs ${armLabel(c.b, 'B')} · workload ${c.a.hash}`);
  out.push(methodLine(c));
  if (c.forced) out.push(`--force: the workloads differ (${c.differences.join('; ')}); read the deltas with that in mind`);
  for (const p of c.phases) {
    out.push('', phaseHead(p));
    const head = ['figure', 'A', 'B', 'delta', intervalHead(c), 'verdict'];
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
th:first-child,td:first-child,td.v{text-align:left}td.t{text-align:left;white-space:normal}th{background:#f4f4f6}
td.better{color:#0a7d32;font-weight:600}td.worse{color:#b3261e;font-weight:600}td.equivalent{color:#334155;font-weight:600}td.insufficient{color:#8a6d00}
.meta{color:#555}code{background:#f4f4f6;padding:0 .25rem}
.phase-charts{margin:.8rem 0 1.2rem}.phase-charts .charts{margin-top:14px}
.u-legend th{text-align:left}`;

export interface ComparisonHtmlOptions {
  /** The arms of each comparison (same order): their runs' time series are drawn too. */
  arms?: readonly (ArmPair | undefined)[];
  /** The chart library; default uPlot from node_modules. */
  assets?: ChartAssets;
  /** An A/B's rule and end: its headline calls and their intervals pair by pair, above the comparisons. */
  ab?: AbSummary | null;
}

/** compare.html: self-contained (uPlot and the data inlined, a CSP allowing no request), one section per comparison. */
export function comparisonHtml(list: readonly Comparison[], options: ComparisonHtmlOptions = {}): string {
  const assets = options.assets ?? loadChartAssets();
  const title = list.map((c) => `${c.a.name} vs ${c.b.name}`).join(', ');
  const charts = list.map((c, i) => comparisonCharts(c, i, options.arms?.[i]));
  const ab = options.ab ?? null;
  const byPair = ab === null ? [] : pairCharts(list, ab);
  const head = ab === null ? '' : `${abHtml(list, ab)}\n<div class="phase-charts">${chartGrid(byPair)}</div>\n`;
  const body = head + list.map((c, i) => section(c, charts[i]!)).join('\n');
  const all = charts.flat();
  const payload = { charts: [...byPair, ...all.flatMap((p): ChartSpec[] => p.series)], forests: all.flatMap((p): ForestSpec[] => p.forests) };
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
    `<p class="meta">${esc(methodLine(c))}. <b>better</b> / <b>worse</b>: the estimate passes the margin and its interval clears half of it; <b>equivalent</b>: the interval lies within the margin; otherwise <b>inconclusive</b> with about how many more runs would settle it. Workload <code>${esc(c.a.hash)}</code>.</p>`,
  );
  if (c.forced) parts.push(`<p class="meta"><b>--force:</b> the workloads differ: ${esc(c.differences.join('; '))}.</p>`);
  parts.push(`<p class="meta">A: ${c.a.runs.map((r) => `<code>${esc(r)}</code>`).join(', ')}<br>B: ${c.b.runs.map((r) => `<code>${esc(r)}</code>`).join(', ')}</p>`);
  c.phases.forEach((p, i) => {
    parts.push(`<h2>${esc(phaseHead(p))}</h2><table><tr><th>figure</th><th>A</th><th>B</th><th>delta</th><th>${esc(intervalHead(c))}</th><th>verdict</th></tr>`);
    for (const row of p.rows) {
      const cells = rowCells(row);
      const cls = row.verdict === 'better' || row.verdict === 'worse' || row.verdict === 'equivalent' ? row.verdict : 'insufficient';
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
