import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayBodies, syntheticText, syntheticTools, type ShapeRequest } from '../../src/agent/index.js';
import type { AssembledMessage } from '../../src/stream/index.js';

const NO_CONTENTS = { messages: new Map(), tools: new Map() };

function shape(messages: ShapeRequest['messages']): ShapeRequest {
  return {
    model: 'm',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 64,
    max_tokens_key: 'max_tokens',
    tool_choice: 'auto',
    messages,
    tools: { count: 2, chars: 400, hash: 'T', names: ['read_file', 'run'] },
    extra: { temperature: 0 },
  };
}

function answer(calls: number): AssembledMessage {
  return {
    content: calls === 0 ? 'live answer text' : '',
    reasoning: '',
    toolCalls: Array.from({ length: calls }, (_, i) => ({ index: i, id: `live_${i}`, name: 'read_file', arguments: '{"path":"a"}', argumentsValid: true })),
    finishReason: calls === 0 ? 'stop' : 'tool_calls',
    usage: null,
    sawDone: true,
    problems: [],
    violations: [],
  };
}

const R1 = [
  { role: 'system', chars: 300, hash: 'S' },
  { role: 'user', chars: 120, hash: 'U1' },
];
const R2 = [...R1, { role: 'assistant', chars: 0, hash: 'A1', tool_calls: [{ name: 'read_file', arguments_chars: 30 }] }, { role: 'tool', chars: 500, hash: 'T1' }];

/** A sent body as these tests read it. */
interface SentBody {
  model: string;
  stream: boolean;
  max_tokens: number;
  temperature: number;
  top_p?: number;
  chat_template_kwargs?: unknown;
  stream_options: { include_usage: boolean };
  tools: unknown;
  messages: { role: string; content: string; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
}
const sent = (body: string): SentBody => JSON.parse(body) as SentBody;

test('synthetic text has exactly the recorded length and is the same wherever the hash is', () => {
  for (const n of [0, 1, 7, 100, 4099]) assert.equal(syntheticText('h', n).length, n);
  assert.equal(syntheticText('h', 500), syntheticText('h', 500));
  assert.notEqual(syntheticText('h', 500), syntheticText('g', 500));
  assert.ok(!/["\\\n]/.test(syntheticText('h', 5000)), 'nothing JSON must escape, so JSON size follows length');
  const tools = JSON.stringify(syntheticTools({ count: 3, chars: 900, hash: 'T', names: ['a', 'b', 'c'] }));
  assert.equal(tools.length, 900);
});

test('two conversations with the same recorded system prompt send it byte for byte the same', () => {
  const a = sent(new ReplayBodies(NO_CONTENTS, 'm').next(shape(R1)).body);
  const b = sent(new ReplayBodies(NO_CONTENTS, 'm').next(shape([R1[0]!, { role: 'user', chars: 80, hash: 'U9' }])).body);
  assert.equal(a.messages[0]!.content, b.messages[0]!.content);
  assert.notEqual(a.messages[1]!.content, b.messages[1]!.content);
  assert.equal(a.messages[1]!.content.length, 120);
  assert.equal(JSON.stringify(a.tools), JSON.stringify(b.tools));
  assert.deepEqual(
    { model: a.model, stream: a.stream, max_tokens: a.max_tokens, temperature: a.temperature, usage: a.stream_options.include_usage },
    { model: 'm', stream: true, max_tokens: 64, temperature: 0, usage: true },
  );
});

test("round 2 re-sends round 1 as sent, the live answer in the recorded answer's place, and tool results of the recorded size answering its calls", () => {
  const bodies = new ReplayBodies(NO_CONTENTS, 'm');
  const first = bodies.next(shape(R1));
  assert.equal(first.answer, null);
  bodies.answered(answer(1));
  const second = bodies.next(shape(R2));
  assert.equal(second.answer, 'live');
  const b1 = sent(first.body);
  const b2 = sent(second.body);
  assert.deepEqual(b2.messages.slice(0, 2), b1.messages);
  assert.deepEqual(b2.messages[2]!.tool_calls, [{ id: 'live_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }]);
  assert.equal(b2.messages[3]!.tool_call_id, 'live_0');
  assert.equal(b2.messages[3]!.content.length, 500);
});

test('a live answer with another number of tool calls gives way to the recorded shape, whose calls the tool results answer', () => {
  const bodies = new ReplayBodies(NO_CONTENTS, 'm');
  bodies.next(shape(R1));
  bodies.answered(answer(0));
  const second = bodies.next(shape(R2));
  assert.equal(second.answer, 'substituted');
  const b2 = sent(second.body);
  const call = b2.messages[2]!.tool_calls![0]!;
  assert.equal(call.function.name, 'read_file');
  assert.equal(call.function.arguments.length, 30);
  assert.doesNotThrow(() => JSON.parse(call.function.arguments));
  assert.equal(b2.messages[3]!.tool_call_id, call.id);
});

test('with recorded contents the messages and tools are sent verbatim', () => {
  const contents = { messages: new Map([['S', { role: 'system', content: 'exact system' }]]), tools: new Map([['T', [{ type: 'function', function: { name: 'x' } }]]]) };
  const b = sent(new ReplayBodies(contents, 'm').next(shape(R1)).body);
  assert.equal(b.messages[0]!.content, 'exact system');
  assert.deepEqual(b.tools, [{ type: 'function', function: { name: 'x' } }]);
});

test('target.extra_body goes into every replayed body, over a recorded extra of the same name (the trace keeps no structured extras)', () => {
  const bodies = new ReplayBodies(NO_CONTENTS, 'm', false, { chat_template_kwargs: { thinking: true }, top_p: 0.95 });
  const recorded = { ...shape(R1), extra: { temperature: 0, top_p: 0.5 } };
  for (const body of [sent(bodies.next(recorded).body), sent(bodies.next({ ...recorded, messages: R2 }).body)]) {
    assert.deepEqual(body.chat_template_kwargs, { thinking: true });
    assert.equal(body.top_p, 0.95);
    assert.equal(body.temperature, 0, 'the other recorded extras stay');
  }
  assert.equal(sent(new ReplayBodies(NO_CONTENTS, 'm').next(recorded).body).top_p, 0.5, 'without extra_body the recorded value is sent');
});
