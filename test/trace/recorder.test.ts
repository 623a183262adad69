import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { startRecorder, readTrace } from '../../src/trace/index.js';
import { tempDir } from '../helpers/tmp.js';

/** A tiny OpenAI-like upstream answering a JSON chat completion, with a short keep-alive. */
async function upstream(t: import('node:test').TestContext, keepAliveMs: number): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 3 } }));
    });
  });
  server.keepAliveTimeout = keepAliveMs;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

const body = (session: string, messages: unknown[]) => JSON.stringify({ model: 'm', stream: false, messages, metadata: { session } });

test('the recorder closes a client connection when the upstream closes its own while idle, and says so', async (t) => {
  const file = join(tempDir(t), 'trace.jsonl');
  // The upstream closes an idle socket after its 2 s keep-alive (Node 20's server adds about 1 s of slack).
  const recorder = await startRecorder({ upstream: await upstream(t, 2000), out: file });
  t.after(() => recorder.close());
  const client = new Client(recorder.url, { keepAliveTimeout: 60_000 });
  t.after(() => client.close());
  const send = async () =>
    (await client.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: body('s', [{ role: 'user', content: 'hi' }]) })).body.text();
  await send();
  // Past the upstream's keep-alive: the harness's socket is closed too, as if it were connected directly.
  await new Promise((r) => setTimeout(r, 4000));
  await send();
  await recorder.close();
  const trace = readTrace(file);
  assert.deepEqual(
    trace.requests.map((r) => [r.connection?.id, r.connection?.nth]),
    [
      [1, 1],
      [2, 1],
    ],
  );
  assert.equal(trace.closes[0]?.by, 'proxy');
  assert.ok(trace.closes[0].idle_ms! >= 500, `closed after ${trace.closes[0]?.idle_ms} ms idle, when the upstream's idle socket went`);
  assert.equal(trace.requests[0]?.response.content_chars, 11, 'a JSON answer is read too');
  assert.equal(trace.requests[0]?.response.prompt_tokens, 12);
});

test('--session-header names conversations, and --content keeps each distinct message once', async (t) => {
  const file = join(tempDir(t), 'trace.jsonl');
  const recorder = await startRecorder({ upstream: await upstream(t, 5000), out: file, sessionHeader: 'X-Session-Id', content: true });
  t.after(() => recorder.close());
  const client = new Client(recorder.url);
  t.after(() => client.close());
  const system = { role: 'system', content: 'shared system prompt' };
  for (const [session, text] of [
    ['A', 'first'],
    ['B', 'second'],
    ['A', 'unrelated history'],
  ] as const) {
    const res = await client.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'x-session-id': session },
      body: body(session, [system, { role: 'user', content: text }]),
    });
    await res.body.text();
  }
  await recorder.close();
  const trace = readTrace(file);
  assert.deepEqual(
    trace.requests.map((r) => [r.conversation, r.round]),
    [
      ['c1', 1],
      ['c2', 1],
      ['c1', 2],
    ],
  );
  assert.equal(trace.header.content, true);
  assert.deepEqual(
    [...trace.contents.values()].map((m) => m.content),
    ['shared system prompt', 'first', 'second', 'unrelated history'],
  );
  assert.deepEqual(trace.requests[0]?.request.extra_keys, ['metadata']);
});

test('the trace names the upstream with its credentials masked, and is created 0600 (with --content it holds every prompt)', async (t) => {
  const file = join(tempDir(t), 'trace.jsonl');
  const url = new URL(await upstream(t, 5000));
  url.username = 'rec-user';
  url.password = 'rec-pw-Ks8Vd3Qm';
  const recorder = await startRecorder({ upstream: url.href, out: file, content: true });
  t.after(() => recorder.close());
  const client = new Client(recorder.url);
  t.after(() => client.close());
  await (
    await client.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: body('s', [{ role: 'user', content: 'my prompt' }]) })
  ).body.text();
  await recorder.close();
  const text = readFileSync(file, 'utf8');
  assert.ok(!text.includes('rec-pw-Ks8Vd3Qm'), 'the password is not in the trace');
  assert.equal(readTrace(file).header.upstream, `http://rec-user:***@127.0.0.1:${url.port}/`);
  assert.match(text, /my prompt/, 'the prompt is there (--content)');
  assert.equal(statSync(file).mode & 0o777, 0o600);
});
