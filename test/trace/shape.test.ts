import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hasher, requestShape, ConversationInference } from '../../src/trace/index.js';

const SECRET = 'the secret plan is in /home/alice/notes.txt';

function body(): Record<string, unknown> {
  return {
    model: 'deepseek-v4-flash',
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 300,
    temperature: 0.2,
    reasoning_effort: 'high',
    user: 'alice@example.com',
    response_format: { type: 'json_object' },
    tool_choice: { type: 'function', function: { name: 'read_file' } },
    tools: [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } } }],
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: SECRET },
          { type: 'image_url', image_url: { url: 'data:...' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/home/alice/notes.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'launch at dawn' },
    ],
  };
}

test('a request shape keeps roles, lengths, tool names and options, and none of the text', () => {
  const b = body();
  const shape = requestShape(b, 1234, new Hasher());
  assert.deepEqual(
    shape.messages.map((m) => [m.role, m.chars]),
    [
      ['system', 23],
      ['user', SECRET.length],
      ['assistant', 0],
      ['tool', 14],
    ],
  );
  assert.deepEqual(shape.messages[2]?.tool_calls, [{ name: 'read_file', arguments_chars: 32 }]);
  assert.equal(shape.messages[1]?.other_parts, 1);
  assert.equal(shape.max_tokens, 300);
  assert.equal(shape.max_tokens_key, 'max_completion_tokens');
  assert.deepEqual(shape.tool_choice, { function: 'read_file' });
  assert.deepEqual(shape.tools?.names, ['read_file']);
  assert.equal(shape.tools?.chars, JSON.stringify(b.tools).length);
  assert.deepEqual(shape.extra, { temperature: 0.2, reasoning_effort: 'high' });
  assert.deepEqual(shape.extra_keys.sort(), ['response_format', 'user']);
  const json = JSON.stringify(shape);
  for (const text of ['alice', 'dawn', 'coding agent', 'Read a file']) assert.ok(!json.includes(text), `${text} leaked into ${json}`);
});

test('equal messages hash equal within a trace, and hashes are keyed per trace', () => {
  const a = new Hasher();
  const s1 = requestShape(body(), 1, a);
  const s2 = requestShape(body(), 1, a);
  assert.deepEqual(
    s1.messages.map((m) => m.hash),
    s2.messages.map((m) => m.hash),
  );
  assert.equal(new Set(s1.messages.map((m) => m.hash)).size, 4);
  const other = requestShape(body(), 1, new Hasher());
  assert.notEqual(other.messages[0]?.hash, s1.messages[0]?.hash, 'another trace, another key');
});

test('a request that extends an earlier one continues its conversation; one that only repeats it starts another', () => {
  const c = new ConversationInference();
  assert.deepEqual(c.assign({ messages: ['s', 'u1'], session: null, startedAtMs: 0, endedAtMs: 10, answer: 'a1', failed: false }), { conversation: 'c1', round: 1, thinkMs: null });
  // Same first request from another agent: a new conversation, not a retry.
  assert.equal(c.assign({ messages: ['s', 'u1'], session: null, startedAtMs: 5, endedAtMs: 20, answer: 'b1', failed: false }).conversation, 'c2');
  // The second agent's round 2 echoes its own answer: it continues c2 even though c1 ends just as late.
  assert.deepEqual(c.assign({ messages: ['s', 'u1', 'b1', 't'], session: null, startedAtMs: 60, endedAtMs: 70, answer: 'b2', failed: false }), { conversation: 'c2', round: 2, thinkMs: 40 });
  assert.deepEqual(c.assign({ messages: ['s', 'u1', 'a1', 't'], session: null, startedAtMs: 30, endedAtMs: 80, answer: null, failed: true }), { conversation: 'c1', round: 2, thinkMs: 20 });
  // A retry of a failed round sends the same history: it continues the conversation.
  assert.deepEqual(c.assign({ messages: ['s', 'u1', 'a1', 't'], session: null, startedAtMs: 90, endedAtMs: 95, answer: 'a2', failed: false }), { conversation: 'c1', round: 3, thinkMs: 10 });
  assert.equal(c.assign({ messages: ['x'], session: null, startedAtMs: 100, endedAtMs: 110, answer: null, failed: false }).conversation, 'c3');
  assert.equal(c.count, 3);
});

test('a session header names conversations whatever their messages', () => {
  const c = new ConversationInference();
  assert.equal(c.assign({ messages: ['a'], session: 'S1', startedAtMs: 0, endedAtMs: 1, answer: null, failed: false }).conversation, 'c1');
  assert.equal(c.assign({ messages: ['b'], session: 'S1', startedAtMs: 5, endedAtMs: 6, answer: null, failed: false }).round, 2);
  assert.equal(c.assign({ messages: ['a', 'x'], session: 'S2', startedAtMs: 7, endedAtMs: 8, answer: null, failed: false }).conversation, 'c2');
});
