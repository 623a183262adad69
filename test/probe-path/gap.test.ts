// The idle check's gap trial on real sockets (loopback, port 0): a server that closes a connection idle for
// 1 s, and one that advertises a short Keep-Alive hint but keeps its connections (what it does counts, not
// what it says); and the table the command prints.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPathClient, formatProbe, type ProbeReport } from '../../src/probe-path/index.js';
import { gapTrial } from '../../src/probe-path/idle.js';

async function server(t: TestContext, options: { closeIdleMs: number | null; hint: string | null }): Promise<string> {
  const timers = new Map<Socket, NodeJS.Timeout>();
  const s: Server = createServer((req, res) => {
    clearTimeout(timers.get(req.socket));
    res.writeHead(200, { 'content-type': 'application/json', ...(options.hint === null ? {} : { connection: 'keep-alive', 'keep-alive': options.hint }) });
    res.end('{"object":"list","data":[{"id":"m"}]}');
    if (options.closeIdleMs !== null)
      timers.set(
        req.socket,
        setTimeout(() => req.socket.destroy(), options.closeIdleMs),
      );
  });
  s.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const timer of timers.values()) clearTimeout(timer);
    s.closeAllConnections();
    s.close();
  });
  const address = s.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

function client(t: TestContext, url: string) {
  const c = openPathClient({ url, tls: { caFile: null, insecure: false, servername: null }, connectProxy: null, headers: {}, keepAliveTimeoutMs: 60_000 });
  t.after(() => c.close());
  return c;
}

test('a connection idle past the server’s close is seen closed; one idle less is kept', async (t) => {
  const url = await server(t, { closeIdleMs: 1000, hint: null });
  const trial = gapTrial(
    client(t, url),
    { url, path: '/v1/models' },
    (ms) => sleep(ms),
    () => {},
  );
  assert.deepEqual(await Promise.all([trial(400), trial(1600)]), ['kept', 'closed']);
});

test('a Keep-Alive hint of 2 s does not end our side of the connection: the server keeps it, so it is kept', async (t) => {
  const url = await server(t, { closeIdleMs: null, hint: 'timeout=2' });
  const seen: string[] = [];
  const trial = gapTrial(
    client(t, url),
    { url, path: '/v1/models' },
    (ms) => sleep(ms),
    (x) => seen.push(x.headers['keep-alive'] ?? ''),
  );
  assert.equal(await trial(1200), 'kept');
  assert.deepEqual(seen, ['timeout=2']);
});

test('the table says each verdict in a sentence', () => {
  const report: ProbeReport = {
    url: 'http://127.0.0.1:8080/',
    path: 'direct',
    model: 'm',
    idle: { kind: 'closes', keptMs: 2500, closedMs: 3000, estimateMs: 2750, maxIdleMs: 5000, keepAliveHeader: null, tried: [], elapsedMs: 9000 },
    read: { kind: 'cut', atMs: 2004, status: 504, how: 'HTTP 504 from nginx', maxHoldMs: 5000 },
    stream: null,
    body: { kind: 'limit', acceptedBytes: 982_604, rejectedBytes: 1_095_001, how: 'HTTP 413 from nginx', tried: [] },
    elapsedMs: 14_900,
  };
  assert.equal(
    formatProbe(report),
    [
      'path http://127.0.0.1:8080/ (direct), model m, measured in 14.9 s',
      '  idle   closes idle connections after 2.5–3.0 s (kept after 2.5 s idle, closed after 3.0 s)',
      '  read   cuts a held response at ≈ 2.0 s (HTTP 504 from nginx)',
      '  stream skipped',
      '  body   takes bodies up to 960 KiB–1.0 MiB (960 KiB went through, 1.0 MiB refused: HTTP 413 from nginx)',
      '',
    ].join('\n'),
  );
});
