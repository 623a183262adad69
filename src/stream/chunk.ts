// Decodes the data of one SSE event from /v1/chat/completions into StreamEvents. One JSON chunk may carry
// a role, reasoning, content, tool-call fragments and a finish reason at once, plus usage or an error.

import type { MalformedProblem, StreamEvent } from './types.js';

/** Receives each event as it is decoded; the caller's callback, never wrapped (no per-chunk closures). */
export type EventSink = (event: StreamEvent) => void;

const SAMPLE_CHARS = 200;

/** The first ≤200 characters of `text`: enough evidence for a report, bounded for 1024 streams. */
export function sampleOf(text: string): string {
  return text.length <= SAMPLE_CHARS ? text : text.slice(0, SAMPLE_CHARS);
}

export function malformed(problem: MalformedProblem, detail: string, text: string): StreamEvent {
  return { kind: 'malformed', problem, detail, sample: sampleOf(text) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

/**
 * A text field that may be absent, null or empty (all meaning "nothing") or a non-empty string.
 * Anything else is reported once as unexpected_shape and read as nothing, so one odd field does not
 * hide the rest of the chunk.
 */
function textField(record: Record<string, unknown>, key: string, where: string, data: string, emit: EventSink): string | null {
  const value = record[key];
  if (typeof value === 'string') return value === '' ? null : value;
  if (value !== undefined && value !== null) emit(malformed('unexpected_shape', `${where}.${key} is ${typeName(value)}, not a string`, data));
  return null;
}

/** Decodes one SSE data payload and emits its events in order: role, reasoning, content, tool calls, finish, usage. */
export function decodeChunk(data: string, emit: EventSink): void {
  if (data === '[DONE]') {
    emit({ kind: 'done' });
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    // Checked only on the failure path so the hot path allocates no trimmed copy.
    if (data.trim() === '[DONE]') emit({ kind: 'done' });
    else emit(malformed('invalid_json', error instanceof Error ? error.message : String(error), data));
    return;
  }
  if (!isRecord(json)) {
    emit(malformed('unexpected_shape', `chunk is ${typeName(json)}, not an object`, data));
    return;
  }

  const error = json['error'];
  if (error !== undefined && error !== null) {
    emitServerError(error, data, emit);
    return;
  }
  // Some servers send the error object itself: {"object": "error", "message": ..., "code": ...}.
  if (json['object'] === 'error') {
    emitServerError(json, data, emit);
    return;
  }

  const choices = json['choices'];
  const usage = json['usage'];
  const hasChoices = choices !== undefined && choices !== null;
  const hasUsage = usage !== undefined && usage !== null;
  if (!hasChoices && !hasUsage) {
    emit(malformed('unexpected_shape', 'chunk has no choices, usage or error', data));
    return;
  }
  if (hasChoices) {
    if (Array.isArray(choices)) {
      for (let i = 0; i < choices.length; i++) decodeChoice(choices[i], data, emit);
    } else {
      emit(malformed('unexpected_shape', `choices is ${typeName(choices)}, not a list`, data));
    }
  }
  if (hasUsage) decodeUsage(usage, data, emit);
}

function decodeChoice(choice: unknown, data: string, emit: EventSink): void {
  if (!isRecord(choice)) {
    emit(malformed('unexpected_shape', `a choice is ${typeName(choice)}, not an object`, data));
    return;
  }
  // roundload asks for one choice (n=1); events carry no choice index, so merging others would corrupt the message.
  const index = choice['index'];
  if (index !== undefined && index !== null && index !== 0) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the server's index echoed as String() prints it, whatever it sent
    emit(malformed('unexpected_shape', `choice with index ${String(index)} ignored: only choice 0 is read`, data));
    return;
  }
  const delta = choice['delta'];
  if (isRecord(delta)) {
    const role = textField(delta, 'role', 'delta', data, emit);
    if (role !== null) emit({ kind: 'role', role });
    // SGLang and vLLM name it reasoning_content; newer vLLM also uses `reasoning`.
    const reasoning = delta['reasoning_content'] ?? delta['reasoning'];
    if (typeof reasoning === 'string') {
      if (reasoning !== '') emit({ kind: 'reasoning', text: reasoning });
    } else if (reasoning !== undefined && reasoning !== null) {
      emit(malformed('unexpected_shape', `delta.reasoning_content is ${typeName(reasoning)}, not a string`, data));
    }
    const content = textField(delta, 'content', 'delta', data, emit);
    if (content !== null) emit({ kind: 'content', text: content });
    const toolCalls = delta['tool_calls'];
    if (Array.isArray(toolCalls)) {
      for (let i = 0; i < toolCalls.length; i++) decodeToolCall(toolCalls[i], data, emit);
    } else if (toolCalls !== undefined && toolCalls !== null) {
      emit(malformed('unexpected_shape', `delta.tool_calls is ${typeName(toolCalls)}, not a list`, data));
    }
  } else if (delta !== undefined && delta !== null) {
    emit(malformed('unexpected_shape', `choice.delta is ${typeName(delta)}, not an object`, data));
  }
  const reason = textField(choice, 'finish_reason', 'choice', data, emit);
  if (reason !== null) emit({ kind: 'finish', reason });
}

function decodeToolCall(fragment: unknown, data: string, emit: EventSink): void {
  if (!isRecord(fragment)) {
    emit(malformed('unexpected_shape', `a tool call fragment is ${typeName(fragment)}, not an object`, data));
    return;
  }
  // A server streaming a single call may leave out `index`: that call is index 0.
  const rawIndex = fragment['index'];
  let index = 0;
  if (rawIndex !== undefined && rawIndex !== null) {
    if (typeof rawIndex !== 'number' || !Number.isInteger(rawIndex) || rawIndex < 0) {
      emit(malformed('unexpected_shape', `tool call index ${JSON.stringify(rawIndex)} is not a non-negative integer`, data));
      return;
    }
    index = rawIndex;
  }
  const id = textField(fragment, 'id', 'tool_call', data, emit);
  let name: string | null = null;
  let args: string | null = null;
  const fn = fragment['function'];
  if (isRecord(fn)) {
    name = textField(fn, 'name', 'tool_call.function', data, emit);
    args = textField(fn, 'arguments', 'tool_call.function', data, emit);
  } else if (fn !== undefined && fn !== null) {
    emit(malformed('unexpected_shape', `tool_call.function is ${typeName(fn)}, not an object`, data));
  }
  // A fragment that names nothing and appends nothing tells the assembler nothing.
  if (id === null && name === null && args === null) return;
  emit({ kind: 'tool_call_delta', index, id, name, arguments: args ?? '' });
}

function countField(record: Record<string, unknown>, key: string): number | null {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function decodeUsage(usage: unknown, data: string, emit: EventSink): void {
  if (!isRecord(usage)) {
    emit(malformed('unexpected_shape', `usage is ${typeName(usage)}, not an object`, data));
    return;
  }
  const promptTokens = countField(usage, 'prompt_tokens');
  const completionTokens = countField(usage, 'completion_tokens');
  if (promptTokens === null || completionTokens === null) {
    emit(malformed('unexpected_shape', 'usage lacks a numeric prompt_tokens or completion_tokens', data));
    return;
  }
  const details = usage['prompt_tokens_details'];
  const cachedTokens = isRecord(details) ? countField(details, 'cached_tokens') : null;
  // SGLang puts it at the top level; OpenAI (and some forks) under completion_tokens_details.
  const completionDetails = usage['completion_tokens_details'];
  const reasoningTokens = countField(usage, 'reasoning_tokens') ?? (isRecord(completionDetails) ? countField(completionDetails, 'reasoning_tokens') : null);
  emit({ kind: 'usage', promptTokens, completionTokens, cachedTokens, reasoningTokens });
}

function emitServerError(error: unknown, data: string, emit: EventSink): void {
  emit({ kind: 'server_error', ...errorFields(error, data) });
}

/** What an error value says: `"text"`, or `{message, type, code}` (OpenAI's nested error or SGLang's flat one). */
function errorFields(error: unknown, raw: string): ServerErrorFields {
  if (typeof error === 'string') return { message: error === '' ? sampleOf(raw) : error, type: null, code: null };
  if (!isRecord(error)) return { message: sampleOf(raw), type: null, code: null };
  const message = error['message'];
  const type = error['type'];
  const code = error['code'];
  return {
    // Without a message the raw text is the best description there is.
    message: typeof message === 'string' && message !== '' ? message : sampleOf(raw),
    type: typeof type === 'string' ? type : null,
    code: typeof code === 'string' || (typeof code === 'number' && Number.isFinite(code)) ? code : null,
  };
}

/** The message, type and code a server put in an error. */
export interface ServerErrorFields {
  message: string;
  type: string | null;
  code: string | number | null;
}

/**
 * Reads an error body as servers write them: OpenAI's nested `{"error": {"message", "type", "code"}}` (or
 * `{"error": "text"}`), SGLang's flat `{"object": "error", "message", "type", "param", "code"}`, FastAPI's
 * `{"detail": …}` (SGLang's answer on an unknown route). Null when the text is none of these (an HTML page,
 * plain text): the caller shows the text itself.
 */
export function parseErrorBody(text: string): ServerErrorFields | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(json)) return null;
  const nested = json['error'];
  if (nested !== undefined && nested !== null) return errorFields(nested, text);
  if (json['object'] === 'error' || typeof json['message'] === 'string') return errorFields(json, text);
  const detail = json['detail'];
  if (typeof detail === 'string' && detail !== '') return { message: detail, type: null, code: null };
  if (detail !== undefined && detail !== null) return { message: sampleOf(JSON.stringify(detail)), type: null, code: null };
  return null;
}

/** An SSE `event: error`: its data is an error body (either shape) or the message as plain text. */
export function decodeErrorEvent(data: string, emit: EventSink): void {
  const fields = parseErrorBody(data);
  emit({ kind: 'server_error', ...(fields ?? { message: data.trim() === '' ? 'event: error with no data' : sampleOf(data), type: null, code: null }) });
}
