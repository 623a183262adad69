// The records a run writes, as they appear on disk (snake_case, units in names).
// These shapes are the results-folder contract of DESIGN.md: change them only with the schema version.

/** The results folder's version: run.json's and summary.json's `schema_version`, and every JSONL line's `v`.
 * Bumped whenever a file's shape changes so that a reader must tell the versions apart; the readers of
 * src/results/ read every earlier one (docs/results.md, "Versions"). 1: until 2026-12-05, JSONL lines without a
 * version; 2: every line of requests.jsonl, events.jsonl and gauges.jsonl opens with `"v":2`. */
export const RESULTS_SCHEMA_VERSION = 2;

/** Which network path a request took. */
export type PathKind = 'direct' | 'hop' | 'proxy';

/** Terminal state of a request: exactly one per request. */
export type RequestStatus = 'ok' | 'error' | 'hang';

/** Where in its life a hung request was when the watchdog gave up on it. */
export type HangPhase = 'connect' | 'headers' | 'first_token' | 'mid_stream' | 'total';

/** The socket a request went out on (from undici's diagnostics_channel). */
export interface ConnectionInfo {
  /** Run-unique id of the socket, e.g. `c7`. */
  id: string;
  /** 1 for the first request on this socket, 2 for the first reuse, … */
  nth: number;
  local_port: number | null;
  /** Socket age when this request was sent. */
  age_ms: number;
  /** How long the socket sat idle between the previous response's end and this request (null on first use). */
  idle_ms: number | null;
  /** TLS only: whether the TLS session was resumed. */
  tls: { protocol: string | null; session_reused: boolean; authorized: boolean } | null;
  // The fields below are written by this version; optional only so older records still type-check.
  /** TCP connect time, when this request opened the socket; null on reuse, or not measured (through a
   * CONNECT proxy the tunnel hides it). */
  connect_ms?: number | null;
  /** TLS handshake time, when this request opened a TLS socket; null on reuse or plain http. */
  tls_ms?: number | null;
  /** From the request's send to its headers going out on the socket, less connect and TLS: time spent
   * waiting for a socket or for the client's own event loop. */
  queued_ms?: number | null;
  /** Sockets of the run being opened at that moment when this one began opening (itself included; null on
   * reuse): a request sent in the client's start-up rush carries the client's own delay in its TTFT. */
  opening?: number | null;
}

export interface ItlStats {
  count: number;
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface ErrorInfo {
  /** Stable class, e.g. `connection_refused`, `keepalive_race`, `http_5xx`, `malformed_sse`. */
  class: string;
  message: string;
  /** The underlying code (`ECONNRESET`, `UND_ERR_SOCKET`, …) when there is one. */
  code: string | null;
  /** Path of the URL the failed request went to (`/v1/chat/completions`; `/v1/v1/…` shows a base URL that
   * already ended in `/v1`). Written on every error since it existed. */
  url_path?: string;
  /** An HTTP error's body: `json`, the server's own error object (OpenAI's, SGLang's, FastAPI's), or `page`
   * (HTML or text, as HAProxy, nginx and load balancers answer 502/503/504 themselves). Absent otherwise. */
  body?: 'json' | 'page';
}

export interface HangInfo {
  phase: HangPhase;
  /** Which deadline fired, e.g. `stall_ms`. */
  deadline: string;
  deadline_ms: number;
  /** Time since the last byte when the watchdog fired (or since send when none came). */
  last_byte_age_ms: number;
  // The fields below are always written by this version; optional only so older records still type-check.
  /** SSE data events and body bytes received when the deadline passed (the record's own `chunks`/`bytes`
   * are at its end, later under `on_hang: wait`). */
  chunks?: number;
  bytes?: number;
  /** Time since the last SSE data event when the deadline passed; null when none had come. */
  last_chunk_age_ms?: number | null;
  /** The `watchdog.on_hang` policy in force. */
  policy?: 'abort' | 'abort-agent' | 'wait';
  /** How the request ended after the deadline: `aborted` at once (abort, abort-agent); under `wait`:
   * `total` (still stuck at total_ms), `completed` or `error` (it moved again and ended so), `stopped` (the
   * run ended first). */
  outcome?: 'aborted' | 'total' | 'completed' | 'error' | 'stopped';
  /** From the deadline passing to the request's end (0 when aborted at once). */
  waited_ms?: number;
}

/** One line of requests.jsonl. */
export interface RequestRecord {
  /** Wall-clock time the request was sent (ISO 8601). */
  t: string;
  /** Milliseconds since the run started, at send. */
  run_ms: number;
  agent: number;
  /** Conversation id, unique in the run: `a<agent>-c<n>`. */
  conversation: string;
  round: number;
  /** The id the request was sent with (`X-Request-Id`, and the body's `rid` where the server takes one):
   * `rl-<tag>-<conversation>-r<round>-<n>`, what the engine's log names it by. Absent in older records. */
  request_id?: string;
  /** The W3C trace the request started (32 hex; sent in `traceparent` unless `tracing.traceparent` is off): its
   * span in Jaeger or Tempo, and the engine's spans under it. Absent in older records. */
  trace_id?: string;
  /** The request's own span in that trace (16 hex): the `traceparent`'s parent id, so the server's spans are
   * its children. Absent in older records. */
  span_id?: string;
  /** Phase of the run (e.g. `main`, or a sweep level). */
  phase: string;
  /** True when sent during its phase's warm-up (a sweep's `warmup_s`): recorded, but left out of the
   * phase's figures. Absent otherwise. */
  warmup?: boolean;
  path: PathKind;
  status: RequestStatus;
  http_status: number | null;
  /** Send → response headers. */
  headers_ms: number | null;
  /** Send → first token of any kind: reasoning, content or tool call (what SGLang's
   * `sglang:time_to_first_token_seconds` counts, from the server's side). */
  ttft_ms: number | null;
  // The fields below up to `tpot_ms` are always written by this version; optional only so older records
  // still type-check.
  /** Send → first content or tool-call token, reasoning left out (what bench_serving's chat backend calls
   * TTFT: its first `delta.content`); null when none came (an answer of reasoning only, or a failure before). */
  ttfc_ms?: number | null;
  /** Send → the last token of any kind; null when none came. Absent in older records. */
  last_token_ms?: number | null;
  /** First → last reasoning token (0 with one reasoning event); null when no reasoning came. */
  reasoning_ms?: number | null;
  /** Reasoning tokens among `completion_tokens`: the usage chunk's `reasoning_tokens` (SGLang) or
   * `completion_tokens_details.reasoning_tokens`; without either (or with 0 while reasoning text streamed) the
   * client's estimate from the reasoning text, 4 characters a token, and `reasoning_tokens_estimated` true.
   * Null for a failed request the server sent no usage for. */
  reasoning_tokens?: number | null;
  reasoning_tokens_estimated?: boolean;
  /** Completion tokens per token-carrying stream event (content, reasoning and tool-call deltas: the events
   * `itl` measures the gaps between): 1 when every event is one token, more when the server coalesces tokens
   * (SGLang under load) or a parser buffers text (DeepSeek tool calls). Null when no such event came or the
   * completion tokens are unknown. Estimated when `tokens_estimated`. */
  tokens_per_event?: number | null;
  /** Time per output token, as SGLang's bench scripts define TPOT: (e2e − ttft) ÷ (completion tokens − 1),
   * reasoning tokens included. Null unless the request ended ok with at least 2 completion tokens. */
  tpot_ms?: number | null;
  /** Send → end of stream (or → the terminal error/hang). */
  e2e_ms: number;
  /** On an error: send → the last response byte before it (headers or body), null when none came. With
   * `e2e_ms` it gives the silence before the failure, which a proxy's read timeout cuts at one length.
   * Absent on other records, and in files written before it. */
  last_byte_ms?: number | null;
  /** The server's own first-token time (arrival → first token), when it reports one in an SSE comment
   * `: engine-first-token-ms=N` (the embedded engine does); `ttft_ms − server_ttft_ms` is what the network
   * and the client added. */
  server_ttft_ms: number | null;
  itl: ItlStats | null;
  /** SSE data events received. */
  chunks: number;
  /** Response body bytes received. */
  bytes: number;
  request_bytes: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  /** True when the token counts are the client's estimate (no usage chunk came): prompt tokens from the
   * request body, completion tokens from the streamed text (content, reasoning, tool calls), 4 characters a
   * token. `cached_tokens` is then null. */
  tokens_estimated: boolean;
  finish_reason: string | null;
  tool_calls: { name: string; arguments_bytes: number }[];
  content_chars: number;
  reasoning_chars: number;
  error: ErrorInfo | null;
  hang: HangInfo | null;
  connection: ConnectionInfo | null;
  /** 2 on the resend of a failed request (`retry:`, or the recovery of a truncated tool call); absent on a
   * first attempt. The failed attempt has its own record just before, with its error. */
  attempt?: number;
  /** `truncated_tool_call` on the resend of a round whose answer was a tool call cut by `max_tokens`: the
   * broken answer was dropped and a short user note appended before resending. Absent otherwise. */
  recovery?: 'truncated_tool_call';
  /** How long the agent waited before sending this request because its previous request failed in a way
   * that says the server is away (`connection_refused`, `proxy_unreachable`, HTTP 502/503, a reset before
   * any response header): 250 ms, doubling with each such failure in a row, at most 10 s. Absent when it
   * did not wait for that reason. */
  backoff_ms?: number;
  /** On a resend (`retry:`) of an error answer that carried `Retry-After` (delay-seconds or an HTTP date): the
   * wait it asked for, in ms, at most `watchdog.total_ms`. The agent waited the larger of this and `backoff_ms`
   * before the resend. Absent when the failed attempt had no valid `Retry-After`. */
  retry_after_ms?: number;
  /** Warning classes of an answer that still counts as ok (`WARNING_CLASSES`), e.g.
   * `tool_markup_in_content`, `wrapped_tool_arguments`. Absent when none. */
  warnings?: string[];
  /** On the last request of a conversation that `conversation.max_context_tokens` ended before its last
   * round: its context then (estimated tokens) and the rounds it did not send. Absent otherwise. */
  context_cap?: { context_tokens: number; rounds_left: number };
  /** A replayed request (`replay:`): the recorded request's `seq` and client connection id, and how its
   * answer slot was filled — `live` (the model's answer of the previous round), `substituted` (the live
   * answer had a different number of tool calls, so the recorded answer's shape was sent), or null (no answer
   * slot: a first round, or history the harness rewrote). `sizing`: how its new synthetic text was sized to
   * reach the recorded prompt tokens — `scale` × its recorded characters, `by` its recorded `characters`, a
   * density learnt from the server's `usage`, the server's `tokenize` endpoint, the usage of one unrecorded
   * `probe` request of the run's first request's exact shape, or `verbatim` (recorded contents). Absent in
   * generated runs. */
  replay?: { seq: number; connection: number | null; answer: 'live' | 'substituted' | null; sizing?: { by: 'characters' | 'usage' | 'tokenize' | 'probe' | 'verbatim'; scale: number } };
  /** True when the stream arrived whole: at least 8 token events, its first after 50 ms or more, all arriving
   * together (faster than 2000 tokens/s, which no decode reaches: TTFT ≈ e2e, ITL ≈ 0). Something on the path
   * buffered it; its TTFT and ITL are that buffer's. Absent otherwise. */
  buffered_stream?: true;
}
