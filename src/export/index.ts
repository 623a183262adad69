// roundload's own metrics for Prometheus: scraped during a run (`--metrics-port`), pushed at its end by
// remote write (`--remote-write`), with the run's verdicts as gauges (docs/metrics.md).
export { startMetricsExport, type MetricsExport, type MetricsExportSettings } from './exporter.js';
