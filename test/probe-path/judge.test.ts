// The judgements of the read, stream and body checks, on exchanges made up as a path would shape them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/probe-path/exchange.js';
import { judgeRead } from '../../src/probe-path/read.js';
import { countBursts, eventArrivals, judgeStream } from '../../src/probe-path/stream.js';
import { judgeBody, paddedBody, searchBody, wentThrough, type BodyResult } from '../../src/probe-path/body.js';
import { bodyLine, idleLine } from '../../src/probe-path/format.js';
import type { IdleResult } from '../../src/probe-path/idle.js';

function exchange(over: Partial<Exchange>): Exchange {
  return { status: 200, headers: {}, headersMs: 5, chunks: [], endMs: null, error: null, timedOut: false, connection: { id: 'c1', nth: 1 }, ...over };
}

const event = (i: number): string => `data: {"choices":[{"delta":{"content":"${i}"}}]}\n\n`;

/** `n` events `gapMs` apart from `startMs`, the first preceded by the engine's first-token comment. */
function spread(n: number, startMs: number, gapMs: number, serverFirstTokenMs: number | null) {
  return Array.from({ length: n }, (_, i) => ({ atMs: startMs + i * gapMs, text: `${i === 0 && serverFirstTokenMs !== null ? `: engine-first-token-ms=${serverFirstTokenMs}\n\n` : ''}${event(i)}` }));
}

test('a proxy 504 after 2 s is a cut, named with the Server header', () => {
  const r = judgeRead(exchange({ status: 504, headersMs: 2003, headers: { server: 'nginx/1.22.1' } }), 5000);
  assert.deepEqual([r.kind, Math.round(r.atMs), r.how], ['cut', 2003, 'HTTP 504 from nginx/1.22.1']);
});

test('a stream closed after its headers and before any byte is a cut at the close', () => {
  const r = judgeRead(exchange({ error: { code: 'UND_ERR_SOCKET', message: 'other side closed', atMs: 2010 } }), 5000);
  assert.deepEqual([r.kind, r.atMs, r.how], ['cut', 2010, 'closed after the 200 headers, UND_ERR_SOCKET']);
});

test('nothing before the bound is held; a first byte before it means the server answered first', () => {
  assert.equal(judgeRead(exchange({ timedOut: true }), 5000).kind, 'held');
  const answered = judgeRead(exchange({ chunks: [{ atMs: 1200, text: ': engine-first-token-ms=1190\n\n' }] }), 5000);
  assert.deepEqual([answered.kind, answered.atMs], ['answered', 1200]);
});

test('SSE events are stamped with the read that completed them, [DONE] left out, split events joined', () => {
  const text = `: engine-first-token-ms=201.5\n\n${event(0)}${event(1)}data: [DONE]\n\n`;
  const cut = text.indexOf('content');
  const { arrivals, serverFirstTokenMs } = eventArrivals([
    { atMs: 10, text: text.slice(0, cut) },
    { atMs: 30, text: text.slice(cut) },
  ]);
  assert.deepEqual(arrivals, [30, 30]);
  assert.equal(serverFirstTokenMs, 201.5);
  assert.equal(countBursts([0, 3, 20, 25, 60]), 3);
});

test('events 20 ms apart pass through', () => {
  const r = judgeStream({ status: 200, chunks: spread(40, 210, 20, 200) });
  assert.equal(r.kind, 'passes');
  assert.equal(r.events, 40);
  assert.ok(Math.abs(r.spreadMs - 780) < 1e-9);
});

test("all events in one burst 800 ms after the server's first token: the path buffers", () => {
  const r = judgeStream({
    status: 200,
    chunks: [
      {
        atMs: 1010,
        text: spread(40, 0, 0, 200)
          .map((c) => c.text)
          .join(''),
      },
    ],
  });
  assert.equal(r.kind, 'buffers');
  assert.match(r.detail, /40 events arrived within 0 ms, 810 ms after the server's first token/);
});

test('one burst with no server timing: buffered after a long wait, not judged when it came fast', () => {
  assert.equal(judgeStream({ status: 200, chunks: spread(40, 900, 0, null) }).kind, 'buffers');
  assert.equal(judgeStream({ status: 200, chunks: spread(40, 40, 0, null) }).kind, 'unjudged');
  // A server that made every token at once, right at its first token: nothing was held on the way.
  assert.equal(
    judgeStream({
      status: 200,
      chunks: [
        {
          atMs: 205,
          text: spread(40, 0, 0, 200)
            .map((c) => c.text)
            .join(''),
        },
      ],
    }).kind,
    'unjudged',
  );
  assert.equal(judgeStream({ status: 200, chunks: spread(2, 10, 20, null) }).kind, 'unjudged');
});

test('a body is refused by a 413 or a reset before any answer; any other answer took it', () => {
  assert.deepEqual(judgeBody(exchange({ status: 413, headers: { server: 'nginx' } })), { accepted: false, how: 'HTTP 413 from nginx' });
  assert.deepEqual(judgeBody(exchange({ status: null, headersMs: null, error: { code: 'EPIPE', message: 'broken pipe', atMs: 3 } })), { accepted: false, how: 'reset (EPIPE)' });
  assert.deepEqual(judgeBody(exchange({ status: 400 })), { accepted: true });
  assert.deepEqual(judgeBody(exchange({ status: null, timedOut: true })), { accepted: true });
});

test('a body that went through reads as what happened: a 400 is the server on its content, never "accepted (HTTP 400)"', () => {
  assert.equal(wentThrough(400), 'went through; the server answered HTTP 400 (to its content, not its size)');
  assert.equal(wentThrough(200), 'went through (HTTP 200)');
  assert.equal(wentThrough(null), 'went through (no answer in 15 s: the server was still reading or prefilling it)');
});

test('the idle timeout and the body limit are printed as the ranges measured, not a midpoint as if measured', () => {
  const idle: IdleResult = { kind: 'closes', keptMs: 4000, closedMs: 8000, estimateMs: 6000, maxIdleMs: 75_000, keepAliveHeader: null, tried: [], elapsedMs: 20_000 };
  assert.equal(idleLine(idle), 'closes idle connections after 4.0–8.0 s (kept after 4.0 s idle, closed after 8.0 s)');
  assert.doesNotMatch(idleLine(idle), /6\.0/);
  assert.equal(idleLine({ ...idle, keptMs: 0, closedMs: 1000, estimateMs: 500 }), 'closes idle connections within 1.0 s (closed after 1.0 s idle, the shortest gap tried)');
  assert.equal(idleLine({ ...idle, kind: 'kept', closedMs: null, estimateMs: null, keepAliveHeader: 'timeout=5' }), 'kept idle ≥ 75.0 s (--max-idle) (announces Keep-Alive: timeout=5)');
  const body: BodyResult = { kind: 'limit', acceptedBytes: 8 * 1024 * 1024, rejectedBytes: 11 * 1024 * 1024, how: 'HTTP 413 from nginx', tried: [] };
  assert.equal(bodyLine(body), 'takes bodies up to 8.0 MiB–11 MiB (8.0 MiB went through, 11 MiB refused: HTTP 413 from nginx)');
});

test('a padded body is exactly the size asked for, and valid JSON', () => {
  const b = paddedBody('m', 100_000);
  assert.equal(b.length, 100_000);
  assert.equal((JSON.parse(b.toString()) as { messages: { content: string }[] }).messages[0]!.content.length > 99_000, true);
});

test('a 1 MiB limit is bracketed within 8 requests, the largest size tried first', async () => {
  const sizes: number[] = [];
  const r = await searchBody({}, (bytes) => {
    sizes.push(bytes);
    return Promise.resolve(bytes <= 1024 * 1024 ? { accepted: true } : { accepted: false, how: 'HTTP 413' });
  });
  assert.equal(r.kind, 'limit');
  assert.equal(sizes[0], 64 * 1024 * 1024);
  assert.ok(sizes.length <= 8);
  assert.ok(r.acceptedBytes! <= 1024 * 1024 && r.rejectedBytes! > 1024 * 1024 && r.rejectedBytes! / r.acceptedBytes! < 1.2, JSON.stringify(r));
  assert.equal(r.how, 'HTTP 413');
});

test('a path taking the largest body costs one request; one refusing the smallest, two', async () => {
  assert.deepEqual(await searchBody({}, () => Promise.resolve({ accepted: true })), {
    kind: 'all',
    acceptedBytes: 64 * 1024 * 1024,
    rejectedBytes: null,
    how: null,
    tried: [{ bytes: 64 * 1024 * 1024, accepted: true }],
  });
  const none = await searchBody({}, () => Promise.resolve({ accepted: false, how: 'reset (ECONNRESET)' }));
  assert.deepEqual([none.kind, none.rejectedBytes, none.tried.length, none.how], ['none', 64 * 1024, 2, 'reset (ECONNRESET)']);
});
