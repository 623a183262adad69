// Error classes: each transport class from a real failure on loopback where one can be made (refused, a TLS
// server that never answers, a run stopped mid-request), and the code-walking rules on undici-shaped errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { classifyTransportError, ERROR_CLASSES, sendRound, type RoundTarget } from '../../src/agent/index.js';
import { Transport, ConnectionTracker } from '../../src/transport/index.js';
import { realClock } from '../../src/watchdog/index.js';
import { engineSchema } from '../../src/config/index.js';
import { startEngine } from '../../src/engine/index.js';
import type { TestContext } from 'node:test';

const BODY = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });

function target(t: TestContext, url: string, deadlines: Partial<RoundTarget['deadlines']> = {}, connectTimeoutMs = 5000): RoundTarget {
  const transport = new Transport({
    url,
    path: 'direct',
    tls: { caFile: null, insecure: false, servername: null },
    connection: 'per-agent',
    agents: 1,
    poolConnections: null,
    keepAliveTimeoutMs: 10_000,
    connectTimeoutMs,
    headersTimeoutMs: 30_000,
    bodyTimeoutMs: 30_000,
  });
  const tracker = new ConnectionTracker();
  t.after(async () => {
    tracker.close();
    await transport.close(100);
  });
  return {
    lane: transport.lane(0),
    tracker,
    clock: realClock,
    deadlines: { connectMs: 5000, headersMs: 5000, firstTokenMs: 5000, stallMs: 5000, totalMs: 10_000, ...deadlines },
    path: 'direct',
    endpoint: '/v1/chat/completions',
    headers: {},
    runStartMs: 0,
  };
}

const request = { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: BODY };

/** A port nothing listens on: bind one, note it, close it. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function listen(t: TestContext, onSocket: (s: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

test('a port nobody listens on is connection_refused', async (t) => {
  const { record } = await sendRound(target(t, `http://127.0.0.1:${await deadPort()}`), request);
  assert.equal(record.status, 'error');
  assert.equal(record.error?.class, 'connection_refused');
  assert.equal(record.error?.code, 'ECONNREFUSED');
  assert.equal(record.connection, null, 'no socket was had');
});

test('a TLS server that never answers the handshake is connect_timeout (undici\'s connect timeout before the watchdog\'s)', async (t) => {
  const port = await listen(t, () => {});
  const { record } = await sendRound(target(t, `https://127.0.0.1:${port}`, { connectMs: 5000 }, 300), request);
  assert.equal(record.error?.class, 'connect_timeout', JSON.stringify(record.error));
});

test('a server that resets a fresh connection before answering is connection_reset, not the keep-alive race', async (t) => {
  const port = await listen(t, (s) => s.once('data', () => s.resetAndDestroy()));
  const { record } = await sendRound(target(t, `http://127.0.0.1:${port}`), request);
  assert.equal(record.error?.class, 'connection_reset', JSON.stringify(record.error));
  assert.equal(record.connection?.nth, 1);
});

/** A server answering the first request on each socket at once, and holding the second for `holdMs` before resetting it. */
async function resetSecondAfter(t: TestContext, holdMs: number): Promise<number> {
  const ok = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nkeep-alive: timeout=60\r\ncontent-length: 14\r\n\r\ndata: [DONE]\n\n';
  return listen(t, (s) => {
    let requests = 0;
    s.on('data', (d: Buffer) => {
      if (!d.toString().startsWith('POST')) return;
      requests += 1;
      if (requests === 1) s.write(ok);
      else setTimeout(() => s.resetAndDestroy(), holdMs);
    });
  });
}

test('a reused socket reset seconds after the request went out is connection_reset, not the keep-alive race (and the race within the window stays one)', async (t) => {
  const slow = await resetSecondAfter(t, 1500);
  const tgt = target(t, `http://127.0.0.1:${slow}`);
  assert.equal((await sendRound(tgt, request)).record.status, 'ok');
  const { record } = await sendRound(tgt, { ...request, round: 2 });
  assert.equal(record.connection?.nth, 2, 'the reused socket');
  assert.equal(record.headers_ms, null);
  assert.ok(record.e2e_ms >= 1400, String(record.e2e_ms));
  assert.equal(record.error?.class, 'connection_reset', JSON.stringify(record.error));
  const quick = await resetSecondAfter(t, 0);
  const tq = target(t, `http://127.0.0.1:${quick}`);
  assert.equal((await sendRound(tq, request)).record.status, 'ok');
  const raced = (await sendRound(tq, { ...request, round: 2 })).record;
  assert.equal(raced.error?.class, 'keepalive_race', JSON.stringify(raced.error));
});

test('a record says what opening its socket cost on its first request, and nothing on reuse', async (t) => {
  const engine = await startEngine({ settings: engineSchema.parse({ decode_step_ms: 1, output_tokens_max: 4 }) });
  t.after(() => engine.close());
  const tgt = target(t, engine.url);
  const first = (await sendRound(tgt, request)).record;
  const second = (await sendRound(tgt, { ...request, round: 2 })).record;
  assert.equal(first.connection?.nth, 1);
  assert.ok(typeof first.connection?.connect_ms === 'number' && first.connection.connect_ms >= 0, JSON.stringify(first.connection));
  assert.equal(first.connection?.tls_ms, null, 'plain http');
  assert.ok((first.connection?.opening ?? 0) >= 1);
  assert.ok(typeof first.connection?.queued_ms === 'number' && first.connection.queued_ms >= 0);
  assert.equal(second.connection?.nth, 2);
  assert.deepEqual([second.connection?.connect_ms, second.connection?.tls_ms, second.connection?.opening], [null, null, null]);
  assert.ok(typeof second.connection?.queued_ms === 'number');
});

test('a run stopped mid-request is aborted', async (t) => {
  const engine = await startEngine({ settings: engineSchema.parse({ faults: [{ kind: 'hang' }] }) });
  t.after(() => engine.close());
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 200);
  const { record } = await sendRound(target(t, engine.url), request, stop.signal);
  assert.equal(record.status, 'error');
  assert.equal(record.error?.class, 'aborted');
});

test('classification walks .cause and uses codes: a fetch TypeError around ECONNRESET on a reused socket is the keep-alive race', () => {
  const inner = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const wrapped = new TypeError('fetch failed', { cause: inner });
  assert.equal(classifyTransportError(wrapped, true).class, 'keepalive_race');
  assert.equal(classifyTransportError(wrapped, true, 200).class, 'keepalive_race');
  assert.equal(classifyTransportError(wrapped, true, 5900).class, 'connection_reset', 'pending 5.9 s: the request was in the server\'s hands');
  assert.equal(classifyTransportError(wrapped, false).class, 'connection_reset');
  assert.equal(classifyTransportError(wrapped, true).code, 'ECONNRESET');
  const cases: [string, string][] = [
    ['UND_ERR_SOCKET', 'connection_reset'],
    ['EPIPE', 'connection_reset'],
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
    ['ECONNREFUSED', 'connection_refused'],
    ['SOMETHING_ELSE', 'other'],
  ];
  for (const [code, cls] of cases) assert.equal(classifyTransportError(Object.assign(new Error(code), { code }), false).class, cls, code);
  for (const [, cls] of cases) assert.ok(cls in ERROR_CLASSES, `${cls} is a documented class`);
});
