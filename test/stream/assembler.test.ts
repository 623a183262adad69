import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageAssembler, type StreamEvent } from '../../src/stream/index.js';
import { runWhole } from './collect.js';
import { contentAnswer, invalidJsonThenValid, midStreamError, reasoningThenContent, singleToolCall, twoToolCalls } from './fixtures.js';

function assemble(events: readonly StreamEvent[]): { message: ReturnType<MessageAssembler['result']>; tokenEvents: number } {
  const assembler = new MessageAssembler();
  for (const e of events) assembler.apply(e);
  return { message: assembler.result(), tokenEvents: assembler.tokenEvents };
}

function delta(index: number, id: string | null, name: string | null, args: string): StreamEvent {
  return { kind: 'tool_call_delta', index, id, name, arguments: args };
}

describe('MessageAssembler on SGLang-shaped bodies', () => {
  it('a content answer assembles its text, finish reason, usage and [DONE] with no problems', () => {
    assert.deepEqual(runWhole(contentAnswer.body).message, {
      content: 'Hello, world!',
      reasoning: '',
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 412, completionTokens: 4, cachedTokens: 384, reasoningTokens: null },
      sawDone: true,
      problems: [],
      violations: [],
    });
  });

  it('reasoning and content are kept apart', () => {
    const { message } = runWhole(reasoningThenContent.body);
    assert.equal(message.reasoning, 'The user wants a number.');
    assert.equal(message.content, '42');
  });

  it('a fragmented tool call is put together with valid JSON arguments', () => {
    assert.deepEqual(runWhole(singleToolCall.body).message.toolCalls, [{ index: 0, id: 'call_a1b2c3', name: 'read_file', arguments: '{"path": "src/main.ts"}', argumentsValid: true }]);
  });

  it('two interleaved tool calls are put together separately, sorted by index', () => {
    const { message } = runWhole(twoToolCalls.body);
    assert.deepEqual(message.toolCalls, [
      { index: 0, id: 'call_0', name: 'grep', arguments: '{"pattern":"TODO"}', argumentsValid: true },
      { index: 1, id: 'call_1', name: 'list_dir', arguments: '{"dir":"src"}', argumentsValid: true },
    ]);
    assert.equal(message.finishReason, 'tool_calls');
    assert.deepEqual(message.problems, []);
  });

  it('a mid-stream server error and an invalid JSON chunk are listed as problems', () => {
    assert.deepEqual(runWhole(midStreamError.body).message.problems, ['server error in stream: KV transfer failed for request 9f4c1e2a']);
    const problems = runWhole(invalidJsonThenValid.body).message.problems;
    assert.equal(problems.length, 1);
    assert.ok(problems[0]?.startsWith('malformed stream data (invalid_json): '), problems[0]);
  });
});

describe('MessageAssembler problems', () => {
  it('a tool call that never got a name or an id says so, and its name and id are empty strings', () => {
    const { message } = assemble([delta(0, null, null, '{"a":1}')]);
    assert.deepEqual(message.toolCalls, [{ index: 0, id: '', name: '', arguments: '{"a":1}', argumentsValid: true }]);
    assert.deepEqual(message.problems, ['fragment for index 0 before its name', 'tool call 0 has no id', 'tool call 0 has no name']);
  });

  it('an arguments fragment before the name arrives is a problem even when the name comes later', () => {
    const { message } = assemble([delta(2, 'c2', null, '{'), delta(2, null, 'f', '}')]);
    assert.equal(message.toolCalls[0]?.name, 'f');
    assert.ok(message.problems.includes('fragment for index 2 before its name'));
  });

  it('arguments that are not valid JSON give argumentsValid false and a problem', () => {
    const { message } = assemble([delta(0, 'c', 'f', '{"path": "a"'), { kind: 'finish', reason: 'length' }]);
    assert.equal(message.toolCalls[0]?.argumentsValid, false);
    assert.deepEqual(message.problems, ['tool call 0 arguments are not valid JSON']);
  });

  it('empty arguments are not valid JSON', () => {
    assert.equal(assemble([delta(0, 'c', 'f', '')]).message.toolCalls[0]?.argumentsValid, false);
  });

  it('a repeated id is fine but a changed id or name is a problem', () => {
    assert.deepEqual(assemble([delta(0, 'c', 'f', '{'), delta(0, 'c', 'f', '}')]).message.problems, []);
    assert.deepEqual(assemble([delta(0, 'c', 'f', '{'), delta(0, 'd', 'g', '}')]).message.problems, ['tool call 0 changed id from c to d', 'tool call 0 changed name from f to g']);
  });

  it('tool call indexes with a gap and finish_reason tool_calls without calls are problems', () => {
    const gap = assemble([delta(0, 'a', 'f', '{}'), delta(2, 'b', 'g', '{}')]).message;
    assert.deepEqual(
      gap.toolCalls.map((c) => c.index),
      [0, 2],
    );
    assert.deepEqual(gap.problems, ['tool call indexes are not 0..1: 0, 2']);
    assert.deepEqual(assemble([{ kind: 'finish', reason: 'tool_calls' }]).message.problems, ['finish_reason tool_calls without any tool call']);
  });

  it('protocol violations (no id, a changed id, an index gap, data after [DONE]) are listed apart; other oddities are not', () => {
    assert.deepEqual(assemble([delta(0, null, 'f', '{}')]).message.violations, ['tool call 0 has no id']);
    // A call without a name is a DeepSeek parser fault the answer checks warn about, not a violation.
    assert.deepEqual(assemble([delta(0, 'c', null, '{}')]).message.violations, []);
    assert.ok(assemble([delta(0, 'c', null, '{}')]).message.problems.includes('tool call 0 has no name'));
    assert.deepEqual(assemble([delta(0, 'c', 'f', '{'), delta(0, 'd', 'f', '}')]).message.violations, ['tool call 0 changed id from c to d']);
    assert.deepEqual(assemble([delta(1, 'c', 'f', '{}')]).message.violations, ['tool call indexes are not 0..0: 1']);
    assert.deepEqual(assemble([{ kind: 'done' }, { kind: 'content', text: 'x' }]).message.violations, ['content after [DONE]']);
    // Not violations: cut-off arguments (their own classes), content after finish_reason, a fragment before its name.
    assert.deepEqual(assemble([delta(0, 'c', 'f', '{"a":'), { kind: 'finish', reason: 'length' }]).message.violations, []);
    assert.deepEqual(
      assemble([
        { kind: 'finish', reason: 'stop' },
        { kind: 'content', text: 'late' },
      ]).message.violations,
      [],
    );
    assert.deepEqual(assemble([delta(0, 'c', null, '{'), delta(0, null, 'f', '}')]).message.violations, []);
  });

  it('events after [DONE] or after finish_reason are problems, and the first finish reason is kept', () => {
    const { message } = assemble([
      { kind: 'finish', reason: 'stop' },
      { kind: 'content', text: 'late' },
      { kind: 'finish', reason: 'length' },
      { kind: 'done' },
      { kind: 'comment', text: 'ping' },
      { kind: 'content', text: '!' },
    ]);
    assert.equal(message.finishReason, 'stop');
    assert.deepEqual(message.problems, ['content after finish_reason', 'second finish_reason length after stop (kept the first)', 'content after [DONE]']);
  });

  it('a problem repeated thousands of times is listed once and the list stays bounded', () => {
    const events: StreamEvent[] = [];
    for (let i = 0; i < 5000; i++) events.push({ kind: 'malformed', problem: 'invalid_json', detail: i % 2 === 0 ? 'same' : `at ${i}`, sample: '' });
    const { problems } = assemble(events).message;
    assert.equal(problems.length, 33);
    assert.equal(problems[0], 'malformed stream data (invalid_json): same');
    assert.equal(problems[32], '2469 more problems not listed');
  });

  it('tokenEvents counts content, reasoning and non-empty argument deltas only', () => {
    const { tokenEvents } = assemble([
      { kind: 'role', role: 'assistant' },
      { kind: 'reasoning', text: 'r' },
      { kind: 'content', text: 'c' },
      delta(0, 'c', 'f', ''),
      delta(0, null, null, '{}'),
      { kind: 'finish', reason: 'tool_calls' },
      { kind: 'usage', promptTokens: 1, completionTokens: 3, cachedTokens: null, reasoningTokens: null },
    ]);
    assert.equal(tokenEvents, 3);
  });

  it('result() can be called mid-stream and again later without changing what it returns', () => {
    const assembler = new MessageAssembler();
    assembler.apply(delta(0, 'c', 'f', '{'));
    const early = assembler.result();
    assert.equal(early.toolCalls[0]?.argumentsValid, false);
    assembler.apply(delta(0, null, null, '}'));
    assert.equal(assembler.result().toolCalls[0]?.arguments, '{}');
    assert.deepEqual(assembler.result(), assembler.result());
    assert.equal(early.toolCalls[0]?.arguments, '{');
  });
});
