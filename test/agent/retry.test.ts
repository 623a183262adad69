// The retry policy: which records are resent (pure rule), and an agent that resends once and records both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { backoffMs, retryAfterMs, runAgent, serverAway, shouldRetry, type RoundTarget } from '../../src/agent/index.js';
import { parseWorkload } from '../../src/config/index.js';
import { Transport, ConnectionTracker } from '../../src/transport/index.js';
import { realClock } from '../../src/watchdog/index.js';
import type { RequestRecord, RunEvent } from '../../src/types/index.js';

function rec(over: Partial<RequestRecord>): RequestRecord {
  return {
    t: '',
    run_ms: 0,
    agent: 0,
    conversation: 'a0-c1',
    round: 1,
    phase: 'main',
    path: 'direct',
    status: 'error',
    http_status: null,
    headers_ms: null,
    ttft_ms: null,
    e2e_ms: 5,
    server_ttft_ms: null,
    itl: null,
    chunks: 0,
    bytes: 0,
    request_bytes: 10,
    prompt_tokens: null,
    completion_tokens: null,
    cached_tokens: null,
    tokens_estimated: false,
    finish_reason: null,
    tool_calls: [],
    content_chars: 0,
    reasoning_chars: 0,
    error: null,
    hang: null,
    connection: null,
    ...over,
  };
}
const err = (cls: string) => ({ class: cls, message: cls, code: null });

test('retry none never resends; always resends any error once but never a hang, an abort or a resend', () => {
  const refused = rec({ error: err('connection_refused') });
  assert.equal(shouldRetry('none', refused), false);
  assert.equal(shouldRetry('always', rec({ error: err('http_5xx'), http_status: 500, headers_ms: 3, bytes: 80 })), true);
  assert.equal(shouldRetry('always', rec({ error: err('malformed_sse') })), true);
  assert.equal(shouldRetry('always', rec({ status: 'hang', hang: { phase: 'headers', deadline: 'headers_ms', deadline_ms: 1, last_byte_age_ms: 1 } })), false);
  assert.equal(shouldRetry('always', rec({ error: err('aborted') })), false);
  assert.equal(shouldRetry('always', rec({ error: err('http_5xx'), attempt: 2 })), false);
  assert.equal(shouldRetry('always', rec({ status: 'ok' })), false);
});

test('retry idempotent-safe resends only what got no answer started: refused, or the keep-alive race before any byte', () => {
  assert.equal(shouldRetry('idempotent-safe', rec({ error: err('connection_refused') })), true);
  assert.equal(shouldRetry('idempotent-safe', rec({ error: err('keepalive_race') })), true);
  assert.equal(shouldRetry('idempotent-safe', rec({ error: err('keepalive_race'), bytes: 12, headers_ms: 4 })), false);
  assert.equal(shouldRetry('idempotent-safe', rec({ error: err('keepalive_race'), e2e_ms: 5900 })), false, 'pending seconds: not the race, never resent');
  for (const cls of ['connection_reset', 'http_5xx', 'http_429', 'truncated_stream', 'connect_timeout', 'tls', 'other']) {
    assert.equal(shouldRetry('idempotent-safe', rec({ error: err(cls) })), false, cls);
  }
});

test('an agent with retry idempotent-safe against a refused port records both attempts, the second as attempt 2', async (t) => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  const transport = new Transport({
    url: `http://127.0.0.1:${port}`,
    path: 'direct',
    tls: { caFile: null, insecure: false, servername: null },
    connection: 'per-agent',
    agents: 1,
    poolConnections: null,
    keepAliveTimeoutMs: 10_000,
    connectTimeoutMs: 2000,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 10_000,
  });
  const tracker = new ConnectionTracker();
  t.after(async () => {
    tracker.close();
    await transport.close(100);
  });
  const target: RoundTarget = {
    lane: transport.lane(0),
    tracker,
    clock: realClock,
    path: 'direct',
    endpoint: '/v1/chat/completions',
    headers: {},
    runStartMs: 0,
    deadlines: { connectMs: 3000, headersMs: 3000, firstTokenMs: 3000, stallMs: 3000, totalMs: 5000 },
  };
  for (const [policy, expected] of [
    [
      'idempotent-safe',
      [
        [1, undefined],
        [1, 2],
        [2, undefined],
        [2, 2],
      ],
    ],
    [
      'none',
      [
        [1, undefined],
        [2, undefined],
      ],
    ],
  ] as const) {
    const workload = parseWorkload(`retry: ${policy}\nagents: {rounds: 2, think_time_ms: 0}\n`, 'w.yaml');
    const events: RunEvent[] = [];
    const sent = await runAgent({ index: 0, workload, target, system: '', tools: [], phase: 'main', emit: (e) => events.push(e), stop: new AbortController().signal });
    const records = events.flatMap((e) => (e.kind === 'request' ? [e.record] : []));
    assert.deepEqual(
      records.map((r) => [r.round, r.attempt]),
      expected,
      policy,
    );
    assert.ok(records.every((r) => r.error?.class === 'connection_refused'));
    assert.equal(sent, records.length);
    assert.equal(events.filter((e) => e.kind === 'request_start').length, records.length, 'every attempt is a request in flight');
  }
});

test('the backoff doubles from 250 ms with each failure in a row and stops at 10 s', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 50].map(backoffMs), [0, 250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
});

test('only failures that say the server is away back off: refused, proxy down, 502/503, a fresh socket reset before headers', () => {
  assert.equal(serverAway(rec({ error: err('connection_refused') })), true);
  assert.equal(serverAway(rec({ error: err('proxy_unreachable') })), true);
  assert.equal(serverAway(rec({ error: err('http_5xx'), http_status: 503 })), true);
  assert.equal(serverAway(rec({ error: err('http_5xx'), http_status: 502 })), true);
  assert.equal(serverAway(rec({ error: err('http_5xx'), http_status: 500 })), false);
  assert.equal(serverAway(rec({ error: err('connection_reset') })), true);
  assert.equal(serverAway(rec({ error: err('connection_reset'), headers_ms: 3 })), false, 'a stream cut after headers is not the server away');
  assert.equal(serverAway(rec({ error: err('keepalive_race') })), false);
  assert.equal(serverAway(rec({ status: 'hang', error: null })), false);
  assert.equal(serverAway(rec({ status: 'ok', error: null })), false);
});

test('Retry-After is read as delay-seconds or an HTTP date, never negative, capped, and ignored when malformed', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  assert.equal(retryAfterMs('2', 600_000, now), 2000);
  assert.equal(retryAfterMs(' 0 ', 600_000, now), 0);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:03 GMT', 600_000, now), 3000);
  assert.equal(retryAfterMs('Wednesday, 21-Oct-15 07:28:01 GMT', 600_000, now), 1000, 'the obsolete RFC 850 form');
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', 600_000, now), 0, 'a date already past: at once');
  assert.equal(retryAfterMs('3600', 600_000, now), 600_000, 'at most the watchdog total');
  assert.equal(retryAfterMs('Thu, 22 Oct 2015 07:28:00 GMT', 5000, now), 5000);
  for (const bad of ['', '-1', '1.5', '+3', 'soon', '2 s']) assert.equal(retryAfterMs(bad, 600_000, now), null, JSON.stringify(bad));
  assert.equal(retryAfterMs(null, 600_000, now), null);
});
