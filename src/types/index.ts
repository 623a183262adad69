// Shared record and event types, and the catalogues records refer to (no runtime dependencies).
export { RESULTS_SCHEMA_VERSION, type PathKind, type RequestStatus, type HangPhase, type ConnectionInfo, type ItlStats, type ErrorInfo, type HangInfo, type RequestRecord } from './records.js';
export {
  EVENT_FILES,
  type EventFile,
  type RunEvent,
  type RunEventKind,
  type RunEventOf,
  type RunEndEvent,
  type PhaseEvent,
  type HangEvent,
  type PreflightEvent,
  type ClientSampleEvent,
  type PhaseLoad,
  type ConversationStartEvent,
  type ConversationEndEvent,
  type ArrivalsEndEvent,
  type ArrivalCounts,
} from './events.js';
export type {
  GaugeSample,
  ScrapeEvent,
  GaugeSnapshot,
  BurstEvent,
  ProbeEvent,
  GaugeVerdict,
  GaugeFlow,
  GaugeFloor,
  ScrapeTargetSummary,
  TargetDown,
  Diagnosis,
  DiagnosisEpisode,
  PathTimeout,
  CanaryComparison,
  CanaryLegFigures,
  BufferingFigures,
} from './monitor.js';
export type { CanaryLeg, CanaryEvent, HopFaultEvent } from './paths.js';
export { WARNING_CLASSES, WARNING_CLASS_NAMES, type WarningClass } from './warnings.js';
export { DIAGNOSIS_VERDICTS, DIAGNOSIS_CANDIDATES, GAUGE_VERDICTS, type DiagnosisVerdict, type DiagnosisCandidate, type GaugeVerdictKind } from './verdicts.js';
export { SERVER_FAMILIES, baseName, RUNNING_GAUGES, QUEUE_GAUGES, HANDOFF_GAUGES, DEFAULT_GAUGES, TOKEN_COUNTERS, REQUEST_COUNTERS, DEFAULT_COUNTERS, KEY_GAUGES } from './server-families.js';
export {
  FIGURES,
  PERCENTILES,
  AB_FAMILIES,
  LATENCY_FIGURES,
  HISTORY_FIGURE_COLUMNS,
  AB_FIGURE_LIST,
  TREND_FIGURES,
  ROUND_CHARTS,
  HISTORY_SHOW_COLUMNS,
  AB_SERIES,
  latencyColumn,
  tableColumns,
  type FigureName,
  type LatencyFigureName,
  type AbFamily,
  type AbFigureName,
  type AbFigureInfo,
  type DeltaKind,
  type TrendFigureInfo,
  type LatencyTable,
  type AbSeriesFigureName,
} from './figures.js';
