// What every page with charts shares (report.html, compare.html, the live dashboard): the escaping rules,
// the Content-Security-Policy, the chart styles, a chart's figure element, and the tail that inlines the
// data, uPlot and the chart script. A page built from these makes no request (the dashboard: only to its
// own server, for its event stream).
import type { ChartAssets } from './assets.js';
import type { ChartSpec, ForestSpec } from './charts.js';
import { CLIENT_SCRIPT } from './client-script.js';

/** Escapes text for HTML element content and attribute values. */
export function esc(value: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- escapes whatever a cell holds, as String() prints it
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside `<script type="application/json">`: no `</script`, no `<!--` (every `<` escaped). */
/** A badge: a word in a tone (`good`, `warn`, `bad`; `muted` when none). */
export function badge(text: string, tone: string | undefined): string {
  return `<span class="badge ${tone ?? 'muted'}">${esc(text)}</span>`;
}

/** A table whose cells are HTML already (headers are escaped here); `numeric` columns align right. */
export function table(head: string[], rows: string[][], numeric: boolean[] = []): string {
  const th = head.map((h, i) => `<th${numeric[i] ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric[i] ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`).join('\n');
  return `<div class="table-wrap"><table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>`;
}

export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A script's text safe inside `<script>`: `</script` and `<!--` cannot close or confuse the element. */
export function scriptSafe(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** No request at all; `connect-src 'self'` (the dashboard's event stream) only when asked. */
export function cspMeta(options: { connectSelf?: boolean } = {}): string {
  const connect = options.connectSelf === true ? " connect-src 'self';" : '';
  return `<meta http-equiv="Content-Security-Policy" content="default-src 'none';${connect} script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">`;
}

/** uPlot's stylesheet and the chart styles, for the page's `<head>`. */
export function chartStyles(assets: ChartAssets): string {
  return `<style>${assets.css.replace(/<\//g, '<\\/')}</style>\n<style>${CHART_CSS}</style>`;
}

export const CHART_CSS = `
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:14px}
@media (max-width:700px){.charts{grid-template-columns:1fr}}
.chart{margin:0;background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:10px 12px;min-width:0}
.charts .chart.forest,.charts .chart.wide{grid-column:1/-1}
.chart figcaption{font-weight:600;margin-bottom:4px}
.chart .plot{width:100%;min-height:60px;overflow:hidden}
.chart.empty .plot{display:flex;align-items:center;justify-content:center;color:#b91c1c;min-height:120px}
.chart-note{color:#64748b;font-size:12px;margin:4px 0 0;display:flex;gap:12px;flex-wrap:wrap}
.marker-key{color:#b91c1c}
.uplot{font-family:inherit}.u-legend{font-size:12px}
.u-legend.u-inline tr{display:inline-flex;align-items:center;max-width:100%;margin-right:12px}
.u-legend.u-inline th{display:inline-flex;align-items:center;min-width:0;white-space:normal;text-align:left}
.u-legend.u-inline th::after{flex:none}.u-legend.u-inline .u-marker{flex:none}
.u-legend .u-label{min-width:0;overflow-wrap:anywhere}
`;

/** A chart's figure: caption, the plot the script draws into, and its note. */
export function chartFigure(c: ChartSpec | ForestSpec): string {
  const noun = 'markers' in c ? (c.marker_noun ?? 'hang marker') : '';
  const markers = 'markers' in c && c.markers.length > 0 ? `<span class="marker-key">┆ ${c.markers.length} ${noun}${c.markers.length === 1 ? '' : 's'}</span>` : '';
  const note = c.note === null ? '' : `<span>${esc(c.note)}</span>`;
  return `<figure class="chart${'rows' in c ? ' forest' : c.wide === true ? ' wide' : ''}" data-chart="${esc(c.id)}"><figcaption>${esc(c.title)}</figcaption><div class="plot"></div><p class="chart-note">${markers}${note}</p></figure>`;
}

/** Charts in a grid. */
export function chartGrid(list: readonly (ChartSpec | ForestSpec)[]): string {
  return `<div class="charts">${list.map(chartFigure).join('\n')}</div>`;
}

/** The end of `<body>`: the data (`charts`, `forests` and anything else the page reads), uPlot, the chart
 * script, then the page's own script if any. */
export function chartScripts(payload: { charts: readonly ChartSpec[]; forests?: readonly ForestSpec[] } & Record<string, unknown>, assets: ChartAssets, pageScript?: string): string {
  const own = pageScript === undefined ? '' : `\n<script>${scriptSafe(pageScript)}</script>`;
  return `<script type="application/json" id="report-data">${jsonForScript(payload)}</script>
<script>${scriptSafe(assets.js)}</script>
<script>${scriptSafe(CLIENT_SCRIPT)}</script>${own}`;
}
