// What people read: the terminal summary, the live progress line (and later the HTML report and JUnit).
export { formatSummary, type FormatOptions } from './table.js';
export { progressDisplay, DEFAULT_PROGRESS_MS, type ProgressDisplay, type ProgressOptions, type ProgressStream, type Ticker } from './progress.js';
export type { ProgressPlan, ProgressFigures, Notice } from './progress-state.js';
export { colorWanted } from './progress-line.js';
export { runVerdict, type RunVerdict } from './banner.js';
export { writeReports, type WrittenReports } from './write.js';
export { collectReportData, type ReportData, type HangRow, type EventRow, type CanaryLegSummary, MAX_HANG_ROWS } from './data.js';
export { renderReportHtml } from './html.js';
export { esc, jsonForScript, scriptSafe, cspMeta, chartStyles, chartGrid, chartScripts, CHART_CSS } from './page.js';
export { renderJunit, junitCases, xmlEscape } from './junit.js';
export { loadChartAssets, type ChartAssets } from './assets.js';
export { chartPoints, envelope, GaugeSeriesBuilder, latencyCharts, timeCharts, clientCharts, canaryCharts, verdictTitle, isCounterName, MAX_CHART_POINTS, type ChartSpec, type ChartSeries, type HangMark, type PartialWindow, type ForestSpec, type ForestRow } from './charts.js';
