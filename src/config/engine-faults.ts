// The schema of the embedded engine's faults (`engine.faults`): what each fault does, which requests it hits,
// and its defaults. Part of the workload schema (schema.ts mounts it); kept apart because it is long.
import { z } from 'zod';

const int = () => z.number().int();
const positiveInt = () => int().min(1);

/** Which requests an engine fault hits. Every condition must hold; `every` and `ratio` then thin them out. */
const selector = {
  /** Only requests after the first N on their connection (N = 2: the 3rd, 4th… on each socket). @default 0 */
  after_requests: int().min(0).default(0),
  /** Only requests of this round or later (the round is 1 + the assistant messages in the request). @default 1 */
  from_round: positiveInt().default(1),
  /** Only every Nth request that passes the conditions above (1: each one). @default 1 */
  every: positiveInt().default(1),
  /** Share of those, chosen by `engine.seed` in arrival order. @default 1 */
  ratio: z.number().min(0).max(1).default(1),
  /** Fire at most this many times over the engine's life; `null`: no limit. @default null */
  times: positiveInt().nullable().default(null),
};
const afterChunks = (n: number) => int().min(0).default(n);

/** One fault of the embedded engine (`engine.faults`, or `roundload engine --faults FILE`). Tests and demos
 * use them to make each watchdog verdict and error class fire. The first fault in the list that selects a
 * request applies to it; the stream faults (`stall_mid_stream` … `bad_tool_arguments`) count SSE `data:`
 * events and apply to streamed requests only. */
export const engineFaultSchema = z.discriminatedUnion('kind', [
  /** Send the response headers (as SGLang does at once), then nothing, ever: a `first_token` hang. */
  z.strictObject({ kind: z.literal('hang'), ...selector }),
  /** Read the request and never answer, not even headers: a `headers` hang. */
  z.strictObject({ kind: z.literal('hang_before_headers'), ...selector }),
  /** Stream `after_chunks` data events, then go silent with the socket open: a `mid_stream` hang. */
  z.strictObject({
    kind: z.literal('stall_mid_stream'),
    /** Data events sent before the silence. @default 3 */
    after_chunks: afterChunks(3),
    ...selector,
  }),
  /** After `after_chunks` data events, hold the stream and send one byte of an SSE comment every
   * `interval_ms`, `bytes` times, then resume: slow but moving, not a hang while `interval_ms` < `stall_ms`. */
  z.strictObject({
    kind: z.literal('drip'),
    /** Data events sent before the drip. @default 2 */
    after_chunks: afterChunks(2),
    /** Gap between two dripped bytes. @default 1000 */
    interval_ms: positiveInt().default(1000),
    /** Bytes dripped before the stream resumes. @default 3 */
    bytes: positiveInt().max(10_000).default(3),
    ...selector,
  }),
  /** Stream `after_chunks` data events, then close the socket (an unfinished chunked body). */
  z.strictObject({
    kind: z.literal('close_mid_stream'),
    /** Data events sent before the close. @default 2 */
    after_chunks: afterChunks(2),
    ...selector,
  }),
  /** Stream `after_chunks` data events, then end the response cleanly, without a finish_reason or [DONE]
   * (class `truncated_stream`). */
  z.strictObject({
    kind: z.literal('end_mid_stream'),
    /** Data events sent before the end. @default 2 */
    after_chunks: afterChunks(2),
    ...selector,
  }),
  /** Answer with an HTTP error (SGLang's flat error body) instead of a completion. */
  z.strictObject({
    kind: z.literal('http_error'),
    /** The status sent: 500, 503, 429… @default 500 */
    status: int().min(400).max(599).default(500),
    /** `Retry-After` header in seconds (useful with 429); `null`: none. @default null */
    retry_after_s: int().min(0).nullable().default(null),
    ...selector,
  }),
  /** After `after_chunks` data events, send one bad line (then a blank line) and go on with the stream. */
  z.strictObject({
    kind: z.literal('malformed_sse'),
    /** Data events sent before the bad line. @default 1 */
    after_chunks: afterChunks(1),
    /** The line, without its line end. The default is a data event that is not a chat.completion.chunk
     * (class `malformed_sse`); `data: {oops` gives `invalid_json`, `data: {"error": {"message": "boom"}}` gives
     * `server_error_event`; a line that is no SSE field at all is ignored, as the SSE rules say.
     * @default "data: {\"object\": \"not.a.chunk\"}" */
    line: z
      .string()
      .regex(/^[^\r\n]*$/, 'must be one line (no line breaks)')
      .default('data: {"object": "not.a.chunk"}'),
    ...selector,
  }),
  /** After `after_chunks` data events, add a tool call whose arguments are cut-off JSON (class `invalid_tool_arguments`). */
  z.strictObject({
    kind: z.literal('bad_tool_arguments'),
    /** Data events sent before the bad tool call. @default 1 */
    after_chunks: afterChunks(1),
    ...selector,
  }),
  /** PD: the selected request's KV transfer never finishes. It sits in the prefill's inflight queue (and the
   * decode's transfer queue) even after its client gives up, while other requests flow: the pinned-beside-
   * healthy gauge of the incident. `engine.prefill.inflight_timeout_s` force-fails it; else the decode side
   * gives up after `engine.decode.waiting_timeout_s`. */
  z.strictObject({ kind: z.literal('inflight_pin'), ...selector }),
  /** PD: from the first selected request on, every KV transfer stalls — those in flight, later ones, and the
   * prefill's own health request: the wedge. Requests pile up in the inflight queue, `/health` fails, and the
   * router marks the prefill unhealthy. */
  z.strictObject({ kind: z.literal('kv_wedge'), ...selector }),
  /** PD: the decode side never preallocates KV for the selected request, so it waits in the prefill's bootstrap
   * queue until `engine.prefill.bootstrap_timeout_s`, then fails (logged as SGLang logs
   * `SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT`); its client gets an error event. */
  z.strictObject({ kind: z.literal('bootstrap_stall'), ...selector }),
  /** PD: from the first selected request on, the decode loop stops for `duration_s`: every running stream goes
   * silent mid-stream, the decode's `/health` fails and the router marks it unhealthy. */
  z.strictObject({
    kind: z.literal('decode_stall'),
    /** How long the decode loop stays stopped; `null`: until the engine closes. @default null */
    duration_s: z.number().positive().nullable().default(null),
    ...selector,
  }),
  /** Close keep-alive connections idle for `idle_ms`, while advertising `Keep-Alive: timeout=advertise_timeout_s`
   * so clients keep reusing them: the keep-alive race. `on: arrival` drops the socket, unanswered, when a
   * request arrives on it after `idle_ms` (the race, made certain: class `keepalive_race`); `on: timer` closes
   * it at `idle_ms` like a real server (a client mostly sees the close and reconnects). */
  z.strictObject({
    kind: z.literal('close_idle'),
    /** Idle time after a response after which the connection counts as closed. */
    idle_ms: positiveInt(),
    /** The `Keep-Alive: timeout=N` hint sent (undici reuses a socket for the hint minus 2 s). @default 60 */
    advertise_timeout_s: positiveInt().default(60),
    /** `arrival` or `timer` (see above). @default "arrival" */
    on: z.enum(['arrival', 'timer']).default('arrival'),
  }),
]);
export type EngineFault = z.output<typeof engineFaultSchema>;
export type EngineFaultKind = EngineFault['kind'];

/** Faults that happen between prefill and decode: only a `pd` deployment has them. */
export const PD_FAULT_KINDS: ReadonlySet<EngineFaultKind> = new Set(['inflight_pin', 'kv_wedge', 'bootstrap_stall', 'decode_stall']);
