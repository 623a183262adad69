// Shapes shared by the monitor (which produces them), the summary, the diagnosis and the report.
import type { DiagnosisVerdict, GaugeVerdictKind } from './verdicts.js';

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
  /** Hang probes: the id of the hung request that started it (`ROUNDLOAD_REQUEST_ID`), when its record has one. */
  request_id?: string;
}

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
  /** For `pinned`: the stretch with nothing flowing (ms since run start), so the diagnosis can place it. */
  stuck?: { from_ms: number; to_ms: number };
  /** The gauge's floor when it stepped up during the run and held at least the pin threshold (for
   * `pinned_under_load`, and as a caveat on `rotating`). */
  floor?: GaugeFloor;
}

/** A floor that stepped up and held: the lowest value over a stretch, above what came before it. */
export interface GaugeFloor {
  /** The floor's value (the gauge never went below it over the stretch). */
  level: number;
  /** First sample at the floor (ms since run start). */
  from_ms: number;
  /** First sample below it again; null: it held to the last sample. */
  to_ms: number | null;
  held_s: number;
  /** Times the value came back down to the floor from above it (rotation above a stuck request). */
  returns: number;
  /** Samples above the floor over the stretch. */
  above_samples: number;
  /** The run's failed or slow requests whose lives match the step: sent just before it and, when it was
   * released, ended with it (ms since run start). */
  requests: { start_ms: number; end_ms: number; status: 'ok' | 'error' | 'hang'; phase: string | null }[];
}

/** What flowed while a gauge was watched: the target's flow counter and the client's requests. */
export interface GaugeFlow {
  /** The flow counter judged: of the target's `monitor.counters`, a token counter that moved, else any that
   * moved (request counters last), else the first exposed; null when the target exposes none. */
  counter: string | null;
  /** Scrape intervals over which it moved / observed. */
  counter_moved_intervals: number;
  intervals: number;
  /** Client requests that completed (ok) in the window. */
  completions: number;
  /** Share of the window with a client request in flight. */
  in_flight_share: number;
  /** Share of the window with tokens streaming to the client (absent in files written before it existed). */
  streaming_share?: number;
  /** False when the client's completions did not go through this target: they completed while its own flow
   * counter stood still, so only its counter speaks for it. Absent in files written before it existed. */
  client_counted?: boolean;
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
  /** Stretches the target did not answer (scrapes failed from `from_ms` until the next good one at `to_ms`,
   * null: still down at the end). Absent in summaries written before it existed. */
  down?: TargetDown[];
}

/** A stretch of failed scrapes of one target. */
export interface TargetDown {
  from_ms: number;
  to_ms: number | null;
  failed: number;
  error: string | null;
}

/** One leg of the canary comparison over an episode: grid slots (a canary due every interval), failed ones
 * (error, hang, or not sent because the leg's earlier canaries were all still out). */
export interface CanaryLegFigures {
  slots: number;
  failed: number;
  not_sent: number;
  /** Wilson 95% interval of the failure rate. */
  failed_rate_low: number;
  failed_rate_high: number;
}

/** The two canary legs over the same time span. */
export interface CanaryComparison {
  from_ms: number;
  to_ms: number;
  direct: CanaryLegFigures;
  proxied: CanaryLegFigures;
  /** One-sided Fisher exact p-values: the proxied leg failed more often than the direct one, and the other way. */
  p_proxied_worse: number;
  p_direct_worse: number;
  /** Canary slots left out because the client itself was late then (its timings measure itself). */
  excluded_client_late: number;
}

/** A stretch of hangs, or of errors, judged on its own. */
export interface DiagnosisEpisode {
  kind: 'hangs' | 'errors';
  /** From the first failed request's trouble (its send, or its last byte) to the last one recorded. */
  start_ms: number;
  end_ms: number;
  requests: number;
  verdict: Exclude<DiagnosisVerdict, 'none'>;
  /** 0..1: how much of the weighed evidence agrees with the verdict (see docs/diagnosis.md). */
  confidence: number;
  evidence_for: string[];
  evidence_against: string[];
  /** What happened, with no weight for any verdict. */
  facts: string[];
  /** Score of every verdict considered (evidence for minus against, weighed). */
  scores: Partial<Record<Exclude<DiagnosisVerdict, 'none' | 'unknown'>, number>>;
  canaries: CanaryComparison | null;
  /** Where the engine holds this episode's failed requests: server and queue, from a queue gauge whose floor
   * stepped up with them (absent when no gauge did). */
  held_in?: string[];
  /** This episode's failures cut at one duration (absent when they were not). */
  path_timeout?: PathTimeout;
}

/** Failed requests cut at one duration: a timeout of the path (or, on a direct path, of the engine itself). */
export interface PathTimeout {
  /** The cut, in seconds: the middle of the range of the cluster's silences (send or last byte to the cut), or for `idle`
   * of the idle gaps after which reused connections failed. */
  seconds: number;
  /** Half the width of that range, in seconds. */
  spread_s: number;
  /** Failures in the cluster, of the failures judged (the episode's, or the run's). */
  count: number;
  of: number;
  /** `headers`: cut before any response header; `read`: cut after a silence once the response had begun (its
   * headers or some of its body); `idle`: a reused keep-alive connection that failed as the request went out,
   * after an idle gap. */
  kind: 'read' | 'idle' | 'headers';
  /** The clustered failures by HTTP status (`504`) or, for a reset or close, error class. */
  statuses: Record<string, number>;
  /** `path`: a proxy or hop is in front of the engine, and its timeout is the cut; `engine`: a direct path, the
   * engine's (or its server framework's) own timeout. */
  by: 'path' | 'engine';
  /** The usual settings that cut so, for the reader to check. */
  settings: string[];
}

/** Streams that arrived whole: buffered somewhere on the path. */
export interface BufferingFigures {
  /** Completed streams long enough to tell (at least 8 token events), the client's late moments left out. */
  judged: number;
  buffered: number;
  share: number;
  /** Streams that ended while the client's own event loop was late (200 ms or more): a late client reads a
   * stream's tokens together whatever the path did, so these are not judged. Absent in older summaries. */
  excluded_client_late?: number;
}

/** Where the run's hangs and errors most likely come from, with the evidence for the call. */
export interface Diagnosis {
  verdict: DiagnosisVerdict;
  /** 0..1 (null with verdict `none`). Absent in summaries written before it existed. */
  confidence?: number | null;
  /** The call's evidence as sentences: the episodes in brief, then the main episode's evidence. */
  evidence: string[];
  /** Each hang and error episode judged on its own, in time order (absent in older summaries). */
  episodes?: DiagnosisEpisode[];
  /** Episodes beyond those listed (the smallest ones). */
  episodes_omitted?: number;
  /** Streams flagged `buffered_stream` (absent in older summaries, and when no stream could be judged). */
  buffering?: BufferingFigures;
  /** With verdict `engine`: where the engine holds the failed requests (server and queue), when its gauges
   * say so; absent otherwise. */
  held_in?: string[];
  /** The run's failed requests cut at one duration: the path's timeout, named with its usual settings (absent
   * when no cut was found). */
  path_timeout?: PathTimeout;
}
