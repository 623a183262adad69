// The agent loop against scripted servers: a tool call cut by max_tokens is recovered (and the recovery
// shows in the records), a protocol error never leaks into the next request, a server that is away is
// backed off from, and a conversation ended by its context cap says so.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { runAgent, resolveTools, systemPrompt, TRUNCATION_NOTE } from '../../src/agent/index.js';
import { parseWorkload } from '../../src/config/index.js';
import type { RequestRecord, RunEvent } from '../../src/types/index.js';
import { chunk, fakeChat, okAnswer, sse, usageAndDone } from '../helpers/fake-chat.js';
import { roundTarget } from '../helpers/round.js';

async function agent(t: TestContext, url: string, yaml: string): Promise<{ records: RequestRecord[]; ms: number }> {
  const conversation = yaml.includes('conversation:') ? '' : 'conversation: {system_prompt_tokens: 20, first_user_tokens: 10}\n';
  const workload = parseWorkload(`target: {url: "${url}", model: m}\n${conversation}${yaml}`, 'loop.yaml');
  const events: RunEvent[] = [];
  const started = performance.now();
  await runAgent({
    index: 0,
    workload,
    target: roundTarget(t, url),
    system: systemPrompt(workload.conversation),
    tools: resolveTools(workload.conversation.tools),
    phase: 'main',
    emit: (e) => events.push(e),
    stop: new AbortController().signal,
  });
  const records = events.flatMap((e) => (e.kind === 'request' ? [e.record] : []));
  const starts = events.filter((e) => e.kind === 'request_start').length;
  assert.equal(starts, records.length, 'every request_start has its record');
  return { records, ms: performance.now() - started };
}

const cutToolCall =
  chunk({ tool_calls: [{ index: 0, id: 'call_cut', type: 'function', function: { name: 'read_file', arguments: '{"path": "src/very/long/pa' } }] }) + chunk({}, 'length') + usageAndDone(50, 16);

test('a tool call cut by max_tokens is resent once without it, with a note, and the records show both attempts', async (t) => {
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? sse(res, cutToolCall) : okAnswer(res)));
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 2, think_time_ms: 0}');
  assert.deepEqual(
    records.map((r) => [r.round, r.status, r.error?.class ?? null, r.attempt ?? 1, r.recovery ?? null]),
    [
      [1, 'error', 'truncated_tool_call', 1, null],
      [1, 'ok', null, 2, 'truncated_tool_call'],
      [2, 'ok', null, 1, null],
    ],
  );
  const resend = server.requests[1]!.raw;
  assert.ok(!resend.includes('call_cut') && !resend.includes('src/very/long/pa'), 'the cut answer is not sent back');
  assert.ok(resend.includes(TRUNCATION_NOTE), 'the resend carries the note, so it is not the request that was cut');
  assert.notEqual(resend, server.requests[0]!.raw);
});

test('a tool call without an id fails the round as protocol_error and no later request sends tool_call_id ""', async (t) => {
  const noId = chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'read_file', arguments: '{"path": "a"}' } }] }) + chunk({}, 'tool_calls') + usageAndDone(50, 8);
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? sse(res, noId) : okAnswer(res)));
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 3, think_time_ms: 0}');
  assert.deepEqual(
    records.map((r) => r.error?.class ?? r.status),
    ['protocol_error', 'ok', 'ok'],
  );
  for (const r of server.requests) assert.ok(!/"tool_call_id":\s*""/.test(r.raw), `request ${r.n} sends no empty tool_call_id`);
});

test('while nothing listens the agent backs off 250 ms, 500 ms, 1 s… and records each wait on the next request', async (t) => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const { records, ms } = await agent(t, `http://127.0.0.1:${port}`, 'agents: {count: 1, rounds: 4, think_time_ms: 0}');
  assert.deepEqual(
    records.map((r) => r.error?.class),
    ['connection_refused', 'connection_refused', 'connection_refused', 'connection_refused'],
  );
  assert.deepEqual(
    records.map((r) => r.backoff_ms ?? 0),
    [0, 250, 500, 1000],
  );
  assert.ok(ms >= 1700, `the agent waited (${Math.round(ms)} ms), not burning its rounds`);
});

test('a 503 backs off, a 500 does not, and an ok answer ends the backoff', async (t) => {
  const server = await fakeChat(t, (r, res) => {
    if (r.n <= 2) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"object":"error","message":"no available workers","type":"ServiceUnavailable","param":null,"code":503}');
    } else if (r.n === 4) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"boom"}}');
    } else okAnswer(res);
  });
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 5, think_time_ms: 0}');
  assert.deepEqual(
    records.map((r) => [r.http_status, r.backoff_ms ?? 0]),
    [
      [503, 0],
      [503, 250],
      [200, 500],
      [500, 0],
      [200, 0],
    ],
  );
});

test('think time longer than the backoff is just think time: no backoff_ms recorded', async (t) => {
  const server = await fakeChat(t, (r, res) => {
    if (r.n === 1) {
      res.writeHead(503);
      res.end();
    } else okAnswer(res);
  });
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 2, think_time_ms: 400}');
  assert.deepEqual(
    records.map((r) => r.backoff_ms ?? 0),
    [0, 0],
  );
});

test('with `retry: idempotent-safe` the resend of a refused request waits the backoff too', async (t) => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const { records } = await agent(t, `http://127.0.0.1:${port}`, 'agents: {count: 1, rounds: 1, think_time_ms: 0}\nretry: idempotent-safe');
  assert.deepEqual(
    records.map((r) => [r.attempt ?? 1, r.backoff_ms ?? 0]),
    [
      [1, 0],
      [2, 250],
    ],
  );
});

function tooMany(res: ServerResponse, retryAfter: string | null): void {
  res.writeHead(429, { 'content-type': 'application/json', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) });
  res.end('{"error":{"message":"rate limited","type":"rate_limit_error","code":429}}');
}

/** Between the end of the failed attempt and the send of the resend, from the records (both on the run clock). */
const pauseMs = (failed: RequestRecord, resend: RequestRecord): number => resend.run_ms - (failed.run_ms + failed.e2e_ms);

test('`retry: always` resends a 429 only after its Retry-After seconds, and records the wait as retry_after_ms', async (t) => {
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? tooMany(res, '1') : okAnswer(res)));
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 1, think_time_ms: 0}\nretry: always');
  assert.deepEqual(
    records.map((r) => [r.http_status, r.attempt ?? 1, r.retry_after_ms ?? null, r.backoff_ms ?? 0]),
    [
      [429, 1, null, 0],
      [200, 2, 1000, 0],
    ],
  );
  // A timer never fires early (run_ms and e2e_ms are rounded to 1 µs, hence the 1 ms allowance).
  assert.ok(pauseMs(records[0]!, records[1]!) >= 999, `the resend waited ${pauseMs(records[0]!, records[1]!)} ms`);
});

test('a Retry-After HTTP date is honoured as the time left until it, and a wait past watchdog.total_ms is cut to it', async (t) => {
  // One second ahead, in the header's whole-second resolution: between 0 and 1000 ms left when the agent reads it.
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? tooMany(res, new Date(Date.now() + 2000).toUTCString()) : r.n === 3 ? tooMany(res, '3600') : okAnswer(res)));
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 2, think_time_ms: 0}\nretry: always\nwatchdog: {headers_ms: 400, first_token_ms: 400, total_ms: 1500}');
  assert.deepEqual(
    records.map((r) => [r.round, r.http_status, r.attempt ?? 1]),
    [
      [1, 429, 1],
      [1, 200, 2],
      [2, 429, 1],
      [2, 200, 2],
    ],
  );
  const dated = records[1]!.retry_after_ms!;
  assert.ok(dated >= 1000 && dated <= 2000, `an HTTP date 1-2 s ahead: ${dated} ms`);
  assert.ok(pauseMs(records[0]!, records[1]!) >= dated - 1);
  assert.equal(records[3]!.retry_after_ms, 1500, 'an hour asked for, the watchdog total waited');
  assert.ok(pauseMs(records[2]!, records[3]!) >= 1499);
});

test('the resend waits the larger of the backoff and Retry-After, and records both', async (t) => {
  // A 503 says the server is away (backoff 250 ms); its Retry-After of 0 asks for less, of 1 s for more.
  const unavailable = (res: ServerResponse, retryAfter: string): void => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': retryAfter });
    res.end('{"error":{"message":"no available workers"}}');
  };
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? unavailable(res, '0') : r.n === 3 ? unavailable(res, '1') : okAnswer(res)));
  const { records } = await agent(t, server.url, 'agents: {count: 1, rounds: 2, think_time_ms: 0}\nretry: always');
  assert.deepEqual(
    records.map((r) => [r.http_status, r.attempt ?? 1, r.backoff_ms ?? 0, r.retry_after_ms ?? null]),
    [
      [503, 1, 0, null],
      [200, 2, 250, 0],
      [503, 1, 0, null],
      [200, 2, 250, 1000],
    ],
  );
  assert.ok(pauseMs(records[0]!, records[1]!) >= 249, 'the backoff, longer than Retry-After: 0');
  assert.ok(pauseMs(records[2]!, records[3]!) >= 999, 'Retry-After, longer than the backoff');
});

test('Retry-After is not honoured without a retry policy: the next round goes after think time', async (t) => {
  const server = await fakeChat(t, (r, res) => (r.n === 1 ? tooMany(res, '30') : okAnswer(res)));
  const { records, ms } = await agent(t, server.url, 'agents: {count: 1, rounds: 2, think_time_ms: 0}');
  assert.deepEqual(
    records.map((r) => [r.round, r.http_status, r.attempt ?? 1, r.retry_after_ms ?? null]),
    [
      [1, 429, 1, null],
      [2, 200, 1, null],
    ],
  );
  assert.ok(ms < 30_000);
});

test('a conversation ended early by max_context_tokens marks its last record with the context and the rounds left', async (t) => {
  const server = await fakeChat(t, (_r, res) => okAnswer(res));
  const { records } = await agent(
    t,
    server.url,
    'agents: {count: 1, rounds: 8, think_time_ms: 0}\nconversation: {system_prompt_tokens: 20, first_user_tokens: 10, user_turn_tokens: 100, max_context_tokens: 250, tools: none}',
  );
  assert.ok(records.length >= 2 && records.length < 8, `${records.length} rounds ran`);
  const last = records[records.length - 1]!;
  assert.deepEqual(last.context_cap?.rounds_left, 8 - records.length);
  assert.ok(last.context_cap.context_tokens >= 250);
  assert.ok(records.slice(0, -1).every((r) => r.context_cap === undefined));
});
