// The request bodies of a replayed conversation, round by round, from the trace's shapes: the history sent
// last round is sent again object for object, the model's live answer takes the recorded answer's place when
// it has the same number of tool calls (else the recorded answer's shape stands in), and every other message
// is the recorded one (`--content`) or synthetic text of its recorded length — the same text wherever the
// hashes are equal, so prefixes shared across conversations stay shared.
import type { AssembledMessage } from '../stream/index.js';
import { Rng, isObject } from '../util/index.js';
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

/** A message's synthetic text, `scale` × its recorded length (block by block when it is made of blocks). */
function textOf(m: ShapeMessage, scale = 1): string {
  const sized = (chars: number): number => (scale === 1 ? chars : Math.round(chars * scale));
  if (m.segments !== undefined && m.segments.length > 0) return m.segments.map((s) => syntheticText(s.hash, sized(s.chars))).join('');
  return syntheticText(m.hash, sized(m.chars));
}

/** The text a message carries for a tokenizer: content, reasoning, tool-call names and arguments. */
function messageText(message: Record<string, unknown>): string {
  const texts: string[] = [];
  const { content, reasoning_content: reasoning, tool_calls: calls } = message;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) for (const part of content) if (isObject(part) && typeof part.text === 'string') texts.push(part.text);
  if (typeof reasoning === 'string') texts.push(reasoning);
  if (Array.isArray(calls)) {
    for (const c of calls) if (isObject(c) && isObject(c.function)) texts.push(`${String(c.function.name)}${typeof c.function.arguments === 'string' ? c.function.arguments : ''}`);
  }
  return texts.join('\n');
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

/** One message of a draft: echoed as sent last round, the live answer, a message whose text is settled, or
 * synthetic text still to size. */
type Part =
  | { kind: 'echo'; sent: Sent }
  | { kind: 'live' | 'fixed'; hash: string; message: Record<string, unknown>; recorded?: true }
  | { kind: 'scaled'; hash: string; head: Record<string, unknown>; shape: ShapeMessage };

export interface BuiltBody {
  body: string;
  answer: AnswerUse;
  /** Characters of the synthetic text sized by the scale, as sent. */
  scaledChars: number;
}

/** A round's body before its new synthetic text is sized (replay-size.ts picks the scale). */
export interface BodyDraft {
  messages: number;
  /** Messages re-sent as sent last round (the conversation's history). */
  echoed: number;
  /** Characters of new synthetic text at its recorded size: what the scale multiplies. */
  scalableChars: number;
  /** Characters of the other new text: the live answer, recorded contents, substituted answers, pinned text. */
  newFixedChars: number;
  /** Characters of the live answer's text among them (0: no live answer in this body): the server counted it
   * as its completion tokens. */
  liveChars: number;
  /** Some message is the recorded one (a `--content` trace): sent verbatim, never scaled. */
  verbatim: boolean;
  /** The text of the body that no scale changes: tools, recorded or pinned messages, tool calls. */
  fixedText: () => string;
  /** The new synthetic text at `scale`, without sending it (for a tokenizer to count). */
  scaledText: (scale: number) => string;
  /** The body at `scale` without sending it (for the server to render with its chat template and count). */
  preview: (scale: number) => string;
  /** Sizes the synthetic text (`scale` × recorded length) and sends: the history becomes this body's messages.
   * `pin`: later drafts send the same text at the size chosen now. */
  build: (scale: number, pin?: boolean) => BuiltBody;
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
  readonly #pins: Map<string, number> | null;

  /** @param model the model name to send when the request names none (or `replay.model` to always send).
   * @param extraBody `target.extra_body`, over the recorded extras of the same name.
   * @param pins sizes of synthetic messages already sent scaled, by hash, shared by a run's conversations. */
  constructor(
    contents: ReplayContents,
    model: string,
    readonly forceModel = false,
    extraBody: Readonly<Record<string, unknown>> = {},
    pins: Map<string, number> | null = null,
  ) {
    this.#contents = contents;
    this.#model = model;
    this.#extraBody = extraBody;
    this.#pins = pins;
  }

  /** The body of the next round at its recorded sizes, and how its answer slot was filled. */
  next(shape: ShapeRequest): { body: string; answer: AnswerUse } {
    return this.draft(shape).build(1);
  }

  /** The next round's body before its synthetic text is sized: what it echoes, what it generates, and a
   * `build(scale)` that sizes the new synthetic messages (`scale` × their recorded length) and sends it. */
  draft(shape: ShapeRequest): BodyDraft {
    const msgs = shape.messages;
    const prev = this.#sent;
    const prefix = prev.length <= msgs.length && prev.every((s, i) => msgs[i]?.hash === s.hash);
    const parts: Part[] = [];
    let answer: AnswerUse = null;
    /** Ids the tool messages after an assistant message answer, in order. */
    let callIds: string[] = [];
    let toolIndex = 0;
    for (const [i, m] of msgs.entries()) {
      if (prefix && i < prev.length) {
        parts.push({ kind: 'echo', sent: prev[i]! });
        continue;
      }
      if (m.role === 'assistant') {
        const live = prefix && i === prev.length ? this.#answer : null;
        if (live !== null && live.toolCalls.length === (m.tool_calls?.length ?? 0)) {
          parts.push({ kind: 'live', hash: m.hash, message: liveMessage(live, m.reasoning_chars !== undefined) });
          callIds = live.toolCalls.map((c) => c.id);
          answer = 'live';
        } else {
          const message = this.#recordedAssistant(m);
          parts.push(this.#contents.messages.has(m.hash) ? { kind: 'fixed', hash: m.hash, message, recorded: true } : { kind: 'fixed', hash: m.hash, message });
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a recorded call id is sent back as String() prints it, whatever the trace held
          callIds = Array.isArray(message.tool_calls) ? message.tool_calls.map((c) => String((c as { id?: unknown }).id ?? '')) : [];
          if (prefix && i === prev.length && this.#answer !== null) answer = 'substituted';
        }
        toolIndex = 0;
      } else if (m.role === 'tool') {
        const recorded = this.#contents.messages.get(m.hash);
        const id = callIds[toolIndex] ?? (typeof recorded?.tool_call_id === 'string' ? recorded.tool_call_id : this.#callId());
        toolIndex += 1;
        parts.push(recorded !== undefined ? { kind: 'fixed', hash: m.hash, message: { ...recorded, tool_call_id: id }, recorded: true } : this.#synthetic(m, { role: 'tool', tool_call_id: id }));
      } else {
        const recorded = this.#contents.messages.get(m.hash);
        parts.push(recorded !== undefined ? { kind: 'fixed', hash: m.hash, message: recorded, recorded: true } : this.#synthetic(m, { role: m.role }));
      }
    }
    return this.#draftOf(shape, parts, answer);
  }

  /** A message of synthetic text: scaled when built, unless its size is pinned (the same text already went out
   * sized, so prefixes shared across conversations stay byte for byte shared). */
  #synthetic(m: ShapeMessage, head: Record<string, unknown>): Part {
    const pinned = this.#pins?.get(m.hash);
    if (pinned !== undefined) return { kind: 'fixed', hash: m.hash, message: { ...head, content: textOf(m, pinned / Math.max(1, m.chars)) } };
    return { kind: 'scaled', hash: m.hash, head, shape: m };
  }

  #draftOf(shape: ShapeRequest, parts: Part[], answer: AnswerUse): BodyDraft {
    const fixedTexts: string[] = shape.tools === null ? [] : [this.#tools(shape.tools)];
    let scalableChars = 0;
    let newFixedChars = 0;
    let liveChars = 0;
    let echoed = 0;
    for (const p of parts) {
      if (p.kind === 'echo') echoed += 1;
      else if (p.kind === 'scaled') scalableChars += p.shape.chars;
      else {
        const text = messageText(p.message);
        if (p.kind === 'fixed') fixedTexts.push(text);
        else liveChars += text.length;
        newFixedChars += text.length;
      }
    }
    // Pinned when sized: the scaled messages of a first request but its last (the one left to absorb the
    // error), so a prefix other conversations share (system prompt, first instructions) stays shared.
    const lastScaled = parts.findLastIndex((p) => p.kind === 'scaled');
    const build = (scale: number, pin = false): BuiltBody => {
      let scaledChars = 0;
      const out = parts.map((p, i): Sent => {
        if (p.kind === 'echo') return p.sent;
        if (p.kind !== 'scaled') return { hash: p.hash, json: JSON.stringify(p.message) };
        const content = textOf(p.shape, scale);
        scaledChars += content.length;
        if (pin && echoed === 0 && i !== lastScaled && this.#pins !== null) this.#pins.set(p.hash, content.length);
        return { hash: p.hash, json: JSON.stringify({ ...p.head, content }) };
      });
      this.#sent = out;
      this.#answer = null;
      return { body: this.#body(shape, out), answer, scaledChars };
    };
    const preview = (scale: number): string =>
      this.#body(
        shape,
        parts.map((p): Sent =>
          p.kind === 'echo' ? p.sent : p.kind === 'scaled' ? { hash: p.hash, json: JSON.stringify({ ...p.head, content: textOf(p.shape, scale) }) } : { hash: p.hash, json: JSON.stringify(p.message) },
        ),
      );
    const verbatim = parts.some((p) => p.kind === 'fixed' && p.recorded === true);
    const scaledText = (scale: number): string => parts.map((p) => (p.kind === 'scaled' ? textOf(p.shape, scale) : '')).join('');
    return { messages: parts.length, echoed, verbatim, scalableChars, newFixedChars, liveChars, fixedText: () => fixedTexts.join('\n'), scaledText, preview, build };
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
