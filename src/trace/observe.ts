// The response of one recorded request, watched as the recorder forwards it: timings, tokens, the answer's
// shape and its hash. Streams are read with the same parser the agents use; a JSON answer is read whole.
import { performance } from 'node:perf_hooks';
import { ChatStreamParser, MessageAssembler, type StreamEvent } from '../stream/index.js';
import { answerHash, type Hasher } from './shape.js';
import type { TraceResponse } from './types.js';
import { round1, isObject } from '../util/index.js';

/** A JSON (non-streamed) answer or an error body is kept up to this size to be read. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export class ResponseObserver {
  readonly #t0: number;
  #status: number | null = null;
  #byProxy = false;
  #streaming = false;
  #headersAt: number | null = null;
  #firstTokenAt: number | null = null;
  #firstChunkAt: number | null = null;
  #chunkAt = 0;
  #bytes = 0;
  readonly #json: Buffer[] = [];
  #jsonBytes = 0;
  #streamProblem: string | null = null;
  readonly #assembler = new MessageAssembler();
  readonly #parser: ChatStreamParser;

  /** @param t0 performance.now() when the request arrived. */
  constructor(t0: number) {
    this.#t0 = t0;
    this.#parser = new ChatStreamParser((e) => this.#onEvent(e));
  }

  response(status: number, contentType: string, byProxy: boolean): void {
    this.#status = status;
    this.#byProxy = byProxy;
    this.#headersAt = performance.now();
    this.#streaming = status < 400 && contentType.includes('text/event-stream');
  }

  data(chunk: Buffer): void {
    this.#chunkAt = performance.now();
    this.#bytes += chunk.length;
    if (this.#streaming) {
      const before = this.#parser.dataEvents;
      this.#parser.feed(chunk);
      if (this.#firstChunkAt === null && this.#parser.dataEvents > before) this.#firstChunkAt = this.#chunkAt;
    } else if (this.#jsonBytes < MAX_JSON_BYTES) {
      this.#json.push(chunk);
      this.#jsonBytes += chunk.length;
    }
  }

  #onEvent(e: StreamEvent): void {
    if ((e.kind === 'content' || e.kind === 'reasoning' || e.kind === 'tool_call_delta') && this.#firstTokenAt === null) this.#firstTokenAt = this.#chunkAt;
    if (e.kind === 'server_error') this.#streamProblem ??= `error event in the stream: ${e.message}`;
    if (e.kind === 'malformed') this.#streamProblem ??= `${e.detail}: ${e.sample.slice(0, 80)}`;
    this.#assembler.apply(e);
  }

  /** The response as a trace record, and the answer's hash (null when there is no answer). `failure` is how
   * the exchange failed, if it did. */
  finish(failure: { kind: string; message: string } | null, hasher: Hasher): { response: TraceResponse; answer: string | null } {
    const end = performance.now();
    const since = (at: number | null): number | null => (at === null ? null : round1(at - this.#t0));
    const base = {
      status: this.#status,
      by_proxy: this.#byProxy,
      headers_ms: since(this.#headersAt),
      e2e_ms: round1(end - this.#t0),
      bytes: this.#bytes,
    };
    if (this.#streaming) {
      this.#parser.end();
      const m = this.#assembler.result();
      let error = failure;
      if (error === null && this.#streamProblem !== null) error = { kind: 'stream', message: this.#streamProblem };
      if (error === null && m.finishReason === null && !m.sawDone) error = { kind: 'stream', message: `the stream ended after ${this.#parser.dataEvents} events without finish_reason or [DONE]` };
      const response: TraceResponse = {
        ...base,
        ttft_ms: since(this.#firstTokenAt),
        first_chunk_ms: since(this.#firstChunkAt),
        prompt_tokens: m.usage?.promptTokens ?? null,
        completion_tokens: m.usage?.completionTokens ?? null,
        cached_tokens: m.usage?.cachedTokens ?? null,
        reasoning_tokens: m.usage?.reasoningTokens ?? null,
        finish_reason: m.finishReason,
        content_chars: m.content.length,
        reasoning_chars: m.reasoning.length,
        tool_calls: m.toolCalls.map((c) => ({ name: c.name, arguments_chars: c.arguments.length })),
        chunks: this.#parser.dataEvents,
        error,
      };
      return { response, answer: error === null ? answerHash(hasher, m.content, m.toolCalls) : null };
    }
    return this.#finishJson(base, failure, hasher);
  }

  #finishJson(
    base: Pick<TraceResponse, 'status' | 'by_proxy' | 'headers_ms' | 'e2e_ms' | 'bytes'>,
    failure: { kind: string; message: string } | null,
    hasher: Hasher,
  ): { response: TraceResponse; answer: string | null } {
    const text = Buffer.concat(this.#json).toString('utf8');
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: an error page, or cut short
    }
    const status = this.#status;
    let error = failure;
    if (error === null && status !== null && status >= 400) {
      const message = isObject(body) && isObject(body.error) && typeof body.error.message === 'string' ? body.error.message : text.slice(0, 200);
      error = { kind: status >= 500 ? 'http_5xx' : 'http_4xx', message: `HTTP ${status}: ${message}` };
    }
    const choice = isObject(body) && Array.isArray(body.choices) && isObject(body.choices[0]) ? body.choices[0] : {};
    const message = isObject(choice.message) ? choice.message : {};
    const usage = isObject(body) && isObject(body.usage) ? body.usage : {};
    const content = typeof message.content === 'string' ? message.content : '';
    const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
    const calls = Array.isArray(message.tool_calls)
      ? message.tool_calls.map((c) => {
          const fn = isObject(c) && isObject(c.function) ? c.function : {};
          return { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof fn.arguments === 'string' ? fn.arguments : '' };
        })
      : [];
    const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
    const completionDetails = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
    const response: TraceResponse = {
      ...base,
      // A JSON answer arrives whole: its first token is its end.
      ttft_ms: error === null && status !== null ? base.e2e_ms : null,
      first_chunk_ms: null,
      prompt_tokens: num(usage.prompt_tokens),
      completion_tokens: num(usage.completion_tokens),
      cached_tokens: num(details.cached_tokens),
      reasoning_tokens: num(completionDetails.reasoning_tokens),
      finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
      content_chars: content.length,
      reasoning_chars: reasoning.length,
      tool_calls: calls.map((c) => ({ name: c.name, arguments_chars: c.arguments.length })),
      chunks: 0,
      error,
    };
    return { response, answer: error === null && status !== null ? answerHash(hasher, content, calls) : null };
  }
}
