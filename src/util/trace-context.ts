// W3C trace context of each agent request: a fresh 16-byte trace id and 8-byte span id (the request's own
// span, the parent of whatever the server records for it), sent as `traceparent: 00-<trace>-<span>-01` and
// kept in the record (`trace_id`, `span_id`), so the hung request's trace is found in Jaeger or Tempo.
// Crypto-random bytes drawn from a pool refilled a few hundred requests at a time: one call into the system's
// generator per request would cost the hot path more than the rest of this.
import { randomFillSync } from 'node:crypto';

/** The header SGLang (since PR 10808), vLLM and any OpenTelemetry-instrumented server parent their spans on. */
export const TRACEPARENT_HEADER = 'traceparent';

/** A request's trace id (32 hex) and its span id (16 hex). */
export interface TraceIds {
  traceId: string;
  spanId: string;
}

const TRACE_BYTES = 16;
const SPAN_BYTES = 8;
const PER_REQUEST = TRACE_BYTES + SPAN_BYTES;
/** Requests served by one refill of the pool. */
const POOL_REQUESTS = 256;
const pool = Buffer.alloc(PER_REQUEST * POOL_REQUESTS);
let at = pool.length;

const ZERO_TRACE = '0'.repeat(TRACE_BYTES * 2);
const ZERO_SPAN = '0'.repeat(SPAN_BYTES * 2);

/** Fresh ids for one request; never all zeros (W3C: an all-zero id is invalid). */
export function nextTraceIds(): TraceIds {
  for (;;) {
    if (at === pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    const traceId = pool.toString('hex', at, at + TRACE_BYTES);
    const spanId = pool.toString('hex', at + TRACE_BYTES, at + PER_REQUEST);
    at += PER_REQUEST;
    if (traceId !== ZERO_TRACE && spanId !== ZERO_SPAN) return { traceId, spanId };
  }
}

/** The `traceparent` value of a sampled request: version 00, flags 01. */
export function traceparent(ids: TraceIds): string {
  return `00-${ids.traceId}-${ids.spanId}-01`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A `traceparent` header's trace id and parent span id (version 00, lower-case hex, ids not all zeros);
 * null for anything else, which a server then ignores (a fresh trace of its own). */
export function parseTraceparent(value: unknown): TraceIds | null {
  if (typeof value !== 'string') return null;
  const m = TRACEPARENT.exec(value.trim());
  if (m === null || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  return { traceId: m[1]!, spanId: m[2]! };
}
