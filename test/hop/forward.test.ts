import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startHop, type ExchangeEnd, type HopHandle } from '../../src/hop/index.js';
import { upstreamErrorAnswer, UPSTREAM_TIMEOUT } from '../../src/hop/forward.js';

interface Got {
  status: number;
  body: string;
  /** The response arrived whole (false: cut after its headers). */
  complete: boolean;
}

function get(url: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('error', () => {});
      res.once('close', () => resolve({ status: res.statusCode ?? 0, body, complete: res.complete }));
    });
    req.on('error', reject);
  });
}

async function listening(t: TestContext, server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

/** A plain hop in front of `upstream` whose tap keeps what it is told. */
async function hopTo(t: TestContext, upstream: string, upstreamTimeoutMs = 60_000): Promise<{ hop: HopHandle; responses: [number, boolean][]; data: string[]; ends: ExchangeEnd[] }> {
  const responses: [number, boolean][] = [];
  const data: string[] = [];
  const ends: ExchangeEnd[] = [];
  const hop = await startHop({
    upstream,
    tls: false,
    upstreamTimeoutMs,
    tap: () => ({ onResponse: (status, _headers, byHop) => responses.push([status, byHop]), onResponseData: (chunk) => data.push(chunk.toString()), onEnd: (end) => ends.push(end) }),
  });
  t.after(() => hop.close());
  return { hop, responses, data, ends };
}

test('an upstream that fails before its headers is answered by the hop: 504 when it stayed silent past the bound, 502 otherwise, naming the upstream', () => {
  const timedOut = upstreamErrorAnswer(Object.assign(new Error('upstream sent nothing for 100 ms'), { code: UPSTREAM_TIMEOUT }), 'http://127.0.0.1:9');
  assert.equal(timedOut.status, 504);
  assert.deepEqual(timedOut.headers, { 'content-type': 'application/json' });
  assert.deepEqual(JSON.parse(timedOut.body), { error: { type: 'upstream_error', message: 'roundload hop: upstream http://127.0.0.1:9: upstream sent nothing for 100 ms' } });
  assert.equal(upstreamErrorAnswer(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'http://127.0.0.1:9').status, 502);
  assert.equal(upstreamErrorAnswer(new Error('socket hang up'), 'http://127.0.0.1:9').status, 502);
});

test('an upstream silent past upstreamTimeoutMs gets the client a 504 from the hop, and the request went under the upstream base path', async (t) => {
  const received: string[] = [];
  const silent = net.createServer((socket) => {
    socket.on('data', (d: Buffer) => received.push(d.toString()));
    socket.on('error', () => {});
  });
  const port = await listening(t, silent);
  const { hop, responses, ends } = await hopTo(t, `http://127.0.0.1:${port}/v1/`, 100);
  const got = await get(`${hop.url}/chat/completions?x=1`);
  assert.equal(got.status, 504);
  assert.deepEqual(JSON.parse(got.body), { error: { type: 'upstream_error', message: `roundload hop: upstream http://127.0.0.1:${port}: upstream sent nothing for 100 ms` } });
  assert.match(received.join(''), /^GET \/v1\/chat\/completions\?x=1 HTTP\/1\.1\r\n/);
  assert.deepEqual(responses, [[504, true]]);
  assert.deepEqual(ends, [{ kind: 'upstream_error', message: 'upstream sent nothing for 100 ms', code: UPSTREAM_TIMEOUT }]);
  assert.equal(hop.stats().forwarded, 1);
  assert.equal(hop.stats().upstream_errors, 1);
});

test('a refused upstream gets the client a 502 from the hop', async (t) => {
  const gone = net.createServer();
  const port = await new Promise<number>((resolve) => gone.listen(0, '127.0.0.1', () => resolve((gone.address() as net.AddressInfo).port)));
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const { hop, ends } = await hopTo(t, `http://127.0.0.1:${port}`);
  const got = await get(`${hop.url}/v1/models`);
  assert.equal(got.status, 502);
  assert.match(got.body, /"type":"upstream_error"/);
  assert.equal(ends.length, 1);
  assert.equal(ends[0]?.kind === 'upstream_error' ? ends[0].code : null, 'ECONNREFUSED');
});

test("an upstream failing after its headers cuts the client's response (never a second answer from the hop)", async (t) => {
  const dying = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n', () => setImmediate(() => res.socket?.destroy()));
  });
  const port = await listening(t, dying);
  const { hop, responses, data, ends } = await hopTo(t, `http://127.0.0.1:${port}`);
  const got = await get(`${hop.url}/v1/chat/completions`);
  assert.equal(got.status, 200);
  assert.equal(got.complete, false, 'the response is cut, not ended');
  assert.equal(got.body, 'data: 1\n\n');
  assert.deepEqual(responses, [[200, false]]);
  assert.deepEqual(data, ['data: 1\n\n']);
  assert.equal(ends.length, 1);
  assert.equal(ends[0]?.kind, 'upstream_error');
});
