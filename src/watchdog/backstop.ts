// undici's own headers/body timeouts, set as a backstop behind the watchdog: they must never fire before a
// watchdog deadline would (they tick coarsely and would turn a hang, or a long prefill, into an `other` error).
import type { Workload } from '../config/index.js';

/** Slack added to every backstop, beyond undici's ~1 s timer coarseness. */
export const BACKSTOP_SLACK_MS = 5000;

/**
 * The undici timeouts for a workload's watchdog. The body timer runs from the response headers, so it covers
 * the silence before the first token (`first_token_ms`), not only `stall_ms`; under `on_hang: wait` a hung
 * request is kept until `total_ms`, so both timers wait that long.
 */
export function backstopTimeouts(w: Workload['watchdog']): { headersTimeoutMs: number; bodyTimeoutMs: number } {
  if (w.on_hang === 'wait') return { headersTimeoutMs: w.total_ms + BACKSTOP_SLACK_MS, bodyTimeoutMs: w.total_ms + BACKSTOP_SLACK_MS };
  return { headersTimeoutMs: w.headers_ms + BACKSTOP_SLACK_MS, bodyTimeoutMs: Math.max(w.stall_ms, w.first_token_ms) + BACKSTOP_SLACK_MS };
}
