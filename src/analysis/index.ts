// Pure analysis of a run's records: the summary.
export {
  SummaryBuilder,
  SATURATED_LOOP_DELAY_MS,
  SATURATED_UTILIZATION,
  WRITER_LAG_FLAG_MS,
  isSaturatedSample,
  type Summary,
  type PhaseSummary,
  type RoundSummary,
  type TracingSummary,
} from './summary.js';
export { WindowBuilder, autoWindowS, plannedLengthS, windowSettingOf, AUTO_MIN_WINDOWS, type WindowFigures } from './windows.js';
export { evaluateThresholds, DEFAULT_THRESHOLDS, type ThresholdLimits, type ThresholdInput } from './thresholds.js';
export {
  diagnose,
  answererOf,
  bitsText,
  fisherGreater,
  wilson,
  describePathTimeout,
  findPathTimeout,
  type DiagnosisInput,
  type HangSpan,
  type ErrorSpan,
  type CanaryPoint,
  type ScrapePoint,
  type ClientWindow,
  type FlowTrack,
  type RequestActivity,
  type EngineTraceEnd,
} from './diagnosis/index.js';
export { STARTUP_OPENING } from './opening.js';
export { type PhaseArrivals } from './arrivals.js';
export { type Capacity, type CapacityStage, type LatencyEstimate } from './capacity.js';
export { ReplayComparison, type RecordedRequest, type ReplaySummary } from './replay.js';
