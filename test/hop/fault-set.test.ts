import { test } from 'node:test';
import assert from 'node:assert/strict';
import { faultModules } from '../../src/hop/fault-set.js';
import type { FaultTools } from '../../src/hop/fault.js';

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
