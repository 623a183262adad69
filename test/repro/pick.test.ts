// Picking what a reproducer replays: the failing connection's requests in socket order, with their idle gaps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickSequence } from '../../src/repro/index.js';
import { NoFailureError } from '../../src/errors.js';
import type { RequestRecord } from '../../src/types/index.js';
import { record } from '../report/fixtures.js';

/** A request of the run (report's fixture), on socket `conn` = [id, nth, idle_ms]. */
function rec(over: Partial<RequestRecord> & { conn?: [string, number, number | null] | null }): RequestRecord {
  const { conn, ...rest } = over;
  const [id, nth, idle] = conn ?? ['c1', 1, null];
  return record({
    path: 'hop',
    headers_ms: 10,
    e2e_ms: 100,
    itl: null,
    chunks: 10,
    bytes: 1000,
    request_bytes: 2000,
    prompt_tokens: 500,
    completion_tokens: 16,
    cached_tokens: null,
    content_chars: 64,
    connection: conn === null ? null : { id, nth, local_port: 5000, age_ms: 0, idle_ms: idle, tls: null },
    ...rest,
  });
}

const hang = (phase: 'headers' | 'mid_stream'): RequestRecord['hang'] => ({ phase, deadline: phase === 'headers' ? 'headers_ms' : 'stall_ms', deadline_ms: 1200, last_byte_age_ms: 1200 });

test('the first hang picks its socket: every request sent on it up to the hang, in nth order, other sockets left out', () => {
  const records = [
    rec({ run_ms: 0, conn: ['c1', 1, null] }),
    rec({ run_ms: 10, agent: 1, conversation: 'a1-c1', conn: ['c2', 1, null] }),
    rec({ run_ms: 300, round: 3, conn: ['c1', 3, 90], request_bytes: 3000, status: 'hang', hang: hang('headers'), http_status: null }),
    rec({ run_ms: 150, round: 2, conn: ['c1', 2, 50], request_bytes: 2500 }),
    rec({ run_ms: 2000, round: 4, conn: ['c3', 1, null] }),
  ];
  const s = pickSequence(records);
  assert.equal(s.connection, 'c1');
  assert.deepEqual(
    s.requests.map((r) => [r.nth, r.round, r.bytes, r.idle_ms, r.status]),
    [
      [1, 1, 2000, 0, 'ok'],
      [2, 2, 2500, 50, 'ok'],
      [3, 3, 3000, 90, 'hang'],
    ],
  );
  assert.equal(s.failure.status, 'hang');
  assert.equal(s.failure.request, 3);
  assert.equal(s.failure.nth, 3);
  assert.equal(s.failure.hang?.phase, 'headers');
  assert.deepEqual(s.failures, { hangs: 1, errors: 0 });
});

test("each request of the sequence carries the run's traceparent again (none for a record without well-formed ids)", () => {
  const traced = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' };
  const s = pickSequence([
    rec({ round: 1, conn: ['c1', 1, null], ...traced }),
    rec({ round: 2, run_ms: 500, conn: ['c1', 2, 10], status: 'hang', hang: hang('mid_stream'), trace_id: 'not hex', span_id: '00f067aa0ba902b7' }),
  ]);
  assert.deepEqual(
    s.requests.map((r) => r.traceparent),
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', null],
  );
});

test('a hang is preferred to an earlier error; without any hang the first error is picked', () => {
  const error = { class: 'http_5xx', message: 'HTTP 502', code: null };
  const records = [
    rec({ run_ms: 50, status: 'error', error, http_status: 502, conn: ['c1', 1, null] }),
    rec({ run_ms: 900, status: 'hang', hang: hang('mid_stream'), conn: ['c2', 1, null], conversation: 'a1-c1' }),
  ];
  assert.equal(pickSequence(records).connection, 'c2');
  const onlyErrors = pickSequence([records[0]!, rec({ run_ms: 10, conn: ['c5', 1, null] })]);
  assert.equal(onlyErrors.connection, 'c1');
  assert.equal(onlyErrors.failure.status, 'error');
  assert.equal(onlyErrors.failure.error_class, 'http_5xx');
  assert.equal(onlyErrors.failure.http_status, 502);
});

test('without the recorded idle time the gap is the previous end to this send; never negative', () => {
  const records = [
    rec({ run_ms: 1000, e2e_ms: 400, conn: ['c1', 1, null] }),
    rec({ run_ms: 1650, round: 2, conn: ['c1', 2, null] }),
    rec({ run_ms: 1700, round: 3, conn: ['c1', 3, null], status: 'hang', hang: hang('headers') }),
  ];
  assert.deepEqual(
    pickSequence(records).requests.map((r) => r.idle_ms),
    [0, 250, 0],
  );
});

test('--connection picks that socket and its first failure; requests after the failure are left out', () => {
  const records = [
    rec({ run_ms: 0, status: 'hang', hang: hang('headers'), conn: ['c1', 1, null] }),
    rec({ run_ms: 100, conn: ['c2', 1, null], conversation: 'a1-c1' }),
    rec({ run_ms: 300, conn: ['c2', 2, 20], conversation: 'a1-c1', round: 2, status: 'hang', hang: hang('mid_stream') }),
    rec({ run_ms: 900, conn: ['c2', 3, 20], conversation: 'a1-c1', round: 3 }),
  ];
  const s = pickSequence(records, { connection: 'c2' });
  assert.equal(s.connection, 'c2');
  assert.deepEqual(
    s.requests.map((r) => r.nth),
    [1, 2],
  );
  assert.equal(s.failure.hang?.phase, 'mid_stream');
});

test('a failure that never had a socket is replayed alone', () => {
  const s = pickSequence([rec({ run_ms: 0 }), rec({ run_ms: 50, status: 'hang', hang: { phase: 'connect', deadline: 'connect_ms', deadline_ms: 2000, last_byte_age_ms: 2000 }, conn: null })]);
  assert.equal(s.connection, null);
  assert.equal(s.requests.length, 1);
  assert.equal(s.failure.hang?.phase, 'connect');
});

test('a run with no hang or error, or a connection without one, is refused with a one-line NoFailureError (exit 2)', () => {
  const ok = [rec({ run_ms: 0 }), rec({ run_ms: 10, conn: ['c1', 2, 5] })];
  assert.throws(
    () => pickSequence(ok),
    (e: unknown) => e instanceof NoFailureError && e.exitCode === 2 && /no hang or error to reproduce \(2 requests, all ok\)/.test(e.message) && !e.message.includes('\n'),
  );
  assert.throws(() => pickSequence(ok, { connection: 'c1' }), /connection c1 has no hang or error/);
  const withHang = [...ok, rec({ run_ms: 20, status: 'hang', hang: hang('headers'), conn: ['c4', 1, null] })];
  assert.throws(() => pickSequence(withHang, { connection: 'c9' }), /connection c9 is not in this run; connections with a failure: c4/);
});
