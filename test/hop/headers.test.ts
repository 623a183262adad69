import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { endToEnd, isEventStream, upstreamRequestHeaders } from '../../src/hop/headers.js';
import { startHop } from '../../src/hop/index.js';

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
  assert.deepEqual(upstreamRequestHeaders(req, 'engine:30000'), { host: 'engine:30000', 'content-type': 'application/json', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http' });
});

/** An upstream that keeps the headers of every request it gets. */
async function headersUpstream(t: TestContext): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function get(url: string, ca?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? https : http).get(url, { agent: false, ...(ca === undefined ? {} : { ca }) }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
  });
}

test('X-Forwarded-Proto says what the client really spoke: http through a plain hop (the recorder), https through a TLS one', async (t) => {
  const upstream = await headersUpstream(t);
  const plain = await startHop({ upstream: upstream.url, tls: false });
  t.after(() => plain.close());
  await get(`${plain.url}/v1/models`);
  const tls = await startHop({ upstream: upstream.url });
  t.after(() => tls.close());
  await get(`${tls.url}/v1/models`, readFileSync(tls.caFile!, 'utf8'));
  assert.deepEqual(
    upstream.seen.map((h) => h['x-forwarded-proto']),
    ['http', 'https'],
  );
});

test('a response is a stream when its content type says text/event-stream, parameters and all', () => {
  assert.equal(isEventStream({ 'content-type': 'text/event-stream; charset=utf-8' }), true);
  assert.equal(isEventStream({ 'content-type': 'application/json' }), false);
  assert.equal(isEventStream({}), false);
});
