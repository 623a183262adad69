// What the hop allows its clients: a request head that trickles in is cut at the headers timeout (the recorder
// allowed 601 s), an idle kept-alive connection is not (it waits for the keep-alive time alone), and past the
// connection cap a new connection is closed at once and counted, while those open carry on.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startHop, type HopHandle } from '../../src/hop/index.js';

async function upstream(t: TestContext): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

async function plainHop(t: TestContext, options: { headersTimeoutMs?: number; maxConnections?: number }): Promise<HopHandle> {
  const hop = await startHop({ upstream: await upstream(t), tls: false, ...options });
  t.after(() => hop.close());
  return hop;
}

/** A raw socket to the hop, with everything it is sent and whether it closed; every wait bounded. */
async function rawSocket(t: TestContext, hop: HopHandle): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(hop.port, '127.0.0.1');
  t.after(() => socket.destroy());
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

/** Resolves with what `promise` gave, or rejects after `ms` (a margin, never the thing measured). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

const REQUEST = 'GET /v1/models HTTP/1.1\r\nHost: h\r\n\r\n';

test('a request head that trickles in is cut (408) at the headers timeout; an idle kept-alive connection outlives it and serves its next request', async (t) => {
  const hop = await plainHop(t, { headersTimeoutMs: 300 });
  const idle = await rawSocket(t, hop);
  idle.socket.write(REQUEST);
  const slow = await rawSocket(t, hop);
  slow.socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\n');
  await within(slow.closed, 15_000, 'the trickling request was cut');
  assert.match(slow.received(), /^HTTP\/1\.1 408 /);
  // The kept-alive connection has been idle for longer than the headers timeout by now: still there.
  assert.match(idle.received(), /^HTTP\/1\.1 200 /);
  await new Promise((resolve) => setTimeout(resolve, 600));
  idle.socket.write(REQUEST);
  await within(
    new Promise<void>((resolve) => {
      const check = (): void => void (idle.received().split('HTTP/1.1 200').length === 3 ? resolve() : idle.socket.once('data', check));
      check();
    }),
    15_000,
    'the second answer on the idle connection',
  );
  assert.equal(hop.stats().connections, 2);
});

test('past the connection cap a new connection is closed at once and counted; the ones open are served', async (t) => {
  const hop = await plainHop(t, { maxConnections: 2 });
  const open = [await rawSocket(t, hop), await rawSocket(t, hop)];
  const third = await rawSocket(t, hop);
  await within(third.closed, 15_000, 'the third connection was closed');
  assert.equal(third.received(), '');
  assert.equal(hop.stats().dropped_connections, 1);
  for (const c of open) c.socket.write(REQUEST);
  await within(Promise.all(open.map((c) => new Promise<void>((resolve) => c.socket.once('data', () => resolve())))), 15_000, 'the open connections answered');
  for (const c of open) assert.match(c.received(), /^HTTP\/1\.1 200 /);
});
