// Each fault of the built-in hop, in a whole run on the embedded engine: the records say what it did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { HopFaultEvent, RequestRecord, RunEvent } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

/** A small run through the hop with `faults` (YAML flow list), canaries off, tight deadlines, no preflight
 * (the faults are the agents' to meet; a `cut` or `reset` hop would stop the run at its preflight, exit 3). */
async function runThroughHop(t: import('node:test').TestContext, faults: string, set: string[] = []): Promise<{ records: RequestRecord[]; events: RunEvent[] }> {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: hop-fault
target: {via: {kind: hop, faults: ${faults}}}
agents: {count: 2, rounds: 3, think_time_ms: 20}
conversation: {max_tokens: 16, system_prompt_tokens: 200, first_user_tokens: 50, tool_result_tokens: 40}
watchdog: {connect_ms: 2000, headers_ms: 1200, first_token_ms: 2500, stall_ms: 1000, total_ms: 8000}
monitor: {canary_interval_s: 0}
engine: {decode_step_ms: 4, output_tokens_min: 8, output_tokens_max: 16}
`,
    'hop-fault.yaml',
    { set },
  );
  await executeRun({ workload, out, preflight: false });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.agent - b.agent || a.round - b.round);
  return { records, events: readJsonl<RunEvent>(join(out, 'events.jsonl')) };
}

function faultEvents(events: RunEvent[], fault: string): HopFaultEvent[] {
  return events.filter((e): e is HopFaultEvent => e.kind === 'hop_fault' && e.fault === fault);
}

test('through a healthy hop every request is ok, over TLS, on path hop, reusing one socket per agent', async (t) => {
  // Deadlines of a healthy path: the tight ones are for the faults below. Beside a stress run both agents' first
  // requests (a TLS handshake to the hop, cold code on both sides) once took longer than 1.2 s to their headers.
  const { records } = await runThroughHop(t, '[]', ['watchdog.headers_ms=10000', 'watchdog.first_token_ms=10000', 'watchdog.total_ms=15000']);
  assert.equal(records.length, 6);
  assert.ok(
    records.every((r) => r.status === 'ok' && r.path === 'hop'),
    JSON.stringify(records.map((r) => [r.status, r.error?.class])),
  );
  assert.ok(records.every((r) => r.connection?.tls?.authorized === true && r.connection.tls.protocol?.startsWith('TLS')));
  for (const agent of [0, 1])
    assert.deepEqual(
      records.filter((r) => r.agent === agent).map((r) => r.connection?.nth),
      [1, 2, 3],
    );
});

test('stall: the request after the Nth on a reused connection hangs at headers; the next, on a fresh socket, is ok', async (t) => {
  const { records, events } = await runThroughHop(t, '[{kind: stall, after_requests: 1}]');
  for (const agent of [0, 1]) {
    const rs = records.filter((r) => r.agent === agent);
    assert.deepEqual(
      rs.map((r) => r.status),
      ['ok', 'hang', 'ok'],
    );
    assert.equal(rs[1]!.hang?.phase, 'headers');
    assert.equal(rs[1]!.http_status, null);
    assert.equal(rs[1]!.connection?.nth, 2, 'the stalled request went out on a reused socket');
    assert.equal(rs[2]!.connection?.nth, 1, 'after the hang the agent is on a fresh socket');
  }
  assert.equal(faultEvents(events, 'stall').length, 2);
});

test('cut: after K SSE events the hop goes silent with the socket open: a mid-stream hang with exactly K chunks', async (t) => {
  const { records, events } = await runThroughHop(t, '[{kind: cut, after_chunks: 2}]', ['agents.rounds=2', 'watchdog.stall_ms=700']);
  assert.ok(
    records.every((r) => r.status === 'hang'),
    JSON.stringify(records.map((r) => r.status)),
  );
  for (const r of records) {
    assert.equal(r.hang?.phase, 'mid_stream');
    assert.equal(r.hang?.deadline, 'stall_ms');
    assert.equal(r.http_status, 200);
    assert.equal(r.chunks, 2, 'the role chunk and one token');
    assert.ok(r.ttft_ms !== null);
  }
  assert.equal(faultEvents(events, 'cut').length, records.length);
});

test('buffer: the whole stream arrives at its end: ok, headers early, first token only just before the end', async (t) => {
  // 15 ms decode steps: at least 7 gaps, so an unbuffered stream takes over 100 ms from first token to end.
  const slow = ['engine.decode_step_ms=15', 'agents.rounds=2'];
  const plain = await runThroughHop(t, '[]', slow);
  const { records, events } = await runThroughHop(t, '[{kind: buffer}]', slow);
  assert.ok(records.every((r) => r.status === 'ok'));
  for (const r of records) {
    const tail = r.e2e_ms - r.ttft_ms!;
    assert.ok(tail < 40, `first token ${r.ttft_ms} ms vs end ${r.e2e_ms} ms: delivered in one go`);
    assert.ok(r.headers_ms! < r.ttft_ms! - 60, `headers at ${r.headers_ms} ms came well before the body (${r.ttft_ms} ms)`);
  }
  const plainTail = Math.min(...plain.records.map((r) => r.e2e_ms - r.ttft_ms!));
  assert.ok(plainTail > 80, `without the fault tokens stream over ${plainTail} ms`);
  assert.ok(faultEvents(events, 'buffer').length >= records.length, 'every stream (and the start-up check) was held');
});

test('idle_close silent: a connection idle past T is half-open; the next request on it hangs at headers', async (t) => {
  const { records, events } = await runThroughHop(t, '[{kind: idle_close, after_s: 0.25}]', ['agents.rounds=2', 'agents.think_time_ms=600', 'watchdog.headers_ms=800']);
  for (const agent of [0, 1]) {
    const rs = records.filter((r) => r.agent === agent);
    assert.deepEqual(
      rs.map((r) => r.status),
      ['ok', 'hang'],
    );
    assert.equal(rs[1]!.hang?.phase, 'headers');
    assert.equal(rs[1]!.connection?.nth, 2);
    assert.ok(rs[1]!.connection.idle_ms! >= 550, 'it sat idle past the limit');
  }
  assert.ok(faultEvents(events, 'idle_close').length >= 2);
});

test('idle_close rst: the client learns of the reset while idle and reconnects: ok, never a reused socket', async (t) => {
  const { records, events } = await runThroughHop(t, '[{kind: idle_close, after_s: 0.25, mode: rst}]', ['agents.rounds=2', 'agents.think_time_ms=600']);
  assert.ok(
    records.every((r) => r.status === 'ok'),
    JSON.stringify(records.map((r) => [r.status, r.error?.class])),
  );
  assert.ok(
    records.every((r) => r.connection?.nth === 1),
    'every request on a fresh socket',
  );
  assert.ok(faultEvents(events, 'idle_close').length >= 2);
});

test('reset: a reset connection is a connection_reset error on a fresh socket, no response', async (t) => {
  const { records, events } = await runThroughHop(t, '[{kind: reset, ratio: 1}]');
  assert.equal(records.length, 6);
  for (const r of records) {
    assert.equal(r.status, 'error');
    assert.equal(r.error?.class, 'connection_reset', JSON.stringify(r.error));
    assert.equal(r.http_status, null);
  }
  assert.ok(faultEvents(events, 'reset').length >= 6);
});

test('latency: every response starts at least the added delay late, and completes', async (t) => {
  const { records } = await runThroughHop(t, '[{kind: latency, ms: 300}]', ['agents.rounds=2']);
  assert.ok(records.every((r) => r.status === 'ok'));
  assert.ok(
    records.every((r) => r.headers_ms! >= 300),
    JSON.stringify(records.map((r) => r.headers_ms)),
  );
});
