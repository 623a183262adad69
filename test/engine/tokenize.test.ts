// The engine's /tokenize as SGLang has it: a prompt (or a list of them) → {tokens, count, max_model_len}, or a
// chat request's messages and tools → the count its chat completion then reports as usage.prompt_tokens; through
// the PD router too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { engine, TOOLS, USER } from './helpers.js';

const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, output_tokens_min: 2, output_tokens_max: 3 };

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

const MESSAGES = [{ role: 'system', content: 'You are a coding agent. '.repeat(20) }, USER('Fix the parser, which drops the last line of every file.')];

for (const topology of ['single', 'pd'] as const) {
  test(`${topology}: /tokenize counts a prompt, and a chat request exactly as its usage.prompt_tokens`, async (t) => {
    const e = await engine({ ...FAST, topology }, t);
    const text = await post(e.url, '/tokenize', { model: 'm', prompt: 'abcdefgh ijkl' });
    assert.equal(text.status, 200);
    assert.equal(text.json.count, 4, '13 characters, about 4 a token');
    assert.equal((text.json.tokens as number[]).length, 4);
    assert.equal(typeof text.json.max_model_len, 'number');
    const list = await post(e.url, '/v1/tokenize', { prompt: ['abcd', 'abcdefgh'] });
    assert.deepEqual(list.json.count, [1, 2]);

    const counted = await post(e.url, '/v1/tokenize', { model: 'm', messages: MESSAGES, tools: TOOLS });
    assert.equal(counted.status, 200);
    const chat = await post(e.url, '/v1/chat/completions', { model: 'm', messages: MESSAGES, tools: TOOLS, max_tokens: 1, stream: false });
    assert.equal(chat.status, 200);
    assert.equal(counted.json.count, (chat.json.usage as { prompt_tokens: number }).prompt_tokens);
  });
}

test('/tokenize refuses a body with neither or both of prompt and messages, and a GET', async (t) => {
  const e = await engine({ ...FAST, topology: 'single' }, t);
  for (const body of [{ model: 'm' }, { prompt: 'a', messages: [USER('a')] }, { content: 'llama.cpp form' }]) {
    const res = await post(e.url, '/tokenize', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(String(res.json.message), /Exactly one of 'prompt' or 'messages'/);
  }
  const get = await request(`${e.url}/tokenize`);
  await get.body.dump();
  assert.equal(get.statusCode, 405);
});
