// The request bodies of a replayed conversation, round by round, from the trace's shapes: the history sent
// last round is sent again object for object, the model's live answer takes the recorded answer's place when
// it has the same number of tool calls (else the recorded answer's shape stands in), and every other message
// is the recorded one (`--content`) or synthetic text of its recorded length — the same text wherever the
// hashes are equal, so prefixes shared across conversations stay shared.
import type { AssembledMessage } from '../stream/index.js';
import { Rng } from '../util/index.js';
import { FILLER_WORDS } from './text.js';

/** The shapes this module reads from a trace (see src/trace/types.ts, the file format). */
export interface ShapeMessage {
  role: string;
  chars: number;
  hash: string;
  tool_calls?: { name: string; arguments_chars: number }[];
  reasoning_chars?: number;
  segments?: { chars: number; hash: string }[];
}

export interface ShapeRequest {
  model: string | null;
  stream: boolean;
  stream_options: { include_usage?: boolean } | null;
  max_tokens: number | null;
  max_tokens_key: 'max_tokens' | 'max_completion_tokens';
  tool_choice: string | { function: string } | null;
  messages: ShapeMessage[];
  tools: { count: number; chars: number; hash: string; names: string[] } | null;
  extra: Record<string, number | boolean | string | null>;
}

/** Recorded contents by hash (traces made with `--content`), shared by every conversation of a replay. */
export interface ReplayContents {
  messages: ReadonlyMap<string, Record<string, unknown>>;
  tools: ReadonlyMap<string, unknown[]>;
}

/** How a round's answer slot was filled: the live answer, the recorded shape in its place, or no slot. */
export type AnswerUse = 'live' | 'substituted' | null;

/** Exactly `chars` characters of word-like text, the same for the same seed (no characters JSON escapes). */
export function syntheticText(seed: string, chars: number): string {
  if (chars <= 0) return '';
  const rng = Rng.from('replay', seed);
  const parts: string[] = [];
  // Words joined by single spaces: `length` counts one space per word, one more than the join has.
  let length = 0;
  while (length - 1 < chars) {
    const word = rng.pick(FILLER_WORDS);
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ').slice(0, chars);
}

function textOf(m: ShapeMessage): string {
  if (m.segments !== undefined && m.segments.length > 0) return m.segments.map((s) => syntheticText(s.hash, s.chars)).join('');
  return syntheticText(m.hash, m.chars);
}

/** Arguments JSON of exactly `chars` characters (at least `{}`). */
function syntheticArguments(seed: string, chars: number): string {
  const wrapper = '{"input":""}'.length;
  if (chars < wrapper) return '{}';
  return `{"input":"${syntheticText(seed, chars - wrapper)}"}`;
}

/** A tools array of about `chars` characters of JSON with the recorded names (the same for the same hash). */
export function syntheticTools(shape: NonNullable<ShapeRequest['tools']>): unknown[] {
  const names = shape.names.length === shape.count ? shape.names : Array.from({ length: shape.count }, (_, i) => shape.names[i] || `tool_${i + 1}`);
  const make = (descriptions: string[]) =>
    names.map((name, i) => ({
      type: 'function',
      function: { name: name || `tool_${i + 1}`, description: descriptions[i] ?? '', parameters: { type: 'object', properties: { input: { type: 'string' } } } },
    }));
  const base = JSON.stringify(make(names.map(() => ''))).length;
  const spare = Math.max(0, shape.chars - base);
  const each = Math.floor(spare / Math.max(1, names.length));
  return make(names.map((_, i) => syntheticText(`${shape.hash}/${i}`, each + (i === 0 ? spare - each * names.length : 0))));
}

interface Sent {
  hash: string;
  json: string;
}

export class ReplayBodies {
  readonly #contents: ReplayContents;
  readonly #model: string;
  /** Tools JSON by hash: the same array text for every conversation offering the same tools. */
  static readonly #toolsJson = new Map<string, string>();
  #sent: Sent[] = [];
  #answer: AssembledMessage | null = null;
  #callSeq = 0;

  readonly #extraBody: Readonly<Record<string, unknown>>;

  /** @param model the model name to send when the request names none (or `replay.model` to always send).
   * @param extraBody `target.extra_body`, over the recorded extras of the same name. */
  constructor(
    contents: ReplayContents,
    model: string,
    readonly forceModel = false,
    extraBody: Readonly<Record<string, unknown>> = {},
  ) {
    this.#contents = contents;
    this.#model = model;
    this.#extraBody = extraBody;
  }

  /** The body of the next round, and how its answer slot was filled. */
  next(shape: ShapeRequest): { body: string; answer: AnswerUse } {
    const msgs = shape.messages;
    const prev = this.#sent;
    const prefix = prev.length <= msgs.length && prev.every((s, i) => msgs[i]?.hash === s.hash);
    const out: Sent[] = [];
    let answer: AnswerUse = null;
    /** Ids the tool messages after an assistant message answer, in order. */
    let callIds: string[] = [];
    let toolIndex = 0;
    for (const [i, m] of msgs.entries()) {
      if (prefix && i < prev.length) {
        out.push(prev[i]!);
        continue;
      }
      let message: Record<string, unknown>;
      if (m.role === 'assistant') {
        const live = prefix && i === prev.length ? this.#answer : null;
        if (live !== null && live.toolCalls.length === (m.tool_calls?.length ?? 0)) {
          message = liveMessage(live, m.reasoning_chars !== undefined);
          callIds = live.toolCalls.map((c) => c.id);
          answer = 'live';
        } else {
          message = this.#recordedAssistant(m);
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a recorded call id is sent back as String() prints it, whatever the trace held
          callIds = Array.isArray(message.tool_calls) ? message.tool_calls.map((c) => String((c as { id?: unknown }).id ?? '')) : [];
          if (prefix && i === prev.length && this.#answer !== null) answer = 'substituted';
        }
        toolIndex = 0;
      } else if (m.role === 'tool') {
        const recorded = this.#contents.messages.get(m.hash);
        const id = callIds[toolIndex] ?? (typeof recorded?.tool_call_id === 'string' ? recorded.tool_call_id : this.#callId());
        toolIndex += 1;
        message = recorded !== undefined ? { ...recorded, tool_call_id: id } : { role: 'tool', tool_call_id: id, content: textOf(m) };
      } else {
        message = this.#contents.messages.get(m.hash) ?? { role: m.role, content: textOf(m) };
      }
      out.push({ hash: m.hash, json: JSON.stringify(message) });
    }
    this.#sent = out;
    this.#answer = null;
    return { body: this.#body(shape, out), answer };
  }

  /** The live answer of the round just sent (null: it failed), for the next round's answer slot. */
  answered(message: AssembledMessage | null): void {
    this.#answer = message;
  }

  #callId(): string {
    this.#callSeq += 1;
    return `call_replay_${this.#callSeq}`;
  }

  #recordedAssistant(m: ShapeMessage): Record<string, unknown> {
    const recorded = this.#contents.messages.get(m.hash);
    if (recorded !== undefined) return recorded;
    const calls = m.tool_calls ?? [];
    const message: Record<string, unknown> = { role: 'assistant', content: calls.length > 0 && m.chars === 0 ? null : textOf(m) };
    if (m.reasoning_chars !== undefined) message.reasoning_content = syntheticText(`${m.hash}/reasoning`, m.reasoning_chars);
    if (calls.length > 0) {
      message.tool_calls = calls.map((c, j) => ({ id: this.#callId(), type: 'function', function: { name: c.name, arguments: syntheticArguments(`${m.hash}/${j}`, c.arguments_chars) } }));
    }
    return message;
  }

  #tools(shape: NonNullable<ShapeRequest['tools']>): string {
    const recorded = this.#contents.tools.get(shape.hash);
    if (recorded !== undefined) return JSON.stringify(recorded);
    let json = ReplayBodies.#toolsJson.get(shape.hash);
    if (json === undefined) {
      json = JSON.stringify(syntheticTools(shape));
      ReplayBodies.#toolsJson.set(shape.hash, json);
    }
    return json;
  }

  #body(shape: ShapeRequest, messages: Sent[]): string {
    // Always streamed, with usage: the replay measures TTFT and compares prompt tokens (docs/replay.md).
    const head: Record<string, unknown> = {
      model: this.forceModel ? this.#model : (shape.model ?? this.#model),
      stream: true,
      stream_options: { ...(shape.stream_options ?? {}), include_usage: true },
    };
    if (shape.max_tokens !== null) head[shape.max_tokens_key] = shape.max_tokens;
    if (shape.tool_choice !== null) head.tool_choice = typeof shape.tool_choice === 'string' ? shape.tool_choice : { type: 'function', function: { name: shape.tool_choice.function } };
    for (const [key, value] of Object.entries(shape.extra)) if (!(key in head)) head[key] = value;
    // The deployment's fields (validated never to name roundload's own): the trace holds only scalar extras.
    Object.assign(head, this.#extraBody);
    const tools = shape.tools === null ? '' : `,"tools":${this.#tools(shape.tools)}`;
    const headJson = JSON.stringify(head);
    return `${headJson.slice(0, -1)}${tools},"messages":[${messages.map((s) => s.json).join(',')}]}`;
  }
}

function liveMessage(live: AssembledMessage, withReasoning: boolean): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: live.toolCalls.length > 0 && live.content === '' ? null : live.content };
  if (withReasoning && live.reasoning !== '') message.reasoning_content = live.reasoning;
  if (live.toolCalls.length > 0) message.tool_calls = live.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return message;
}
