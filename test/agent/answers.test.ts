// The shape of an answer, judged on real HTTP from a scripted server: what each misbehaviour is classed as,
// that the server's own message is kept, and what a clean but odd answer (tool-call markup in content) warns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ERROR_CLASSES, WARNING_CLASSES, sendRound } from '../../src/agent/index.js';
import { chunk, fakeChat, okAnswer, sse, usageAndDone } from '../helpers/fake-chat.js';
import { roundTarget } from '../helpers/round.js';

const BODY = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
const request = { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: BODY };

const toolStart = (args: string, id: string | null = 'call_1') => chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name: 'read_file', arguments: args } }] });

test('a tool call cut by max_tokens (finish_reason length) is truncated_tool_call, quoting where its arguments end', async (t) => {
  const server = await fakeChat(t, (_r, res) => sse(res, chunk({ role: 'assistant' }) + toolStart('{"path": "src/ma') + chunk({}, 'length') + usageAndDone(10, 16)));
  const { record, message } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'truncated_tool_call', JSON.stringify(record.error));
  assert.match(record.error.message, /max_tokens.*tool call 0 \(read_file\).*src\/ma/);
  assert.equal(record.finish_reason, 'length');
  assert.equal(message, null, 'the cut answer is not handed back as history');
});

test('arguments that are not JSON without a cut are still invalid_tool_arguments (a parser bug, not max_tokens)', async (t) => {
  const server = await fakeChat(t, (_r, res) => sse(res, toolStart('{"path": "src/ma') + chunk({}, 'tool_calls') + usageAndDone(10, 16)));
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'invalid_tool_arguments');
});

test('a tool call with no id is protocol_error, naming the violation', async (t) => {
  const server = await fakeChat(t, (_r, res) => sse(res, toolStart('{"path": "a"}', null) + chunk({}, 'tool_calls') + usageAndDone(10, 5)));
  const { record, message } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'protocol_error', JSON.stringify(record.error));
  assert.match(record.error.message, /tool call 0 has no id/);
  assert.equal(message, null);
});

test("SSE `event: error` is server_error_event with the server's message (not truncated_stream)", async (t) => {
  const server = await fakeChat(t, (_r, res) =>
    sse(res, chunk({ content: 'par' }) + 'event: error\ndata: {"error": {"message": "KV transfer failed for request 9f4c", "type": "InternalServerError", "code": 500}}\n\n'),
  );
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'server_error_event', JSON.stringify(record.error));
  assert.match(record.error.message, /KV transfer failed for request 9f4c \(type InternalServerError\)/);
  assert.equal(record.error.code, '500');
});

test('data: {"error": …} mid-stream in SGLang\'s flat shape keeps the server\'s message', async (t) => {
  const server = await fakeChat(t, (_r, res) =>
    sse(res, chunk({ content: 'par' }) + 'data: {"object": "error", "message": "Request aborted: context too long", "type": "BadRequestError", "param": null, "code": 400}\n\ndata: [DONE]\n\n'),
  );
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'server_error_event');
  assert.match(record.error.message, /context too long/);
});

test('an unknown SSE field in a good stream is ignored: the request is ok', async (t) => {
  const server = await fakeChat(t, (_r, res) => sse(res, 'x-trace: abc123\n' + chunk({ content: 'ok' }) + 'weird line without a colon\n\n' + chunk({}, 'stop') + usageAndDone(10, 1)));
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.status, 'ok', JSON.stringify(record.error));
});

test("a 200 text/html page (a proxy's error page) is wrong_content_type naming the type and quoting the page", async (t) => {
  const server = await fakeChat(t, (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><head><title>Upstream unavailable</title></head><body>please retry</body></html>');
  });
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'wrong_content_type', JSON.stringify(record.error));
  assert.match(record.error.message, /HTTP 200 with content-type text\/html; charset=utf-8, not text\/event-stream: <html><head><title>Upstream unavailable/);
});

test("a 200 application/json error body (stream ignored) is wrong_content_type with the server's message", async (t) => {
  const server = await fakeChat(t, (_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"error": {"message": "streaming is disabled on this deployment", "type": "invalid_request_error"}}');
  });
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.error?.class, 'wrong_content_type');
  assert.match(record.error.message, /application\/json.*streaming is disabled on this deployment \(type invalid_request_error\)/);
});

test('a page that never ends is cut once enough of it is read, not waited for', async (t) => {
  const server = await fakeChat(t, (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write(`<html>${'x'.repeat(4096)}`);
  });
  const { record } = await sendRound(roundTarget(t, server.url, { deadlines: { firstTokenMs: 20_000, totalMs: 30_000 } }), request);
  assert.equal(record.error?.class, 'wrong_content_type');
  assert.ok(record.e2e_ms < 10_000, `${record.e2e_ms} ms`);
});

test("an HTTP error names the server's own message in either body shape, the status and the URL path", async (t) => {
  const flat = await fakeChat(t, (_r, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"object":"error","message":"The model `gpt-x` does not exist.","type":"NotFoundError","param":null,"code":404}');
  });
  const a = (await sendRound(roundTarget(t, `${flat.url}/v1`), request)).record;
  assert.equal(a.error?.class, 'http_4xx');
  assert.equal(a.error?.message, 'HTTP 404: The model `gpt-x` does not exist. (type NotFoundError, code 404)');
  assert.equal(a.error?.url_path, '/v1/v1/chat/completions');
  const nested = await fakeChat(t, (_r, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"Invalid API key","type":"authentication_error","code":"invalid_api_key"}}');
  });
  const b = (await sendRound(roundTarget(t, nested.url), request)).record;
  assert.equal(b.error?.message, 'HTTP 401: Invalid API key (type authentication_error, code invalid_api_key)');
  assert.equal(b.error?.url_path, '/v1/chat/completions');
});

test('without a usage chunk completion tokens are estimated from the streamed text, not counted as events', async (t) => {
  // 20 events of 50 characters: 1000 characters ≈ 250 tokens (counting events would say 20).
  const text = 'x'.repeat(50);
  const server = await fakeChat(t, (_r, res) => sse(res, Array.from({ length: 20 }, () => chunk({ content: text })).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n'));
  const { record } = await sendRound(roundTarget(t, server.url), request);
  assert.equal(record.status, 'ok');
  assert.equal(record.tokens_estimated, true);
  assert.equal(record.completion_tokens, 250);
  assert.equal(record.cached_tokens, null);
});

test('tool-call markup in the content is an ok answer with the tool_markup_in_content warning', async (t) => {
  const markups = ['<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{}', '<｜DSML｜tool_calls>', '<tool_call>{"name": "f"}</tool_call>', '<|tool_call|>[{}]'];
  for (const content of markups) {
    const server = await fakeChat(t, (_r, res) => sse(res, chunk({ content }) + chunk({}, 'stop') + usageAndDone(10, 5)));
    const { record } = await sendRound(roundTarget(t, server.url), request);
    assert.equal(record.status, 'ok', content);
    assert.deepEqual(record.warnings, ['tool_markup_in_content'], content);
    await server.close();
  }
  const clean = await fakeChat(t, (_r, res) => okAnswer(res));
  assert.equal((await sendRound(roundTarget(t, clean.url), request)).record.warnings, undefined);
});

test('through a CONNECT proxy that is down, a request is proxy_unreachable naming the proxy, not the target', async (t) => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  const proxy = `http://127.0.0.1:${port}`;
  const { record } = await sendRound(roundTarget(t, 'http://127.0.0.1:30000', { connectProxy: proxy }), request);
  assert.equal(record.error?.class, 'proxy_unreachable', JSON.stringify(record.error));
  assert.match(record.error.message, new RegExp(`proxy http://127\\.0\\.0\\.1:${port} unreachable \\(connection_refused\\)`));
});

test('every class and warning used is documented in ERROR_CLASSES / WARNING_CLASSES', () => {
  for (const c of ['truncated_tool_call', 'protocol_error', 'server_error_event', 'wrong_content_type', 'proxy_unreachable', 'proxy_refused']) assert.ok(c in ERROR_CLASSES, c);
  assert.ok('tool_markup_in_content' in WARNING_CLASSES);
});

test('a TLS proxy that is down (the requests go to it) is proxy_unreachable too', async (t) => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  const url = `http://127.0.0.1:${port}`;
  const { record } = await sendRound(roundTarget(t, url, { proxyUrl: url }), request);
  assert.equal(record.error?.class, 'proxy_unreachable');
});

test('a stream of `choices: []` chunks only is an ok answer with the empty_answer and no_finish_reason warnings; a stream without finish_reason is flagged too', async (t) => {
  const empty = await fakeChat(t, (_r, res) => sse(res, `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [] })}\n\n`.repeat(3) + usageAndDone(10, 0)));
  const a = (await sendRound(roundTarget(t, empty.url), request)).record;
  assert.equal(a.status, 'ok');
  assert.deepEqual(a.warnings, ['empty_answer', 'no_finish_reason']);
  const unfinished = await fakeChat(t, (_r, res) => sse(res, chunk({ content: 'hello there' }) + usageAndDone(10, 2)));
  const b = (await sendRound(roundTarget(t, unfinished.url), request)).record;
  assert.equal(b.status, 'ok');
  assert.deepEqual(b.warnings, ['no_finish_reason']);
});
