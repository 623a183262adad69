// The config concern's public face: load and validate workload files, apply command-line overrides,
// parse durations, and redact a workload for run.json. Code outside src/config imports only this file.
export { loadWorkload, parseWorkload } from './load.js';
export type { Overrides } from './overrides.js';
export { parseDurationMs } from './duration.js';
export { redactWorkload, workloadSecrets } from './redact.js';
export {
  workloadSchema,
  targetSchema,
  agentsSchema,
  conversationSchema,
  watchdogSchema,
} from './schema.js';
export { engineSchema, type EngineSettings } from './engine-settings.js';
export type { Workload, WorkloadInput, ToolSpec } from './schema.js';
export { thresholdsSchema, resultsSchema, clientMetricsSchema, type Thresholds } from './schema.js';
export { hopFaultSchema, viaSchema, type HopFault, type Via } from './schema.js';
export { engineFaultSchema, PD_FAULT_KINDS, type EngineFault, type EngineFaultKind } from './engine-faults.js';
export type { HangPolicy } from './schema.js';
export { loadEngineSettings, loadEngineFaults } from './engine-file.js';
export { monitorSchema, gaugeFaultSchema, DEFAULT_MONITOR_GAUGES, DEFAULT_MONITOR_COUNTERS, type MonitorSettings, type ProbeSpec, type GaugeFault } from './monitor.js';
export { loadAbFile, parseAbFile, abFileSchema, abArmSchema, type AbPlan, type AbArm, type AbFile } from './ab-file.js';
export { parseYaml, validateYaml, workloadFromYaml, type ParsedYaml } from './load.js';
export { sweepSchema, replaySchema, arrivalSchema, stageSchema, type ReplaySettings, type ArrivalSettings, type StageSettings } from './schema.js';
