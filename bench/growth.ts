// Growth: what a round costs the client as the conversation grows to 32k tokens (request body
// serialisation), comparing roundload's join of once-serialised messages with re-serialising the whole
// history every round (what a naive client does).
import { performance } from 'node:perf_hooks';
import { parseWorkload } from '../src/config/index.js';
import { Conversation, resolveTools, systemPrompt } from '../src/agent/index.js';
import type { AssembledMessage } from '../src/stream/index.js';
import { printTable } from './lib.js';

const answer: AssembledMessage = {
  content: '',
  reasoning: '',
  toolCalls: [{ index: 0, id: 'call_1', name: 'read_file', arguments: '{"path":"src/main.ts"}', argumentsValid: true }],
  finishReason: 'tool_calls',
  usage: null,
  sawDone: true,
  problems: [],
  violations: [],
};

function timeUs(fn: () => unknown, iterations: number): number {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i += 1) fn();
  return ((performance.now() - t0) * 1000) / iterations;
}

export function growthBench(): void {
  const w = parseWorkload('conversation: {tool_result_tokens: 400, tool_result_growth_tokens: 0}', 'growth.yaml');
  const c = new Conversation({ id: 'a0-c1', agent: 0, ordinal: 1, model: w.target.model, settings: w.conversation, system: systemPrompt(w.conversation), tools: resolveTools(w.conversation.tools) });
  // The naive client keeps message objects and stringifies everything each round.
  const naive: unknown[] = (JSON.parse(c.body()) as { messages: unknown[] }).messages;
  const rows: (string | number)[][] = [];
  const marks = [2_000, 4_000, 8_000, 16_000, 32_000];
  for (let round = 1; marks.length > 0 && round < 1000; round += 1) {
    c.answered(answer);
    const tokens = Math.round(c.contextChars / 4);
    if (tokens >= marks[0]!) {
      marks.shift();
      const parsed = JSON.parse(c.body()) as { messages: unknown[] };
      naive.length = 0;
      naive.push(...parsed.messages);
      // Both as the bytes that go on the wire: roundload's encoded messages copied once, or the history
      // serialised again and encoded.
      const ours = timeUs(() => c.encodedBody(), 200);
      const full = timeUs(() => Buffer.from(JSON.stringify({ model: w.target.model, stream: true, messages: naive })), 200);
      rows.push([String(tokens), String(round), c.encodedBody().bytes.length / 1024, ours, full, full / ours]);
    }
  }
  printTable('growth: request body cost per round as context grows (µs per round)', ['context tokens', 'round', 'body KiB', 'roundload body µs', 'stringify-all µs', 'ratio ×'], rows);
}
