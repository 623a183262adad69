// The official `openai` npm client against the embedded PD deployment, as a harness would use it: streamed tool
// calls after reasoning (raw chunks, and the stream helper's accumulated message, which loses the reasoning to
// SGLang's explicit nulls), `n` choices, and errors as the client shows them — SGLang's flat 400 body reads as
// "400 status code (no body)", an error event mid-stream throws with SGLang's message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { engine, TOOLS, USER } from './helpers.js';

const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, kv_transfer_gbps: null };
const MODEL = 'deepseek-v4-flash';

function client(url: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
}

/** The client's typed delta does not declare SGLang's reasoning field. */
function reasoningOf(delta: unknown): string {
  const value = (delta as { reasoning_content?: unknown }).reasoning_content;
  return typeof value === 'string' ? value : '';
}

describe('the openai client against the embedded deployment', () => {
  it('streams tool calls after reasoning: chunks reassemble into valid calls, usage last with reasoning_tokens', async (t) => {
    const e = await engine({ ...FAST, reasoning_tokens_max: 30, tool_call_ratio: 1 }, t);
    const openai = client(e.url);
    let found = false;
    for (let i = 0; i < 8 && !found; i += 1) {
      const stream = await openai.chat.completions.create({
        model: MODEL,
        stream: true,
        stream_options: { include_usage: true },
        messages: [USER(`call a tool ${i}`)] as OpenAI.ChatCompletionMessageParam[],
        tools: TOOLS as OpenAI.ChatCompletionTool[],
        tool_choice: 'required',
      });
      let reasoning = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined = null;
      const calls: { id: string; name: string; arguments: string }[] = [];
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (choice === undefined) continue;
        reasoning += reasoningOf(choice.delta);
        finish = choice.finish_reason ?? finish;
        for (const f of choice.delta.tool_calls ?? []) {
          const call = (calls[f.index] ??= { id: '', name: '', arguments: '' });
          if (f.id) call.id = f.id;
          if (f.function?.name) call.name = f.function.name;
          call.arguments += f.function?.arguments ?? '';
        }
      }
      assert.equal(finish, 'tool_calls');
      assert.ok(calls.length >= 1);
      for (const c of calls) {
        assert.match(c.id, /^call_[0-9a-f]{24}$/);
        assert.ok(['read_file', 'run_command'].includes(c.name));
        assert.doesNotThrow(() => JSON.parse(c.arguments));
      }
      assert.equal((usage as unknown as { reasoning_tokens: number } | null)?.reasoning_tokens, reasoning.split(' ').filter(Boolean).length);
      found = reasoning.length > 0;
    }
    assert.ok(found, 'some answer reasoned before its tool calls');
  });

  it("the stream helper's accumulated message loses reasoning_content, as against a real SGLang: the explicit nulls of later chunks overwrite it", async (t) => {
    const e = await engine({ ...FAST, reasoning_tokens_max: 30, tool_call_ratio: 1 }, t);
    const openai = client(e.url);
    for (let i = 0; i < 8; i += 1) {
      const runner = openai.chat.completions.stream({
        model: MODEL,
        messages: [USER(`helper ${i}`)] as OpenAI.ChatCompletionMessageParam[],
        tools: TOOLS as OpenAI.ChatCompletionTool[],
        tool_choice: 'required',
      });
      let streamed = '';
      runner.on('chunk', (chunk) => {
        streamed += reasoningOf(chunk.choices[0]?.delta);
      });
      const final = await runner.finalChatCompletion();
      const message = final.choices[0]!.message;
      assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
      for (const call of message.tool_calls ?? []) {
        assert.equal(call.type, 'function');
        if (call.type === 'function') assert.doesNotThrow(() => JSON.parse(call.function.arguments));
      }
      if (streamed === '') continue;
      // openai-node assigns each delta's unknown fields onto the message: the last chunk's null wins.
      assert.equal((message as unknown as { reasoning_content: unknown }).reasoning_content, null);
      return;
    }
    assert.fail('no answer with reasoning in 8 tries');
  });

  it('n: 2 gives two choices, streamed and not', async (t) => {
    const e = await engine(FAST, t);
    const openai = client(e.url);
    const whole = await openai.chat.completions.create({ model: MODEL, n: 2, messages: [USER('two ways')] as OpenAI.ChatCompletionMessageParam[] });
    assert.deepEqual(
      whole.choices.map((c) => c.index),
      [0, 1],
    );
    assert.notEqual(whole.choices[0]!.message.content, whole.choices[1]!.message.content);
    const indexes = new Set<number>();
    for await (const chunk of await openai.chat.completions.create({ model: MODEL, n: 2, stream: true, messages: [USER('two ways')] as OpenAI.ChatCompletionMessageParam[] })) {
      for (const c of chunk.choices) indexes.add(c.index);
    }
    assert.deepEqual([...indexes].sort(), [0, 1]);
  });

  it('errors as the client shows them: SGLang\'s flat 400 body is "400 status code (no body)", an error event mid-stream throws with SGLang\'s message', async (t) => {
    const e = await engine({ ...FAST, faults: [{ kind: 'inflight_pin', from_round: 2 }], decode: { waiting_timeout_s: 0.3 } }, t);
    const openai = client(e.url);
    await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: [USER('x')] as OpenAI.ChatCompletionMessageParam[], tool_choice: 'required' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.status, 400);
      // openai-node reads `error` from the body; SGLang's flat body has none, so the client sees no message.
      assert.equal(err.message, '400 status code (no body)');
      return true;
    });
    const stream = await openai.chat.completions.create({
      model: MODEL,
      stream: true,
      messages: [USER('a'), { role: 'assistant', content: 'b' }, USER('pinned')] as OpenAI.ChatCompletionMessageParam[],
    });
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) void chunk;
      })(),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError);
        assert.match(err.message, /Decode transfer failed for request rank=0 .* timed out after 0\.3s in KVPoll\.WaitingForInput/);
        return true;
      },
    );
  });
});
