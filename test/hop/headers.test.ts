import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { endToEnd, isEventStream, upstreamRequestHeaders } from '../../src/hop/headers.js';

test('hop-by-hop headers and those the Connection header names stay on their side of the hop', () => {
  const out = endToEnd({
    connection: 'keep-alive, X-Trace',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'proxy-authorization': 'Basic abc',
    'x-trace': '1',
    'content-type': 'application/json',
    authorization: 'Bearer k',
  });
  assert.deepEqual(out, { 'content-type': 'application/json', authorization: 'Bearer k' });
});

test("the upstream request carries the upstream's Host and who the client is, never the client's Host", () => {
  const req = { headers: { host: '127.0.0.1:8443', 'content-type': 'application/json', connection: 'keep-alive' }, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  assert.deepEqual(upstreamRequestHeaders(req, 'engine:30000'), { host: 'engine:30000', 'content-type': 'application/json', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'https' });
});

test('a response is a stream when its content type says text/event-stream, parameters and all', () => {
  assert.equal(isEventStream({ 'content-type': 'text/event-stream; charset=utf-8' }), true);
  assert.equal(isEventStream({ 'content-type': 'application/json' }), false);
  assert.equal(isEventStream({}), false);
});
