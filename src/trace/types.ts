// The trace file (`roundload record`, `roundload trace import`): JSONL, a header line, then one line per chat
// request as it completes (and one per message content, only with `--content`, and one per closed client
// connection; and a last one when the recorder could not record everything). Shapes only: lengths, hashes,
// counts, never text unless the user asked for it.

export const TRACE_FORMAT = 'roundload-trace';
/** Bumped whenever a line's shape changes incompatibly. */
export const TRACE_VERSION = 1;
/** A trace file's mode when roundload creates it: owner-only (with --content it holds every prompt; a file that
 * already exists keeps its own). */
export const TRACE_FILE_MODE = 0o600;

/** Where a trace came from. */
export type TraceSource = 'record' | 'import-openai' | 'import-mooncake';

/** The first line. */
export interface TraceHeader {
  kind: 'header';
  format: typeof TRACE_FORMAT;
  version: number;
  /** roundload's version that wrote it. */
  roundload: string;
  /** Wall-clock start of the recording (ISO 8601); every `start_ms` counts from here. */
  started_at: string;
  source: TraceSource;
  /** The upstream the recorder forwarded to (null for an import). */
  upstream: string | null;
  /** The recorder listened with TLS. */
  tls: boolean;
  /** Message contents are in the trace (`--content`). */
  content: boolean;
  /** The header that named conversations (`--session-header`), or null: inferred from message histories. */
  session_header: string | null;
  /** Hashes are keyed with a secret drawn for this trace and never written: equal hashes mean equal
   * messages within the trace, and say nothing about the text. */
  hash: 'hmac-sha256-64';
  /** The file an import was made from. */
  imported_from?: string;
}

/** One message of a request, by shape. */
export interface TraceMessage {
  role: string;
  /** Characters of its text (string content, or the text parts of an array). */
  chars: number;
  /** Keyed hash of role, trimmed text and tool calls: equal hashes, equal messages (within the trace). */
  hash: string;
  /** An assistant message's tool calls: names and argument sizes. */
  tool_calls?: { name: string; arguments_chars: number }[];
  /** `reasoning_content` sent back in an assistant message. */
  reasoning_chars?: number;
  /** Non-text parts of array content (images, audio…), counted only. */
  other_parts?: number;
  /** The text is made of these blocks, in order (a Mooncake import's `hash_ids`): equal block hashes, equal
   * text, so prefixes shared block by block stay shared. */
  segments?: { chars: number; hash: string }[];
}

/** A request's tools, by shape. */
export interface TraceTools {
  count: number;
  /** Characters of the tools array as JSON. */
  chars: number;
  hash: string;
  /** Function names (the model calls tools by these). */
  names: string[];
}

/** The request's shape. */
export interface TraceRequestShape {
  model: string | null;
  stream: boolean;
  stream_options: { include_usage?: boolean } | null;
  /** `max_tokens` (or `max_completion_tokens`, named in `max_tokens_key`). */
  max_tokens: number | null;
  max_tokens_key: 'max_tokens' | 'max_completion_tokens';
  /** `"auto"`, `"required"`, `"none"`, or `{function: name}` when one function is forced. */
  tool_choice: string | { function: string } | null;
  messages: TraceMessage[];
  tools: TraceTools | null;
  /** Other body keys with a number, boolean or null value (temperature, top_p, seed…) and a few known
   * option strings (reasoning_effort, service_tier…): sent again on replay. */
  extra: Record<string, number | boolean | string | null>;
  /** Other body keys whose values were not kept (objects, free strings), by name only. */
  extra_keys: string[];
  /** Body size. */
  bytes: number;
}

/** What came back. A figure the server did not report is null. */
export interface TraceResponse {
  /** HTTP status; null when no response started. */
  status: number | null;
  /** The hop answered itself (an upstream failure: 502, 504). */
  by_proxy: boolean;
  headers_ms: number | null;
  /** To the first content, reasoning or tool-call token. */
  ttft_ms: number | null;
  /** To the first SSE data event of any kind (the role chunk, usually). Named `ttfc_ms` in older traces, a name
   * that in requests.jsonl and summary.json means the first content token: readTrace reads it as this one. */
  first_chunk_ms: number | null;
  /** Null in imports that do not know it. */
  e2e_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  finish_reason: string | null;
  content_chars: number;
  reasoning_chars: number;
  tool_calls: { name: string; arguments_chars: number }[];
  /** SSE data events (0 for a JSON response). */
  chunks: number;
  bytes: number;
  /** What went wrong: `upstream_error`, `client_gone`, `http_4xx`, `http_5xx`, `stream` (an error event or a
   * malformed or truncated stream), `closed` (the recorder stopped first). */
  error: { kind: string; message: string } | null;
}

/** One chat request, written when it completes. */
export interface TraceRequest {
  kind: 'request';
  /** 1-based, in order of arrival. */
  seq: number;
  /** Wall-clock arrival (ISO 8601). */
  t: string;
  /** Arrival, ms since the header's `started_at`. */
  start_ms: number;
  /** The client connection it came on: recorder-local id, which request on it (1 = first), and how long it
   * sat idle since its previous response ended (null on its first). Null in imports that do not know it. */
  connection: { id: number; nth: number; idle_ms: number | null } | null;
  /** `c1`, `c2`, … in order of first request. */
  conversation: string;
  /** 1-based within the conversation. */
  round: number;
  /** Since the conversation's previous response ended (null on its first round). */
  think_ms: number | null;
  path: string;
  request: TraceRequestShape;
  response: TraceResponse;
}

/** One message's content, written once per distinct hash, only with `--content`. */
export interface TraceContent {
  kind: 'content';
  hash: string;
  /** The message as the client sent it (tool_call ids included). */
  message: Record<string, unknown>;
}

/** A tools array's content, once per distinct hash, only with `--content`. */
export interface TraceToolsContent {
  kind: 'tools';
  hash: string;
  tools: unknown[];
}

/** A client connection closed. */
export interface TraceClose {
  kind: 'close';
  connection: number;
  /** ms since `started_at`. */
  at_ms: number;
  /** Requests it carried. */
  served: number;
  /** Since its last response ended (null: closed mid-request or never used). */
  idle_ms: number | null;
  /** `client`: the harness closed it; `proxy`: the recorder did (shutdown, or mirroring the upstream's
   * close); `error`: it broke. */
  by: 'client' | 'proxy' | 'error';
}

/** The recorder stopped recording before it stopped forwarding (its volume was full, failing or stalled):
 * the last line, written at exit when the volume takes it. Requests after `at_ms` were forwarded, not recorded. */
export interface TraceIncomplete {
  kind: 'incomplete';
  /** ms since `started_at` when recording stopped. */
  at_ms: number;
  /** Why, in words (`cannot write …: no space left on device (ENOSPC)`). */
  reason: string;
  /** Chat requests forwarded and not in the trace. */
  requests_not_recorded: number;
  /** Lines of any kind not in the trace (requests, closes, contents). */
  lines_not_recorded: number;
}

/** Any line of a trace file. */
export type TraceLine = TraceHeader | TraceRequest | TraceContent | TraceToolsContent | TraceClose | TraceIncomplete;
