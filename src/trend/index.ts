// Trends over the history: a figure's values run by run, change points found by E-divisive means over the
// history and by the newest-nights test on the recent runs, regressions told from improvements by each figure's
// direction, the table, trend.html and the --json contract; a CSV of nightly numbers read as a history.
// Import only this file.
export { buildTrend, buildTrendOfValues, type Trend, type TrendOptions } from './trend.js';
export { TREND_METRICS, DEFAULT_METRICS, metricOf, type TrendMetric } from './metrics.js';
export { formatTrend, sparkline } from './format.js';
export { trendHtml } from './html.js';
export { trendJson } from './json.js';
export { parseTrendCsv } from './csv.js';
export { changePoints } from './change-points.js';
export { newestStep } from './newest-step.js';
