// Which requests a reproducer replays: the failing connection's, in the order they went out on its socket, each
// with the idle gap before it. Pure: records in, a sequence out (tests need no folder).
import { NoFailureError } from '../errors.js';
import type { HangInfo, RequestRecord } from '../types/index.js';

/** One request of the sequence, as the reproducer sends it again. */
export interface ReproRequest {
  conversation: string;
  round: number;
  /** Its place on the recorded socket (1 = the request that opened it). */
  nth: number;
  /** Body size the run sent. */
  bytes: number;
  /** How long the socket sat idle before this request: the record's `connection.idle_ms`, else the gap from
   * the previous request's end to this one's send; 0 for the first. */
  idle_ms: number;
  status: RequestRecord['status'];
  ttft_ms: number | null;
  e2e_ms: number;
  completion_tokens: number | null;
  /** Assistant text the request answered with (characters), to size the answer it carries in the next round. */
  answer_chars: number;
  /** The W3C `traceparent` the run sent it with, sent again so the rerun's server spans join the run's trace
   * (null: the record has none). */
  traceparent: string | null;
}

/** The failure the reproducer looks for: the last request of the sequence. */
export interface ReproFailure {
  status: 'hang' | 'error';
  /** 1-based place in the sequence. */
  request: number;
  nth: number;
  /** Wall-clock time it was sent. */
  t: string;
  hang: Pick<HangInfo, 'phase' | 'deadline' | 'deadline_ms' | 'last_byte_age_ms'> | null;
  error_class: string | null;
  http_status: number | null;
  /** Completion tokens streamed before it failed (null when unknown). */
  tokens: number | null;
  /** The id the run sent it with (what the engine's log names it by), when it is a plain printable id; else null. */
  request_id: string | null;
}

/** Printable ASCII without quotes or backslashes: an id that reads the same in a comment, a string or a grep. */
const PLAIN_ID = /^[\x21-\x7e]{1,128}$/;

function plainId(value: unknown): string | null {
  return typeof value === 'string' && PLAIN_ID.test(value) && !/['"\\]/.test(value) ? value : null;
}

export interface ReproSequence {
  /** The recorded socket's id (`c7`), or null when the failure never got a socket (then it is replayed alone). */
  connection: string | null;
  requests: ReproRequest[];
  failure: ReproFailure;
  /** How many hangs and errors the run had, for the README. */
  failures: { hangs: number; errors: number };
}

const failed = (r: RequestRecord): boolean => r.status === 'hang' || r.status === 'error';
const byTime = (a: RequestRecord, b: RequestRecord): number => a.run_ms - b.run_ms;

/** The failure to reproduce: the first hang (else the first error) of the run, or of `connection` when given. */
function pickFailure(records: readonly RequestRecord[], connection: string | undefined): RequestRecord {
  const pool = connection === undefined ? records : records.filter((r) => r.connection?.id === connection);
  if (connection !== undefined && pool.length === 0) {
    const ids = [
      ...new Set(
        records
          .filter(failed)
          .map((r) => r.connection?.id)
          .filter((id) => id !== undefined),
      ),
    ];
    throw new NoFailureError(`connection ${connection} is not in this run; connections with a failure: ${ids.slice(0, 10).join(', ') || 'none'}`, { context: { connection } });
  }
  const sorted = [...pool].sort(byTime);
  const pick = sorted.find((r) => r.status === 'hang') ?? sorted.find((r) => r.status === 'error');
  if (pick === undefined) {
    const where = connection === undefined ? 'this run' : `connection ${connection}`;
    throw new NoFailureError(`${where} has no hang or error to reproduce (${pool.length} requests, all ok)`, { context: { connection: connection ?? null } });
  }
  return pick;
}

/** The requests of `failure`'s socket up to it, in socket order, with their idle gaps. */
function socketSequence(records: readonly RequestRecord[], failure: RequestRecord): RequestRecord[] {
  const id = failure.connection?.id;
  if (id === undefined) return [failure];
  const nth = failure.connection!.nth;
  return records.filter((r) => r.connection?.id === id && r.connection.nth <= nth).sort((a, b) => a.connection!.nth - b.connection!.nth || byTime(a, b));
}

function toRequest(r: RequestRecord, previous: RequestRecord | undefined): ReproRequest {
  const computed = previous === undefined ? 0 : r.run_ms - (previous.run_ms + previous.e2e_ms);
  const idle = previous === undefined ? 0 : (r.connection?.idle_ms ?? computed);
  return {
    conversation: r.conversation,
    round: r.round,
    nth: r.connection?.nth ?? 1,
    bytes: r.request_bytes,
    idle_ms: Math.max(0, Math.round(idle)),
    status: r.status,
    ttft_ms: r.ttft_ms,
    e2e_ms: r.e2e_ms,
    completion_tokens: r.completion_tokens,
    answer_chars: r.content_chars,
    traceparent: recordedTraceparent(r),
  };
}

/** `00-<trace_id>-<span_id>-01` from a record's ids, when both are well-formed hex; else null. */
function recordedTraceparent(r: RequestRecord): string | null {
  const trace = r.trace_id;
  const span = r.span_id;
  if (typeof trace !== 'string' || typeof span !== 'string' || !/^[0-9a-f]{32}$/.test(trace) || !/^[0-9a-f]{16}$/.test(span)) return null;
  return `00-${trace}-${span}-01`;
}

/**
 * The sequence to replay from a run's request records: by default the socket of the first hang (or first error
 * when none hung), every request sent on it up to the failure, in order.
 * @throws NoFailureError when there is no failure (in the run, or on `connection`).
 */
export function pickSequence(records: readonly RequestRecord[], options: { connection?: string } = {}): ReproSequence {
  const failure = pickFailure(records, options.connection);
  const chain = socketSequence(records, failure);
  const requests = chain.map((r, i) => toRequest(r, chain[i - 1]));
  const h = failure.hang;
  return {
    connection: failure.connection?.id ?? null,
    requests,
    failure: {
      status: failure.status === 'hang' ? 'hang' : 'error',
      request: requests.length,
      nth: failure.connection?.nth ?? 1,
      t: failure.t,
      hang: h === null ? null : { phase: h.phase, deadline: h.deadline, deadline_ms: h.deadline_ms, last_byte_age_ms: h.last_byte_age_ms },
      error_class: failure.error?.class ?? null,
      http_status: failure.http_status,
      tokens: failure.completion_tokens,
      request_id: plainId(failure.request_id),
    },
    failures: { hangs: records.filter((r) => r.status === 'hang').length, errors: records.filter((r) => r.status === 'error').length },
  };
}
