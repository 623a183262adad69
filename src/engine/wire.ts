// SGLang's wire shapes, written exactly as its pydantic models serialise them: the flat error body, stream
// chunks with explicit nulls (`role`, `content`, `reasoning_content`, `tool_calls` in every delta;
// `logprobs`, `finish_reason`, `matched_stop` in every choice; `usage` in every chunk), the usage object, the
// non-streamed completion and the model card. Pure: values in, JSON text out.
import type { AssembledMessage, FinishReason, ToolCallDelta } from './answer.js';

/** Identity fields every chunk and completion object repeats. */
export interface Envelope {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** SGLang's `ErrorResponse`: flat, `code` is the HTTP status as a number. */
export interface ErrorBody {
  readonly object: 'error';
  readonly message: string;
  readonly type: string;
  readonly param: string | null;
  readonly code: number;
}

/** The `type` SGLang writes: `BadRequestError` for its own checks, `Bad Request` (the status phrase) for
 * request-model validation (pydantic), `InternalServerError` for failures. */
export function errorBody(message: string, type: string, code: number, param: string | null = null): ErrorBody {
  return { object: 'error', message, type, param, code };
}

/** The token id DeepSeek's tokenizer ends a sequence with (`matched_stop` of a natural stop). */
export const EOS_TOKEN_ID = 1;

/** One streamed delta before serialisation. */
export type StreamDelta =
  | { readonly kind: 'role' }
  | { readonly kind: 'reasoning'; readonly text: string }
  | { readonly kind: 'content'; readonly text: string }
  | { readonly kind: 'tool'; readonly call: ToolCallDelta }
  | { readonly kind: 'none' };

export interface Usage {
  readonly prompt_tokens: number;
  readonly total_tokens: number;
  readonly completion_tokens: number;
  /** `{cached_tokens}` only with the cache report on and something cached; otherwise null, as SGLang sends. */
  readonly prompt_tokens_details: { readonly cached_tokens: number } | null;
  readonly reasoning_tokens: number;
}

export function usage(promptTokens: number, completionTokens: number, reasoningTokens: number, cachedTokens: number, cacheReport: boolean): Usage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: cacheReport && cachedTokens > 0 ? { cached_tokens: cachedTokens } : null,
    reasoning_tokens: reasoningTokens,
  };
}

export function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

export const DONE = 'data: [DONE]\n\n';

function toolCallJson(call: ToolCallDelta): unknown {
  // Later fragments repeat `type` and carry explicit nulls for the id and the name.
  return { id: call.id ?? null, index: call.index, type: 'function', function: { name: call.name ?? null, arguments: call.arguments } };
}

function deltaJson(d: StreamDelta): unknown {
  return {
    role: d.kind === 'role' ? 'assistant' : null,
    content: d.kind === 'role' ? '' : d.kind === 'content' ? d.text : null,
    reasoning_content: d.kind === 'reasoning' ? d.text : null,
    tool_calls: d.kind === 'tool' ? [toolCallJson(d.call)] : null,
  };
}

/** One `chat.completion.chunk` for one choice. */
export function chunk(env: Envelope, index: number, delta: StreamDelta, finishReason: FinishReason | null = null, matchedStop: number | null = null): string {
  return sse({
    id: env.id,
    object: 'chat.completion.chunk',
    created: env.created,
    model: env.model,
    choices: [{ index, delta: deltaJson(delta), logprobs: null, finish_reason: finishReason, matched_stop: matchedStop }],
    usage: null,
  });
}

/** The last chunk before `[DONE]` when `stream_options.include_usage` is set: no choices, the usage. */
export function usageChunk(env: Envelope, u: Usage): string {
  return sse({ id: env.id, object: 'chat.completion.chunk', created: env.created, model: env.model, choices: [], usage: u });
}

/** An error while streaming: an event of its own on the 200 response, then `[DONE]`. */
export function errorEvent(body: ErrorBody): string {
  return `${sse({ error: body })}${DONE}`;
}

/** `matched_stop` of a finished choice: the EOS token on a natural end, null when cut by `max_tokens`. */
export function matchedStop(reason: FinishReason): number | null {
  return reason === 'length' ? null : EOS_TOKEN_ID;
}

export interface CompletionChoice {
  readonly message: AssembledMessage;
  readonly finishReason: FinishReason;
}

/** The non-streamed `chat.completion`. */
export function completion(env: Envelope, choices: readonly CompletionChoice[], u: Usage): string {
  return JSON.stringify({
    id: env.id,
    object: 'chat.completion',
    created: env.created,
    model: env.model,
    choices: choices.map((c, index) => ({
      index,
      message: {
        role: 'assistant',
        content: c.message.content,
        reasoning_content: c.message.reasoning,
        tool_calls: c.message.toolCalls.length === 0 ? null : c.message.toolCalls.map((t, i) => ({ id: t.id, index: i, type: 'function', function: { name: t.name, arguments: t.arguments } })),
      },
      logprobs: null,
      finish_reason: c.finishReason,
      matched_stop: matchedStop(c.finishReason),
    })),
    usage: u,
  });
}

/** SGLang's `ModelCard`, as `/v1/models` lists it and `/v1/models/{id}` returns it. */
export function modelCard(model: string, contextLength: number): Record<string, unknown> {
  return { id: model, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'sglang', root: model, parent: null, max_model_len: contextLength };
}
