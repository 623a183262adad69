// Runs through an HTTP CONNECT proxy (a tiny one in the test): plain and with TLS inside the tunnel, a
// refusal, and a proxy that never answers the CONNECT.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { backend, classes, runTarget } from '../helpers/paths.js';

/** A tiny CONNECT proxy: tunnels, refuses with 403, or never answers. */
async function connectProxy(t: TestContext, mode: 'tunnel' | 'refuse' | 'stall'): Promise<{ url: string; connects: () => number }> {
  let connects = 0;
  const held = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connect', (req, client: Socket) => {
    connects += 1;
    held.add(client);
    client.on('error', () => {});
    client.on('close', () => held.delete(client));
    if (mode === 'refuse') {
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    if (mode === 'stall') return; // read the CONNECT, answer nothing, keep the socket
    const [host, port] = (req.url ?? '').split(':');
    const upstream = netConnect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const s of held) s.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, connects: () => connects };
}

test('through a CONNECT proxy: path proxy, one tunnel per agent reused round after round, plain and with TLS inside', async (t) => {
  const { engine, hop } = await backend(t);
  const proxy = await connectProxy(t, 'tunnel');
  const plain = await runTarget(t, `{url: "${engine.url}", via: {kind: connect, url: "${proxy.url}"}}`, { preflight: true });
  assert.deepEqual(new Set(classes(plain)), new Set(['ok']));
  assert.ok(plain.every((r) => r.path === 'proxy' && r.connection?.tls === null));
  for (const agent of [0, 1])
    assert.deepEqual(
      plain.filter((r) => r.agent === agent).map((r) => r.connection?.nth),
      [1, 2, 3],
    );
  // Two agents' tunnels and the preflight's (its chat request and model list share one): requests never open
  // tunnels of their own.
  assert.equal(proxy.connects(), 3);
  const tls = await runTarget(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}"}, via: {kind: connect, url: "${proxy.url}"}}`);
  assert.deepEqual(new Set(classes(tls)), new Set(['ok']));
  assert.ok(
    tls.every((r) => r.path === 'proxy' && r.connection?.tls?.authorized === true),
    'TLS to the target inside the tunnel, verified',
  );
});

test('a CONNECT proxy that refuses the tunnel: every request is proxy_refused, not an abort', async (t) => {
  const { engine } = await backend(t);
  const proxy = await connectProxy(t, 'refuse');
  const rs = await runTarget(t, `{url: "${engine.url}", via: {kind: connect, url: "${proxy.url}"}}`);
  assert.equal(rs.length, 6);
  assert.deepEqual(new Set(classes(rs)), new Set(['error:proxy_refused']), JSON.stringify(rs[0]?.error));
  assert.match(rs[0]!.error!.message, /403/);
  // With the preflight, the run stops at its start naming the proxy (exit 3).
  await assert.rejects(
    runTarget(t, `{url: "${engine.url}", via: {kind: connect, url: "${proxy.url}"}}`, { preflight: true }),
    (e: Error & { code?: string }) => e.code === 'ERR_PREFLIGHT' && e.message.includes(`the CONNECT proxy ${proxy.url} refused the tunnel`) && /403/.test(e.message),
  );
});

test('a CONNECT proxy that never answers: the requests hang at connect and the run still ends on time', async (t) => {
  const { engine } = await backend(t);
  const proxy = await connectProxy(t, 'stall');
  const started = performance.now();
  const rs = await runTarget(t, `{url: "${engine.url}", via: {kind: connect, url: "${proxy.url}"}}`);
  assert.deepEqual(new Set(classes(rs)), new Set(['hang:connect']), JSON.stringify(rs.map((r) => r.error)));
  // 3 rounds × 0.8 s connect deadline per agent, and the stop grace.
  assert.ok(performance.now() - started < 8000, `ended in ${Math.round(performance.now() - started)} ms`);
  // With the preflight, the run stops at its start: no answer within the connect deadline.
  await assert.rejects(
    runTarget(t, `{url: "${engine.url}", via: {kind: connect, url: "${proxy.url}"}}`, { preflight: true }),
    (e: Error & { code?: string }) => e.code === 'ERR_PREFLIGHT' && /got no answer: watchdog\.connect_ms \(800 ms\) passed in phase connect/.test(e.message),
  );
});
