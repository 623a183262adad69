// The monitor: Prometheus scrapes of the deployment's servers beside the agents, burst sampling on hangs,
// probes, and the verdict on every gauge (the verdicts: types/verdicts.ts).
export { ExpositionParser, parseExposition, parseFloatToken, type Exposition } from './exposition.js';
export { SeriesSelector, isCounter, isHandoffQueue, keyGaugeValues } from './select.js';
export { baseName, KEY_GAUGES } from '../types/index.js';
export { GaugeStore, ClientActivity, flowCounter, scrapeTargets } from './series.js';
export { judgeGauges, gaugeVerdicts } from './verdict.js';
export { startCanaries, CANARY_MAX_TOKENS, type CanaryHandle } from './canary.js';
export { Scraper, metricsUrl, type FetchText } from './scraper.js';
export { LatestGauges } from './snapshot.js';
export { ProbeRunner, runCommand } from './probes.js';
export { MonitorService, monitorTargets, fetchMetrics } from './service.js';
