import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectionTracker, REQUEST_ID_HEADER, Transport, sendStream } from '../../src/transport/index.js';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function transport(url: string, connection: 'per-agent' | 'pool' = 'per-agent') {
  return new Transport({
    url,
    path: 'direct',
    tls: { caFile: null, insecure: false, servername: null },
    connection,
    agents: 2,
    poolConnections: null,
    keepAliveTimeoutMs: 10_000,
    connectTimeoutMs: 2000,
    headersTimeoutMs: 5000,
    bodyTimeoutMs: 5000,
  });
}

function send(tr: Transport, lane: number, tracker: ConnectionTracker): Promise<{ id: string; body: string }> {
  const id = tracker.nextRequestId();
  return new Promise((resolve, reject) => {
    let body = '';
    sendStream(
      tr.lane(lane),
      { method: 'POST', path: '/x', headers: { [REQUEST_ID_HEADER]: id }, body: '{}' },
      {
        onStart() {},
        onHeaders() {},
        onData(c) {
          body += c.toString();
        },
        onEnd() {
          resolve({ id, body });
        },
        onError: reject,
      },
    );
  });
}

test('requests on one keep-alive socket are numbered 1, 2, 3 with the idle time before each reuse', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const url = await listen(server);
  const tracker = new ConnectionTracker();
  const tr = transport(url);
  t.after(async () => {
    tracker.close();
    await tr.close();
    server.close();
  });
  const seen = [];
  for (let i = 0; i < 3; i += 1) {
    const { id } = await send(tr, 0, tracker);
    seen.push(tracker.connectionOf(id));
    tracker.release(id);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(
    seen.map((c) => c?.nth),
    [1, 2, 3],
  );
  assert.equal(new Set(seen.map((c) => c?.id)).size, 1);
  assert.equal(seen[0]?.idle_ms, null);
  assert.ok((seen[1]?.idle_ms ?? 0) >= 15, `idle ${seen[1]?.idle_ms}`);
  assert.ok((seen[0]?.local_port ?? 0) > 0);
  assert.equal(seen[0]?.tls, null);
});

test("two agents in per-agent mode use two sockets; a second tracker ignores the first tracker's requests", async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const url = await listen(server);
  const tracker = new ConnectionTracker();
  const other = new ConnectionTracker();
  const tr = transport(url);
  t.after(async () => {
    tracker.close();
    other.close();
    await tr.close();
    server.close();
  });
  const [a, b] = await Promise.all([send(tr, 0, tracker), send(tr, 1, tracker)]);
  assert.notEqual(tracker.connectionOf(a.id)?.id, undefined);
  assert.notEqual(tracker.connectionOf(a.id)?.local_port, tracker.connectionOf(b.id)?.local_port);
  assert.equal(other.connectionOf(a.id), null);
  assert.equal(tracker.socketsOpened, 2);
});
