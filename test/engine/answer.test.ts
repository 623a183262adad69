// The planned answer as a pure function of the request, the engine settings and the conversation: its draws come
// from util's seeded generator (Rng.fromHex of a hash of the engine seed and the prompt), pinned here so that a
// change of generator or of the order of draws changes these fixtures knowingly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineSchema } from '../../src/config/index.js';
import { planAnswer } from '../../src/engine/answer.js';
import { parseChatRequest } from '../../src/engine/protocol.js';

const SETTINGS = engineSchema.parse({ seed: 7, output_tokens_min: 6, output_tokens_max: 12, reasoning_tokens_max: 8 });
const USER = { role: 'user', content: 'fix the parser' };
const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }];
const plan = (body: unknown, conversationHash = 'c3', settings = SETTINGS) => planAnswer(parseChatRequest(JSON.stringify(body)), settings, conversationHash, { reasoning: true });

test('engine seed 7 and one conversation plan the same answer run after run (its reasoning, text and tool calls pinned); another seed or conversation another', () => {
  const text = plan({ messages: [USER] });
  assert.deepEqual(
    { reasoningTokens: text.reasoningTokens, tokens: text.deltas.length, finish: text.finishReason, message: text.message },
    { reasoningTokens: 3, tokens: 9, finish: 'stop', message: { content: 'Is value build it request import. ', reasoning: 'Maybe which maybe. ', toolCalls: [] } },
  );
  const tool = plan({ messages: [USER], tools: TOOLS, tool_choice: 'required' });
  assert.deepEqual(
    { reasoningTokens: tool.reasoningTokens, tokens: tool.deltas.length, finish: tool.finishReason, message: tool.message },
    {
      reasoningTokens: 3,
      tokens: 15,
      finish: 'tool_calls',
      message: {
        content: null,
        reasoning: 'Maybe which maybe. ',
        toolCalls: [
          { id: 'call_e8f83c169b60fbc57ba42be8', name: 'read_file', arguments: '{"path":"src/value/build.ts"}' },
          { id: 'call_37a3bed94aedcbc6f855cdd9', name: 'read_file', arguments: '{"path":"src/passes/result.ts"}' },
        ],
      },
    },
  );
  assert.deepEqual(plan({ messages: [USER] }), text, 'planned twice, the same answer');
  assert.notDeepEqual(plan({ messages: [USER] }, 'c4').message, text.message, 'another conversation, another answer');
  assert.notDeepEqual(plan({ messages: [USER] }, 'c3', engineSchema.parse({ ...SETTINGS, seed: 8 })).message, text.message, 'another engine seed, another answer');
});
