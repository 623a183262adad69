// Error classes: what a failed request means to the person reading the results. Classified on `.code`
// and `.name`, walking `.cause`, never on message text alone.
import type { ErrorInfo } from '../types/index.js';

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
  server_error_event: 'the stream carried an error event (data: {"error": …}) on HTTP 200',
  malformed_sse: 'a stream line was not valid server-sent events or not a chat.completion.chunk',
  invalid_json: 'a data line of the stream was not valid JSON',
  invalid_tool_arguments: 'a tool call\'s arguments were not valid JSON',
  truncated_stream: 'the stream ended without a finish_reason or [DONE]',
  aborted: 'the run stopped (signal) while the request was in flight',
  proxy_refused: 'the CONNECT proxy refused the tunnel (answered the CONNECT with a status other than 200, e.g. 403 or 407)',
  other: 'an error roundload has no class for (see message)',
} as const;
export type ErrorClass = keyof typeof ERROR_CLASSES;

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|ERR_OSSL_)/;

const PROXY_REFUSAL = /^Proxy response \(\d{3}\)/;

function chain(error: unknown): { code: string | null; name: string; message: string }[] {
  const out: { code: string | null; name: string; message: string }[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth += 1) {
    const obj = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
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
