import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { RoundLifecycle, outOfOrderCallbacks, sendRound } from '../../src/agent/index.js';
import { roundTarget } from '../helpers/round.js';

test('a request moves sent → headers → first token → streaming → done, and ends exactly once', () => {
  const life = new RoundLifecycle('r1');
  const before = outOfOrderCallbacks();
  assert.equal(life.state, 'sent');
  assert.ok(life.to('headers', 'headers'));
  assert.ok(life.to('first_token', 'token'));
  assert.ok(life.to('streaming', 'token'));
  assert.equal(life.terminal, false);
  assert.ok(life.end('done', 'end'));
  assert.equal(life.state, 'done');
  assert.equal(outOfOrderCallbacks(), before, 'nothing out of order');
  // A second terminal outcome changes nothing and is counted, never dropped without a trace.
  assert.equal(life.end('error', 'error'), false);
  assert.equal(life.state, 'done');
  assert.equal(outOfOrderCallbacks(), before + 1);
});

test('an out-of-order callback is counted and leaves the state alone; a late data chunk too', () => {
  const life = new RoundLifecycle('r2');
  const before = outOfOrderCallbacks();
  life.to('headers', 'headers');
  life.to('first_token', 'token');
  assert.equal(life.to('headers', 'headers'), false, 'headers twice');
  assert.equal(life.state, 'first_token');
  assert.equal(outOfOrderCallbacks(), before + 1);
  life.end('hang', 'watchdog');
  life.late('data');
  assert.equal(outOfOrderCallbacks(), before + 2);
});

test('a request still ends from a state the table does not end it from, and that is counted', () => {
  const life = new RoundLifecycle('r3');
  const before = outOfOrderCallbacks();
  assert.ok(life.end('done', 'end'), 'a request must always end');
  assert.equal(life.state, 'done');
  assert.equal(outOfOrderCallbacks(), before + 1);
});

test('the error of the abort a request made itself after its terminal state is expected, not counted', () => {
  const life = new RoundLifecycle('r4');
  const before = outOfOrderCallbacks();
  life.to('headers', 'headers');
  life.end('hang', 'watchdog');
  life.aborted();
  life.late('error');
  assert.equal(outOfOrderCallbacks(), before);
  life.late('end');
  assert.equal(outOfOrderCallbacks(), before + 1, 'an end after the abort is not expected');
});

function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}
const chunk = (content: string, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

test('a hung stream aborted by the watchdog and a completed one leave no out-of-order callback', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(res, chunk('a'));
      if (req.url === '/stall/v1/chat/completions') return; // silent from here: a mid-stream stall
      sse(res, chunk('b'));
      sse(res, chunk('c', 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const before = outOfOrderCallbacks();
  const req = { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: '{"messages":[]}' };
  const ok = await sendRound(roundTarget(t, base), req);
  assert.equal(ok.record.status, 'ok');
  assert.equal(ok.record.itl?.count, 2);
  assert.equal(ok.record.request_bytes, 15);
  const hung = await sendRound(roundTarget(t, `${base}/stall`, { deadlines: { stallMs: 150 } }), req);
  assert.equal(hung.record.status, 'hang');
  assert.equal(hung.record.hang?.phase, 'mid_stream');
  // undici's error for the watchdog's abort arrives after the terminal state: expected, not counted.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(outOfOrderCallbacks(), before);
});

test('each socket read costs one clock reading, shared by the record and the watchdog', async (t) => {
  const CHUNKS = 40;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      // Spaced writes: most arrive as reads of their own.
      const timer = setInterval(() => {
        i += 1;
        sse(res, chunk('x', i === CHUNKS ? 'stop' : null));
        if (i === CHUNKS) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
        }
      }, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const target = roundTarget(t, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // The reads undici hands over, counted by a handler in front of the request's own.
  let reads = 0;
  const lane = target.lane;
  const counted = lane.dispatcher.compose(
    (dispatch) => (opts, handler) =>
      dispatch(opts, {
        ...handler,
        onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
        onResponseStart: (c, status, headers, message) => handler.onResponseStart?.(c, status, headers, message),
        onResponseData: (c, data) => {
          reads += 1;
          handler.onResponseData?.(c, data);
        },
        onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
        onResponseError: (c, error) => handler.onResponseError?.(c, error),
      }),
  );
  // Every clock reading of the process while the request runs (the real clock reads performance.now()).
  let readings = 0;
  const now = performance.now.bind(performance);
  performance.now = () => {
    readings += 1;
    return now();
  };
  let outcome;
  try {
    outcome = await sendRound(
      { ...target, lane: { dispatcher: counted, reset: () => lane.reset(), failed: (e, d) => lane.failed(e, d) } },
      { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: '{}' },
    );
  } finally {
    performance.now = now;
  }
  assert.equal(outcome.record.status, 'ok');
  assert.ok(reads >= 10, `${reads} reads`);
  // One reading a read, and a few a request (send, headers, the watchdog's timer, the end…): two a read before.
  assert.ok(readings - reads <= 20, `${readings} clock readings for ${reads} reads`);
  t.diagnostic(`${readings} clock readings for ${reads} reads`);
});
