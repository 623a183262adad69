// Every request SGLang refuses gets its 400 with SGLang's flat error body — pydantic's checks as `Bad Request`,
// its own as `BadRequestError` — through the PD router as from a single server; the router's own refusals
// (429 without a queue) and FastAPI's 404 for unknown routes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { checkContext, parseChatRequest, pyRepr } from '../../src/engine/protocol.js';
import { engine, getText, postJson, USER, type ErrorBody } from './helpers.js';

const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, kv_transfer_gbps: null };
const MSG = [USER('hello')];
const READ_FILE = { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

interface Case {
  name: string;
  body: string;
  contentType?: string;
  type: 'Bad Request' | 'BadRequestError';
  message: RegExp;
}

const CASES: Case[] = [
  {
    name: 'a prompt over the context length',
    body: JSON.stringify({ messages: [USER('x'.repeat(4_000))] }),
    type: 'BadRequestError',
    message: /^The input \(\d+ tokens\) is longer than the model's context length \(500 tokens\)\.$/,
  },
  {
    name: 'max_tokens running past the context',
    body: JSON.stringify({ messages: MSG, max_tokens: 495 }),
    type: 'BadRequestError',
    message:
      /^Requested token count exceeds the model's maximum context length of 500 tokens\. You requested a total of \d+ tokens: \d+ tokens from the input messages and 495 tokens for the completion\./,
  },
  {
    name: 'max_tokens over the context itself',
    body: JSON.stringify({ messages: MSG, max_tokens: 600 }),
    type: 'BadRequestError',
    message: /^max_completion_tokens is too large: 600\.This model supports at most 500 completion tokens\.$/,
  },
  {
    name: 'tool_choice required without tools',
    body: JSON.stringify({ messages: MSG, tool_choice: 'required' }),
    type: 'BadRequestError',
    message: /^Tools cannot be empty if tool choice is set to required\.$/,
  },
  {
    name: 'a named tool_choice not in tools',
    body: JSON.stringify({ messages: MSG, tools: [READ_FILE], tool_choice: { type: 'function', function: { name: 'nope' } } }),
    type: 'BadRequestError',
    message: /^Tool 'nope' not found in tools list\.$/,
  },
  {
    name: 'an invalid tool schema',
    body: JSON.stringify({ messages: MSG, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'objekt' } } }] }),
    type: 'BadRequestError',
    message: /^Tool 0 function has invalid 'parameters' schema: 'objekt' is not valid under any of the given schemas$/,
  },
  {
    name: 'a tool without a function name',
    body: JSON.stringify({ messages: MSG, tools: [{ type: 'function', function: { parameters: {} } }] }),
    type: 'Bad Request',
    message: /'type': 'missing', 'loc': \('body', 'tools', 0, 'function', 'name'\), 'msg': 'Field required'/,
  },
  {
    name: 'a temperature of the wrong type',
    body: JSON.stringify({ messages: MSG, temperature: 'hot' }),
    type: 'Bad Request',
    message: /^\[\{'type': 'float_parsing', 'loc': \('body', 'temperature'\), 'msg': 'Input should be a valid number, unable to parse string as a number', 'input': 'hot'\}\]$/,
  },
  { name: 'a negative temperature', body: JSON.stringify({ messages: MSG, temperature: -1 }), type: 'BadRequestError', message: /^temperature must be non-negative, got -1\.0\.$/ },
  {
    name: 'history arguments that are not JSON',
    body: JSON.stringify({
      messages: [
        USER('a'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path": "src/ma' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'x' },
      ],
    }),
    type: 'BadRequestError',
    message: /^unexpected end of data: line 1 column \d+ \(char \d+\)$/,
  },
  {
    name: 'a body sent as text/plain',
    body: JSON.stringify({ messages: MSG }),
    contentType: 'text/plain',
    type: 'Bad Request',
    message: /^\[\{'type': 'model_attributes_type', 'loc': \('body',\), 'msg': 'Input should be a valid dictionary or object to extract fields from', 'input': b'/,
  },
  { name: 'malformed JSON', body: '{not json', type: 'Bad Request', message: /'type': 'json_invalid', 'loc': \('body', 1\), 'msg': 'JSON decode error'/ },
  { name: 'no messages', body: '{}', type: 'Bad Request', message: /'type': 'missing', 'loc': \('body', 'messages'\), 'msg': 'Field required'/ },
  { name: 'empty messages', body: '{"messages": []}', type: 'BadRequestError', message: /^Messages cannot be empty\.$/ },
  {
    name: 'a role SGLang does not know',
    body: '{"messages": [{"role": "wizard", "content": "x"}]}',
    type: 'Bad Request',
    message: /'type': 'literal_error', 'loc': \('body', 'messages', 0, 'role'\)/,
  },
];

describe('requests SGLang refuses', () => {
  for (const topology of ['pd', 'single'] as const) {
    it(`${topology}: every case gets a 400 with SGLang's flat error body and message, and nothing is scheduled`, async (t) => {
      const e = await engine({ ...FAST, topology, context_length: 500 }, t);
      for (const c of CASES) {
        const res = await postJson(e.url, '/v1/chat/completions', c.body, c.contentType);
        assert.equal(res.status, 400, c.name);
        const body = res.json as ErrorBody;
        assert.deepEqual(Object.keys(body), ['object', 'message', 'type', 'param', 'code'], c.name);
        assert.equal(body.object, 'error', c.name);
        assert.equal(body.type, c.type, c.name);
        assert.equal(body.code, 400, c.name);
        assert.equal(body.param, null, c.name);
        assert.match(body.message, c.message, c.name);
      }
      assert.equal(e.stats().requests, 0, 'no refused request reached a scheduler');
      assert.equal(e.stats().rejected, CASES.length);
    });
  }

  it('FastAPI answers unknown routes and methods with {"detail": …}; the router with an empty 404', async (t) => {
    const e = await engine({ ...FAST, topology: 'single' }, t);
    assert.deepEqual(await getText(e.url, '/v2/nothing'), { status: 404, text: '{"detail":"Not Found"}' });
    const res = await request(`${e.url}/v1/chat/completions`, { method: 'GET' });
    assert.equal(res.statusCode, 405);
    assert.deepEqual(await res.body.json(), { detail: 'Method Not Allowed' });
    const pd = await engine(FAST, t);
    assert.deepEqual(await getText(pd.url, '/v2/nothing'), { status: 404, text: '' });
  });

  it('pydantic reads lax types as SGLang does: "0.5" is a number, 5.0 an integer, "true" a boolean', () => {
    const r = parseChatRequest(JSON.stringify({ messages: MSG, temperature: '0.5', max_tokens: 5.0, stream: 'true', n: '2' }));
    assert.equal(r.maxTokens, 5);
    assert.equal(r.stream, true);
    assert.equal(r.n, 2);
    assert.throws(() => parseChatRequest(JSON.stringify({ messages: MSG, max_tokens: 5.5 })), /int_from_float/);
    assert.throws(() => parseChatRequest(JSON.stringify({ messages: MSG, stream: 'maybe' })), /bool_parsing/);
    assert.equal(pyRepr({ a: [1, true, null, "it's"] }), "{'a': [1, True, None, 'it\\'s']}");
    assert.doesNotThrow(() => checkContext(99, 10, 200));
  });
});
