// The deployment's chat completions held to SGLang's wire format (serving_chat, sglang-detailed.md §3): explicit
// nulls, the role chunk, reasoning then content then tool calls, a separate finish chunk, usage last, [DONE];
// tool-call fragments; reasoning for DeepSeek names; the cache report; n choices; non-streamed answers. PD (the
// default) unless a test says `single`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engine, postJson, streamChat, TOOLS, USER, type Chunk } from './helpers.js';

const SYSTEM = { role: 'system', content: 'You are a coding agent. '.repeat(60) };
/** Fast settings: no decode wait, so these tests check shapes, not timing. */
const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, kv_transfer_gbps: null };
const NULL_DELTA = { role: null, content: null, reasoning_content: null, tool_calls: null };

const chunksOf = (events: readonly unknown[]): Chunk[] => events.filter((ev): ev is Chunk => ev !== '[DONE]' && typeof ev === 'object' && ev !== null && 'choices' in ev);

describe('chat completions in SGLang format', () => {
  for (const topology of ['pd', 'single'] as const) {
    it(`${topology}: a streamed answer has explicit nulls everywhere, the role chunk, reasoning then content, a separate finish chunk, usage last, then [DONE]`, async (t) => {
      const e = await engine({ ...FAST, topology, reasoning_tokens_max: 12 }, t);
      let r = await streamChat(e.url, { messages: [SYSTEM, USER('fix the failing test')] });
      // Reasoning length is drawn from 0..max: find an answer that has some.
      for (let i = 0; r.reasoning === '' && i < 10; i += 1) r = await streamChat(e.url, { messages: [SYSTEM, USER(`fix the failing test ${i}`)] });
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^text\/event-stream/);
      assert.equal(r.headers['keep-alive'], undefined, 'no Keep-Alive hint, as uvicorn');
      assert.equal(r.events.at(-1), '[DONE]');
      const chunks = chunksOf(r.events);
      for (const c of chunks) {
        assert.deepEqual(Object.keys(c), ['id', 'object', 'created', 'model', 'choices', 'usage']);
        assert.equal(c.object, 'chat.completion.chunk');
        assert.equal(c.id, chunks[0]?.id);
        assert.match(c.id, /^[0-9a-f]{32}$/);
        assert.equal(c.model, 'deepseek-v4-flash');
        for (const ch of c.choices) {
          assert.deepEqual(Object.keys(ch), ['index', 'delta', 'logprobs', 'finish_reason', 'matched_stop']);
          assert.deepEqual(Object.keys(ch.delta), ['role', 'content', 'reasoning_content', 'tool_calls']);
          assert.equal(ch.logprobs, null);
        }
      }
      assert.deepEqual(chunks[0]?.choices[0]?.delta, { ...NULL_DELTA, role: 'assistant', content: '' });
      const body = chunks.slice(1, -2).map((c) => c.choices[0]!.delta);
      const lastReasoning = body.findLastIndex((d) => d.reasoning_content !== null);
      const firstContent = body.findIndex((d) => d.content !== null);
      assert.ok(lastReasoning >= 0 && lastReasoning < firstContent, 'reasoning comes first, then content');
      for (const d of body) {
        assert.equal(d.role, null);
        assert.equal(d.tool_calls, null);
        assert.ok((d.content === null) !== (d.reasoning_content === null), 'one kind of text per chunk');
      }
      const finish = chunks.at(-2)!;
      assert.deepEqual(finish.choices[0]?.delta, NULL_DELTA, 'the finish chunk carries no text');
      assert.equal(finish.choices[0]?.finish_reason, 'stop');
      assert.equal(finish.choices[0]?.matched_stop, 1, 'the EOS token');
      assert.equal(finish.usage, null);
      const last = chunks.at(-1)!;
      assert.deepEqual(last.choices, []);
      assert.deepEqual(Object.keys(last.usage!), ['prompt_tokens', 'total_tokens', 'completion_tokens', 'prompt_tokens_details', 'reasoning_tokens']);
      assert.equal(last.usage?.completion_tokens, body.length);
      assert.equal(last.usage?.reasoning_tokens, body.filter((d) => d.reasoning_content !== null).length);
      assert.equal(last.usage?.total_tokens, (last.usage?.prompt_tokens ?? 0) + body.length);
      assert.equal(last.usage?.prompt_tokens_details, null, 'no cache report unless enable_cache_report');
      assert.ok((last.usage?.prompt_tokens ?? 0) > 300, 'the system prompt is counted at ~4 chars per token');
      // The timing comment comes once, right before the first token chunk.
      assert.equal(r.comments.length, 1);
      assert.match(r.comments[0]?.text ?? '', /^engine-first-token-ms=\d+(\.\d+)?$/);
      assert.equal(r.comments[0]?.beforeEvent, 1);
    });
  }

  it('tool calls stream as SGLang streams them: call_<24hex>, name and empty arguments first, then id null, name null, type function', async (t) => {
    const e = await engine({ ...FAST, reasoning: 'off' }, t);
    let twoCalls = 0;
    for (let i = 0; i < 30; i += 1) {
      const r = await streamChat(e.url, { messages: [SYSTEM, USER(`task ${i}`)], tools: TOOLS, tool_choice: 'required' });
      assert.equal(r.finishReason, 'tool_calls');
      assert.equal(r.content, '');
      assert.ok(r.toolCalls.length >= 1 && r.toolCalls.length <= 2);
      if (r.toolCalls.length === 2) twoCalls += 1;
      const chunks = chunksOf(r.events);
      const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      for (const c of chunks.slice(1, -2)) assert.equal(c.choices[0]?.delta.content, null, 'tool-call chunks carry content null');
      for (const [index, call] of r.toolCalls.entries()) {
        const own = fragments.filter((f) => f.index === index);
        assert.deepEqual(Object.keys(own[0]!), ['id', 'index', 'type', 'function']);
        assert.match(own[0]!.id ?? '', /^call_[0-9a-f]{24}$/);
        assert.equal(own[0]!.type, 'function');
        assert.equal(own[0]!.function.arguments, '');
        assert.ok(own.length >= 3, 'arguments split across several chunks');
        for (const f of own.slice(1)) {
          assert.equal(f.id, null);
          assert.equal(f.type, 'function');
          assert.equal(f.function.name, null);
        }
        const args = JSON.parse(call.arguments) as Record<string, unknown>;
        if (call.name === 'read_file') {
          assert.deepEqual(Object.keys(args), ['path', 'start_line', 'max_lines']);
          assert.ok(Number.isInteger(args['start_line']));
        } else {
          assert.equal(call.name, 'run_command');
          assert.equal(typeof args['background'], 'boolean');
          assert.ok(args['mode'] === 'fast' || args['mode'] === 'full');
          assert.equal(typeof args['weird'], 'string', 'a schema without a type gets strings');
        }
      }
    }
    assert.ok(twoCalls > 0 && twoCalls < 30, `${twoCalls}/30 messages with two calls`);
  });

  it('reasoning streams for a DeepSeek model name, not for another, and chat_template_kwargs.thinking false turns it off', async (t) => {
    const deepseek = await engine({ ...FAST, reasoning_tokens_max: 40 }, t);
    const thinking = await streamChat(deepseek.url, { messages: [USER('reason first')] });
    assert.ok(thinking.reasoning.length > 0, 'deepseek-v4-flash reasons by default');
    assert.equal(
      thinking.usage?.reasoning_tokens,
      chunksOf(thinking.events).filter((c) => c.choices[0]?.delta.reasoning_content !== null && c.choices[0]?.delta.reasoning_content !== undefined).length,
    );
    const off = await streamChat(deepseek.url, { messages: [USER('reason first')], chat_template_kwargs: { thinking: false } });
    assert.equal(off.reasoning, '');
    assert.equal(off.usage?.reasoning_tokens, 0);
    assert.ok(off.content.length > 0);
    const { startEngine } = await import('../../src/engine/index.js');
    const { engineSchema } = await import('../../src/config/index.js');
    const other = await startEngine({ settings: engineSchema.parse({ ...FAST, reasoning_tokens_max: 40 }), modelName: 'qwen3-coder' });
    t.after(() => other.close());
    const plain = await streamChat(other.url, { model: 'qwen3-coder', messages: [USER('reason first')] });
    assert.equal(plain.reasoning, '', 'no reasoning parser for a non-DeepSeek name under reasoning: auto');
  });

  it('tool_choice none or no tools gives content; auto follows tool_call_ratio', async (t) => {
    const e = await engine({ ...FAST, tool_call_ratio: 0.5 }, t);
    assert.equal((await streamChat(e.url, { messages: [USER('a')], tools: TOOLS, tool_choice: 'none' })).finishReason, 'stop');
    assert.equal((await streamChat(e.url, { messages: [USER('a')] })).finishReason, 'stop');
    let withCalls = 0;
    for (let i = 0; i < 30; i += 1) if ((await streamChat(e.url, { messages: [USER(`auto ${i}`)], tools: TOOLS })).finishReason === 'tool_calls') withCalls += 1;
    assert.ok(withCalls >= 5 && withCalls <= 25, `${withCalls}/30 auto rounds with tool calls at ratio 0.5`);
  });

  for (const topology of ['pd', 'single'] as const) {
    it(`${topology}: with enable_cache_report, cached tokens grow across rounds and another agent hits the system prompt`, async (t) => {
      const e = await engine({ ...FAST, topology, enable_cache_report: true }, t);
      const round1 = [SYSTEM, USER('refactor the parser')];
      const r1 = await streamChat(e.url, { messages: round1, tools: TOOLS, tool_choice: 'required' });
      const p1 = r1.usage?.prompt_tokens ?? 0;
      assert.equal(r1.usage?.prompt_tokens_details, null, 'nothing cached on a cold server: SGLang sends null, not 0');
      const assistant = { role: 'assistant', content: null, tool_calls: r1.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
      const results = r1.toolCalls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'file contents '.repeat(40) }));
      const r2 = await streamChat(e.url, { messages: [...round1, assistant, ...results], tools: TOOLS });
      const cached2 = r2.usage?.prompt_tokens_details?.cached_tokens ?? 0;
      // PD: the prefill cached round 1's prompt, never the answer (decode generated it); single: both.
      assert.ok(cached2 >= p1 - 1 && cached2 < (r2.usage?.prompt_tokens ?? 0), `round 2 cached ${cached2} of ${r2.usage?.prompt_tokens}, round 1 prompt ${p1}`);
      if (topology === 'single') assert.ok(cached2 > p1, 'the unified server cached its own answer too');
      else assert.equal(cached2, p1, 'the prefill server never saw the answer');
      const other = await streamChat(e.url, { messages: [SYSTEM, USER('another agent, another task')], tools: TOOLS });
      const otherCached = other.usage?.prompt_tokens_details?.cached_tokens ?? 0;
      assert.ok(otherCached > 300 && otherCached < p1, `a second conversation reuses the shared system prompt (${otherCached} cached)`);
    });
  }

  it('max_tokens below the answer cuts it, reasoning included, with finish_reason length and matched_stop null', async (t) => {
    const e = await engine({ ...FAST, output_tokens_min: 40, output_tokens_max: 40, reasoning: 'off' }, t);
    const r = await streamChat(e.url, { messages: [USER('long answer please')], max_tokens: 5 });
    assert.equal(r.finishReason, 'length');
    assert.equal(chunksOf(r.events).at(-2)?.choices[0]?.matched_stop, null);
    assert.equal(r.usage?.completion_tokens, 5);
    assert.equal(r.content.split(' ').filter(Boolean).length, 5);
  });

  it('the same conversation under the same seed gets the same answer, on the same or a fresh deployment; another seed differs', async (t) => {
    const body = { messages: [SYSTEM, USER('determinism')], tools: TOOLS };
    const a = await engine(FAST, t);
    const first = await streamChat(a.url, body);
    const again = await streamChat(a.url, body);
    const fresh = await streamChat((await engine(FAST, t)).url, body);
    const answer = (r: typeof first): string => JSON.stringify([r.reasoning, r.content, r.toolCalls, r.finishReason]);
    assert.equal(answer(again), answer(first));
    assert.equal(answer(fresh), answer(first));
    const reseeded = await streamChat((await engine({ ...FAST, seed: 99 }, t)).url, { ...body, tools: undefined });
    const base = await streamChat(a.url, { ...body, tools: undefined });
    assert.notEqual(reseeded.content, base.content);
  });

  it('stream false returns one chat.completion in SGLang shape, with the same answer and usage', async (t) => {
    const e = await engine(FAST, t);
    const body = { messages: [USER('non stream')], tools: TOOLS, tool_choice: 'required' };
    const res = await postJson(e.url, '/v1/chat/completions', JSON.stringify({ ...body, stream: false }));
    assert.equal(res.status, 200);
    const json = res.json as { object: string; choices: { index: number; message: Record<string, unknown>; finish_reason: string; matched_stop: number | null }[]; usage: Record<string, unknown> };
    assert.equal(json.object, 'chat.completion');
    const choice = json.choices[0]!;
    assert.deepEqual(Object.keys(choice.message), ['role', 'content', 'reasoning_content', 'tool_calls']);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message['content'], null);
    const streamed = await streamChat(e.url, body);
    assert.equal(choice.message['reasoning_content'] ?? '', streamed.reasoning);
    const calls = choice.message['tool_calls'] as { id: string; index: number; type: string; function: { name: string; arguments: string } }[];
    assert.deepEqual(
      calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      streamed.toolCalls,
    );
    assert.equal(json.usage['completion_tokens'], streamed.usage?.completion_tokens);
    assert.equal(json.usage['prompt_tokens_details'], null);
  });

  for (const topology of ['pd', 'single'] as const) {
    it(`${topology}: n > 1 streams n choices, each with its own role and finish chunk, and usage sums them; not streamed, n choices`, async (t) => {
      const e = await engine({ ...FAST, topology }, t);
      const r = await streamChat(e.url, { messages: [USER('three ways')], n: 3 });
      const chunks = chunksOf(r.events);
      for (const index of [0, 1, 2]) {
        const own = chunks.filter((c) => c.choices[0]?.index === index);
        assert.deepEqual(own[0]?.choices[0]?.delta, { ...NULL_DELTA, role: 'assistant', content: '' }, `choice ${index} opens with its role chunk`);
        assert.equal(own.filter((c) => c.choices[0]?.finish_reason !== null).length, 1, `choice ${index} finishes once`);
      }
      const tokens = chunks.filter((c) => c.choices.length === 1 && c.choices[0]!.finish_reason === null && c.choices[0]!.delta.role === null).length;
      assert.equal(r.usage?.completion_tokens, tokens);
      const texts = [0, 1, 2].map((i) =>
        chunks
          .filter((c) => c.choices[0]?.index === i)
          .map((c) => c.choices[0]!.delta.content ?? c.choices[0]!.delta.reasoning_content ?? '')
          .join(''),
      );
      assert.equal(new Set(texts).size, 3, 'each choice is its own sample');
      const whole = await postJson(e.url, '/v1/chat/completions', JSON.stringify({ messages: [USER('three ways')], n: 3 }));
      assert.deepEqual(
        (whole.json as { choices: { index: number }[] }).choices.map((c) => c.index),
        [0, 1, 2],
      );
    });
  }
});
