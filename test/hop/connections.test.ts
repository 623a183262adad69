import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import type { Socket } from 'node:net';
import { HopConnections } from '../../src/hop/connections.js';
import type { ConnectionClosed } from '../../src/hop/tap.js';

/** Just what the hop's connections use of a socket. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  ended = 0;
  constructor(
    readonly remoteAddress = '127.0.0.1',
    readonly remotePort = 40_001,
  ) {
    super();
  }
  setNoDelay(): this {
    return this;
  }
  end(): this {
    this.ended += 1;
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
}
const asSocket = (s: FakeSocket): Socket => s as unknown as Socket;

test('requests are numbered per connection, and the idle time before one is measured only when none is in flight', () => {
  const conns = new HopConnections({ ownAgent: null });
  const socket = asSocket(new FakeSocket());
  const first = conns.arrive(socket);
  assert.equal(first.nth, 1);
  assert.equal(first.conn.id, 1);
  assert.equal(first.idleMs, null, 'a first request has no idle time');
  const overlapping = conns.arrive(socket);
  assert.equal(overlapping.conn, first.conn, 'the same socket is the same connection');
  assert.equal(overlapping.idleMs, null, 'another request is in flight');
  assert.equal(conns.depart(first.conn), false);
  assert.equal(conns.depart(first.conn), true, 'idle once both responses closed');
  const third = conns.arrive(socket);
  assert.equal(third.nth, 3);
  assert.ok(third.idleMs !== null && third.idleMs >= 0);
  assert.equal(conns.arrive(asSocket(new FakeSocket('127.0.0.1', 40_002))).conn.id, 2);
  assert.equal(conns.opened, 2);
});

test('a TLS socket is matched to the TCP socket under it by peer address (a reset must go there), and a plain one is its own connection', () => {
  const conns = new HopConnections({ ownAgent: null });
  const raw = new FakeSocket('127.0.0.1', 40_010);
  conns.accepted(asSocket(raw), false);
  assert.equal(conns.opened, 0, 'a TCP socket under TLS carries no request itself');
  const tls = conns.adopt(asSocket(new FakeSocket('127.0.0.1', 40_010)));
  assert.equal(tls.raw, asSocket(raw));
  assert.equal(conns.adopt(asSocket(new FakeSocket('127.0.0.1', 40_011))).raw, null, 'no TCP socket from that peer');
  const plain = new FakeSocket('127.0.0.1', 40_012);
  conns.accepted(asSocket(plain), true);
  assert.equal(conns.opened, 3);
  assert.equal(conns.arrive(asSocket(plain)).conn.id, 3);
  conns.destroyAll();
  assert.equal(raw.destroyed, true);
  assert.equal(plain.destroyed, true);
});

test("with an upstream connection per client, the client's connection is ended once its upstream one closed and nothing is in flight, and said closed by the hop", () => {
  const closed: ConnectionClosed[] = [];
  let agents = 0;
  const conns = new HopConnections({ ownAgent: () => ({ destroy: () => (agents += 1) }) as unknown as http.Agent, onClose: (c) => closed.push(c) });
  const client = new FakeSocket();
  const { conn } = conns.arrive(asSocket(client));
  const upstream = new FakeSocket('127.0.0.1', 30_000);
  conns.upstreamSocket(conn, asSocket(upstream));
  conns.upstreamSocket(conn, asSocket(upstream));
  upstream.emit('close');
  assert.equal(client.ended, 0, 'a request is still in flight');
  conns.depart(conn);
  conns.mirrorUpstreamClose(conn);
  assert.equal(client.ended, 1);
  client.emit('close', false);
  assert.equal(agents, 1, "the connection's own agent goes with it");
  assert.equal(closed.length, 1);
  assert.equal(closed[0]?.by, 'hop');
  assert.equal(closed[0]?.served, 1);
  assert.ok(closed[0]?.idleMs !== null && closed[0].idleMs >= 0);
});

test('a connection the client ended is said closed by the client; one closed mid-request has no idle time', () => {
  const closed: ConnectionClosed[] = [];
  const conns = new HopConnections({ ownAgent: null, onClose: (c) => closed.push(c) });
  const byClient = new FakeSocket('127.0.0.1', 40_020);
  conns.depart(conns.arrive(asSocket(byClient)).conn);
  byClient.emit('end');
  byClient.emit('close', false);
  const midRequest = new FakeSocket('127.0.0.1', 40_021);
  conns.arrive(asSocket(midRequest));
  midRequest.emit('close', true);
  assert.deepEqual(
    closed.map((c) => [c.connection, c.by, c.idleMs === null]),
    [
      [1, 'client', false],
      [2, 'error', true],
    ],
  );
});
