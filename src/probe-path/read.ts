// The read timeout of a path for a held response: a streaming chat request whose (large) prompt keeps the
// server busy before its first byte, and when the path gives up on it — an HTTP 502/504 of its own, or the
// connection closed after the headers — against our own bound `maxHoldMs`.
import type { Exchange, ProbeConnection } from './exchange.js';

export interface ReadResult {
  /** `cut`: the path ended it before any body byte; `held`: nothing ended it within the bound;
   * `answered`: the server answered first, so the hold was too short to show a cut. */
  kind: 'cut' | 'held' | 'answered';
  /** When it was cut, or the first byte came, or the bound (ms since send). */
  atMs: number;
  status: number | null;
  /** How it ended, in words: `HTTP 504 from nginx`, `closed after the 200 headers, UND_ERR_SOCKET`, `reset, ECONNRESET`. */
  how: string;
  maxHoldMs: number;
}

function from(x: Exchange): string {
  const server = x.headers.server;
  return server === undefined ? '' : ` from ${server}`;
}

/** Judges one held exchange. A 5xx head with no stream is the path's own answer (or the server's: `how`
 * names the `Server` header when there is one); a stream that ends or breaks before a byte is a cut. */
export function judgeRead(x: Exchange, maxHoldMs: number): ReadResult {
  const base = { status: x.status, maxHoldMs };
  const first = x.chunks.find((c) => c.text.length > 0);
  if (first !== undefined && x.status !== null && x.status < 300) return { ...base, kind: 'answered', atMs: first.atMs, how: `the server's first byte came at ${(first.atMs / 1000).toFixed(1)} s` };
  if (x.status !== null && x.status >= 500 && x.headersMs !== null) return { ...base, kind: 'cut', atMs: x.headersMs, how: `HTTP ${x.status}${from(x)}` };
  if (x.status !== null && x.status >= 300 && x.headersMs !== null) return { ...base, kind: 'answered', atMs: x.headersMs, how: `HTTP ${x.status}${from(x)}` };
  if (x.timedOut) return { ...base, kind: 'held', atMs: maxHoldMs, how: x.status === null ? 'no answer yet' : `the ${x.status} headers, no byte yet` };
  if (x.error !== null) return { ...base, kind: 'cut', atMs: x.error.atMs, how: x.status === null ? `reset, ${x.error.code}` : `closed after the ${x.status} headers, ${x.error.code}` };
  return { ...base, kind: 'cut', atMs: x.endMs ?? 0, how: `ended after the ${x.status ?? '?'} headers with an empty body` };
}

/** About 32k tokens of prompt (4 characters a token): long enough to keep a slow prefill busy. */
export const HOLD_PROMPT_CHARS = 128 * 1024;

export function holdBody(model: string, promptChars = HOLD_PROMPT_CHARS): string {
  const filler = 'hold '.repeat(Math.ceil(promptChars / 5)).slice(0, promptChars);
  return JSON.stringify({ model, stream: true, max_tokens: 1, messages: [{ role: 'user', content: filler }] });
}

export async function measureRead(connection: ProbeConnection, options: { model: string; maxHoldMs: number; onProgress(line: string): void }): Promise<ReadResult> {
  options.onProgress(`read: a streaming request held before its first byte, for at most ${(options.maxHoldMs / 1000).toFixed(0)} s`);
  const x = await connection.send(
    { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: holdBody(options.model) },
    { timeoutMs: options.maxHoldMs, stopAtFirstByte: true },
  );
  return judgeRead(x, options.maxHoldMs);
}
