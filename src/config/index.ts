// The config concern's public face: load and validate workload files, apply command-line overrides,
// parse durations, and redact a workload for run.json. Code outside src/config imports only this file.
export { loadWorkload, parseWorkload } from './load.js';
export type { Overrides, FlagOverride } from './overrides.js';
export { parseDurationMs } from '../util/index.js';
export { redactWorkload, workloadSecrets, isPublicHeader, maskExtraBody, REDACTED } from './redact.js';
export { workloadToYaml } from './to-yaml.js';
export { workloadSchema } from './schema.js';
export { engineSchema, type EngineSettings } from './engine-settings.js';
export type { Workload, ToolSpec } from './schema.js';
export { thresholdsSchema, tracingSchema } from './schema.js';
export { hopFaultSchema, type HopFault } from './schema.js';
export { type EngineFault, type EngineFaultKind } from './engine-faults.js';
export type { HangPolicy } from './schema.js';
export { loadEngineSettings, loadEngineFaults } from './engine-file.js';
export { DEFAULT_MONITOR_GAUGES, DEFAULT_MONITOR_COUNTERS, type MonitorSettings } from './monitor.js';
export { configFileKind } from './file-kind.js';
export { loadAbFile, parseAbFile, type AbPlan, type AbArm } from './ab-file.js';
export { arrivalSchema, type ReplaySettings, type ArrivalSettings } from './schema.js';
export { requestRecordIssue, kindLineIssue, type RecordIssue } from './record-rules.js';
export { resolveOtlp, type OtlpExport } from './otlp.js';
