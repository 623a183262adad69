// Why a stage of a ramp or a sweep is past the knee (summary.json `capacity.past.reasons[].kind`), each with
// its meaning: the terminal, report.html and docs/arrival.md read them from here. No runtime dependencies.

export const CAPACITY_REASONS = {
  latency: 'TTFT or ITL p99 above the workload’s limit (thresholds.ttft_p99_ms, thresholds.itl_p99_ms)',
  queueing: 'requests waited: TTFT p50 rose above the lightest stage’s TTFT p99',
  throughput_flat: 'throughput stopped rising with the offered load (its rise within the stages’ noise)',
  errors: 'errors and hangs above thresholds.error_rate (1% when off)',
  start_lag: 'arrivals could not start on time: they waited for a slot, or start lag p99 passed one think time',
} as const satisfies Record<string, string>;

export type CapacityReasonKind = keyof typeof CAPACITY_REASONS;
