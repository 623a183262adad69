// One agent conversation: the message history that grows round after round, and the request body for
// the next round. Messages only append, so each is serialised once and the body is a join.
import type { Workload, ToolSpec } from '../config/index.js';
import type { AssembledMessage } from '../stream/index.js';
import { Rng } from '../util/index.js';
import { filler } from './text.js';
import type { EncodedBody } from './round.js';
import { DEFAULT_TOOLS, toolResult, toolsPayload } from './tools.js';

type ConversationSettings = Workload['conversation'];

/** The user turn added after a tool call cut by max_tokens, before the round is resent. */
export const TRUNCATION_NOTE = 'Your last answer was cut off by the output token limit in the middle of a tool call, so it was dropped. Answer again and keep the tool call arguments short.';

/** Tools of a workload as a list (`default` and `none` resolved). */
export function resolveTools(tools: ConversationSettings['tools']): readonly ToolSpec[] {
  if (tools === 'default') return DEFAULT_TOOLS;
  if (tools === 'none') return [];
  return tools;
}

/** The system prompt every agent shares (a prefix the server can cache across agents). */
export function systemPrompt(settings: ConversationSettings): string {
  if (settings.system_prompt_tokens === 0) return '';
  return `You are a coding agent. Use the tools to inspect and change the workspace.\n${filler(Rng.from('system', settings.seed), settings.system_prompt_tokens)}`;
}

export interface ConversationInit {
  id: string;
  agent: number;
  /** 1-based count of conversations this agent has started. */
  ordinal: number;
  model: string;
  settings: ConversationSettings;
  system: string;
  tools: readonly ToolSpec[];
  /** `target.extra_body`: fields merged into every request body (validated not to name roundload's own). @default {} */
  extraBody?: Readonly<Record<string, unknown>>;
}

/** The tool result an agent sends for a call that came without a function name: no tool could run it. */
export const NAMELESS_CALL_RESULT = 'error: this tool call had no function name, so no tool ran; call the tool again by name.';

export class Conversation {
  readonly id: string;
  readonly #settings: ConversationSettings;
  readonly #rng: Rng;
  /** Each message's JSON, encoded once when it joins the history: a body is these bytes copied once. */
  readonly #parts: Buffer[] = [];
  readonly #bodyHead: Buffer;
  readonly #headChars: number;
  readonly #bodyTail = Buffer.from(']}');
  readonly #comma = Buffer.from(',');
  /** Bytes of the messages' JSON so far. */
  #bytes = 0;
  /** Rounds answered so far (successful or not). */
  #round = 0;
  #chars = 0;

  constructor(init: ConversationInit) {
    this.id = init.id;
    this.#settings = init.settings;
    this.#rng = Rng.from('conversation', init.settings.seed, init.agent, init.ordinal);
    if (init.system !== '') this.#push({ role: 'system', content: init.system });
    this.#push({ role: 'user', content: `Task ${init.id}: ${filler(this.#rng, init.settings.first_user_tokens)}` });
    const s = init.settings;
    const head: Record<string, unknown> = { model: init.model, stream: true, max_tokens: s.max_tokens, temperature: s.temperature };
    if (s.include_usage) head.stream_options = { include_usage: true };
    if (init.tools.length > 0) {
      head.tools = toolsPayload(init.tools);
      head.tool_choice = s.tool_choice;
    }
    // The deployment's own fields; the schema keeps them off roundload's, so none is overwritten.
    Object.assign(head, init.extraBody ?? {});
    const headJson = JSON.stringify(head);
    // `{...head,"messages":[` + parts + `]}`: the fixed fields are serialised once per conversation.
    const bodyHead = `${headJson.slice(0, -1)},"messages":[`;
    this.#bodyHead = Buffer.from(bodyHead);
    this.#headChars = bodyHead.length;
  }

  /** The round the next request will be (1-based). */
  get nextRound(): number {
    return this.#round + 1;
  }

  get messages(): number {
    return this.#parts.length;
  }

  /** Characters of message JSON so far (a cheap size measure for context caps). */
  get contextChars(): number {
    return this.#chars;
  }

  /** The JSON body of the next request, built and measured in one pass: the encoded messages copied once
   * into one Buffer (its `chars`, for the client's token estimate, are counted as messages join). */
  encodedBody(): EncodedBody {
    const list: Buffer[] = [this.#bodyHead];
    for (let i = 0; i < this.#parts.length; i++) {
      if (i > 0) list.push(this.#comma);
      list.push(this.#parts[i]!);
    }
    list.push(this.#bodyTail);
    const commas = Math.max(0, this.#parts.length - 1);
    const bytes = Buffer.concat(list, this.#bodyHead.length + this.#bytes + commas + this.#bodyTail.length);
    return { bytes, chars: this.#headChars + this.#chars + commas + this.#bodyTail.length };
  }

  /** The JSON body of the next request, as text. */
  body(): string {
    return this.encodedBody().bytes.toString('utf8');
  }

  /** Appends the model's answer, then tool results (one per call) or a user turn. With
   * `reasoning_history: keep` the assistant message carries the reasoning the server streamed. */
  answered(message: AssembledMessage): void {
    this.#round += 1;
    const round = this.#round;
    const reasoning = this.#settings.reasoning_history === 'keep' && message.reasoning !== '' ? { reasoning_content: message.reasoning } : {};
    if (message.toolCalls.length > 0) {
      this.#push({
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        ...reasoning,
        tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      });
      const tokens = this.#settings.tool_result_tokens + this.#settings.tool_result_growth_tokens * (round - 1);
      for (const call of message.toolCalls) {
        // A call without a name ran nothing: a harness answers it with an error, and so does the agent.
        this.#push({ role: 'tool', tool_call_id: call.id, content: call.name === '' ? NAMELESS_CALL_RESULT : toolResult(this.#rng, call.name, tokens) });
      }
    } else {
      this.#push({ role: 'assistant', content: message.content, ...reasoning });
      this.#push({ role: 'user', content: filler(this.#rng, this.#settings.user_turn_tokens) });
    }
  }

  /** The round failed: the history stays as it was, so the next round re-sends it (what a harness retry does). */
  failed(): void {
    this.#round += 1;
  }

  /**
   * The answer of the current round was a tool call cut by `max_tokens`: it is dropped (cut-off arguments
   * cannot go back as history; servers reject them) and a user note asks again, so the round's resend is
   * not the very request that was just cut. The round is not over: `nextRound` stays.
   */
  truncatedToolCall(): void {
    this.#push({ role: 'user', content: TRUNCATION_NOTE });
  }

  #push(message: Record<string, unknown>): void {
    const json = JSON.stringify(message);
    const bytes = Buffer.from(json);
    this.#parts.push(bytes);
    this.#bytes += bytes.length;
    this.#chars += json.length;
  }
}
