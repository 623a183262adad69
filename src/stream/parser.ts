// Turns the bytes of one chat-completions SSE body into StreamEvents: UTF-8 decoding that survives split
// characters, SSE framing by eventsource-parser, then chunk.ts per data event. Pure: no I/O, never throws on input.

import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';
import { decodeChunk, decodeErrorEvent, malformed, sampleOf, type EventSink } from './chunk.js';

/**
 * Bound on characters eventsource-parser may hold for one unfinished line or event, so a server that
 * never sends a newline cannot grow memory without end across 1024 streams. Real chunks are < 4 KiB.
 */
const MAX_BUFFER_CHARS = 8 * 1024 * 1024;
const CR = 13;
const LF = 10;
// Hoisted: decode() is called once per network chunk, and the options object would otherwise be per call.
const STREAM_DECODE = { stream: true } as const;

/** One per response body. Events go to `onEvent` synchronously, in stream order, from `feed` and `end`. */
export class ChatStreamParser {
  readonly #emit: EventSink;
  readonly #decoder = new TextDecoder('utf-8', { fatal: false });
  readonly #sse: EventSourceParser;
  #dataEvents = 0;
  #bytes = 0;
  #lastCharCode = -1;
  /** True while end() pushes the final line ends through: anything dispatched then was unterminated. */
  #flushing = false;
  #ended = false;
  #ignoredLines = 0;
  #firstIgnored: string | null = null;

  constructor(onEvent: EventSink) {
    this.#emit = onEvent;
    // Closures made once per stream, not per event.
    this.#sse = createParser({
      onEvent: (message) => this.#onMessage(message),
      onComment: (comment) => this.#onComment(comment),
      onError: (error) => this.#onError(error),
      maxBufferSize: MAX_BUFFER_CHARS,
    });
    this.#disarmBomCheck();
  }

  /** SSE events of type `message` seen (each `data:` event, [DONE] included); other event types are ignored. */
  get dataEvents(): number {
    return this.#dataEvents;
  }

  /**
   * Lines the SSE rules say to ignore (a field name SSE does not know, such as `<html>` or `garbage`, or a
   * `retry:` that is not a number). They fail nothing; counted so a stream that carried only such lines
   * (an HTML page sent as text/event-stream) can say so.
   */
  get ignoredLines(): number {
    return this.#ignoredLines;
  }

  /** The first ignored line (≤200 characters), as evidence; null when none. */
  get firstIgnoredLine(): string | null {
    return this.#firstIgnored;
  }

  /** Body bytes fed so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Feeds bytes as they arrive, split anywhere. Bytes after `end()` are ignored. */
  feed(chunk: Uint8Array): void {
    if (this.#ended) return;
    this.#bytes += chunk.byteLength;
    this.#push(this.#decoder.decode(chunk, STREAM_DECODE));
  }

  /**
   * The body ended. Flushes the decoder (a cut UTF-8 sequence becomes U+FFFD), then reports, as sse_syntax,
   * a last event or line the body never terminated: per the SSE rules such an event is dropped, not dispatched.
   */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#push(this.#decoder.decode());
    // A CR at the very end is a complete line end (see #push); settle it before judging what is left unterminated.
    if (this.#lastCharCode === CR) this.#sse.feed('\n');
    this.#flushing = true;
    this.#sse.feed('\n\n');
    this.#flushing = false;
    this.#sse.reset();
  }

  #push(text: string): void {
    if (text === '') return;
    // eventsource-parser holds back a CR that ends its input, waiting to see if an LF follows; if the next
    // input has no line end at all it keeps holding, delaying that line (and its event) by a whole chunk.
    // Text not starting with LF proves the CR was a line end by itself: an LF now makes the same single
    // line end (CRLF) and releases it.
    if (this.#lastCharCode === CR && text.charCodeAt(0) !== LF) this.#sse.feed('\n');
    this.#lastCharCode = text.charCodeAt(text.length - 1);
    this.#sse.feed(text);
  }

  /**
   * eventsource-parser strips a BOM (as the chars ï»¿) only when it opens the first fed string, which
   * would make the result depend on where the bytes were split. TextDecoder already removes a real BOM,
   * so spend the "first chunk" on an empty string.
   */
  #disarmBomCheck(): void {
    this.#sse.feed('');
  }

  #onMessage(message: EventSourceMessage): void {
    if (message.event === 'error') {
      // `event: error` (a server or proxy reporting a failure in SSE's own way): its data is the message,
      // kept even when the body ended before the event's blank line (the message matters more).
      decodeErrorEvent(message.data, this.#emit);
      return;
    }
    if (message.event !== undefined && message.event !== 'message') return;
    if (this.#flushing) {
      this.#emit(malformed('sse_syntax', 'body ended inside an event (no blank line after it); the event was dropped', message.data));
      return;
    }
    this.#dataEvents++;
    decodeChunk(message.data, this.#emit);
  }

  #onComment(comment: string): void {
    if (this.#flushing) {
      this.#emit(malformed('sse_syntax', 'body ended inside a comment line', comment));
      return;
    }
    this.#emit({ kind: 'comment', text: comment });
  }

  #onError(error: ParseError): void {
    if (error.type === 'unknown-field' || error.type === 'invalid-retry') {
      // The SSE rules: a field the parser does not know, or a bad retry, is ignored, never fatal.
      this.#ignoredLines++;
      this.#firstIgnored ??= sampleOf(error.line ?? error.field ?? '');
      return;
    }
    const detail = this.#flushing ? `body ended inside a line: ${error.message}` : error.message;
    this.#emit(malformed('sse_syntax', detail, error.line ?? error.value ?? ''));
    if (error.type === 'max-buffer-size-exceeded') {
      // The parser refuses further input until reset; resume at the next line rather than lose the stream.
      this.#sse.reset();
      this.#disarmBomCheck();
    }
  }
}
