// Latency histograms and their mergeable file form.
export { LatencyHistogram, type Percentiles } from './histogram.js';
export { HISTOGRAMS_FILE_VERSION, HistogramSet, LATENCY_METRICS, ALL_ROUNDS, type LatencyMetric, type HistogramsFile } from './set.js';
