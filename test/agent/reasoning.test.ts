// One request to a reasoning model, on real HTTP from a server streaming in SGLang's exact format: the figures
// beside ttft_ms (ttfc_ms, reasoning_ms, reasoning_tokens, tokens_per_event, tpot_ms) and the answer checks for
// DeepSeek's tool-call parsers (markup in arguments, wrapped arguments, calls without a name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendRound } from '../../src/agent/index.js';
import { DEFAULT_TOOLS } from '../../src/agent/tools.js';
import { sglangServer, type ScriptedAnswer } from '../helpers/sglang-server.js';
import { roundTarget } from '../helpers/round.js';
import { LoopDelay } from '../helpers/loop-delay.js';

const BODY = JSON.stringify({ model: 'deepseek-v4-flash', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }], max_tokens: 256 });
const request = { agent: 0, conversation: 'a0-c1', round: 1, phase: 'main', body: BODY };

async function one(t: Parameters<typeof sglangServer>[0], script: ScriptedAnswer, options: Parameters<typeof sendRound>[3] = {}) {
  const server = await sglangServer(t, () => script);
  const outcome = await sendRound(roundTarget(t, server.url), request, undefined, options);
  return { ...outcome, received: server.requests[0]! };
}

test('ttfc_ms starts at the first content token, ttft_ms at the first reasoning token; their difference is the reasoning time', async (t) => {
  const delay = new LoopDelay();
  t.after(() => delay.stop());
  const { record, received } = await one(t, { reasoning: Array.from({ length: 8 }, (_, i) => `step ${i}. `), content: ['The', ' answer', '.'], firstTokenDelayMs: 30, tokenIntervalMs: 15 });
  assert.equal(record.status, 'ok', JSON.stringify(record.error));
  const first = received.written[0]!;
  const lastReasoning = received.written.filter((w) => w.kind === 'reasoning').at(-1)!;
  const firstContent = received.written.find((w) => w.kind === 'content')!;
  const margin = delay.marginMs();
  // What the server spent reasoning (first reasoning token → first content token), seen from the client.
  const thinking = firstContent.atMs - first.atMs;
  assert.ok(
    Math.abs(record.ttfc_ms! - record.ttft_ms! - thinking) <= margin,
    `ttfc ${record.ttfc_ms} − ttft ${record.ttft_ms} vs ${thinking.toFixed(3)} ms of reasoning (margin ${margin.toFixed(1)} ms)`,
  );
  assert.ok(
    Math.abs(record.reasoning_ms! - (lastReasoning.atMs - first.atMs)) <= margin,
    `reasoning_ms ${record.reasoning_ms} vs ${(lastReasoning.atMs - first.atMs).toFixed(3)} (margin ${margin.toFixed(1)} ms)`,
  );
  // 8 reasoning tokens 15 ms apart: the two figures cannot be equal by accident.
  assert.ok(record.ttfc_ms! - record.ttft_ms! > 100, `${record.ttfc_ms! - record.ttft_ms!}`);
  assert.equal(record.reasoning_tokens, 8);
  assert.equal(record.reasoning_tokens_estimated, false);
  assert.equal(
    record.reasoning_chars,
    received.written.filter((w) => w.kind === 'reasoning').reduce((n, w) => n + w.text.length, 0),
  );
});

test('reasoning_tokens come from usage in either spelling, and are estimated (and marked) without one or when usage says 0 beside reasoning text', async (t) => {
  const reasoning = ['x'.repeat(40), 'y'.repeat(40)];
  const sglang = await one(t, { reasoning, content: ['ok'], usage: { spelling: 'sglang', reasoningTokens: 31 } });
  assert.deepEqual([sglang.record.reasoning_tokens, sglang.record.reasoning_tokens_estimated], [31, false]);
  const openai = await one(t, { reasoning, content: ['ok'], usage: { spelling: 'openai', reasoningTokens: 29 } });
  assert.deepEqual([openai.record.reasoning_tokens, openai.record.reasoning_tokens_estimated], [29, false]);
  // Not reported: 80 characters of reasoning ≈ 20 tokens, marked estimated (never a silent 0).
  const none = await one(t, { reasoning, content: ['ok'], usage: { spelling: 'none' } });
  assert.deepEqual([none.record.reasoning_tokens, none.record.reasoning_tokens_estimated], [20, true]);
  const zero = await one(t, { reasoning, content: ['ok'], usage: { spelling: 'sglang', reasoningTokens: 0 } });
  assert.deepEqual([zero.record.reasoning_tokens, zero.record.reasoning_tokens_estimated], [20, true]);
  // A plain answer: no reasoning at all, reported 0, and no reasoning time or TTFC gap.
  const plain = await one(t, { content: ['a', 'b'] });
  assert.deepEqual([plain.record.reasoning_tokens, plain.record.reasoning_tokens_estimated, plain.record.reasoning_ms], [0, false, null]);
  assert.equal(plain.record.ttfc_ms, plain.record.ttft_ms);
});

test('an answer of reasoning only (cut by max_tokens while thinking) has no ttfc_ms; a tool call counts as content for it', async (t) => {
  const cut = await one(t, { reasoning: ['a', 'b', 'c'], finishReason: 'length' });
  assert.equal(cut.record.status, 'ok');
  assert.equal(cut.record.ttfc_ms, null);
  assert.notEqual(cut.record.ttft_ms, null);
  const tool = await one(t, { reasoning: ['a'], toolCalls: [{ name: 'read_file', arguments: ['{"path": ', '"a.ts"}'] }], tokenIntervalMs: 5 });
  assert.equal(tool.record.status, 'ok', JSON.stringify(tool.record.error));
  assert.ok(tool.record.ttfc_ms! > tool.record.ttft_ms!);
});

test('tokens_per_event says how many tokens an event carried, and tpot_ms is (e2e − ttft) ÷ (completion tokens − 1)', async (t) => {
  // Ten content events of three tokens each, as a server coalescing under load sends them.
  const { record } = await one(t, { content: Array.from({ length: 10 }, () => 'abc '), tokenIntervalMs: 10, usage: { completionTokens: 30, reasoningTokens: 0 } });
  assert.equal(record.completion_tokens, 30);
  assert.equal(record.tokens_per_event, 3);
  assert.equal(record.itl!.count, 9, 'itl measures the gaps between the ten events');
  assert.ok(Math.abs(record.tpot_ms! * 29 - (record.e2e_ms - record.ttft_ms!)) < 0.05, `${record.tpot_ms} × 29 vs ${record.e2e_ms - record.ttft_ms!}`);
  // Per token, the gap is about a third of the per-event gap.
  assert.ok(record.tpot_ms! < record.itl!.mean_ms / 2, `tpot ${record.tpot_ms} vs itl mean ${record.itl!.mean_ms}`);
  // One completion token: no TPOT to speak of.
  const single = await one(t, { content: ['x'], usage: { completionTokens: 1 } });
  assert.equal(single.record.tpot_ms, null);
  assert.equal(single.record.tokens_per_event, 1);
});

test("DSML markup in a tool call's arguments is an ok answer with the tool_markup_in_arguments warning", async (t) => {
  const { record } = await one(t, { toolCalls: [{ name: 'read_file', arguments: ['{"path": "a.ts <｜DSML｜parameter name=\\"x\\">"}'] }] });
  assert.equal(record.status, 'ok', JSON.stringify(record.error));
  assert.deepEqual(record.warnings, ['tool_markup_in_arguments']);
});

test('arguments wrapped in a spurious {"arguments": …} or {"input": …} key are wrapped_tool_arguments, unless the tool declares that key', async (t) => {
  const tools = { tools: DEFAULT_TOOLS };
  const wrapped = await one(t, { toolCalls: [{ name: 'read_file', arguments: ['{"arguments": {"path": "a.ts"}}'] }] }, tools);
  assert.equal(wrapped.record.status, 'ok');
  assert.deepEqual(wrapped.record.warnings, ['wrapped_tool_arguments']);
  // Encoded once more, as a JSON string.
  const encoded = await one(t, { toolCalls: [{ name: 'read_file', arguments: ['{"input": "{\\"path\\": \\"a.ts\\"}"}'] }] }, tools);
  assert.deepEqual(encoded.record.warnings, ['wrapped_tool_arguments']);
  // A tool whose real parameter is `input`: its arguments are not wrapped.
  const own = [{ name: 'shell', description: '', parameters: { type: 'object', properties: { input: { type: 'object' } } } }];
  const declared = await one(t, { toolCalls: [{ name: 'shell', arguments: ['{"input": {"cmd": "ls"}}'] }] }, { tools: own });
  assert.equal(declared.record.warnings, undefined);
  // A plain string under `input` is an argument, not a wrapped object.
  const plain = await one(t, { toolCalls: [{ name: 'read_file', arguments: ['{"input": "a.ts"}'] }] }, tools);
  assert.equal(plain.record.warnings, undefined);
});

test('a tool call without a name is an ok answer with the tool_call_without_name warning (not a protocol_error), handed back as history', async (t) => {
  const { record, message } = await one(t, { toolCalls: [{ name: null, arguments: ['{"path": ', '"a.ts"}'] }] });
  assert.equal(record.status, 'ok', JSON.stringify(record.error));
  assert.deepEqual(record.warnings, ['tool_call_without_name']);
  assert.equal(message?.toolCalls[0]?.name, '');
  // Invalid JSON still fails the request, warnings or not.
  const broken = await one(t, { toolCalls: [{ name: null, arguments: ['{"path": '] }] });
  assert.equal(broken.record.error?.class, 'invalid_tool_arguments');
});
