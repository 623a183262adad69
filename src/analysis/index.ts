// Pure analysis of a run's records: the summary.
export { SummaryBuilder, SATURATED_LOOP_DELAY_MS, SATURATED_UTILIZATION, WRITER_LAG_FLAG_MS, isSaturatedSample, type Summary, type PhaseSummary, type RoundSummary, type ThresholdResult } from './summary.js';
export { WindowBuilder, autoWindowS, plannedLengthS, windowSettingOf, AUTO_MIN_WINDOWS, type WindowFigures, type WindowChoice, type WindowSetting } from './windows.js';
export { evaluateThresholds, DEFAULT_THRESHOLDS, type ThresholdLimits, type ThresholdInput, type ThresholdVerdict } from './thresholds.js';
export { diagnose, DiagnosisCollector, answererOf, fisherGreater, wilson, type DiagnosisInput, type HangSpan, type ErrorSpan, type CanaryPoint, type ScrapePoint, type ClientWindow, type FlowTrack, type RequestActivity } from './diagnosis/index.js';
export { OpeningStats, STARTUP_OPENING, type OpeningFigures } from './opening.js';
export { ArrivalStats, lagLimitMs, MIN_LAG_LIMIT_MS, type PhaseArrivals, type RunArrivals, type ArrivalWindow } from './arrivals.js';
export { ReplayComparison, type ReplaySummary, type ReplayRoundComparison, type ReplaySide, type RecordedRequest } from './replay.js';
