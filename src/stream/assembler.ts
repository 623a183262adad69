// Builds one assistant message from a stream's events: concatenated content and reasoning, tool calls
// put together from fragments by index, finish reason, usage, and every oddity as a problem sentence.

import type { AssembledMessage, AssembledToolCall, StreamEvent, TokenUsage } from './types.js';

/** Problems kept per message; a stream repeating one fault thousands of times must not grow memory. */
const MAX_PROBLEMS = 32;

interface CallInProgress {
  index: number;
  id: string | null;
  name: string | null;
  arguments: string;
}

export class MessageAssembler {
  #content = '';
  #reasoning = '';
  readonly #calls = new Map<number, CallInProgress>();
  #finishReason: string | null = null;
  #usage: TokenUsage | null = null;
  #sawDone = false;
  readonly #problems = new Set<string>();
  readonly #violations = new Set<string>();
  #droppedProblems = 0;
  #tokenEvents = 0;

  /** Content, reasoning and non-empty tool-call-argument deltas: a token estimate when usage is missing. */
  get tokenEvents(): number {
    return this.#tokenEvents;
  }

  apply(e: StreamEvent): void {
    if (this.#sawDone && e.kind !== 'comment') this.#violation(`${e.kind} after [DONE]`);
    switch (e.kind) {
      case 'role':
        break;
      case 'content':
        if (this.#finishReason !== null) this.#problem('content after finish_reason');
        this.#content += e.text;
        this.#tokenEvents++;
        break;
      case 'reasoning':
        if (this.#finishReason !== null) this.#problem('reasoning after finish_reason');
        this.#reasoning += e.text;
        this.#tokenEvents++;
        break;
      case 'tool_call_delta':
        if (this.#finishReason !== null) this.#problem('tool call fragment after finish_reason');
        this.#applyToolCall(e);
        break;
      case 'finish':
        if (this.#finishReason === null) this.#finishReason = e.reason;
        else this.#problem(`second finish_reason ${e.reason} after ${this.#finishReason} (kept the first)`);
        break;
      case 'usage':
        if (this.#usage !== null) this.#problem('usage reported twice (kept the last)');
        this.#usage = { promptTokens: e.promptTokens, completionTokens: e.completionTokens, cachedTokens: e.cachedTokens, reasoningTokens: e.reasoningTokens };
        break;
      case 'server_error':
        this.#problem(`server error in stream: ${e.message}`);
        break;
      case 'malformed':
        this.#problem(`malformed stream data (${e.problem}): ${e.detail}`);
        break;
      case 'done':
        this.#sawDone = true;
        break;
      case 'comment':
        break;
    }
  }

  #applyToolCall(e: Extract<StreamEvent, { kind: 'tool_call_delta' }>): void {
    let call = this.#calls.get(e.index);
    if (call === undefined) {
      call = { index: e.index, id: null, name: null, arguments: '' };
      this.#calls.set(e.index, call);
    }
    if (e.id !== null) {
      // Some servers repeat the id on every fragment; only a different one is wrong.
      if (call.id === null) call.id = e.id;
      else if (call.id !== e.id) this.#violation(`tool call ${e.index} changed id from ${call.id} to ${e.id}`);
    }
    if (e.name !== null) {
      if (call.name === null) call.name = e.name;
      else if (call.name !== e.name) this.#violation(`tool call ${e.index} changed name from ${call.name} to ${e.name}`);
    }
    if (e.arguments !== '') {
      if (call.name === null) this.#problem(`fragment for index ${e.index} before its name`);
      call.arguments += e.arguments;
      this.#tokenEvents++;
    }
  }

  /** A problem that breaks the protocol (see `AssembledMessage.violations`). */
  #violation(sentence: string): void {
    if (this.#violations.size < MAX_PROBLEMS) this.#violations.add(sentence);
    this.#problem(sentence);
  }

  #problem(sentence: string): void {
    if (this.#problems.has(sentence)) return;
    if (this.#problems.size < MAX_PROBLEMS) this.#problems.add(sentence);
    else this.#droppedProblems++;
  }

  /** The message so far; callable at any time (a cut stream gives a partial message), changes nothing. */
  result(): AssembledMessage {
    const problems = [...this.#problems];
    if (this.#droppedProblems > 0) problems.push(`${this.#droppedProblems} more problems not listed`);
    const violations = [...this.#violations];
    const violation = (sentence: string): void => {
      problems.push(sentence);
      violations.push(sentence);
    };
    const toolCalls: AssembledToolCall[] = [];
    const indexes = [...this.#calls.keys()].sort((a, b) => a - b);
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i];
      const call = index === undefined ? undefined : this.#calls.get(index);
      if (call === undefined) continue;
      if (call.id === null) violation(`tool call ${call.index} has no id`);
      // A dropped name is a known fault of DeepSeek's streaming tool-call parsers (sglang#35563): the answer
      // checks count it (`tool_call_without_name`); the call still goes back as history, as a harness's would.
      if (call.name === null) problems.push(`tool call ${call.index} has no name`);
      const argumentsValid = isJson(call.arguments);
      if (!argumentsValid) problems.push(`tool call ${call.index} arguments are not valid JSON`);
      toolCalls.push({ index: call.index, id: call.id ?? '', name: call.name ?? '', arguments: call.arguments, argumentsValid });
    }
    const last = indexes[indexes.length - 1];
    if (last !== undefined && last !== indexes.length - 1) violation(`tool call indexes are not 0..${indexes.length - 1}: ${indexes.join(', ')}`);
    if (this.#finishReason === 'tool_calls' && toolCalls.length === 0) violation('finish_reason tool_calls without any tool call');
    return {
      content: this.#content,
      reasoning: this.#reasoning,
      toolCalls,
      finishReason: this.#finishReason,
      usage: this.#usage === null ? null : { ...this.#usage },
      sawDone: this.#sawDone,
      problems,
      violations,
    };
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
