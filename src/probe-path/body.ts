// The largest request body a path accepts: a chat request padded to N bytes, N searched between 64 KiB and
// 64 MiB on a log scale, at most 8 requests. Rejected: HTTP 413, or a reset before any answer (a proxy that
// drops the upload); any other answer means the body got through (the server may still refuse it itself).
import type { Exchange, PathClient } from './exchange.js';

export type BodyOutcome = { accepted: true } | { accepted: false; how: string };

export interface BodyResult {
  /** `limit`: a size was refused (`acceptedBytes` < limit ≤ `rejectedBytes`); `all`: the largest tried went
   * through; `none`: even the smallest was refused. */
  kind: 'limit' | 'all' | 'none';
  /** The largest size accepted, or null. */
  acceptedBytes: number | null;
  /** The smallest size refused, or null. */
  rejectedBytes: number | null;
  /** How the smallest refused size was refused: `HTTP 413 from nginx`, `reset (EPIPE)`. */
  how: string | null;
  tried: { bytes: number; accepted: boolean }[];
}

export interface BodySearchOptions {
  /** @default 64 KiB */
  minBytes?: number;
  /** @default 64 MiB */
  maxBytes?: number;
  /** @default 8 */
  maxRequests?: number;
}

/** Searches the limit with `tryBody`: the largest first (most paths take it: one request), the smallest next,
 * then halving the interval on a log scale while requests are left. */
export async function searchBody(options: BodySearchOptions, tryBody: (bytes: number) => Promise<BodyOutcome>): Promise<BodyResult> {
  const minBytes = options.minBytes ?? 64 * 1024;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const maxRequests = options.maxRequests ?? 8;
  const tried: { bytes: number; accepted: boolean }[] = [];
  const hows = new Map<number, string>();
  const attempt = async (bytes: number): Promise<boolean> => {
    const outcome = await tryBody(bytes);
    tried.push({ bytes, accepted: outcome.accepted });
    if (!outcome.accepted) hows.set(bytes, outcome.how);
    return outcome.accepted;
  };
  if (await attempt(maxBytes)) return { kind: 'all', acceptedBytes: maxBytes, rejectedBytes: null, how: null, tried };
  if (!(await attempt(minBytes))) return { kind: 'none', acceptedBytes: null, rejectedBytes: minBytes, how: hows.get(minBytes) ?? null, tried };
  let lo = minBytes;
  let hi = maxBytes;
  while (tried.length < maxRequests) {
    const mid = Math.round(Math.sqrt(lo * hi));
    if (mid <= lo || mid >= hi) break;
    if (await attempt(mid)) lo = mid;
    else hi = mid;
  }
  return { kind: 'limit', acceptedBytes: lo, rejectedBytes: hi, how: hows.get(hi) ?? null, tried };
}

/** A chat request of exactly `bytes` bytes (its message padded with `x`), asking for one token. */
export function paddedBody(model: string, bytes: number): Buffer {
  const shell = JSON.stringify({ model, stream: true, max_tokens: 1, messages: [{ role: 'user', content: '' }] });
  const pad = Math.max(0, bytes - Buffer.byteLength(shell));
  return Buffer.from(shell.replace('"content":""', `"content":"${'x'.repeat(pad)}"`));
}

/** Accepted unless 413, or a failure before any answer; no answer before the deadline means the body went up
 * and the server is busy with it (a proxy refuses at once). */
export function judgeBody(x: Exchange): BodyOutcome {
  if (x.status === 413) return { accepted: false, how: `HTTP 413${x.headers.server === undefined ? '' : ` from ${x.headers.server}`}` };
  if (x.status === null && x.error !== null) return { accepted: false, how: `reset (${x.error.code})` };
  return { accepted: true };
}

/** The real trial: each size on a fresh connection (a refused upload may leave the socket unusable). The
 * stream's head is enough: the server answers it at once. */
export function bodyTrial(client: PathClient, model: string, onProgress: (line: string) => void): (bytes: number) => Promise<BodyOutcome> {
  return async (bytes) => {
    const x = await client
      .connection()
      .send({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: paddedBody(model, bytes) }, { timeoutMs: 15_000, stopAfterHeaders: true });
    const outcome = judgeBody(x);
    onProgress(`body: ${formatBytes(bytes)} ${outcome.accepted ? wentThrough(x.status) : `refused: ${outcome.how}`}`);
    return outcome;
  };
}

/** What a body that was not refused met: the path took it whole, and the server answered (a 400 for a padded
 * prompt too long for the model is the server's verdict on the content, not the path's on the size) or was
 * still busy with it. */
export function wentThrough(status: number | null): string {
  if (status === null) return 'went through (no answer in 15 s: the server was still reading or prefilling it)';
  if (status < 300) return `went through (HTTP ${status})`;
  return `went through; the server answered HTTP ${status} (to its content, not its size)`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(bytes >= 10 * 1024 * 1024 ? 0 : 1)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}
