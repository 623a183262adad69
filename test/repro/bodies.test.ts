// The reproducer's synthetic bodies: exactly the recorded sizes, valid JSON with the run's fields, prefixes kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildBodies } from '../../src/repro/bodies.js';

const head = { model: 'm', stream: true, max_tokens: 16, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'read_file' } }], tool_choice: 'auto' };

test('every body is exactly its recorded size, parses, and carries the run fields', async () => {
  const sizes = [1900, 2400, 2400, 3100, 1200];
  const requests = sizes.map((bytes, i) => ({ conversation: i < 4 ? 'a0-c1' : 'a0-c2', bytes, answer_chars: 80 }));
  const bodies = await buildBodies({ head, system_chars: 800, requests });
  assert.deepEqual(
    bodies.map((b) => Buffer.byteLength(b)),
    sizes,
  );
  for (const b of bodies) {
    const body = JSON.parse(b) as Record<string, unknown>;
    assert.deepEqual({ ...body, messages: undefined }, { ...head, messages: undefined });
    assert.ok(Array.isArray(body.messages));
  }
});

test("a conversation's next round keeps the previous messages as its prefix, and a resend of the same size is the same body", async () => {
  const requests = [1500, 2600, 2600].map((bytes) => ({ conversation: 'a0-c1', bytes, answer_chars: 120 }));
  const [first, second, resend] = await buildBodies({ head, system_chars: 400, requests });
  const messages = (b: string) => (JSON.parse(b) as { messages: { role: string; content: string }[] }).messages;
  assert.deepEqual(messages(second!).slice(0, 2), messages(first!));
  assert.deepEqual(
    messages(second!).map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.equal(messages(second!)[2]!.content.length, 120, 'the answer has the recorded size');
  assert.equal(resend, second);
});

test('the same plan gives the same bytes (what repro.sh and repro.mjs both send)', async () => {
  const plan = { head, system_chars: 100, requests: [{ conversation: 'x', bytes: 5000, answer_chars: 0 }] };
  assert.equal((await buildBodies(plan))[0], (await buildBodies(plan))[0]);
});
