// Pure analysis of a run's records: the summary.
export { SummaryBuilder, SATURATED_LOOP_DELAY_MS, SATURATED_UTILIZATION, type Summary, type PhaseSummary, type RoundSummary } from './summary.js';
