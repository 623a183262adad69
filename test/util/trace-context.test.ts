// W3C trace context on every request: fresh ids per request in the traceparent header and the record, never
// all zeros, and none sent when the workload turns it off (the record keeps the ids either way).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendRound } from '../../src/agent/index.js';
import { nextTraceIds, traceparent } from '../../src/util/index.js';
import { fakeChat, okAnswer, type FakeRequest } from '../helpers/fake-chat.js';
import { roundTarget } from '../helpers/round.js';

const BODY = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
const request = { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: BODY };

test('trace ids are 32 hex, span ids 16 hex, fresh each time (past a refill of the pool), and the header is version 00 sampled', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i += 1) {
    const ids = nextTraceIds();
    assert.match(ids.traceId, /^[0-9a-f]{32}$/);
    assert.match(ids.spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(ids.traceId, '0'.repeat(32));
    seen.add(ids.traceId);
    seen.add(ids.spanId);
  }
  assert.equal(seen.size, 2000);
  assert.equal(traceparent({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }), '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
});

test("each request carries its own traceparent, whose ids are its record's trace_id and span_id", async (t) => {
  const got: FakeRequest[] = [];
  const server = await fakeChat(t, (req, res) => {
    got.push(req);
    okAnswer(res);
  });
  const target = roundTarget(t, server.url);
  const a = (await sendRound(target, request)).record;
  const b = (await sendRound(target, { ...request, round: 2 })).record;
  assert.equal(got[0]?.headers.traceparent, `00-${a.trace_id}-${a.span_id}-01`);
  assert.equal(got[1]?.headers.traceparent, `00-${b.trace_id}-${b.span_id}-01`);
  assert.notEqual(a.trace_id, b.trace_id);
  assert.equal(typeof a.last_token_ms, 'number');
});

test('with tracing.traceparent off no header goes out, and the record still has its ids', async (t) => {
  const got: FakeRequest[] = [];
  const server = await fakeChat(t, (req, res) => {
    got.push(req);
    okAnswer(res);
  });
  const { record } = await sendRound({ ...roundTarget(t, server.url), traceparent: false }, request);
  assert.equal(got[0]?.headers.traceparent, undefined);
  assert.match(record.trace_id ?? '', /^[0-9a-f]{32}$/);
});
