import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { faultModules, HopFaults } from '../../src/hop/fault-set.js';
import type { Conn, FaultRequest, FaultTools, HopFaultFired } from '../../src/hop/fault.js';
import { guardTap } from '../../src/hop/tap.js';

const tools = (fired: string[]): FaultTools => ({ fire: (fault, _conn, _n, detail) => fired.push(`${fault}: ${detail}`), count: () => {}, reset: () => {}, closed: () => false });
const conn = { id: 1 } as Parameters<FaultTools['reset']>[0];

test('the hop faults act in a fixed order whatever order they are given in, one module per kind', () => {
  const kinds = faultModules([
    { kind: 'cut', after_chunks: 2 },
    { kind: 'latency', ms: 5, jitter_ms: 0 },
    { kind: 'buffer' },
    { kind: 'stall', after_requests: 1 },
    { kind: 'cut', after_chunks: 9 },
  ]).map((m) => m.kind);
  assert.deepEqual(kinds, ['stall', 'latency', 'buffer', 'cut']);
});

test('a cut body passes whole SSE events up to the cut, then nothing, and keeps the response open; other bodies pass', () => {
  const fired: string[] = [];
  const [cut] = faultModules([{ kind: 'cut', after_chunks: 2 }]);
  assert.equal(cut?.body?.(conn, 1, false, tools(fired)), null, 'a body that is not a stream is not cut');
  const filter = cut.body(conn, 1, true, tools(fired))!;
  const out: string[] = [];
  filter.data(Buffer.from('data: 1\n\ndata: 2\n\ndata: 3\n\n'), (c) => out.push(c.toString()));
  assert.equal(out.join(''), 'data: 1\n\ndata: 2\n\n');
  assert.equal(
    filter.end((c) => out.push(c.toString())),
    false,
    'the client is left waiting',
  );
  assert.deepEqual(fired, ['cut: stopped forwarding after 2 SSE events (socket kept open)']);
});

test('a buffered body is held until the upstream ends, then sent at once and ended', () => {
  const fired: string[] = [];
  const filter = faultModules([{ kind: 'buffer' }])[0]!.body!(conn, 3, true, tools(fired))!;
  const out: string[] = [];
  filter.data(Buffer.from('data: 1\n\n'), (c) => out.push(c.toString()));
  filter.data(Buffer.from('data: 2\n\n'), (c) => out.push(c.toString()));
  assert.equal(out.length, 0);
  assert.equal(
    filter.end((c) => out.push(c.toString())),
    true,
  );
  assert.deepEqual(out, ['data: 1\n\ndata: 2\n\n']);
  assert.deepEqual(fired, ['buffer: held 18 bytes until the upstream response ended']);
});

/** A request arriving as the n-th on `c`, read by nothing (a taken request is drained: `resume`). */
const arrival = (c: Conn, nth: number): FaultRequest => ({ conn: c, nth, seq: nth, req: { resume: () => {} } as unknown as IncomingMessage, tap: guardTap(null) });
const liveConn = (raw: Socket | null, socket: Socket): Conn => ({
  ...conn,
  id: 4,
  socket,
  raw,
  served: 0,
  active: 1,
  idleTimer: null,
  silent: false,
  lastEndMs: null,
  clientEnded: false,
  hopEnded: false,
  agent: null,
  upstreamClosed: false,
});

test('the first fault that does not let a request through decides it: a stalled request is never delayed, and each fault is counted', () => {
  const fired: HopFaultFired[] = [];
  const faults = new HopFaults(
    [
      { kind: 'latency', ms: 5, jitter_ms: 0 },
      { kind: 'stall', after_requests: 1 },
    ],
    { onFault: (f) => fired.push(f), isClosed: () => false },
  );
  const c = liveConn(null, {} as Socket);
  assert.deepEqual(faults.verdict(arrival(c, 1)), { action: 'delay', delayMs: 5 });
  assert.deepEqual(faults.verdict(arrival(c, 2)), { action: 'taken' });
  assert.deepEqual(faults.counts(), { stall: 1, cut: 0, buffer: 0, idle_close: 0, reset: 0, latency: 1 });
  assert.deepEqual(
    fired.map((f) => [f.fault, f.connection, f.request]),
    [['stall', 4, 2]],
    'latency is counted, never announced',
  );
  assert.notEqual(faults.counts(), faults.counts(), 'the counts are a copy');
});

test('a reset goes to the TCP socket under a TLS connection, and destroys a plain one', () => {
  const calls: string[] = [];
  const faults = new HopFaults([{ kind: 'reset', ratio: 1, seed: 1 }], { isClosed: () => false });
  const socket = { destroy: () => calls.push('destroy') } as unknown as Socket;
  const raw = { resetAndDestroy: () => calls.push('rst') } as unknown as Socket;
  assert.deepEqual(faults.verdict(arrival(liveConn(raw, socket), 1)), { action: 'taken' });
  assert.deepEqual(faults.verdict(arrival(liveConn(null, socket), 1)), { action: 'taken' });
  assert.deepEqual(calls, ['rst', 'destroy']);
});

test('without faults every request goes through, bodies pass untouched and nothing is counted; a closing hop arms no idle fault', () => {
  const none = new HopFaults([], { isClosed: () => false });
  const c = liveConn(null, {} as Socket);
  assert.deepEqual(none.verdict(arrival(c, 1)), { action: 'forward' });
  assert.equal(none.body(c, 1, true), null);
  assert.deepEqual(none.counts(), { stall: 0, cut: 0, buffer: 0, idle_close: 0, reset: 0, latency: 0 });
  const closing = new HopFaults([{ kind: 'idle_close', after_s: 1, mode: 'rst' }], { isClosed: () => true });
  closing.idle(c);
  assert.equal(c.idleTimer, null);
});

test('a body is filtered by the first fault that filters it: a held (buffer) body is never cut too', () => {
  const fired: HopFaultFired[] = [];
  const faults = new HopFaults([{ kind: 'cut', after_chunks: 1 }, { kind: 'buffer' }], { onFault: (f) => fired.push(f), isClosed: () => false });
  const c = liveConn(null, {} as Socket);
  const filter = faults.body(c, 1, true)!;
  const out: string[] = [];
  filter.data(Buffer.from('data: 1\n\ndata: 2\n\n'), (chunk) => out.push(chunk.toString()));
  assert.equal(out.length, 0, 'held, not cut');
  assert.equal(
    filter.end((chunk) => out.push(chunk.toString())),
    true,
  );
  assert.deepEqual(out, ['data: 1\n\ndata: 2\n\n']);
  assert.deepEqual(
    fired.map((f) => f.fault),
    ['buffer'],
  );
});

test('a stall with a ratio stalls a seeded share of the requests past after_requests, the same ones for the same seed; without one, every one', () => {
  const taken = (faults: HopFaults, seqs: readonly number[]): number[] => seqs.filter((seq) => faults.verdict({ ...arrival(liveConn(null, {} as Socket), 2), seq }).action === 'taken');
  const seqs = Array.from({ length: 400 }, (_, i) => i + 1);
  const every = new HopFaults([{ kind: 'stall', after_requests: 1 }], { isClosed: () => false });
  assert.equal(taken(every, seqs).length, 400, 'no ratio: every request past after_requests stalls, as before');
  const share = (seed: number): number[] => taken(new HopFaults([{ kind: 'stall', after_requests: 1, ratio: 0.25, seed }], { isClosed: () => false }), seqs);
  const a = share(3);
  assert.ok(a.length > 70 && a.length < 130, `about a quarter stall: ${a.length} of 400`);
  assert.deepEqual(share(3), a, 'the same seed, the same requests');
  assert.notDeepEqual(share(4), a, 'another seed, other requests');
  const first = new HopFaults([{ kind: 'stall', after_requests: 1, ratio: 1, seed: 3 }], { isClosed: () => false });
  assert.equal(first.verdict(arrival(liveConn(null, {} as Socket), 1)).action, 'forward', 'the first request on a connection is served whatever the ratio');
  assert.equal(taken(new HopFaults([{ kind: 'stall', after_requests: 1, ratio: 0, seed: 3 }], { isClosed: () => false }), seqs).length, 0, 'ratio 0: none');
});
