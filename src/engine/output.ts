// Writes one chat completion the way SGLang's serving_chat does: for a stream, headers at once, then per
// choice a role chunk (`{"role":"assistant","content":""}`) with its first token, one chunk per token, a
// separate finish chunk (all-null delta, `matched_stop`), the usage chunk when asked, `[DONE]`; an error after
// the headers is an error event then `[DONE]`. Not streamed: one `chat.completion` (or SGLang's error body)
// at the end. The last token, the finish, the usage and `[DONE]` share one write.
import { performance } from 'node:perf_hooks';
import type { Delta, FinishReason } from './answer.js';
import type { ChatResponse } from './faults.js';
import { chunk, completion, DONE, errorEvent, matchedStop, usageChunk, type CompletionChoice, type Envelope, type ErrorBody, type StreamDelta, type Usage } from './wire.js';

export interface ChatOutputOptions {
  readonly env: Envelope;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** performance.now() when the request arrived here: the `: engine-first-token-ms=` comment counts from it. */
  readonly arrivedAtMs: number;
  readonly requestId: string;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } as const;

function streamDelta(d: Delta): StreamDelta {
  return d.kind === 'tool' ? { kind: 'tool', call: d.call } : d;
}

export class ChatOutput {
  readonly #res: ChatResponse;
  readonly #o: ChatOutputOptions;
  readonly #started = new Set<number>();
  #pending = '';
  #commented = false;
  #ended = false;

  constructor(res: ChatResponse, options: ChatOutputOptions) {
    this.#res = res;
    this.#o = options;
  }

  /** The client went away (or the response already ended). */
  get gone(): boolean {
    return this.#ended || this.#res.destroyed || this.#res.writableEnded;
  }

  /** Sends the stream's headers now, as SGLang does: a client's headers timer must not include queueing. */
  open(): void {
    if (!this.#o.stream || this.gone) return;
    this.#res.writeHead(200, { ...SSE_HEADERS, 'x-engine-request-id': this.#o.requestId });
    this.#res.flushHeaders();
  }

  /** One output token of `choice`; `last` when it is that choice's last (it then waits for the finish chunk). */
  token(choice: number, delta: Delta, last: boolean): void {
    if (!this.#o.stream || this.gone) return;
    const env = this.#o.env;
    if (!this.#started.has(choice)) {
      this.#started.add(choice);
      this.#pending += chunk(env, choice, { kind: 'role' });
      // The timing comment rides with the first token, so a client's first-token time and ours describe the same bytes.
      if (!this.#commented) {
        this.#commented = true;
        this.#pending += `: engine-first-token-ms=${(performance.now() - this.#o.arrivedAtMs).toFixed(3)}\n\n`;
      }
    }
    this.#pending += chunk(env, choice, streamDelta(delta));
    if (!last) this.#flush();
  }

  /** A choice finished: its finish chunk (written with what follows when it is the last one). */
  finish(choice: number, reason: FinishReason, more: boolean): void {
    if (!this.#o.stream || this.gone) return;
    if (!this.#started.has(choice)) {
      // An answer with no tokens (max_tokens 0) still opens with its role chunk.
      this.#started.add(choice);
      this.#pending += chunk(this.#o.env, choice, { kind: 'role' });
    }
    this.#pending += chunk(this.#o.env, choice, { kind: 'none' }, reason, matchedStop(reason));
    if (more) this.#flush();
  }

  /** Every choice is done: the usage chunk and `[DONE]`, or the whole non-streamed completion. */
  complete(u: Usage, choices: readonly CompletionChoice[]): void {
    if (this.gone) return;
    this.#ended = true;
    if (!this.#o.stream) {
      this.#res.writeHead(200, { 'content-type': 'application/json', 'x-engine-request-id': this.#o.requestId });
      this.#res.end(completion(this.#o.env, choices, u));
      return;
    }
    if (this.#o.includeUsage) this.#pending += usageChunk(this.#o.env, u);
    this.#res.end(`${this.#pending}${DONE}`);
    this.#pending = '';
  }

  /** The request failed: an error event and `[DONE]` on a stream, else the error body with `status`. */
  fail(body: ErrorBody, status: number): void {
    if (this.gone) return;
    this.#ended = true;
    if (this.#o.stream) {
      this.#res.end(`${this.#pending}${errorEvent(body)}`);
      this.#pending = '';
      return;
    }
    this.#res.writeHead(status, { 'content-type': 'application/json' });
    this.#res.end(JSON.stringify(body));
  }

  #flush(): void {
    if (this.#pending === '') return;
    this.#res.write(this.#pending);
    this.#pending = '';
  }
}
