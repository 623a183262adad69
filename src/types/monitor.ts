// Shapes shared by the monitor (which produces them), the summary, the diagnosis and the report.

/** One selected sample of a scrape: a gauge or counter series and its value. */
export interface GaugeSample {
  /** Metric name as exposed (e.g. `sglang:num_running_reqs`). */
  name: string;
  labels: Record<string, string>;
  value: number;
  /** `counter` or `gauge`, from the exposition's TYPE line (histogram `_count`/`_sum` count as counters).
   * Absent in files written before it existed: then a `_total` name is a counter. */
  type?: 'gauge' | 'counter';
}

/** One scrape of one monitored target. Written to gauges.jsonl. */
export interface ScrapeEvent {
  kind: 'scrape';
  t: string;
  run_ms: number;
  /** Target name from `monitor.targets` (e.g. `prefill`, `decode`, `router`, `engine`). */
  target: string;
  url: string;
  duration_ms: number;
  ok: boolean;
  /** Why it failed (timeout, refused, HTTP status, parse error), when it did. */
  error: string | null;
  /** True while burst sampling (after a hang) is on. */
  burst: boolean;
  samples: GaugeSample[];
}

/** The latest scrape of one target when a hang was recorded (`HangEvent.gauges`). */
export interface GaugeSnapshot {
  target: string;
  /** When the samples were taken (the latest successful scrape), or null when none has succeeded yet. */
  run_ms: number | null;
  /** How old the samples were when the hang was recorded. */
  age_ms: number | null;
  /** The error of the latest scrape, when it failed (the samples are then from an earlier one). */
  last_error: string | null;
  samples: GaugeSample[];
}

/** Burst sampling started, was extended by a new trigger, or ended. Written to events.jsonl. */
export interface BurstEvent {
  kind: 'burst';
  t: string;
  run_ms: number;
  state: 'start' | 'extend' | 'end';
  /** What triggered it: a hang, or a request in flight longer than `monitor.burst.latency_ms`. */
  reason: 'hang' | 'latency';
  interval_ms: number;
  /** When the burst ends (ms since run start), as of this event. */
  until_run_ms: number;
  /** The request that triggered it (null on `end`). */
  trigger: { agent: number; conversation: string; round: number } | null;
}

/** One run of a probe command. Written to events.jsonl. */
export interface ProbeEvent {
  kind: 'probe';
  t: string;
  /** When it started, ms since run start. */
  run_ms: number;
  name: string;
  on: 'start' | 'hang' | 'end';
  command: string;
  /** Exit code, or null when it was killed by a signal (or never started). */
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
  /** True when it was killed (its whole process group) at `timeout_s`. */
  timed_out: boolean;
  /** Why it could not be started, when it could not. */
  error: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  /** Hang probes: hangs since the last run that did not run it (rate limit: one at a time, one per `probe_min_interval_s`). */
  skipped: number;
}

export type GaugeVerdictKind = 'idle' | 'rotating' | 'pinned' | 'stale' | 'insufficient';

/** The call on one gauge series over the run (see README, "Reading the gauge verdicts"). */
export interface GaugeVerdict {
  target: string;
  name: string;
  labels: Record<string, string>;
  verdict: GaugeVerdictKind;
  samples: number;
  window_s: number;
  /** Longest stretch the gauge stayed non-zero and unchanged. */
  longest_nonzero_s: number;
  /** Times the gauge dropped (to a lower value or zero) after being non-zero. */
  dips: number;
  last_value: number;
  /** For `insufficient`: how long a window would have told. */
  needed_s: number | null;
  /** Plain sentences: which counters moved, whether client requests completed meanwhile. */
  evidence: string[];
  /** The flow evidence over the series' window, as figures. */
  flow?: GaugeFlow;
}

/** What flowed while a gauge was watched: the target's flow counter and the client's requests. */
export interface GaugeFlow {
  /** The flow counter judged (`generation_tokens_total`, else `prompt_tokens_total`, else `num_requests_total`), or null. */
  counter: string | null;
  /** Scrape intervals over which it moved / observed. */
  counter_moved_intervals: number;
  intervals: number;
  /** Client requests that completed (ok) in the window. */
  completions: number;
  /** Share of the window with a client request in flight. */
  in_flight_share: number;
}

/** How scraping one target went over the run (summary.json `scrape_targets`). */
export interface ScrapeTargetSummary {
  target: string;
  url: string;
  scrapes: number;
  failed: number;
  /** Scrapes taken while burst sampling. */
  burst: number;
  /** Time between consecutive scrapes outside bursts: median and largest. */
  interval_ms_p50: number | null;
  interval_ms_max: number | null;
  /** The most recent failure, if any. */
  last_error: string | null;
  /** Selected series seen (gauges and counters). */
  series: number;
}

export type DiagnosisVerdict = 'none' | 'proxy' | 'engine' | 'client' | 'unknown';

/** Where the run's hangs most likely come from, with the evidence for the call. */
export interface Diagnosis {
  verdict: DiagnosisVerdict;
  evidence: string[];
}
