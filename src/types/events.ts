// A run is a typed stream of events. Writers, the progress line, the watchdog and the monitor subscribe;
// nothing polls shared state.
import type { ErrorInfo, HangInfo, RequestRecord } from './records.js';
import type { BurstEvent, GaugeSnapshot, ProbeEvent, ScrapeEvent } from './monitor.js';
import type { CanaryEvent, HopFaultEvent } from './paths.js';

/** A request left an agent (not written to disk; the progress line counts in-flight requests with it). */
export interface RequestStartEvent {
  kind: 'request_start';
  agent: number;
  conversation: string;
  round: number;
  run_ms: number;
}

/** A request's first token arrived (not written to disk: the record has `ttft_ms`; the progress line and the
 * dashboard show TTFT from it while long answers still stream). */
export interface FirstTokenEvent {
  kind: 'first_token';
  agent: number;
  round: number;
  run_ms: number;
  ttft_ms: number;
}

/** A request reached its terminal state. Written to requests.jsonl. */
export interface RequestEvent {
  kind: 'request';
  record: RequestRecord;
}

/** The run started: target, path and sizes. Written to events.jsonl. */
export interface RunStartEvent {
  kind: 'run_start';
  t: string;
  target: string;
  path: string;
  agents: number;
  rounds: number;
}

/** The run ended (or was interrupted). Written to events.jsonl. */
export interface RunEndEvent {
  kind: 'run_end';
  t: string;
  run_ms: number;
  status: 'completed' | 'interrupted' | 'failed';
  reason: string | null;
}

/** A phase (warm-up, a sweep level, main) began. Written to events.jsonl. */
export interface PhaseEvent {
  kind: 'phase';
  t: string;
  run_ms: number;
  name: string;
  /** Agents of this phase (a sweep level). */
  agents?: number;
  /** Warm-up of this phase: requests sent before `run_ms + warmup_ms` carry `warmup: true`. */
  warmup_ms?: number;
  /** A stage of `agents.stages` (or the one phase of `agents.arrival`): its level, conversations started per
   * second (`arrival`) or agents (`agents`), at its start and at its end (equal under `ramp: step`), and its
   * length. Requests sent while it runs carry its name as their phase. */
  load?: PhaseLoad;
}

/** The level of a stage (`PhaseEvent.load`, summary.json `phases[].load`). */
export interface PhaseLoad {
  kind: 'arrival' | 'agents';
  from: number;
  to: number;
  ramp: 'step' | 'linear';
  length_ms: number;
}

/** A conversation of an open-loop run (`agents.arrival`) started. Written to events.jsonl. */
export interface ConversationStartEvent {
  kind: 'conversation_start';
  t: string;
  /** When it started (it sends its first request then), ms since the run started. */
  run_ms: number;
  /** When it was due; `start_lag_ms` is `run_ms − scheduled_ms`. */
  scheduled_ms: number;
  start_lag_ms: number;
  /** It found `agents.arrival.max_active` conversations running and waited for a slot. */
  delayed: boolean;
  /** The stage (phase) it was scheduled in. */
  phase: string;
  agent: number;
  conversation: string;
}

/** A conversation of an open-loop run ended (its last round, the context cap, or the run's end). Written to
 * events.jsonl: with its start, it gives the conversations active at any moment. */
export interface ConversationEndEvent {
  kind: 'conversation_end';
  t: string;
  run_ms: number;
  agent: number;
  conversation: string;
  /** Requests it sent (resends included). */
  requests: number;
}

/** Arrivals of one stage as one process (or worker thread) saw them. */
export interface ArrivalCounts {
  /** Came due. */
  scheduled: number;
  started: number;
  /** Found every slot taken and waited. */
  delayed: number;
  /** Still waiting for a slot when the arrivals ended: never started. */
  not_started: number;
}

/** The arrivals of an open-loop run are over (its last stage ended, or the run stopped): per stage, how many
 * came due, started, were delayed, and never started. One per process (or worker thread). Written to events.jsonl. */
export interface ArrivalsEndEvent {
  kind: 'arrivals_end';
  t: string;
  run_ms: number;
  phases: Record<string, ArrivalCounts>;
}

/** A request hung: everything needed to diagnose it. Written to events.jsonl beside its request record. */
export interface HangEvent {
  kind: 'hang';
  t: string;
  run_ms: number;
  /** The request as it stood when the deadline passed (one event per hung request, at that moment: under
   * `on_hang: wait` the request goes on, and its requests.jsonl record comes at its end). */
  record: RequestRecord;
  /** The latest gauge scrape of every monitored target, when the monitor runs. */
  gauges?: GaugeSnapshot[];
}

/** The preflight: one small chat request before the agents start, and the target's model list. Its request
 * is not in requests.jsonl (it is not part of the workload); this event is its record. Written to events.jsonl. */
export interface PreflightEvent {
  kind: 'preflight';
  t: string;
  run_ms: number;
  ok: boolean;
  /** The URL it was sent to (no credentials), and the proxy it went through (null: none). */
  url: string;
  proxy: string | null;
  http_status: number | null;
  ttft_ms: number | null;
  e2e_ms: number;
  error: ErrorInfo | null;
  hang: HangInfo | null;
  /** `target.model`, the models the server lists at /v1/models (null: the list could not be read, see
   * `models_error`), and whether the model is among them (null: not known). */
  model: string;
  models: string[] | null;
  models_error: string | null;
  model_listed: boolean | null;
  /** Warnings and hints printed with it. */
  notes: string[];
}

/** A request failed with a classified error. Written to events.jsonl. */
export interface ErrorEvent {
  kind: 'error';
  t: string;
  run_ms: number;
  agent: number;
  conversation: string;
  round: number;
  class: string;
  message: string;
}

/** Client health sample: event-loop delay and utilisation over the last window. Written to events.jsonl. */
export interface ClientSampleEvent {
  kind: 'client_sample';
  t: string;
  run_ms: number;
  window_ms: number;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  loop_utilization: number;
  in_flight: number;
  rss_bytes: number;
  /** CPU time the whole process used over the window (user + system, from process.cpuUsage()): with the
   * loop delay high, a low `cpu_ms / window_ms` means the host did not give the process the CPU (starved),
   * a high one that the client itself was busy. Absent in files written before it existed. */
  cpu_ms?: number;
  /** Linux: how long the event-loop thread waited in the kernel's run queue over the window (runnable, not
   * given a CPU: `/proc/self/schedstat`). The host starving the process, measured directly. Null where the
   * kernel does not say; absent in files written before it existed. */
  cpu_wait_ms?: number | null;
  /** The worker thread the sample is of (`agents.workers` > 1); absent: the main thread. */
  thread?: number;
  /** Main thread only: the longest a results line waited to reach the disk in this window (still waiting
   * ones included). Over 250 ms the window is flagged: a kill there loses more than the documented 250 ms. */
  writer_lag_ms?: number;
  /** Token events this thread's streams received since the run started, finished requests and streams still
   * going alike (content, reasoning and tool-call deltas): live output tok/s while long answers stream, which
   * counts from finished requests cannot show. Absent in files written before it existed. */
  streamed_tokens?: number;
  /** Main thread only: bytes of results lines queued for the disk at the end of the window. */
  writer_queued_bytes?: number;
  /** Main thread only: results lines not written since the start (queue full or a file failed). */
  writer_dropped_lines?: number;
}

export type RunEvent =
  | RequestStartEvent
  | FirstTokenEvent
  | RequestEvent
  | RunStartEvent
  | RunEndEvent
  | PhaseEvent
  | HangEvent
  | ErrorEvent
  | PreflightEvent
  | ClientSampleEvent
  | ScrapeEvent
  | BurstEvent
  | ProbeEvent
  | CanaryEvent
  | HopFaultEvent
  | ConversationStartEvent
  | ConversationEndEvent
  | ArrivalsEndEvent;

export type RunEventKind = RunEvent['kind'];
export type RunEventOf<K extends RunEventKind> = Extract<RunEvent, { kind: K }>;

/** Which results file each kind goes to (`null`: not written). A mapped type: a new kind must be routed. */
export type EventFile = 'requests' | 'events' | 'gauges' | null;
export const EVENT_FILES: { readonly [K in RunEventKind]: EventFile } = {
  request_start: null,
  first_token: null,
  request: 'requests',
  run_start: 'events',
  run_end: 'events',
  phase: 'events',
  hang: 'events',
  error: 'events',
  preflight: 'events',
  client_sample: 'events',
  scrape: 'gauges',
  burst: 'events',
  probe: 'events',
  canary: 'events',
  hop_fault: 'events',
  conversation_start: 'events',
  conversation_end: 'events',
  arrivals_end: 'events',
};
