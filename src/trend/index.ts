// Trends over the history: a figure's values run by run, change points found by E-divisive means with a
// permutation test, regressions told from improvements by each figure's direction, the table and trend.html.
// Import only this file.
export { buildTrend, type TrendOptions } from './trend.js';
export { TREND_METRICS, DEFAULT_METRICS, metricOf, type TrendMetric } from './metrics.js';
export { formatTrend, sparkline } from './format.js';
export { trendHtml } from './html.js';
export { changePoints } from './change-points.js';
