// What people read: the terminal summary, the live progress line (and later the HTML report and JUnit).
export { formatSummary } from './table.js';
export { progressDisplay, DEFAULT_PROGRESS_MS, type ProgressStream } from './progress.js';
export type { ProgressPlan } from './progress-state.js';
export { colorWanted } from './progress-line.js';
export { runVerdict, type RunVerdict } from './banner.js';
export { writeReports } from './write.js';
export { collectReportData, ReportCollector, type ReportData } from './data.js';
export { renderReportHtml } from './html.js';
export { esc, jsonForScript, scriptSafe, cspMeta, chartStyles, chartGrid, chartScripts } from './page.js';
export { renderJunit, junitCases, xmlEscape } from './junit.js';
export { loadChartAssets, type ChartAssets } from './assets.js';
export {
  chartPoints,
  envelope,
  GaugeSeriesBuilder,
  latencyCharts,
  timeCharts,
  clientCharts,
  canaryCharts,
  verdictTitle,
  verdictRank,
  labelKey,
  commonLabels,
  roundLatencySpec,
  throughputSpec,
  arrivalsSpec,
  type ChartSpec,
  type ChartSeries,
  type ForestSpec,
} from './charts.js';
