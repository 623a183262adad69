// Error classes: what a failed request means to the person reading the results. Classified on `.code`
// and `.name`, walking `.cause`, never on message text alone. Warning classes: what is wrong with an answer
// that still counts as ok (tool-call markup, wrapped arguments, a call without a name: the answer checks).
import { WARNING_CLASSES, type ErrorInfo, type WarningClass } from '../types/index.js';
import type { AssembledMessage, AssembledToolCall } from '../stream/index.js';
import type { ToolSpec } from '../config/index.js';

export const ERROR_CLASSES = {
  connection_refused: 'nothing listens at the target (ECONNREFUSED)',
  connect_timeout: 'the TCP/TLS connection was not established in time',
  keepalive_race: 'a reused keep-alive socket was closed by the server as the request went out (the keep-alive race): it failed within a second of being sent, before any response byte',
  connection_reset: 'the connection was reset (ECONNRESET) or closed by the other side',
  tls: 'TLS handshake or certificate verification failed',
  dns: 'the host name did not resolve',
  http_429: 'the server is rate limiting (HTTP 429)',
  http_4xx: 'the server rejected the request (HTTP 4xx)',
  http_5xx: 'the server failed the request (HTTP 5xx)',
  server_error_event: 'the stream carried an error on HTTP 200 (SSE `event: error`, or data: {"error": …} mid-stream); the message is the server\'s',
  wrong_content_type: "an HTTP 2xx answer that was not text/event-stream (a proxy's HTML error page, a JSON body): the message names the type and quotes the body",
  malformed_sse: 'a data event was not a chat.completion.chunk, or the body ended inside a line or event (lines with fields SSE does not know are ignored, as the SSE rules say)',
  invalid_json: 'a data line of the stream was not valid JSON',
  invalid_tool_arguments: "a tool call's arguments were not valid JSON (and the answer was not cut by max_tokens)",
  truncated_tool_call: 'the answer hit max_tokens (finish_reason length) inside a tool call, whose arguments are cut-off JSON; the agent resends the round once without it',
  protocol_error:
    'the stream broke the chat-completions protocol: a tool call without an id, a call whose id or name changed, call indexes with a gap, finish_reason tool_calls without a call, data after [DONE] (a call without a name is the warning tool_call_without_name)',
  truncated_stream: 'the stream ended without a finish_reason or [DONE]',
  aborted: 'the run stopped (signal) while the request was in flight',
  proxy_refused: 'the CONNECT proxy refused the tunnel (answered the CONNECT with a status other than 200, e.g. 403 or 407)',
  proxy_unreachable: 'the proxy in front of the target (CONNECT or TLS proxy) could not be reached: refused, not resolvable or not connecting in time; the target itself was never tried',
  other: 'an error roundload has no class for (see message)',
} as const;
export type ErrorClass = keyof typeof ERROR_CLASSES;

/** What can be wrong with an answer that still counts as ok (the record's `warnings`): the catalogue lives in
 * types/ so the workload's thresholds can name its classes too. */
export { WARNING_CLASSES, type WarningClass };

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|ERR_OSSL_)/;

const PROXY_REFUSAL = /^Proxy response \(\d{3}\)/;

function chain(error: unknown): { code: string | null; name: string; message: string }[] {
  const out: { code: string | null; name: string; message: string }[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth += 1) {
    const obj = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown non-Error is described as String() describes it
    out.push({ code: typeof obj.code === 'string' ? obj.code : null, name: typeof obj.name === 'string' ? obj.name : '', message: typeof obj.message === 'string' ? obj.message : String(e) });
    e = obj.cause;
  }
  return out;
}

/** A failure on a reused socket before any response byte is the keep-alive race only this soon after the
 * send: the server's close was already on its way. Later, the request was in the server's hands (a proxy
 * crash while it waited, say): a reset, and never resent by `retry: idempotent-safe`. */
export const KEEPALIVE_RACE_MS = 1000;

/** Classifies a transport error. `reusedSocket`: the request went out on a socket that had served before
 * and no response byte came; `sinceSendMs`: how long after the send it failed (unknown: assumed soon). */
export function classifyTransportError(error: unknown, reusedSocket: boolean, sinceSendMs = 0): ErrorInfo {
  const links = chain(error);
  const codes = links.map((l) => l.code).filter((c): c is string => c !== null);
  const first = links[0];
  const message = first?.message ?? String(error);
  const code = codes.find((c) => c !== 'UND_ERR') ?? null;
  const has = (c: string) => codes.includes(c);
  let cls: ErrorClass = 'other';
  if (has('ECONNREFUSED')) cls = 'connection_refused';
  else if (has('ENOTFOUND') || has('EAI_AGAIN')) cls = 'dns';
  else if (codes.some((c) => TLS_CODES.test(c))) cls = 'tls';
  else if (has('UND_ERR_CONNECT_TIMEOUT') || has('ETIMEDOUT')) cls = 'connect_timeout';
  else if (has('UND_ERR_SOCKET') || has('ECONNRESET') || has('EPIPE') || has('UND_ERR_CLOSED')) cls = reusedSocket && sinceSendMs <= KEEPALIVE_RACE_MS ? 'keepalive_race' : 'connection_reset';
  // undici reports a refused CONNECT as an abort (UND_ERR_ABORTED) that no one asked for; its message carries the status.
  else if (links.some((l) => l.code === 'UND_ERR_ABORTED' && PROXY_REFUSAL.test(l.message))) cls = 'proxy_refused';
  return { class: cls, message, code };
}

export function httpStatusClass(status: number): ErrorClass {
  if (status === 429) return 'http_429';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

export function errorInfo(cls: ErrorClass, message: string, code: string | null = null): ErrorInfo {
  return { class: cls, message, code };
}

/** Raw tool-call markup of the model families roundload meets (DeepSeek V3/V3.1, V3.2/V4 DSML, Qwen/Hermes,
 * Phi/Llama-style): seen in `content` only when the server did not parse the calls out. */
export const TOOL_MARKUP = ['<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '｜DSML｜', '<tool_call>', '<|tool_call|>'] as const;

/** Keys a server's tool-call parser wraps whole argument objects in by mistake (sglang#38924). */
const WRAPPER_KEYS = ['arguments', 'input'] as const;

/**
 * Warning classes of a finished answer (empty when it is clean), each at most once, in catalogue order:
 * tool-call markup in the content or in a call's arguments, arguments wrapped in a spurious
 * `{"arguments": …}`/`{"input": …}` key, a call without a name, an answer with no word in it, a stream that
 * never said why it finished. `tools`: the tools offered (a wrapper key the
 * called tool declares as a parameter is its real argument, not a wrapper); without them every such wrapper
 * counts.
 */
export function answerWarnings(message: AssembledMessage, tools: readonly ToolSpec[] = []): WarningClass[] {
  const out: WarningClass[] = [];
  if (TOOL_MARKUP.some((m) => message.content.includes(m))) out.push('tool_markup_in_content');
  if (message.toolCalls.some((c) => TOOL_MARKUP.some((m) => c.arguments.includes(m)))) out.push('tool_markup_in_arguments');
  if (message.toolCalls.some((c) => wrappedArguments(c, tools))) out.push('wrapped_tool_arguments');
  if (message.toolCalls.some((c) => c.name === '')) out.push('tool_call_without_name');
  if (message.content === '' && message.reasoning === '' && message.toolCalls.length === 0) out.push('empty_answer');
  if (message.finishReason === null) out.push('no_finish_reason');
  return out;
}

/** Whether a call's arguments are one object under a single wrapper key its tool does not declare. */
function wrappedArguments(call: AssembledToolCall, tools: readonly ToolSpec[]): boolean {
  if (!call.argumentsValid) return false;
  const args = parseObject(call.arguments);
  if (args === null) return false;
  const keys = Object.keys(args);
  const key = keys[0];
  if (keys.length !== 1 || key === undefined || !(WRAPPER_KEYS as readonly string[]).includes(key)) return false;
  const inner = args[key];
  // The wrapped value is the real argument object, sometimes encoded once more as a JSON string.
  const wrapped = typeof inner === 'string' ? parseObject(inner) !== null : typeof inner === 'object' && inner !== null && !Array.isArray(inner);
  if (!wrapped) return false;
  const properties = tools.find((t) => t.name === call.name)?.parameters['properties'];
  return !(typeof properties === 'object' && properties !== null && Object.hasOwn(properties, key));
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * What is wrong with the shape of a finished answer, or null when it can be sent back as history. A tool
 * call cut by max_tokens comes first (its arguments are broken because of the cut, not because of a parser),
 * then arguments that are not JSON (the most direct sign of a tool-call parser bug), then other protocol
 * violations.
 */
export function answerError(message: AssembledMessage): ErrorInfo | null {
  const bad = message.toolCalls.find((c) => !c.argumentsValid);
  if (bad !== undefined && message.finishReason === 'length') {
    return errorInfo('truncated_tool_call', `the answer hit max_tokens (finish_reason length) inside tool call ${bad.index} (${bad.name || 'no name'}); its arguments end: ${tail(bad.arguments)}`);
  }
  if (bad !== undefined) return errorInfo('invalid_tool_arguments', `tool call ${bad.index} (${bad.name}) arguments are not valid JSON: ${bad.arguments.slice(0, 120)}`);
  if (message.violations.length > 0) return errorInfo('protocol_error', `the stream broke the protocol: ${message.violations.slice(0, 4).join('; ')}`);
  return null;
}

function tail(text: string): string {
  return text.length <= 80 ? JSON.stringify(text) : JSON.stringify(`…${text.slice(-80)}`);
}

/** Where a connect-level error says it tried to go: `host:port` (or a host alone), when it says. */
function attemptedAddress(error: unknown): { host: string | null; port: number | null } | null {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth += 1) {
    const o = e as { address?: unknown; port?: unknown; hostname?: unknown; message?: unknown; cause?: unknown };
    if (typeof o.address === 'string') return { host: o.address, port: typeof o.port === 'number' ? o.port : null };
    if (typeof o.hostname === 'string') return { host: o.hostname, port: null };
    // undici's connect timeout names it in its message: `(attempted address: host:port, timeout: …)`.
    const m = typeof o.message === 'string' ? /attempted addresse?s?: \[?([^\],]+?)\]?:(\d+)/.exec(o.message) : null;
    if (m !== null) return { host: m[1] ?? null, port: Number(m[2]) };
    e = o.cause;
  }
  return null;
}

const PROXY_CONNECT_CLASSES: ReadonlySet<string> = new Set(['connection_refused', 'dns', 'connect_timeout']);

/**
 * A connect-level failure on a path through a proxy (`proxyUrl`: the CONNECT proxy, or the TLS proxy the
 * requests go to) is the proxy's: `proxy_unreachable`, naming it. Only the proxy is dialled directly there; an
 * error naming another address (a TLS handshake to the target inside the tunnel timing out) keeps its class.
 */
export function throughProxy(info: ErrorInfo, error: unknown, proxyUrl: string | null): ErrorInfo {
  if (proxyUrl === null || !PROXY_CONNECT_CLASSES.has(info.class)) return info;
  let proxy: URL;
  try {
    proxy = new URL(proxyUrl);
  } catch {
    return info;
  }
  const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  const tried = attemptedAddress(error);
  if (tried !== null && tried.port !== null && tried.port !== port) return info;
  if (tried !== null && tried.port === null && tried.host !== null && tried.host !== host) return info;
  return { ...info, class: 'proxy_unreachable', message: `proxy ${proxy.origin} unreachable (${info.class}): ${info.message}` };
}
