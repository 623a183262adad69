// What the diagnosis reads, as compact points: hung and failed requests, canaries, scrapes, the client's own
// samples, and when work flowed. Pure shapes plus a few readers of records and events into them.
import { ANSWER_TOKEN_COUNTERS, HELD_GAUGES, pdSideOf, QUEUE_GAUGES, RUNNING_GAUGES, type PdSide } from '../../types/index.js';
import type { CanaryEvent, CanaryLeg, ClientSampleEvent, HangPhase, PathKind, RequestRecord, RequestStatus, ScrapeEvent } from '../../types/index.js';
import { baseName, isHandoffQueue } from '../../monitor/index.js';

/** A hung request: from when it got stuck (its send, or its last byte when it stalled) to the moment the watchdog gave up. */
export interface HangSpan {
  from_ms: number;
  to_ms: number;
  phase: HangPhase | null;
  path: PathKind;
  /** Which request on its socket (null: it never got one). */
  nth: number | null;
  /** The deadline that fired (null when unknown). */
  deadline_ms: number | null;
  /** The id it was sent with, what the engine's log names it by (null: an older record). */
  request_id: string | null;
  /** The W3C trace it started: its trace in Jaeger or Tempo (null: an older record; absent in tests' spans). */
  trace_id?: string | null;
  /** How long its connection sat idle before it, on a reused one (absent: not known). */
  idle_ms?: number | null;
  /** What the request was (absent: not known): see RequestFeatures. */
  features?: RequestFeatures;
}

/** What a request was, to test whether the failures depend on it: its size, its round, its connection's use. */
export interface RequestFeatures {
  request_bytes: number;
  prompt_tokens: number | null;
  round: number;
  /** Which request on its socket (null: it never got one). */
  nth: number | null;
}

/** A completed request: what it was, and how long its first token took (null: none came). */
export interface CompletedPoint {
  run_ms: number;
  features: RequestFeatures;
  ttft_ms: number | null;
}

export function featuresOf(r: RequestRecord): RequestFeatures {
  return { request_bytes: r.request_bytes, prompt_tokens: r.prompt_tokens, round: r.round, nth: r.connection?.nth ?? null };
}

/** Who answered an HTTP error: the server itself (an OpenAI-style JSON body), or a page (HTML or plain
 * text, as HAProxy, nginx and load balancers send for 502/503/504). */
export type Answerer = 'server_json' | 'page';

/** Error classes of a connection that was gone under the request: reset by the other side, or closed as idle
 * just as the request went out on it. */
export const RESET_CLASSES: ReadonlySet<string> = new Set(['connection_reset', 'keepalive_race']);
/** Error classes of a connection closed under the request: a reset, or a stream that ended short or garbled. */
export const CUT_CLASSES: ReadonlySet<string> = new Set([...RESET_CLASSES, 'truncated_stream', 'malformed_sse']);

/** A failed request (the run's own stop excluded). */
export interface ErrorSpan {
  /** Send and end. */
  from_ms: number;
  to_ms: number;
  class: string;
  http_status: number | null;
  answered_by: Answerer | null;
  /** The message's first line, shortened (an error page's title, a server's message). */
  detail: string;
  path: PathKind;
  /** Send → response headers, when they came (absent: not known). */
  headers_ms?: number | null;
  /** Send → the last response byte before the failure, null when none came (absent: not known). */
  last_byte_ms?: number | null;
  /** Which request on its socket, and the idle gap before it on a reused one (absent: not known). */
  nth?: number | null;
  idle_ms?: number | null;
  /** What the request was (absent: not known). */
  features?: RequestFeatures;
}

export interface CanaryPoint {
  run_ms: number;
  leg: CanaryLeg;
  path: PathKind;
  status: RequestStatus;
  error_class: string | null;
  hang_phase: HangPhase | null;
  latency_ms: number;
  http_status: number | null;
  answered_by: Answerer | null;
  not_sent: boolean;
}

/** One scrape of one target: did it answer, how fast, and its queue and running gauges (summed over label sets). */
export interface ScrapePoint {
  target: string;
  run_ms: number;
  duration_ms: number;
  ok: boolean;
  error: string | null;
  queue: number | null;
  running: number | null;
  /** Requests between the servers of a PD deployment: in the prefill's bootstrap and inflight (KV transfer)
   * queues, the decode's prealloc and transfer queues. Absent or null when the target exposes none. */
  handoff?: number | null;
  /** The PD server it is (its series' `engine_type`, or a queue only that server has); absent or null: not a
   * PD server, or not known. */
  side?: PdSide | null;
  /** Its answer-token counters, summed (ANSWER_TOKEN_COUNTERS): what it made, as answers finished. Absent or
   * null when it exposes none. */
  answered?: number | null;
  /** The requests it holds: its HELD_GAUGES summed (running, waiting, hand-off). Absent or null when it exposes
   * none of them: not reported, never 0. */
  held?: number | null;
}

/** One client sample window. */
export interface ClientWindow {
  from_ms: number;
  to_ms: number;
  delay_p99_ms: number;
  delay_max_ms: number;
  utilization: number;
  /** CPU time the process used in the window (null in files written before it was sampled). */
  cpu_ms: number | null;
  /** How long the event-loop thread waited for a CPU in the window (Linux run queue); null when not sampled. */
  cpu_wait_ms?: number | null;
}

/** When a target's flow counter moved: [from, to] pairs of scrape times, flattened. */
export interface FlowTrack {
  target: string;
  counter: string;
  moved: readonly number[];
  /** [last read before, first read after] pairs, flattened: the counter went back (its process restarted).
   * Absent: not known. */
  resets?: readonly number[];
}

/** The client's requests over time (completions, tokens streaming, requests in flight, TTFT), by window. */
export interface RequestActivity {
  completionsIn(fromMs: number, toMs: number): number;
  /** Share of [from, to] with tokens arriving on some stream. */
  streamingShare(fromMs: number, toMs: number): number;
  /** Share of [from, to] with some request in flight. */
  inFlightShare(fromMs: number, toMs: number): number;
  /** Mean TTFT of completed requests sent in [from, to]. */
  ttft(fromMs: number, toMs: number): { count: number; meanMs: number };
}

/** The first line of a message, at most `max` characters. */
function firstLine(text: string, max = 120): string {
  const line = text
    .replace(/^HTTP \d{3}:\s*/, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Who answered an HTTP error: the record's own `body` when it has one, else (files written before it) the
 * message's start — a raw JSON object or a page. Null when it was not an HTTP error. */
export function answererOf(status: number | null, message: string | null | undefined, body?: 'json' | 'page'): Answerer | null {
  if (status === null || status < 400) return null;
  if (body !== undefined) return body === 'json' ? 'server_json' : 'page';
  const text = (message ?? '').replace(/^HTTP \d{3}:\s*/, '').trim();
  return text.startsWith('{') ? 'server_json' : 'page';
}

export function hangSpan(r: RequestRecord): HangSpan {
  const h = r.hang;
  // The request as it stood when the deadline passed: under `wait` it went on for `waited_ms` after.
  const detected = r.run_ms + r.e2e_ms - (h?.waited_ms ?? 0);
  const from = h === null ? r.run_ms : Math.max(r.run_ms, detected - h.last_byte_age_ms);
  return {
    from_ms: from,
    to_ms: detected,
    phase: h?.phase ?? null,
    path: r.path,
    nth: r.connection?.nth ?? null,
    deadline_ms: h?.deadline_ms ?? null,
    request_id: r.request_id ?? null,
    trace_id: r.trace_id ?? null,
    idle_ms: r.connection?.idle_ms ?? null,
    features: featuresOf(r),
  };
}

export function errorSpan(r: RequestRecord): ErrorSpan {
  const message = r.error?.message ?? '';
  return {
    from_ms: r.run_ms,
    to_ms: r.run_ms + r.e2e_ms,
    class: r.error?.class ?? 'other',
    http_status: r.http_status,
    answered_by: answererOf(r.http_status, message, r.error?.body),
    detail: firstLine(message),
    path: r.path,
    headers_ms: r.headers_ms,
    ...(r.last_byte_ms === undefined ? {} : { last_byte_ms: r.last_byte_ms }),
    nth: r.connection?.nth ?? null,
    idle_ms: r.connection?.idle_ms ?? null,
    features: featuresOf(r),
  };
}

export function canaryPoint(e: CanaryEvent): CanaryPoint {
  return {
    run_ms: e.run_ms,
    leg: e.leg,
    path: e.path,
    status: e.status,
    error_class: e.error_class,
    hang_phase: e.hang_phase,
    latency_ms: e.latency_ms,
    http_status: e.http_status,
    answered_by: answererOf(e.http_status, e.error, e.error_body),
    not_sent: e.not_sent === true,
  };
}

export function scrapePoint(e: ScrapeEvent): ScrapePoint {
  let queue: number | null = null;
  let running: number | null = null;
  let handoff: number | null = null;
  let side: PdSide | null = null;
  let answered: number | null = null;
  let held: number | null = null;
  for (const s of e.samples) {
    side ??= pdSideOf(s.name, s.labels);
    if (Number.isNaN(s.value)) continue;
    const base = baseName(s.name);
    if (ANSWER_TOKEN_COUNTERS.has(base)) answered = (answered ?? 0) + s.value;
    if (HELD_GAUGES.has(base)) held = (held ?? 0) + s.value;
    if (QUEUE_GAUGES.has(base)) queue = (queue ?? 0) + s.value;
    else if (RUNNING_GAUGES.has(base)) running = (running ?? 0) + s.value;
    else if (isHandoffQueue(base)) handoff = (handoff ?? 0) + s.value;
  }
  return { target: e.target, run_ms: e.run_ms, duration_ms: e.duration_ms, ok: e.ok, error: e.ok ? null : e.error, queue, running, handoff, side, answered, held };
}

export function clientWindow(s: ClientSampleEvent): ClientWindow {
  return {
    from_ms: s.run_ms - s.window_ms,
    to_ms: s.run_ms,
    delay_p99_ms: s.loop_delay_p99_ms,
    delay_max_ms: s.loop_delay_max_ms ?? s.loop_delay_p99_ms,
    utilization: s.loop_utilization,
    cpu_ms: typeof s.cpu_ms === 'number' ? s.cpu_ms : null,
    cpu_wait_ms: typeof s.cpu_wait_ms === 'number' ? s.cpu_wait_ms : null,
  };
}

/**
 * The windows in time order, each one's delay at least how late the sampler's own tick came: a window longer
 * than the usual one is a late timer too. monitorEventLoopDelay can miss a stretch the process spent off the
 * CPU in the middle of its work; the sampler's tick, due every second, cannot.
 */
export function withSamplerLateness(windows: readonly ClientWindow[]): ClientWindow[] {
  const sorted = [...windows].sort((a, b) => a.from_ms - b.from_ms);
  const lengths = sorted.map((w) => w.to_ms - w.from_ms).sort((a, b) => a - b);
  // The lower quartile: late windows are long, so a median of a short run's few windows could be one of them.
  const usual = lengths[Math.floor(lengths.length / 4)] ?? 0;
  return sorted.map((w) => ({ ...w, delay_max_ms: Math.max(w.delay_max_ms, w.to_ms - w.from_ms - usual) }));
}

/** The client's successful requests by the connection they went out on: new, or reused after an idle gap. */
export interface IdleReuse {
  /** Successful requests sent on a reused connection after at least `ms` of idle (to within 10%). */
  okAtLeast(ms: number): number;
  /** The longest idle gap a successful request's reused connection sat, among those shorter than `ms` (to
   * within 10%); null when none. */
  longestBelow(ms: number): number | null;
  /** Successful requests sent on a reused connection, any idle. */
  readonly ok: number;
  /** Successful requests that opened their connection. */
  readonly fresh: number;
}

/** A log line a probe found, with what it means. */
export interface EngineLogLine {
  /** When the probe that read it started (ms since run start). */
  run_ms: number;
  probe: string;
  text: string;
  meaning: string;
  /** Where the engine held the request, as the diagnosis names it. */
  where: string;
}

/** One probe run: when, and the known lines it found (few: the first of each kind). */
export interface ProbeRead {
  run_ms: number;
  name: string;
  lines: EngineLogLine[];
}
