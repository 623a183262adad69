// Seeded answers: for a request and the engine seed, the exact list of deltas the engine will stream (reasoning,
// then content or tool calls), its finish reason, and the assistant message a client will echo back next round.
import type { EngineSettings } from '../config/index.js';
import { Rng } from '../util/index.js';
import { hashHex } from './hash.js';
import type { ChatMessage, ChatRequest, ToolCall, ToolDef } from './protocol.js';

/** One tool-call fragment as streamed: the first carries the id and the name; later ones append arguments. */
export interface ToolCallDelta {
  readonly index: number;
  readonly id?: string;
  readonly name?: string;
  readonly arguments: string;
}

/** One streamed token's delta. Every delta is one decode step (one output token). */
export type Delta = { readonly kind: 'reasoning'; readonly text: string } | { readonly kind: 'content'; readonly text: string } | { readonly kind: 'tool'; readonly call: ToolCallDelta };

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface AnswerPlan {
  readonly deltas: readonly Delta[];
  /** Deltas that are reasoning (they come first). */
  readonly reasoningTokens: number;
  readonly finishReason: FinishReason;
  /** The deltas folded into one message, as a client reassembles them. */
  readonly message: AssembledMessage;
}

export interface AssembledMessage {
  readonly content: string | null;
  readonly reasoning: string | null;
  readonly toolCalls: readonly ToolCall[];
}

const WORDS = [
  'the',
  'file',
  'function',
  'returns',
  'a',
  'value',
  'when',
  'test',
  'fails',
  'because',
  'config',
  'is',
  'missing',
  'we',
  'should',
  'update',
  'handler',
  'and',
  'check',
  'error',
  'path',
  'module',
  'import',
  'type',
  'build',
  'passes',
  'now',
  'server',
  'request',
  'stream',
  'token',
  'cache',
  'queue',
  'retry',
  'timeout',
  'option',
  'field',
  'parse',
  'result',
  'output',
  'input',
  'then',
  'it',
  'calls',
  'this',
  'loop',
  'state',
] as const;
const REASONING_WORDS = ['let', 'me', 'think', 'about', 'first', 'so', 'maybe', 'i', 'need', 'to', 'look', 'at', 'why', 'which'] as const;
/** Share of tool-call answers that carry two calls instead of one. */
const TWO_CALLS_RATIO = 0.25;
/** Keeps generated argument objects small even for deeply nested schemas. */
const MAX_SCHEMA_DEPTH = 3;

function sentenceTokens(rng: Rng, count: number, words: readonly string[]): string[] {
  const out: string[] = [];
  let sinceStop = 0;
  for (let i = 0; i < count; i += 1) {
    let word: string = rng.pick(words);
    if (sinceStop === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
    sinceStop += 1;
    // End a sentence every 6-14 words, and always at the end of the answer.
    if (i === count - 1 || (sinceStop > 5 && rng.next() < 0.15)) {
      word += '.';
      sinceStop = 0;
    }
    out.push(`${word} `);
  }
  return out;
}

function stringFor(rng: Rng, key: string): string {
  const k = key.toLowerCase();
  if (k.includes('path') || k.includes('file')) return `src/${rng.pick(WORDS)}/${rng.pick(WORDS)}.ts`;
  if (k.includes('command') || k.includes('cmd')) return `npm test -- ${rng.pick(WORDS)}`;
  return sentenceTokens(rng, rng.int(1, 4), WORDS).join('').trim();
}

function schemaType(schema: Readonly<Record<string, unknown>>): string {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null') ?? 'string';
  return 'string';
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A seeded value fitting a JSON schema; unknown types get strings. */
function valueFor(rng: Rng, key: string, schema: Readonly<Record<string, unknown>>, depth: number): unknown {
  const options = schema['enum'];
  if (Array.isArray(options) && options.length > 0) return rng.pick(options);
  switch (schemaType(schema)) {
    case 'integer':
      return rng.int(1, 500);
    case 'number':
      return Math.round(rng.next() * 100_000) / 100;
    case 'boolean':
      return rng.next() < 0.5;
    case 'array': {
      if (depth >= MAX_SCHEMA_DEPTH) return [];
      const items = asRecord(schema['items']);
      return Array.from({ length: rng.int(1, 3) }, () => valueFor(rng, key, items, depth + 1));
    }
    case 'object':
      return depth >= MAX_SCHEMA_DEPTH ? {} : objectFor(rng, schema, depth + 1);
    default:
      return stringFor(rng, key);
  }
}

function objectFor(rng: Rng, schema: Readonly<Record<string, unknown>>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(asRecord(schema['properties']))) out[key] = valueFor(rng, key, asRecord(prop), depth);
  return out;
}

/** Splits the arguments into pieces of 3-10 characters: several chunks per call, as a real parser streams them. */
function splitArguments(rng: Rng, args: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < args.length;) {
    const size = rng.int(3, 10);
    pieces.push(args.slice(at, at + size));
    at += size;
  }
  return pieces;
}

function toolCallDeltas(rng: Rng, tools: readonly ToolDef[], forced: string | null): Delta[] {
  const count = rng.next() < TWO_CALLS_RATIO ? 2 : 1;
  const deltas: Delta[] = [];
  for (let index = 0; index < count; index += 1) {
    const tool = (forced === null ? undefined : tools.find((t) => t.name === forced)) ?? rng.pick(tools);
    const args = JSON.stringify(objectFor(rng, tool.parameters, 0));
    deltas.push({ kind: 'tool', call: { index, id: `call_${rng.hex(24)}`, name: tool.name, arguments: '' } });
    for (const piece of splitArguments(rng, args)) deltas.push({ kind: 'tool', call: { index, arguments: piece } });
  }
  return deltas;
}

/** Folds deltas into the message a client reassembles from them. */
export function assemble(deltas: readonly Delta[]): AssembledMessage {
  let content = '';
  let reasoning = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const delta of deltas) {
    if (delta.kind === 'content') content += delta.text;
    else if (delta.kind === 'reasoning') reasoning += delta.text;
    else {
      const d = delta.call;
      const call = (calls[d.index] ??= { id: '', name: '', arguments: '' });
      if (d.id !== undefined) call.id = d.id;
      if (d.name !== undefined) call.name = d.name;
      call.arguments += d.arguments;
    }
  }
  return { content: calls.length > 0 && content === '' ? null : content, reasoning: reasoning === '' ? null : reasoning, toolCalls: calls };
}

/** The assistant message as the conversation will hold it next round (for the prefix cache). */
export function toChatMessage(message: AssembledMessage): ChatMessage {
  return { role: 'assistant', content: message.content ?? '', toolCalls: message.toolCalls, toolCallId: null };
}

function wantsToolCalls(rng: Rng, request: ChatRequest, ratio: number): boolean {
  if (request.tools.length === 0 || request.toolChoice === 'none') return false;
  if (request.toolChoice !== 'auto') return true;
  return rng.next() < ratio;
}

/** What shapes an answer beyond the request: whether the model reasons first, and which of `n` choices. */
export interface PlanOptions {
  readonly reasoning: boolean;
  /** Choice index (0 for the first); each choice of an `n` > 1 request is its own sample. @default 0 */
  readonly choice?: number;
}

/**
 * Plans the whole answer. `conversationHash` identifies the prompt (its prefix-chain head), so the same
 * conversation under the same seed always gets the same answer. The output is cut at `max_tokens`,
 * reasoning included (it is output, as on a real reasoning model).
 */
export function planAnswer(request: ChatRequest, settings: EngineSettings, conversationHash: string, options: PlanOptions): AnswerPlan {
  const choice = options.choice ?? 0;
  const seeded = Rng.fromHex(choice === 0 ? hashHex('answer', String(settings.seed), conversationHash) : hashHex('answer', String(settings.seed), conversationHash, String(choice)));
  const deltas: Delta[] = [];
  if (options.reasoning && settings.reasoning_tokens_max > 0) {
    for (const t of sentenceTokens(seeded, seeded.int(0, settings.reasoning_tokens_max), REASONING_WORDS)) deltas.push({ kind: 'reasoning', text: t });
  }
  const toolCalls = wantsToolCalls(seeded, request, settings.tool_call_ratio);
  if (toolCalls) {
    const forced = typeof request.toolChoice === 'object' ? request.toolChoice.name : null;
    deltas.push(...toolCallDeltas(seeded, request.tools, forced));
  } else {
    // Tolerate min > max (the workload schema rejects it, a hand-built setting may not).
    const max = Math.max(settings.output_tokens_min, settings.output_tokens_max);
    for (const t of sentenceTokens(seeded, seeded.int(settings.output_tokens_min, max), WORDS)) deltas.push({ kind: 'content', text: t });
  }
  const cut = request.maxTokens !== null && deltas.length > request.maxTokens;
  const emitted = cut ? deltas.slice(0, request.maxTokens ?? deltas.length) : deltas;
  let reasoningTokens = 0;
  while (reasoningTokens < emitted.length && emitted[reasoningTokens]?.kind === 'reasoning') reasoningTokens += 1;
  return { deltas: emitted, reasoningTokens, finishReason: cut ? 'length' : toolCalls ? 'tool_calls' : 'stop', message: assemble(emitted) };
}

/** Whether a server serving `modelName` streams reasoning for this request: the `deepseek-v4` reasoning parser
 * is on for DeepSeek names (`reasoning: auto`), and `chat_template_kwargs.thinking: false` turns thinking off. */
export function reasoningFor(settings: EngineSettings, modelName: string, request: ChatRequest): boolean {
  if (request.thinking === false || settings.reasoning === 'off') return false;
  return settings.reasoning === 'on' || /deepseek/i.test(modelName);
}
