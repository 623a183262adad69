// What people read: the terminal summary, the live progress line (and later the HTML report and JUnit).
export { formatSummary } from './table.js';
export { progressLine, type ProgressLine } from './progress.js';
export { writeReports, type WrittenReports } from './write.js';
export { collectReportData, type ReportData, type HangRow, type EventRow, type CanaryLegSummary, MAX_HANG_ROWS } from './data.js';
export { renderReportHtml, esc, jsonForScript, scriptSafe } from './html.js';
export { renderJunit, junitCases, xmlEscape } from './junit.js';
export { loadChartAssets, type ChartAssets } from './assets.js';
export { chartPoints, envelope, GaugeSeriesBuilder, latencyCharts, timeCharts, clientCharts, canaryCharts, verdictTitle, isCounterName, MAX_CHART_POINTS, type ChartSpec, type ChartSeries, type HangMark } from './charts.js';
