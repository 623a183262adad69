import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workloadSchema } from '../../src/config/index.js';
import { Conversation, resolveTools, systemPrompt } from '../../src/agent/index.js';
import type { AssembledMessage } from '../../src/stream/index.js';

const settings = workloadSchema.parse({}).conversation;

function make(agent: number, ordinal = 1) {
  return new Conversation({ id: `a${agent}-c${ordinal}`, agent, ordinal, model: 'm', settings, system: systemPrompt(settings), tools: resolveTools(settings.tools) });
}

const toolAnswer: AssembledMessage = {
  content: '',
  reasoning: 'thinking',
  toolCalls: [
    { index: 0, id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}', argumentsValid: true },
    { index: 1, id: 'call_2', name: 'search_code', arguments: '{"pattern":"x"}', argumentsValid: true },
  ],
  finishReason: 'tool_calls',
  usage: null,
  sawDone: true,
  problems: [],
  violations: [],
};
const textAnswer: AssembledMessage = { ...toolAnswer, toolCalls: [], content: 'done with it', finishReason: 'stop' };

type Msg = { role: string; content: string | null; tool_calls?: { id: string }[]; tool_call_id?: string };
const messages = (c: Conversation) => (JSON.parse(c.body()) as { messages: Msg[] }).messages;

test('a tool-call answer appends the assistant message with its calls and one tool result per call', () => {
  const c = make(0);
  c.answered(toolAnswer);
  const m = messages(c);
  assert.deepEqual(m.map((x) => x.role), ['system', 'user', 'assistant', 'tool', 'tool']);
  assert.deepEqual(m[2]!.tool_calls!.map((t) => t.id), ['call_1', 'call_2']);
  assert.equal(m[2]!.content, null);
  assert.deepEqual([m[3]!.tool_call_id, m[4]!.tool_call_id], ['call_1', 'call_2']);
  assert.ok(!JSON.stringify(m).includes('thinking'), 'reasoning is not sent back');
});

test('a content answer appends the assistant message and a user turn', () => {
  const c = make(0);
  c.answered(textAnswer);
  assert.deepEqual(messages(c).map((x) => x.role), ['system', 'user', 'assistant', 'user']);
});

test('the request body grows every round, and tool results grow with the round number', () => {
  const c = make(1);
  const sizes = [c.body().length];
  const toolSizes: number[] = [];
  for (let r = 0; r < 5; r += 1) {
    c.answered(toolAnswer);
    sizes.push(c.body().length);
    toolSizes.push(messages(c).at(-1)!.content!.length);
  }
  for (let i = 1; i < sizes.length; i += 1) assert.ok(sizes[i]! > sizes[i - 1]!, `round ${i} body ${sizes[i]} > ${sizes[i - 1]}`);
  for (let i = 1; i < toolSizes.length; i += 1) assert.ok(toolSizes[i]! > toolSizes[i - 1]!, 'tool results grow per round');
  assert.equal(c.nextRound, 6);
});

test('a failed round re-sends the same history and still counts as a round', () => {
  const c = make(2);
  const before = c.body();
  c.failed();
  assert.equal(c.body(), before);
  assert.equal(c.nextRound, 2);
});

test('agents share the system prompt but not their conversations, and a seed reproduces them exactly', () => {
  const a = messages(make(0));
  const b = messages(make(1));
  assert.equal(a[0]!.content, b[0]!.content);
  assert.notEqual(a[1]!.content, b[1]!.content);
  assert.equal(make(3).body(), make(3).body());
  assert.notEqual(make(3, 1).body(), make(3, 2).body());
});

test('the body carries model, stream, usage request, tools and tool_choice', () => {
  const body = JSON.parse(make(0).body()) as Record<string, unknown>;
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal((body.tools as unknown[]).length, 3);
  assert.equal(body.tool_choice, 'auto');
  assert.equal(body.max_tokens, settings.max_tokens);
});
