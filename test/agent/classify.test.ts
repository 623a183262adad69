// Error classes: each transport class from a real failure on loopback where one can be made (refused, a TLS
// server that never answers, a run stopped mid-request), and the code-walking rules on undici-shaped errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { classifyTransportError, ERROR_CLASSES, sendRound, throughProxy, type RoundTarget } from '../../src/agent/index.js';
import { roundTarget } from '../helpers/round.js';
import { engineSchema } from '../../src/config/index.js';
import { startEngine } from '../../src/engine/index.js';
import type { TestContext } from 'node:test';

const BODY = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });

function target(t: TestContext, url: string, deadlines: Partial<RoundTarget['deadlines']> = {}, connectTimeoutMs = 5000): RoundTarget {
  return roundTarget(t, url, { deadlines, connectTimeoutMs });
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

test("a TLS server that never answers the handshake is connect_timeout (undici's connect timeout before the watchdog's)", async (t) => {
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
  assert.equal(classifyTransportError(wrapped, true, 5900).class, 'connection_reset', "pending 5.9 s: the request was in the server's hands");
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

test("on a proxied path a connect failure is the proxy's only when it names the proxy (or names nothing)", () => {
  const proxy = 'http://user:secret@10.0.0.9:3128';
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:3128'), { code: 'ECONNREFUSED', address: '10.0.0.9', port: 3128 });
  const mine = throughProxy(classifyTransportError(refused, false), refused, proxy);
  assert.equal(mine.class, 'proxy_unreachable');
  assert.equal(mine.message, 'proxy http://10.0.0.9:3128 unreachable (connection_refused): connect ECONNREFUSED 10.0.0.9:3128', 'named without its credentials');
  const dns = Object.assign(new Error('getaddrinfo ENOTFOUND proxy.corp'), { code: 'ENOTFOUND', hostname: 'proxy.corp' });
  assert.equal(throughProxy(classifyTransportError(dns, false), dns, 'http://proxy.corp:3128').class, 'proxy_unreachable');
  // The TLS handshake to the target inside the tunnel timing out names the target: not the proxy's.
  const tunnelTimeout = Object.assign(new Error('Connect Timeout Error (attempted address: target.corp:443, timeout: 800ms)'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
  assert.equal(throughProxy(classifyTransportError(tunnelTimeout, false), tunnelTimeout, proxy).class, 'connect_timeout');
  // No proxy, or a failure that is not about connecting: unchanged.
  assert.equal(throughProxy(classifyTransportError(refused, false), refused, null).class, 'connection_refused');
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  assert.equal(throughProxy(classifyTransportError(reset, false), reset, proxy).class, 'connection_reset');
});
