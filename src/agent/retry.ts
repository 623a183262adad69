// The `retry:` policy: which failed requests are resent, once. Pure, so the rule is tested on records alone.
import type { RequestRecord } from '../types/index.js';
import type { Workload } from '../config/index.js';
import { KEEPALIVE_RACE_MS } from './classify.js';

export type RetryPolicy = Workload['retry'];

/**
 * Whether a finished request is resent under `policy`. Never a hang (a reproducer must show it), never an
 * abort by the run itself, never a resend (one retry at most). `idempotent-safe` resends only failures that
 * got no answer started: nothing listened (`connection_refused`), or a reused keep-alive socket closed before
 * any response byte, within a second of the send (`keepalive_race`: the server had closed it as idle;
 * browsers resend those too).
 */
export function shouldRetry(policy: RetryPolicy, record: RequestRecord): boolean {
  if (policy === 'none' || record.status !== 'error' || record.error === null) return false;
  if ((record.attempt ?? 1) > 1 || record.error.class === 'aborted') return false;
  if (policy === 'always') return true;
  if (record.error.class === 'connection_refused') return true;
  // The race is over within a second of the send: a request that waited longer was in the server's hands.
  return record.error.class === 'keepalive_race' && record.bytes === 0 && record.headers_ms === null && record.e2e_ms <= KEEPALIVE_RACE_MS;
}

/** First wait after a failure that says the server is away; it doubles with each such failure in a row. */
export const BACKOFF_FIRST_MS = 250;
/** The longest wait between two requests of an agent while the server stays away. */
export const BACKOFF_MAX_MS = 10_000;

/**
 * Whether a finished request says the server is away (down, restarting, not yet up behind its proxy), so the
 * agent should wait before its next request instead of spending its rounds in milliseconds: nothing listened
 * (`connection_refused`, `proxy_unreachable`), the proxy or router in front had no server (HTTP 502, 503), or
 * a fresh connection was reset before any response header (`connection_reset`). Not `keepalive_race`: a reused
 * socket the server closed as idle says nothing about the server (the next request, on a new socket, finds
 * out; if the server is away that one is refused and the agent backs off then).
 */
export function serverAway(record: RequestRecord): boolean {
  if (record.status !== 'error' || record.error === null) return false;
  switch (record.error.class) {
    case 'connection_refused':
    case 'proxy_unreachable':
      return true;
    case 'http_5xx':
      return record.http_status === 502 || record.http_status === 503;
    case 'connection_reset':
      return record.headers_ms === null;
    default:
      return false;
  }
}

/** The wait after the `failuresInRow`-th such failure in a row (1 → 250 ms, 2 → 500 ms, … capped at 10 s). */
export function backoffMs(failuresInRow: number): number {
  if (failuresInRow <= 0) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(failuresInRow - 1, 30));
}

/**
 * The wait a `Retry-After` header asks for, in ms: delay-seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015
 * 07:28:00 GMT`, measured from `nowMs`, wall-clock epoch ms: the date is the server's wall clock), never
 * negative, at most `capMs`. Null when the header is absent or neither form (then nothing is honoured).
 */
export function retryAfterMs(value: string | null, capMs: number, nowMs: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // An IMF-fixdate (or the obsolete forms Date.parse also reads); a bare number with a sign or a fraction is neither.
    if (!/[a-z]/i.test(text)) return null;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - nowMs;
  }
  return Math.min(capMs, Math.max(0, Math.round(ms)));
}
