// One round's request, through its explicit lifecycle (round-state.ts): sent → headers → first token →
// streaming → done | error | hang. Exactly one terminal state per request; nothing is recorded after it.
import { sendStream, REQUEST_ID_HEADER, type Lane, type ConnectionTracker, type Abort } from '../transport/index.js';
import { ChatStreamParser, MessageAssembler, parseErrorBody, type AssembledMessage, type StreamEvent } from '../stream/index.js';
import { RequestWatch, type Clock, type Deadlines, type HangVerdict } from '../watchdog/index.js';
import type { HangPolicy, ToolSpec } from '../config/index.js';
import { nextTraceIds, traceparent, TRACEPARENT_HEADER, type TraceIds } from '../util/index.js';
import type { ErrorInfo, HangInfo, ItlStats, PathKind, RequestRecord, RequestStatus } from '../types/index.js';
import { answerError, answerWarnings, classifyTransportError, errorInfo, httpStatusClass, throughProxy } from './classify.js';
import { estimateTokens, estimateTokensOfChars } from './text.js';
import { RoundLifecycle, type TerminalState } from './round-state.js';
import { nextPublicRequestId, PUBLIC_REQUEST_ID_HEADER, withBodyId, type RequestIdPlacement } from './request-id.js';

export interface RoundTarget {
  lane: Lane;
  tracker: ConnectionTracker;
  clock: Clock;
  deadlines: Deadlines;
  path: PathKind;
  /** Path of the chat completions endpoint, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** Extra headers (Authorization, Host…), already resolved. */
  headers: Record<string, string>;
  /** `clock.now()` at run start, for `run_ms` (the clock times the request too: one reading per socket read
   * serves the record and the watchdog). */
  runStartMs: number;
  /** Called for every inter-token gap, for the round's ITL histogram (the record keeps only stats). */
  onGap?: (gapMs: number) => void;
  /** Called at a request's first token, for live TTFT and token counts while answers still stream. */
  onFirstToken?: (agent: number, round: number, ttftMs: number) => void;
  /** The proxy the requests go through (a CONNECT proxy, or the TLS proxy `endpoint` is on): a connect-level
   * failure is then `proxy_unreachable`, naming it. @default null */
  proxyUrl?: string | null;
  /** Where each request carries its id (`target.request_id`). @default header only */
  requestId?: RequestIdPlacement;
  /** Send W3C `traceparent` with each request (`tracing.traceparent`); the record keeps its ids either way. @default true */
  traceparent?: boolean;
}

/** A request body already encoded (built and measured in one pass), with its length in characters for the
 * client's token estimate. */
export interface EncodedBody {
  bytes: Buffer;
  chars: number;
}

export interface RoundRequest {
  agent: number;
  conversation: string;
  round: number;
  phase: string;
  /** JSON text (encoded here, once), or already encoded. */
  body: string | EncodedBody;
  /** 2 when this is the resend of a failed request (`retry:`); recorded as `attempt`. */
  attempt?: number;
  /** Recorded as `recovery` (the resend of a round whose answer was a truncated tool call). */
  recovery?: 'truncated_tool_call';
  /** How long the agent waited before this request because the server seemed away; recorded as `backoff_ms`. */
  backoffMs?: number;
  /** The wait the failed attempt's `Retry-After` asked for (capped), on a resend; recorded as `retry_after_ms`. */
  retryAfterMs?: number;
}

export interface RoundOptions {
  /** `watchdog.on_hang`: `wait` keeps a hung request open until total_ms; the others abort it at once. @default "abort" */
  onHang?: HangPolicy;
  /** Called once, the moment a deadline passes, with the request as it stands (for the hang event). */
  onHangDetected?: (snapshot: RequestRecord) => void;
  /** The tools the request offers, for the answer checks (a wrapper key a tool declares is a real argument). @default [] */
  tools?: readonly ToolSpec[];
}

export interface RoundOutcome {
  record: RequestRecord;
  /** The assembled answer when the request completed (status ok). */
  message: AssembledMessage | null;
  /** The `Retry-After` header of an error answer (HTTP ≥ 400), as sent; null when none. `retry:` honours it. */
  retryAfter: string | null;
}

const MAX_ERROR_BODY = 2048;
/** A stream of at least this many token events whose tokens all arrived together — faster than
 * BUFFERED_TOKENS_PER_S, which no decode reaches — arrived whole: something on the path held it and let it
 * go at once. Time, not reads: a TLS proxy's burst comes as many records read in the same moment. */
const BUFFERED_MIN_TOKENS = 8;
const BUFFERED_TOKENS_PER_S = 2000;
/** Shorter than this from send to first token, there was nothing to hide: not judged. */
const BUFFERED_MIN_TTFT_MS = 50;
/** Characters of an error body or of a wrong-content-type body quoted in the error message. */
const QUOTED_BODY_CHARS = 300;
/** SSE comment by which a server reports its own first-token time (the embedded engine sends it). */
const SERVER_TTFT_COMMENT = 'engine-first-token-ms=';

/** Sends one round and resolves with its record; never rejects. `stop` aborts it (run shutdown). The steps:
 * build the request, send it, read the stream, classify how it ended, record it (InFlightRound). */
export function sendRound(target: RoundTarget, req: RoundRequest, stop?: AbortSignal, options: RoundOptions = {}): Promise<RoundOutcome> {
  return new Promise<RoundOutcome>((resolve) => new InFlightRound(target, req, stop, options, resolve).send());
}

/** One request from send to its one terminal state: the stream read as it comes, the watchdog's deadlines,
 * the run's stop, and the record made at the end (or a hang event's snapshot before it). */
class InFlightRound {
  readonly #target: RoundTarget;
  readonly #req: RoundRequest;
  readonly #stop: AbortSignal | undefined;
  readonly #options: RoundOptions;
  readonly #resolve: (outcome: RoundOutcome) => void;
  readonly #policy: HangPolicy;
  readonly #requestId: string;
  /** The id the server is told (`X-Request-Id`, the body's `rid`) and the record keeps. */
  readonly #publicId: string;
  /** Its W3C trace context: the trace it starts and its own span, the parent of the server's spans. */
  readonly #trace: TraceIds;
  readonly #life: RoundLifecycle;
  readonly #clock: Clock;
  /** Encoded once: undici sends the bytes as they are, and the record's request_bytes is their length. */
  readonly #body: Buffer;
  readonly #bodyChars: number;
  readonly #wallStart = new Date();
  readonly #t0: number;
  #headersAt: number | null = null;
  #firstTokenAt: number | null = null;
  #lastTokenAt: number | null = null;
  /** First content or tool-call token (`ttfc_ms`), and the reasoning span (`reasoning_ms`). */
  #firstContentAt: number | null = null;
  #firstReasoningAt: number | null = null;
  #lastReasoningAt: number | null = null;
  #httpStatus: number | null = null;
  #serverTtftMs: number | null = null;
  /** Arrival time of the read being parsed. */
  #chunkAt: number;
  /** Token events so far: content, reasoning and tool-call deltas, the events `itl` measures gaps between (a
   * buffered stream has many, all arriving at once; `tokens_per_event` divides the completion tokens by them). */
  #tokenEvents = 0;
  #errorBody = '';
  /** The content type of a 2xx answer that is not an event stream (the request fails once its body is read). */
  #wrongType: string | null = null;
  #location: string | null = null;
  #retryAfter: string | null = null;
  #bytes = 0;
  /** Arrival of the read that completed the last SSE data event. */
  #lastChunkAt: number | null = null;
  /** The first deadline that passed (under `wait` the request goes on), and when. */
  #hangSeen: HangInfo | null = null;
  #hangSeenAt = 0;
  readonly #gaps: number[] = [];
  readonly #assembler = new MessageAssembler();
  #streamProblem: ErrorInfo | null = null;
  #abort: Abort = () => {};
  readonly #parser: ChatStreamParser;
  readonly #watch: RequestWatch;
  readonly #onStop = (): void => {
    this.#finish('stop', 'error', errorInfo('aborted', 'the run stopped while this request was in flight'), null);
    this.#abortAfter(new Error('run stopped'));
  };

  constructor(target: RoundTarget, req: RoundRequest, stop: AbortSignal | undefined, options: RoundOptions, resolve: (outcome: RoundOutcome) => void) {
    this.#target = target;
    this.#req = req;
    this.#stop = stop;
    this.#options = options;
    this.#resolve = resolve;
    this.#policy = options.onHang ?? 'abort';
    this.#requestId = target.tracker.nextRequestId();
    this.#life = new RoundLifecycle(this.#requestId);
    this.#clock = target.clock;
    this.#publicId = nextPublicRequestId(req.conversation, req.round);
    this.#trace = nextTraceIds();
    const bodyField = target.requestId?.bodyField ?? null;
    const bytes = typeof req.body === 'string' ? Buffer.from(req.body) : req.body.bytes;
    this.#body = bodyField === null ? bytes : withBodyId(bytes, bodyField, this.#publicId);
    this.#bodyChars = typeof req.body === 'string' ? req.body.length : req.body.chars;
    this.#t0 = this.#clock.now();
    this.#chunkAt = this.#t0;
    this.#parser = new ChatStreamParser((e) => this.#onEvent(e));
    this.#watch = new RequestWatch(target.deadlines, this.#clock, (verdict) => this.#onDeadline(verdict));
  }

  /** Step 1 and 2: the request built (headers, its id) and sent on the agent's lane, the watchdog started. */
  send(): void {
    if (this.#stop?.aborted) {
      this.#onStop();
      return;
    }
    this.#stop?.addEventListener('abort', this.#onStop, { once: true });
    this.#watch.start();
    const target = this.#target;
    this.#abort = sendStream(
      target.lane,
      {
        method: 'POST',
        path: target.endpoint,
        headers: {
          ...target.headers,
          ...(target.requestId?.header === false ? {} : { [PUBLIC_REQUEST_ID_HEADER]: this.#publicId }),
          ...(target.traceparent === false ? {} : { [TRACEPARENT_HEADER]: traceparent(this.#trace) }),
          'content-type': 'application/json',
          accept: 'text/event-stream',
          [REQUEST_ID_HEADER]: this.#requestId,
        },
        body: this.#body,
      },
      {
        onStart: () => this.#watch.connected(),
        onHeaders: (statusCode, headers) => this.#onHeaders(statusCode, headers),
        onData: (chunk) => this.#onData(chunk),
        onEnd: () => this.#onEnd(),
        onError: (error) => this.#onError(error),
      },
    );
  }

  #onHeaders(statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (!this.#life.to('headers', 'headers')) return;
    this.#headersAt = this.#clock.now();
    this.#httpStatus = statusCode;
    this.#watch.headers(this.#headersAt);
    if (statusCode >= 400) {
      this.#retryAfter = headerText(headers['retry-after']);
      return;
    }
    const type = headerText(headers['content-type']);
    // A missing type is let through: the parser judges the bytes. Any other must be an event stream.
    if (type !== null && !/^\s*text\/event-stream\s*(;|$)/i.test(type)) {
      this.#wrongType = type;
      this.#location = headerText(headers['location']);
    }
  }

  /** Step 3: each read of the body — an error page kept to quote, or the stream parsed. */
  #onData(chunk: Buffer): void {
    if (this.#life.terminal) {
      this.#life.late('data');
      return;
    }
    this.#bytes += chunk.length;
    // The one clock reading of this socket read: the events parsed from it, and the watchdog's last byte.
    this.#chunkAt = this.#clock.now();
    this.#watch.bytes(this.#chunkAt);
    if (this.#httpStatus !== null && this.#httpStatus >= 400) {
      if (this.#errorBody.length < MAX_ERROR_BODY) this.#errorBody += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
      return;
    }
    if (this.#wrongType !== null) {
      this.#errorBody += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
      // Enough to quote: fail now rather than read a whole page (or wait on a body that never ends).
      if (this.#errorBody.length >= MAX_ERROR_BODY) {
        this.#finish('data', 'error', wrongTypeError(this.#httpStatus ?? 0, this.#wrongType, this.#location, this.#errorBody), null);
        this.#abortAfter(new Error('wrong content type'));
      }
      return;
    }
    const before = this.#parser.dataEvents;
    this.#parser.feed(chunk);
    if (this.#parser.dataEvents !== before) this.#lastChunkAt = this.#chunkAt;
  }

  /** One parsed stream event: token timings (TTFT, TTFC, gaps, the reasoning span), the server's own TTFT, a
   * problem in the stream; every event goes to the answer's assembler. */
  #onEvent(e: StreamEvent): void {
    switch (e.kind) {
      case 'content':
      case 'reasoning':
      case 'tool_call_delta':
        this.#onToken(e.kind);
        break;
      case 'comment':
        if (e.text.startsWith(SERVER_TTFT_COMMENT)) {
          const v = Number(e.text.slice(SERVER_TTFT_COMMENT.length));
          if (Number.isFinite(v)) this.#serverTtftMs = v;
        }
        break;
      case 'server_error':
        this.#streamProblem ??= errorInfo('server_error_event', `server error in stream: ${e.message}${e.type === null ? '' : ` (type ${e.type})`}`, e.code === null ? null : String(e.code));
        break;
      case 'malformed':
        this.#streamProblem ??= errorInfo(e.problem === 'invalid_json' ? 'invalid_json' : 'malformed_sse', `${e.detail}: ${e.sample}`);
        break;
      default:
        break;
    }
    this.#assembler.apply(e);
  }

  #onToken(kind: 'content' | 'reasoning' | 'tool_call_delta'): void {
    // Events parsed from one read share its arrival time: parsing must not shift later events.
    const now = this.#chunkAt;
    this.#tokenEvents += 1;
    if (this.#firstTokenAt === null) {
      this.#firstTokenAt = now;
      this.#life.to('first_token', 'token');
      this.#watch.firstToken(now);
      this.#target.onFirstToken?.(this.#req.agent, this.#req.round, now - this.#t0);
    } else if (this.#lastTokenAt !== null) {
      if (this.#life.state === 'first_token') this.#life.to('streaming', 'token');
      const gap = now - this.#lastTokenAt;
      this.#gaps.push(gap);
      this.#target.onGap?.(gap);
    }
    this.#lastTokenAt = now;
    if (kind === 'reasoning') {
      this.#firstReasoningAt ??= now;
      this.#lastReasoningAt = now;
    } else this.#firstContentAt ??= now;
  }

  /** Step 4: the body ended — how: an error page, a wrong content type, a broken or truncated stream, an
   * answer of the wrong shape, or ok. */
  #onEnd(): void {
    if (this.#life.terminal) {
      this.#life.late('end');
      return;
    }
    const status = this.#httpStatus;
    if (status !== null && status >= 400) {
      // Whose answer it was: the server's JSON error, or a proxy's own page (the diagnosis reads it).
      const body = parseErrorBody(this.#errorBody) === null ? ('page' as const) : ('json' as const);
      this.#finish('end', 'error', { ...errorInfo(httpStatusClass(status), `HTTP ${status}: ${describeBody(this.#errorBody)}`, String(status)), body }, null);
      return;
    }
    if (this.#wrongType !== null) {
      this.#finish('end', 'error', wrongTypeError(status ?? 0, this.#wrongType, this.#location, this.#errorBody), null);
      return;
    }
    this.#parser.end();
    // Assembled once: the checks below and the record share it.
    const message = this.#assembler.result();
    const problem = this.#endOfStream(message);
    this.#finish('end', problem === null ? 'ok' : 'error', problem, null, message);
  }

  /** What was wrong with a stream that ended in full: its own error, truncated, an answer of the wrong shape;
   * null: nothing, it is ok. */
  #endOfStream(message: AssembledMessage): ErrorInfo | null {
    if (this.#streamProblem !== null) return this.#streamProblem;
    if (message.finishReason === null && !message.sawDone) {
      const p = this.#parser;
      const ignored = p.ignoredLines === 0 ? '' : `; ${p.ignoredLines} lines were not server-sent events and were ignored, the first: ${JSON.stringify(p.firstIgnoredLine)}`;
      return errorInfo('truncated_stream', `stream ended after ${p.dataEvents} events without finish_reason or [DONE]${ignored}`);
    }
    return answerError(message);
  }

  #onError(error: Error): void {
    if (this.#life.terminal) {
      this.#life.late('error');
      return;
    }
    const connection = this.#target.tracker.connectionOf(this.#requestId);
    const reused = connection !== null && connection.nth > 1 && this.#headersAt === null;
    this.#finish('error', 'error', throughProxy(classifyTransportError(error, reused, this.#clock.now() - this.#t0), error, this.#target.proxyUrl ?? null), null);
  }

  /** A deadline passed: announce the hang (a snapshot), then end the request — or, under `wait`, keep it open
   * until total_ms, remembering the first phase that stalled. */
  #onDeadline(verdict: HangVerdict): void {
    if (this.#life.terminal) {
      this.#life.late('watchdog');
      return;
    }
    const now = this.#clock.now();
    if (this.#hangSeen !== null) {
      // `wait`: total_ms has passed too; the record keeps the first phase that stalled.
      this.#giveUp(verdict, { ...this.#hangSeen, outcome: 'total', waited_ms: Math.round(now - this.#hangSeenAt) });
      return;
    }
    const hang: HangInfo = {
      ...verdict,
      chunks: this.#parser.dataEvents,
      bytes: this.#bytes,
      last_chunk_age_ms: this.#lastChunkAt === null ? null : Math.round(now - this.#lastChunkAt),
      policy: this.#policy,
      outcome: 'aborted',
      waited_ms: 0,
    };
    this.#options.onHangDetected?.(this.#record('hang', null, hang, now));
    if (this.#policy === 'wait' && verdict.phase !== 'total') {
      this.#hangSeen = hang;
      this.#hangSeenAt = now;
      this.#watch.waitForTotal();
      return;
    }
    this.#giveUp(verdict, hang);
  }

  #giveUp(verdict: HangVerdict, hang: HangInfo): void {
    this.#finish('watchdog', 'hang', null, hang);
    this.#abortAfter(new Error(`watchdog: ${verdict.deadline} ${verdict.deadline_ms} ms passed in phase ${verdict.phase}`));
    // Stuck before a socket was had: the lane's queue may be wedged behind it, so start the lane afresh.
    if (hang.phase === 'connect') this.#target.lane.reset();
  }

  /** Ends the request here, then aborts its transfer: the abort's own error must not become a second outcome. */
  #abortAfter(reason: Error): void {
    this.#life.aborted();
    this.#abort(reason);
  }

  /** Step 5: the terminal transition (once; `via` names the callback, for an out-of-order one) and the record.
   * `message`: the answer when the caller already assembled it (assembled once a request). */
  #finish(via: string, status: RequestStatus, error: ErrorInfo | null, hang: HangInfo | null, message?: AssembledMessage): void {
    if (this.#life.terminal) {
      this.#life.late(via);
      return;
    }
    this.#watch.stop();
    this.#stop?.removeEventListener('abort', this.#onStop);
    const end = this.#clock.now();
    if (this.#hangSeen !== null && hang === null) {
      // Under `wait` a request that hung stays a hang, whatever came after: one terminal state, the first
      // phase that stalled, and how it ended in `outcome`.
      const outcome = status === 'ok' ? 'completed' : error?.class === 'aborted' ? 'stopped' : 'error';
      hang = { ...this.#hangSeen, outcome, waited_ms: Math.round(end - this.#hangSeenAt) };
      status = 'hang';
      error = null;
    }
    this.#life.end(TERMINAL[status], via);
    message ??= this.#assembler.result();
    // Where the failed request went: a `/v1/v1/…` here tells at once that the base URL already ended in /v1.
    if (error !== null) error = { ...error, url_path: this.#target.endpoint };
    const record = this.#record(status, error, hang, end, message);
    this.#target.tracker.release(this.#requestId);
    const retryAfter = status === 'error' && this.#httpStatus !== null && this.#httpStatus >= 400 ? this.#retryAfter : null;
    this.#resolve({ record, message: status === 'ok' ? message : null, retryAfter });
  }

  /** Send → the last response byte (a read of the body, else the headers); null when none came. */
  #lastByteMs(): number | null {
    const at = this.#bytes > 0 ? this.#chunkAt : this.#headersAt;
    return at === null ? null : round3(at - this.#t0);
  }

  /** The request as a record, as it stands at `end` (the terminal record, or a hang event's snapshot). */
  #record(status: RequestStatus, error: ErrorInfo | null, hang: HangInfo | null, end: number, message = this.#assembler.result()): RequestRecord {
    const t0 = this.#t0;
    const req = this.#req;
    const usage = message.usage;
    const completionTokens = usage?.completionTokens ?? (status === 'ok' ? estimateTokens(generatedText(message)) : null);
    const reasoning = reasoningTokens(message, status);
    const ttftMs = this.#firstTokenAt === null ? null : this.#firstTokenAt - t0;
    const warnings = status === 'ok' ? answerWarnings(message, this.#options.tools) : [];
    return {
      t: this.#wallStart.toISOString(),
      run_ms: round3(t0 - this.#target.runStartMs),
      agent: req.agent,
      conversation: req.conversation,
      round: req.round,
      request_id: this.#publicId,
      trace_id: this.#trace.traceId,
      span_id: this.#trace.spanId,
      phase: req.phase,
      path: this.#target.path,
      status,
      http_status: this.#httpStatus,
      headers_ms: this.#headersAt === null ? null : round3(this.#headersAt - t0),
      ttft_ms: ttftMs === null ? null : round3(ttftMs),
      ttfc_ms: this.#firstContentAt === null ? null : round3(this.#firstContentAt - t0),
      last_token_ms: this.#lastTokenAt === null ? null : round3(this.#lastTokenAt - t0),
      reasoning_ms: this.#firstReasoningAt === null || this.#lastReasoningAt === null ? null : round3(this.#lastReasoningAt - this.#firstReasoningAt),
      reasoning_tokens: reasoning.tokens,
      reasoning_tokens_estimated: reasoning.estimated,
      tokens_per_event: completionTokens === null || this.#tokenEvents === 0 ? null : round3(completionTokens / this.#tokenEvents),
      // The bench scripts' TPOT: the decode time after the first token over the tokens after it.
      tpot_ms: status === 'ok' && ttftMs !== null && completionTokens !== null && completionTokens > 1 ? round3((end - t0 - ttftMs) / (completionTokens - 1)) : null,
      e2e_ms: round3(end - t0),
      ...(status === 'error' ? { last_byte_ms: this.#lastByteMs() } : {}),
      server_ttft_ms: this.#serverTtftMs,
      itl: itlStats(this.#gaps),
      chunks: this.#parser.dataEvents,
      bytes: this.#bytes,
      request_bytes: this.#body.length,
      prompt_tokens: usage?.promptTokens ?? (status === 'ok' ? estimateTokensOfChars(this.#bodyChars) : null),
      completion_tokens: completionTokens,
      cached_tokens: usage?.cachedTokens ?? null,
      tokens_estimated: usage === null && status === 'ok',
      finish_reason: message.finishReason,
      tool_calls: message.toolCalls.map((c) => ({ name: c.name, arguments_bytes: Buffer.byteLength(c.arguments) })),
      content_chars: message.content.length,
      reasoning_chars: message.reasoning.length,
      error,
      hang,
      connection: this.#connection(),
      ...(req.attempt === undefined ? {} : { attempt: req.attempt }),
      ...(this.#buffered(status) ? { buffered_stream: true as const } : {}),
      ...(req.recovery === undefined ? {} : { recovery: req.recovery }),
      ...(req.backoffMs === undefined || req.backoffMs <= 0 ? {} : { backoff_ms: Math.round(req.backoffMs) }),
      ...(req.retryAfterMs === undefined ? {} : { retry_after_ms: Math.round(req.retryAfterMs) }),
      ...(warnings.length === 0 ? {} : { warnings }),
    };
  }

  /** The socket it went on; `queued_ms`: send to headers out, less what opening the socket cost (waiting for
   * a socket or for our own event loop). */
  #connection(): RequestRecord['connection'] {
    const info = this.#target.tracker.connectionOf(this.#requestId);
    if (info === null) return null;
    const sentAt = this.#target.tracker.sentAtMs(this.#requestId);
    return { ...info, queued_ms: sentAt === null ? null : round1(Math.max(0, sentAt - this.#t0 - (info.connect_ms ?? 0) - (info.tls_ms ?? 0))) };
  }

  /** A stream of many token events that all arrived together after a wait: something on the path held it. */
  #buffered(status: RequestStatus): boolean {
    const first = this.#firstTokenAt;
    const last = this.#lastTokenAt;
    if (status !== 'ok' || first === null || last === null) return false;
    return this.#tokenEvents >= BUFFERED_MIN_TOKENS && first - this.#t0 >= BUFFERED_MIN_TTFT_MS && (last - first) * BUFFERED_TOKENS_PER_S <= (this.#tokenEvents - 1) * 1000;
  }
}

const TERMINAL: Record<RequestStatus, TerminalState> = { ok: 'done', error: 'error', hang: 'hang' };

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

/** The text the model generated, for a token estimate when no usage came: content, reasoning, tool calls. */
function generatedText(message: AssembledMessage): string {
  let text = message.content + message.reasoning;
  for (const c of message.toolCalls) text += c.name + c.arguments;
  return text;
}

/**
 * Reasoning tokens of an answer: the server's count when it gave one; else (or when it says 0 while reasoning
 * text streamed: SGLang counts them only when it was asked to) the client's estimate from the text, marked
 * estimated. Null for a failed request without a count.
 */
function reasoningTokens(message: AssembledMessage, status: RequestStatus): { tokens: number | null; estimated: boolean } {
  const reported = message.usage?.reasoningTokens ?? null;
  if (reported !== null && !(reported === 0 && message.reasoning !== '')) return { tokens: reported, estimated: false };
  if (status !== 'ok') return { tokens: null, estimated: false };
  return { tokens: estimateTokens(message.reasoning), estimated: true };
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** An error body as a person should read it: the server's own message when it wrote one (OpenAI's nested
 * error, SGLang's flat one, FastAPI's detail), else the start of the body. */
function describeBody(body: string): string {
  const parsed = parseErrorBody(body);
  if (parsed === null) {
    const text = body.slice(0, QUOTED_BODY_CHARS).trim();
    return text === '' ? '(empty body)' : text;
  }
  const extra = [parsed.type === null ? null : `type ${parsed.type}`, parsed.code === null ? null : `code ${parsed.code}`].filter((x) => x !== null);
  return `${parsed.message.slice(0, QUOTED_BODY_CHARS)}${extra.length === 0 ? '' : ` (${extra.join(', ')})`}`;
}

function wrongTypeError(status: number, type: string, location: string | null, body: string): ErrorInfo {
  const where = location === null ? '' : ` redirecting to ${location}`;
  return errorInfo('wrong_content_type', `HTTP ${status}${where} with content-type ${type}, not text/event-stream: ${describeBody(body)}`, String(status));
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

function itlStats(gaps: number[]): ItlStats | null {
  if (gaps.length === 0) return null;
  const sorted = Float64Array.from(gaps).sort();
  let sum = 0;
  for (const g of sorted) sum += g;
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  return { count: sorted.length, mean_ms: round3(sum / sorted.length), p50_ms: round3(at(50)), p99_ms: round3(at(99)), max_ms: round3(sorted[sorted.length - 1] ?? 0) };
}
