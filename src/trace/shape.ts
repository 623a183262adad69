// A chat request's shape without its content: per message role, length and a keyed hash; tools by count, size
// and names; the options that change the load. Pure, so the rules are tested on bodies alone.
import { createHmac, randomBytes } from 'node:crypto';
import type { TraceMessage, TraceRequestShape, TraceTools } from './types.js';
import { isBodySetting } from '../types/index.js';
import { isObject } from '../util/index.js';

/** Body keys the shape names itself; every other key is an "extra". */
const KNOWN_KEYS = new Set(['model', 'messages', 'tools', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'tool_choice']);

/** Keyed message hashes: a secret per trace, never written, so hashes compare messages and reveal nothing. */
export class Hasher {
  readonly #key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
    this.#key = key;
  }

  /** 16 hex digits (64 bits) of HMAC-SHA256. */
  hash(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('hex').slice(0, 16);
  }

  /** A message's identity: role, trimmed text (clients trim streamed text) and tool calls (not their ids). */
  message(role: string, text: string, toolCalls: readonly { name: string; arguments: string }[] = []): string {
    const calls = toolCalls.map((c) => `${c.name}\u0001${c.arguments}`).join('\u0002');
    return this.hash(`${role}\u0003${text.trim()}\u0003${calls}`);
  }
}

/** The text of a message's content: a string, or the text parts of an array (others counted apart). */
export function contentText(content: unknown): { text: string; otherParts: number } {
  if (typeof content === 'string') return { text: content, otherParts: 0 };
  if (!Array.isArray(content)) return { text: '', otherParts: 0 };
  let text = '';
  let otherParts = 0;
  for (const part of content) {
    if (isObject(part) && typeof part.text === 'string') text += part.text;
    else otherParts += 1;
  }
  return { text, otherParts };
}

function toolCallsOf(message: Record<string, unknown>): { name: string; arguments: string }[] {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((c) => {
    const fn = isObject(c) && isObject(c.function) ? c.function : {};
    return { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? '') };
  });
}

/** One message by shape. */
export function messageShape(message: unknown, hasher: Hasher): TraceMessage {
  const m = isObject(message) ? message : {};
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  const { text, otherParts } = contentText(m.content);
  const calls = toolCallsOf(m);
  const shape: TraceMessage = { role, chars: text.length, hash: hasher.message(role, text, calls) };
  if (calls.length > 0) shape.tool_calls = calls.map((c) => ({ name: c.name, arguments_chars: c.arguments.length }));
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') shape.reasoning_chars = m.reasoning_content.length;
  if (otherParts > 0) shape.other_parts = otherParts;
  return shape;
}

/** The hash an answer gets, so a later request that echoes it is seen to extend the conversation. */
export function answerHash(hasher: Hasher, content: string, toolCalls: readonly { name: string; arguments: string }[]): string {
  return hasher.message('assistant', content, toolCalls);
}

function toolsShape(tools: unknown, hasher: Hasher): { shape: TraceTools; json: string } | null {
  if (!Array.isArray(tools) || tools.length === 0) return null;
  const json = JSON.stringify(tools);
  const names = tools.map((t) => {
    const fn = isObject(t) && isObject(t.function) ? t.function : isObject(t) ? t : {};
    return typeof fn.name === 'string' ? fn.name : '';
  });
  return { shape: { count: tools.length, chars: json.length, hash: hasher.hash(`tools\u0003${json}`), names }, json };
}

function toolChoice(value: unknown): TraceRequestShape['tool_choice'] {
  if (typeof value === 'string') return value;
  if (isObject(value) && isObject(value.function) && typeof value.function.name === 'string') return { function: value.function.name };
  return null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The shape of a parsed chat request body. Tool contents and message texts stay out. */
export function requestShape(body: Record<string, unknown>, bytes: number, hasher: Hasher): TraceRequestShape {
  const messages = Array.isArray(body.messages) ? body.messages.map((m) => messageShape(m, hasher)) : [];
  const extra: TraceRequestShape['extra'] = {};
  const extraKeys: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (KNOWN_KEYS.has(key)) continue;
    if (value === null || typeof value === 'number' || typeof value === 'boolean') extra[key] = value;
    // A string is kept only when it is a known option's setting, never user text (src/types/body-options.ts).
    else if (typeof value === 'string' && isBodySetting([key]) && value.length <= 64) extra[key] = value;
    else extraKeys.push(key);
  }
  const so = body.stream_options;
  const usesCompletionKey = body.max_tokens === undefined && body.max_completion_tokens !== undefined;
  return {
    model: typeof body.model === 'string' ? body.model : null,
    stream: body.stream === true,
    stream_options: isObject(so) ? (typeof so.include_usage === 'boolean' ? { include_usage: so.include_usage } : {}) : null,
    max_tokens: count(usesCompletionKey ? body.max_completion_tokens : body.max_tokens),
    max_tokens_key: usesCompletionKey ? 'max_completion_tokens' : 'max_tokens',
    tool_choice: toolChoice(body.tool_choice),
    messages,
    tools: toolsShape(body.tools, hasher)?.shape ?? null,
    extra,
    extra_keys: extraKeys,
    bytes,
  };
}

/** With `--content`: each message's hash and the message itself, and the tools' hash and array. */
export function requestContents(
  body: Record<string, unknown>,
  shape: TraceRequestShape,
): { messages: { hash: string; message: Record<string, unknown> }[]; tools: { hash: string; tools: unknown[] } | null } {
  const raw = Array.isArray(body.messages) ? body.messages : [];
  return {
    messages: shape.messages.map((m, i) => ({ hash: m.hash, message: isObject(raw[i]) ? raw[i] : {} })),
    tools: shape.tools !== null && Array.isArray(body.tools) ? { hash: shape.tools.hash, tools: body.tools } : null,
  };
}
