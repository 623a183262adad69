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
