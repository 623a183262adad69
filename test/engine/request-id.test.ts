// The id a request goes by in the engine: the body's rid, else X-Request-Id, else its own; logged in SGLang's
// Receive line and echoed as the answer's id. An id that could break the log line is not taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { engine, USER } from './helpers.js';

const FAST = { topology: 'single' as const, decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, output_tokens_min: 2, output_tokens_max: 3 };

async function send(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'm', stream: false, messages: [USER('hi')], ...body }),
  });
  assert.equal(res.statusCode, 200);
  return ((await res.body.json()) as { id: string }).id;
}

test('the engine names a request by its body rid, else its X-Request-Id, else an id of its own, in its log and answer', async (t) => {
  const e = await engine(FAST, t);
  assert.equal(await send(e.url, { rid: 'rl-abc-a0-c1-r1-1' }, { 'x-request-id': 'from-header' }), 'rl-abc-a0-c1-r1-1');
  assert.equal(await send(e.url, {}, { 'x-request-id': 'from-header' }), 'from-header');
  const own = await send(e.url, { rid: "it's\nbad" }, { 'x-request-id': 'a"b' });
  assert.match(own, /^[0-9a-f]{32}$/, 'an id with a quote or a newline is not taken');
  const received = e.logLines('engine').filter((l) => l.includes('Receive: obj=GenerateReqInput'));
  assert.deepEqual(
    received.map((l) => /rid='([^']*)'/.exec(l)?.[1]),
    ['rl-abc-a0-c1-r1-1', 'from-header', own],
  );
});
