// The monitor: Prometheus scrapes of the deployment's servers beside the agents, burst sampling on hangs,
// probes, and the verdict on every gauge (idle, rotating, pinned, stale, insufficient).
export { ExpositionParser, parseExposition, parseFloatToken, type Exposition, type ExpositionFamily, type ExpositionSample, type ExpositionIssue, type MetricType, type ParserOptions } from './exposition.js';
export { SeriesSelector, baseName, isCounter, isRatioGauge, isFailureCounter, flowRank, keyGaugeValues, FLOW_COUNTERS, TOKEN_COUNTERS, REQUEST_COUNTERS, KEY_GAUGES } from './select.js';
export { GaugeStore, ClientActivity, flowCounter, labelKey, scrapeTargets, type GaugeSeries, type Stretch, type StretchEnd, type CounterTrack, type TargetTrack } from './series.js';
export { judgeGauges, judgeSeries, gaugeVerdicts, type VerdictOptions } from './verdict.js';
export { startCanaries, type CanaryOptions, type CanaryLegSpec, type CanaryHandle } from './canary.js';
export { Scraper, metricsUrl, scrapeError, type ScrapeTarget, type FetchText, type ScraperOptions } from './scraper.js';
export { LatestGauges } from './snapshot.js';
export { ProbeRunner, runCommand, type ProbeCommand, type ProbeOutcome, type ProbeRunnerOptions, type ProbeWhen } from './probes.js';
export { MonitorService, monitorTargets, fetchMetrics, type MonitorContext, type MonitorServiceOptions } from './service.js';
