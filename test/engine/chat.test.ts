// The engine's OpenAI-compatible answers: stream shape, tool calls, usage and the prefix cache, max_tokens,
// determinism, non-streaming responses, errors, and the /metrics exposition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engine, getText, postJson, streamChat, TOOLS, USER, type Chunk } from './helpers.js';

const SYSTEM = { role: 'system', content: 'You are a coding agent. '.repeat(60) };
/** Fast settings: no decode wait, so these tests check shapes, not timing. */
const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0 };

describe('engine chat completions', () => {
  it('a streamed content answer is role chunk, first-token comment, one word per chunk, finish, usage, [DONE]', async () => {
    const e = await engine(FAST);
    const r = await streamChat(e.url, { messages: [SYSTEM, USER('fix the failing test')] });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/event-stream/);
    assert.match(String(r.headers['x-engine-request-id']), /^chatcmpl-[0-9a-f]+$/);
    assert.equal(r.events.at(-1), '[DONE]');
    const chunks = r.events.filter((ev): ev is Chunk => ev !== '[DONE]');
    for (const c of chunks) {
      assert.equal(c.object, 'chat.completion.chunk');
      assert.equal(c.id, chunks[0]?.id);
      assert.equal(c.model, 'deepseek-v4-flash');
      assert.equal(typeof c.created, 'number');
    }
    assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: 'assistant' });
    // The timing comment comes once, right before the first token chunk.
    assert.equal(r.comments.length, 1);
    assert.match(r.comments[0]?.text ?? '', /^engine-first-token-ms=\d+(\.\d+)?$/);
    assert.equal(r.comments[0]?.beforeEvent, 1);
    const tokens = chunks.slice(1, -2);
    assert.ok(tokens.length >= 24 && tokens.length <= 96, `${tokens.length} tokens within output_tokens_min..max`);
    for (const c of tokens) assert.match(c.choices[0]?.delta.content ?? '', /^\S+ $/, 'a token is a word plus a space');
    const finish = chunks.at(-2);
    assert.equal(finish?.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)?.choices, []);
    assert.equal(r.usage?.completion_tokens, tokens.length);
    assert.equal(r.usage?.total_tokens, (r.usage?.prompt_tokens ?? 0) + tokens.length);
    assert.ok((r.usage?.prompt_tokens ?? 0) > 300, 'the system prompt is counted at ~4 chars per token');
  });

  it('tool-call fragments reassemble into valid JSON arguments filling the schema, and some messages carry two calls', async () => {
    const e = await engine(FAST);
    let twoCalls = 0;
    for (let i = 0; i < 40; i += 1) {
      const r = await streamChat(e.url, { messages: [SYSTEM, USER(`task ${i}`)], tools: TOOLS, tool_choice: 'required' });
      assert.equal(r.finishReason, 'tool_calls');
      assert.equal(r.content, '');
      assert.ok(r.toolCalls.length >= 1 && r.toolCalls.length <= 2);
      if (r.toolCalls.length === 2) twoCalls += 1;
      // Every call's first fragment has id, type and name with empty arguments; the arguments come in pieces.
      const chunks = r.events.filter((ev): ev is Chunk => ev !== '[DONE]');
      const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      for (const [index, call] of r.toolCalls.entries()) {
        const own = fragments.filter((f) => f.index === index);
        assert.equal(own[0]?.type, 'function');
        assert.equal(own[0]?.function.arguments, '');
        assert.ok(own.length >= 3, 'arguments split across several chunks');
        assert.ok(own.slice(1).every((f) => f.id === undefined && f.function.name === undefined));
        assert.match(call.id, /^call_[0-9a-f]+$/);
        const args = JSON.parse(call.arguments) as Record<string, unknown>;
        if (call.name === 'read_file') {
          assert.deepEqual(Object.keys(args), ['path', 'start_line', 'max_lines']);
          assert.equal(typeof args['path'], 'string');
          assert.ok(Number.isInteger(args['start_line']));
          assert.equal(typeof args['max_lines'], 'number');
        } else {
          assert.equal(call.name, 'run_command');
          assert.equal(typeof args['command'], 'string');
          assert.equal(typeof args['background'], 'boolean');
          assert.equal(typeof (args['env'] as Record<string, unknown>)['CI'], 'string');
          assert.ok(Array.isArray(args['args']));
          assert.ok(args['mode'] === 'fast' || args['mode'] === 'full');
          assert.equal(typeof args['weird'], 'string', 'unknown types get strings');
        }
      }
    }
    assert.ok(twoCalls > 0 && twoCalls < 40, `${twoCalls}/40 messages with two calls`);
  });

  it('no tools or tool_choice none gives content; auto follows tool_call_ratio', async () => {
    const e = await engine({ ...FAST, tool_call_ratio: 0.5 });
    const none = await streamChat(e.url, { messages: [USER('a')], tools: TOOLS, tool_choice: 'none' });
    assert.equal(none.finishReason, 'stop');
    const noTools = await streamChat(e.url, { messages: [USER('a')] });
    assert.equal(noTools.finishReason, 'stop');
    let withCalls = 0;
    for (let i = 0; i < 30; i += 1) {
      const r = await streamChat(e.url, { messages: [USER(`auto ${i}`)], tools: TOOLS });
      if (r.finishReason === 'tool_calls') withCalls += 1;
    }
    assert.ok(withCalls >= 5 && withCalls <= 25, `${withCalls}/30 auto rounds with tool calls at ratio 0.5`);
  });

  it('cached_tokens grow across rounds: round 2, echoing round 1, has round 1 prompt cached; another agent hits the system prompt', async () => {
    const e = await engine(FAST);
    const round1Messages = [SYSTEM, USER('refactor the parser')];
    const r1 = await streamChat(e.url, { messages: round1Messages, tools: TOOLS, tool_choice: 'required' });
    const p1 = r1.usage?.prompt_tokens ?? 0;
    assert.equal(r1.usage?.prompt_tokens_details.cached_tokens, 0, 'a cold engine has nothing cached');
    const assistant = { role: 'assistant', content: null, tool_calls: r1.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
    const results = r1.toolCalls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'file contents '.repeat(40) }));
    const r2 = await streamChat(e.url, { messages: [...round1Messages, assistant, ...results], tools: TOOLS });
    const cached2 = r2.usage?.prompt_tokens_details.cached_tokens ?? 0;
    assert.ok(cached2 >= p1, `round 2 cached ${cached2} ≥ round 1 prompt ${p1}`);
    assert.ok(cached2 < (r2.usage?.prompt_tokens ?? 0), 'the new tool results are not cached');

    // Content answers echo back too (clients may trim the trailing space).
    const r3Messages = [...round1Messages, assistant, ...results, { role: 'assistant', content: r2.content.trim() || null, ...(r2.toolCalls.length > 0 ? { tool_calls: r2.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}) }, USER('continue')];
    const r3 = await streamChat(e.url, { messages: r3Messages, tools: TOOLS });
    assert.ok((r3.usage?.prompt_tokens_details.cached_tokens ?? 0) >= (r2.usage?.prompt_tokens ?? 0));

    const other = await streamChat(e.url, { messages: [SYSTEM, USER('another agent, another task')], tools: TOOLS });
    const otherCached = other.usage?.prompt_tokens_details.cached_tokens ?? 0;
    assert.ok(otherCached > 300 && otherCached < p1, `a second conversation reuses the shared system prompt (${otherCached} cached)`);
  });

  it('max_tokens below the answer length cuts it with finish_reason length', async () => {
    const e = await engine({ ...FAST, output_tokens_min: 40, output_tokens_max: 40, reasoning_tokens_max: 0 });
    const r = await streamChat(e.url, { messages: [USER('long answer please')], max_tokens: 5 });
    assert.equal(r.finishReason, 'length');
    assert.equal(r.usage?.completion_tokens, 5);
    assert.equal(r.content.split(' ').filter(Boolean).length, 5);
  });

  it('reasoning_content fragments come before the answer when reasoning_tokens_max is set', async () => {
    const e = await engine({ ...FAST, reasoning_tokens_max: 12 });
    let sawReasoning = false;
    for (let i = 0; i < 5 && !sawReasoning; i += 1) {
      const r = await streamChat(e.url, { messages: [USER(`think ${i}`)] });
      const deltas = r.events.filter((ev): ev is Chunk => ev !== '[DONE]').map((c) => c.choices[0]?.delta ?? {});
      const firstContent = deltas.findIndex((d) => d.content !== undefined);
      const lastReasoning = deltas.findLastIndex((d) => d.reasoning_content !== undefined);
      if (lastReasoning >= 0) {
        sawReasoning = true;
        assert.ok(lastReasoning < firstContent);
      }
    }
    assert.ok(sawReasoning);
  });

  it('the same conversation under the same seed gets the same answer, on the same or a fresh engine; another seed differs', async () => {
    const body = { messages: [SYSTEM, USER('determinism')], tools: TOOLS };
    const a = await engine(FAST);
    const first = await streamChat(a.url, body);
    const again = await streamChat(a.url, body);
    const fresh = await streamChat((await engine(FAST)).url, body);
    const answer = (r: typeof first): string => JSON.stringify([r.content, r.toolCalls, r.finishReason]);
    assert.equal(answer(again), answer(first));
    assert.equal(answer(fresh), answer(first));
    const reseeded = await streamChat((await engine({ ...FAST, seed: 99 })).url, { ...body, tools: undefined });
    const base = await streamChat(a.url, { ...body, tools: undefined });
    assert.notEqual(reseeded.content, base.content);
  });

  it('stream false returns one chat.completion with the same content, tool calls and usage', async () => {
    const e = await engine(FAST);
    const body = { messages: [USER('non stream')], tools: TOOLS, tool_choice: 'required' };
    const res = await postJson(e.url, '/v1/chat/completions', JSON.stringify({ ...body, stream: false }));
    assert.equal(res.status, 200);
    assert.match(String(res.headers['x-engine-request-id']), /^chatcmpl-/);
    const json = res.json as { object: string; choices: { message: { role: string; content: string | null; tool_calls: { id: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[]; usage: { completion_tokens: number; prompt_tokens_details: { cached_tokens: number } } };
    assert.equal(json.object, 'chat.completion');
    const choice = json.choices[0];
    assert.equal(choice?.finish_reason, 'tool_calls');
    assert.equal(choice?.message.role, 'assistant');
    assert.equal(choice?.message.content, null);
    const streamed = await streamChat(e.url, body);
    assert.deepEqual(
      choice?.message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      streamed.toolCalls,
    );
    assert.equal(json.usage.completion_tokens, streamed.usage?.completion_tokens);
  });

  it('bad JSON, missing messages and bad fields get a 400 OpenAI-style error; unknown routes 404', async () => {
    const e = await engine(FAST);
    for (const body of ['{not json', '{}', '{"messages": []}', '{"messages": [{"role": "wizard", "content": "x"}]}', '{"messages": [{"role":"user","content":"x"}], "max_tokens": 0}']) {
      const res = await postJson(e.url, '/v1/chat/completions', body);
      assert.equal(res.status, 400, body);
      const err = (res.json as { error: { message: string; type: string; code: string } }).error;
      assert.equal(err.type, 'invalid_request_error');
      assert.ok(err.message.length > 0 && err.code.length > 0);
    }
    assert.equal(e.stats().rejected, 5);
    assert.equal(e.stats().requests, 0);
    assert.equal((await getText(e.url, '/v2/nothing')).status, 404);
  });

  it('health is ok, models lists the model, and idle connections are kept alive for 65 s', async () => {
    const e = await engine(FAST);
    assert.deepEqual(await getText(e.url, '/health'), { status: 200, text: 'ok' });
    const models = JSON.parse((await getText(e.url, '/v1/models')).text) as { object: string; data: { id: string }[] };
    assert.equal(models.object, 'list');
    assert.equal(models.data[0]?.id, 'deepseek-v4-flash');
    const r = await streamChat(e.url, { messages: [USER('keep alive')] });
    assert.equal(r.headers['keep-alive'], 'timeout=65');
  });
});

describe('engine /metrics', () => {
  const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$/;
  const scrape = async (url: string): Promise<Map<string, number>> => {
    const { status, text } = await getText(url, '/metrics');
    assert.equal(status, 200);
    const samples = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('#')) {
        assert.match(line, /^# (HELP|TYPE) sglang:\S+ \S.*$/);
        continue;
      }
      const m = LINE.exec(line);
      assert.ok(m, `sample line parses: ${line}`);
      assert.match(m[2] ?? '', /^model_name="deepseek-v4-flash"(,le="[^"]+")?$/);
      assert.ok(!Number.isNaN(Number(m[3])), line);
      samples.set(`${m[1]}${(m[2] ?? '').includes('le=') ? `{${(m[2] ?? '').split(',')[1]}}` : ''}`, Number(m[3]));
    }
    return samples;
  };

  it('exposes every SGLang gauge, counter and histogram with model_name, and counters advance with work', async () => {
    const e = await engine(FAST);
    const before = await scrape(e.url);
    for (const name of [
      'sglang:num_running_reqs', 'sglang:num_queue_reqs', 'sglang:num_prefill_inflight_queue_reqs', 'sglang:num_used_tokens',
      'sglang:token_usage', 'sglang:gen_throughput', 'sglang:cache_hit_rate', 'sglang:prompt_tokens_total',
      'sglang:generation_tokens_total', 'sglang:num_requests_total', 'sglang:time_to_first_token_seconds_sum',
      'sglang:time_to_first_token_seconds_count', 'sglang:time_to_first_token_seconds_bucket{le="+Inf"}',
      'sglang:e2e_request_latency_seconds_sum', 'sglang:e2e_request_latency_seconds_count', 'sglang:e2e_request_latency_seconds_bucket{le="+Inf"}',
    ]) assert.ok(before.has(name), `has ${name}`);
    assert.equal(before.get('sglang:num_requests_total'), 0);
    const r1 = await streamChat(e.url, { messages: [SYSTEM, USER('metrics')] });
    await streamChat(e.url, { messages: [SYSTEM, USER('metrics again')] });
    const after = await scrape(e.url);
    assert.equal(after.get('sglang:num_requests_total'), 2);
    assert.ok((after.get('sglang:prompt_tokens_total') ?? 0) >= 2 * (r1.usage?.prompt_tokens ?? 1) - 20);
    assert.ok((after.get('sglang:generation_tokens_total') ?? 0) >= 48);
    assert.equal(after.get('sglang:time_to_first_token_seconds_count'), 2);
    assert.equal(after.get('sglang:e2e_request_latency_seconds_bucket{le="+Inf"}'), 2);
    assert.ok((after.get('sglang:cache_hit_rate') ?? 0) > 0, 'the second request hit the system prompt');
    assert.ok((after.get('sglang:gen_throughput') ?? 0) > 0);
  });
});
