// The typed vocabulary of a streamed chat completion: what the SSE parser emits and what the assembler
// builds from it. Pure types, shared by parser.ts, chunk.ts, assembler.ts and every consumer.

/** Why a piece of the stream could not be read. */
export type MalformedProblem = 'invalid_json' | 'unexpected_shape' | 'sse_syntax';

/** One thing the server said, in stream order. Several may come from one SSE data event. */
export type StreamEvent =
  | { kind: 'role'; role: string }
  | { kind: 'content'; text: string }
  | { kind: 'reasoning'; text: string }
  /** `id` and `name` arrive on a call's first fragment only; later fragments append to `arguments`. */
  | { kind: 'tool_call_delta'; index: number; id: string | null; name: string | null; arguments: string }
  | { kind: 'finish'; reason: string }
  | { kind: 'usage'; promptTokens: number; completionTokens: number; cachedTokens: number | null; reasoningTokens: number | null }
  /** `data: {"error": {...}}` inside an HTTP 200 stream. */
  | { kind: 'server_error'; message: string; type: string | null; code: string | number | null }
  /** SSE comment line without its leading `:` and one space, e.g. `ping`. */
  | { kind: 'comment'; text: string }
  /** `data: [DONE]`. */
  | { kind: 'done' }
  /** `sample` is the first ≤200 characters of the offending data or line, as evidence. */
  | { kind: 'malformed'; problem: MalformedProblem; detail: string; sample: string };

/** Token counts from the usage chunk (`stream_options.include_usage`). */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** `prompt_tokens_details.cached_tokens`; null when the server does not report it. */
  cachedTokens: number | null;
  /** Reasoning tokens among `completionTokens`: `usage.reasoning_tokens` (SGLang, top level) or
   * `usage.completion_tokens_details.reasoning_tokens` (OpenAI's spelling); null when the server reports neither. */
  reasoningTokens: number | null;
}

export interface AssembledToolCall {
  index: number;
  /** Empty when the server never sent one (also listed in `problems`). */
  id: string;
  /** Empty when the server never sent one (also listed in `problems`). */
  name: string;
  /** Raw concatenation of every fragment, as the server sent it. */
  arguments: string;
  /** Whether `arguments` is valid JSON (`JSON.parse` succeeds). */
  argumentsValid: boolean;
}

export interface AssembledMessage {
  content: string;
  reasoning: string;
  /** Sorted by index. */
  toolCalls: AssembledToolCall[];
  /** The first finish reason seen; null when the stream never sent one. */
  finishReason: string | null;
  /** The last usage seen; null when the stream never sent one. */
  usage: TokenUsage | null;
  sawDone: boolean;
  /** What looked wrong, as sentences, e.g. `tool call 1 has no id`. Empty for a clean stream. */
  problems: string[];
  /** The problems that break the chat-completions streaming protocol itself (a subset of `problems`): a tool
   * call without an id, a call whose id or name changed, call indexes with a gap, finish_reason `tool_calls`
   * without any call, data after `[DONE]`. A message with any cannot be sent back as history. (A call without a
   * name is a problem, not a violation: a known DeepSeek parser fault the answer checks count as a warning.) */
  violations: string[];
}
