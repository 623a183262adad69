import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workloadSchema } from '../../src/config/index.js';
import { Conversation, NAMELESS_CALL_RESULT, resolveTools, systemPrompt } from '../../src/agent/index.js';
import type { AssembledMessage } from '../../src/stream/index.js';

const settings = workloadSchema.parse({}).conversation;

function make(agent: number, ordinal = 1, options: { settings?: typeof settings; extraBody?: Record<string, unknown> } = {}) {
  const s = options.settings ?? settings;
  return new Conversation({
    id: `a${agent}-c${ordinal}`,
    agent,
    ordinal,
    model: 'm',
    settings: s,
    system: systemPrompt(s),
    tools: resolveTools(s.tools),
    ...(options.extraBody === undefined ? {} : { extraBody: options.extraBody }),
  });
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

type Msg = { role: string; content: string | null; reasoning_content?: string; tool_calls?: { id: string; function: { name: string } }[]; tool_call_id?: string };
const messages = (c: Conversation) => (JSON.parse(c.body()) as { messages: Msg[] }).messages;

test('a tool-call answer appends the assistant message with its calls and one tool result per call', () => {
  const c = make(0);
  c.answered(toolAnswer);
  const m = messages(c);
  assert.deepEqual(
    m.map((x) => x.role),
    ['system', 'user', 'assistant', 'tool', 'tool'],
  );
  assert.deepEqual(
    m[2]!.tool_calls!.map((t) => t.id),
    ['call_1', 'call_2'],
  );
  assert.equal(m[2]!.content, null);
  assert.deepEqual([m[3]!.tool_call_id, m[4]!.tool_call_id], ['call_1', 'call_2']);
});

test('reasoning_history keep (the default) sends the streamed reasoning back on the assistant message; drop leaves it out', () => {
  const keep = make(0);
  keep.answered(toolAnswer);
  keep.answered(textAnswer);
  const kept = messages(keep).filter((x) => x.role === 'assistant');
  assert.deepEqual(
    kept.map((x) => x.reasoning_content),
    ['thinking', 'thinking'],
    'tool-call and content turns both carry it',
  );
  const drop = make(0, 1, { settings: { ...settings, reasoning_history: 'drop' } });
  drop.answered(toolAnswer);
  drop.answered(textAnswer);
  assert.ok(!drop.body().includes('reasoning_content'), 'drop sends no reasoning back');
  // Everything else is the same conversation: only the reasoning makes the difference in size.
  assert.equal(keep.body().length - drop.body().length, 2 * ',"reasoning_content":"thinking"'.length);
  // An answer without reasoning gets no empty field.
  const none = make(0);
  none.answered({ ...textAnswer, reasoning: '' });
  assert.ok(!none.body().includes('reasoning_content'));
});

test('a tool call without a name goes back as it came, answered by an error result instead of a tool run', () => {
  const c = make(0);
  c.answered({ ...toolAnswer, toolCalls: [{ index: 0, id: 'call_9', name: '', arguments: '{"path":"a.ts"}', argumentsValid: true }] });
  const m = messages(c);
  assert.equal(m[2]!.tool_calls![0]!.function.name, '');
  assert.deepEqual([m[3]!.tool_call_id, m[3]!.content], ['call_9', NAMELESS_CALL_RESULT]);
});

test('a content answer appends the assistant message and a user turn', () => {
  const c = make(0);
  c.answered(textAnswer);
  assert.deepEqual(
    messages(c).map((x) => x.role),
    ['system', 'user', 'assistant', 'user'],
  );
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

test("target.extra_body fields go into every request body beside roundload's own", () => {
  const extra = { chat_template_kwargs: { thinking: true }, separate_reasoning: true, top_p: 0.95 };
  const c = make(0, 1, { extraBody: extra });
  const first = JSON.parse(c.body()) as Record<string, unknown>;
  c.answered(toolAnswer);
  const second = JSON.parse(c.body()) as Record<string, unknown>;
  for (const body of [first, second]) {
    assert.deepEqual(body.chat_template_kwargs, { thinking: true });
    assert.equal(body.separate_reasoning, true);
    assert.equal(body.top_p, 0.95);
    assert.equal(body.model, 'm');
    assert.equal(body.stream, true);
  }
});

test('the encoded body is the text body byte for byte, and counts its characters for the token estimate', () => {
  const c = new Conversation({ id: 'a0-c1', agent: 0, ordinal: 1, model: 'm', system: 'système — ünïcode', tools: [], settings: { ...settings, tools: [] } });
  c.answered({ content: 'réponse', reasoning: '', toolCalls: [], finishReason: 'stop', usage: null, sawDone: true, problems: [], violations: [] });
  const text = c.body();
  const encoded = c.encodedBody();
  assert.deepEqual(encoded.bytes, Buffer.from(text));
  assert.equal(encoded.chars, text.length);
  assert.ok(encoded.bytes.length > encoded.chars, 'non-ASCII text: more bytes than characters');
  const sent = JSON.parse(text) as { messages: { role: string }[] };
  assert.deepEqual(
    sent.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
});
