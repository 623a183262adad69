// One round's request, through its explicit lifecycle (round-state.ts): sent → headers → first token →
// streaming → done | error | hang. Exactly one terminal state per request; nothing is recorded after it.
import { sendStream, REQUEST_ID_HEADER, type Lane, type ConnectionTracker, type Abort } from '../transport/index.js';
import { ChatStreamParser, MessageAssembler, parseErrorBody, type AssembledMessage, type StreamEvent } from '../stream/index.js';
import { RequestWatch, type Clock, type Deadlines, type HangVerdict } from '../watchdog/index.js';
import type { HangPolicy, ToolSpec } from '../config/index.js';
import type { ErrorInfo, HangInfo, ItlStats, PathKind, RequestRecord, RequestStatus } from '../types/index.js';
import { answerError, answerWarnings, classifyTransportError, errorInfo, httpStatusClass, throughProxy } from './classify.js';
import { estimateTokens, estimateTokensOfChars } from './text.js';
import { RoundLifecycle, type TerminalState } from './round-state.js';

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

/** Sends one round and resolves with its record; never rejects. `stop` aborts it (run shutdown). */
export function sendRound(target: RoundTarget, req: RoundRequest, stop?: AbortSignal, options: RoundOptions = {}): Promise<RoundOutcome> {
  const policy = options.onHang ?? 'abort';
  return new Promise<RoundOutcome>((resolve) => {
    const requestId = target.tracker.nextRequestId();
    const life = new RoundLifecycle(requestId);
    const clock = target.clock;
    // Encoded once: undici sends the bytes as they are, and the record's request_bytes is their length.
    const body = typeof req.body === 'string' ? Buffer.from(req.body) : req.body.bytes;
    const bodyChars = typeof req.body === 'string' ? req.body.length : req.body.chars;
    const wallStart = new Date();
    const t0 = clock.now();
    let headersAt: number | null = null;
    let firstTokenAt: number | null = null;
    let lastTokenAt: number | null = null;
    /** First content or tool-call token (`ttfc_ms`), and the reasoning span (`reasoning_ms`). */
    let firstContentAt: number | null = null;
    let firstReasoningAt: number | null = null;
    let lastReasoningAt: number | null = null;
    let httpStatus: number | null = null;
    let serverTtftMs: number | null = null;
    /** Arrival time of the read being parsed. */
    let chunkAt = t0;
    /** Token events so far: content, reasoning and tool-call deltas, the events `itl` measures gaps between (a
     * buffered stream has many, all arriving at once; `tokens_per_event` divides the completion tokens by them). */
    let tokenEvents = 0;
    let errorBody = '';
    /** The content type of a 2xx answer that is not an event stream (the request fails once its body is read). */
    let wrongType: string | null = null;
    let location: string | null = null;
    let retryAfter: string | null = null;
    let bytes = 0;
    /** Arrival of the read that completed the last SSE data event. */
    let lastChunkAt: number | null = null;
    /** The first deadline that passed (under `wait` the request goes on), and when. */
    let hangSeen: HangInfo | null = null;
    let hangSeenAt = 0;
    const gaps: number[] = [];
    const assembler = new MessageAssembler();
    let streamProblem: ErrorInfo | null = null;
    let abort: Abort = () => {};

    const onEvent = (e: StreamEvent): void => {
      switch (e.kind) {
        case 'content':
        case 'reasoning':
        case 'tool_call_delta': {
          // Events parsed from one read share its arrival time: parsing must not shift later events.
          const now = chunkAt;
          tokenEvents += 1;
          if (firstTokenAt === null) {
            firstTokenAt = now;
            life.to('first_token', 'token');
            watch.firstToken(now);
            target.onFirstToken?.(req.agent, req.round, now - t0);
          } else if (lastTokenAt !== null) {
            if (life.state === 'first_token') life.to('streaming', 'token');
            const gap = now - lastTokenAt;
            gaps.push(gap);
            target.onGap?.(gap);
          }
          lastTokenAt = now;
          if (e.kind === 'reasoning') {
            firstReasoningAt ??= now;
            lastReasoningAt = now;
          } else firstContentAt ??= now;
          break;
        }
        case 'comment':
          if (e.text.startsWith(SERVER_TTFT_COMMENT)) {
            const v = Number(e.text.slice(SERVER_TTFT_COMMENT.length));
            if (Number.isFinite(v)) serverTtftMs = v;
          }
          break;
        case 'server_error':
          streamProblem ??= errorInfo('server_error_event', `server error in stream: ${e.message}${e.type === null ? '' : ` (type ${e.type})`}`, e.code === null ? null : String(e.code));
          break;
        case 'malformed':
          streamProblem ??= errorInfo(e.problem === 'invalid_json' ? 'invalid_json' : 'malformed_sse', `${e.detail}: ${e.sample}`);
          break;
        default:
          break;
      }
      assembler.apply(e);
    };
    const parser = new ChatStreamParser(onEvent);

    /** Send → the last response byte (a read of the body, else the headers); null when none came. */
    const lastByteMs = (): number | null => {
      const at = bytes > 0 ? chunkAt : headersAt;
      return at === null ? null : round3(at - t0);
    };

    /** The request as a record, as it stands at `end` (the terminal record, or a hang event's snapshot). */
    const snapshot = (status: RequestStatus, error: ErrorInfo | null, hang: HangInfo | null, end: number, message = assembler.result()): RequestRecord => {
      const info = target.tracker.connectionOf(requestId);
      const sentAt = target.tracker.sentAtMs(requestId);
      // Waiting for a socket or for our own event loop: send to headers out, less what opening the socket cost.
      const connection = info === null ? null : { ...info, queued_ms: sentAt === null ? null : round1(Math.max(0, sentAt - t0 - (info.connect_ms ?? 0) - (info.tls_ms ?? 0))) };
      const spreadMs = firstTokenAt === null || lastTokenAt === null ? null : lastTokenAt - firstTokenAt;
      const buffered =
        status === 'ok' && spreadMs !== null && tokenEvents >= BUFFERED_MIN_TOKENS && firstTokenAt! - t0 >= BUFFERED_MIN_TTFT_MS && spreadMs * BUFFERED_TOKENS_PER_S <= (tokenEvents - 1) * 1000;
      const usage = message.usage;
      const estimated = usage === null;
      const warnings = status === 'ok' ? answerWarnings(message, options.tools) : [];
      const completionTokens = usage?.completionTokens ?? (status === 'ok' ? estimateTokens(generatedText(message)) : null);
      const reasoning = reasoningTokens(message, status);
      const ttftMs = firstTokenAt === null ? null : firstTokenAt - t0;
      const record: RequestRecord = {
        t: wallStart.toISOString(),
        run_ms: round3(t0 - target.runStartMs),
        agent: req.agent,
        conversation: req.conversation,
        round: req.round,
        phase: req.phase,
        path: target.path,
        status,
        http_status: httpStatus,
        headers_ms: headersAt === null ? null : round3(headersAt - t0),
        ttft_ms: ttftMs === null ? null : round3(ttftMs),
        ttfc_ms: firstContentAt === null ? null : round3(firstContentAt - t0),
        reasoning_ms: firstReasoningAt === null || lastReasoningAt === null ? null : round3(lastReasoningAt - firstReasoningAt),
        reasoning_tokens: reasoning.tokens,
        reasoning_tokens_estimated: reasoning.estimated,
        tokens_per_event: completionTokens === null || tokenEvents === 0 ? null : round3(completionTokens / tokenEvents),
        // The bench scripts' TPOT: the decode time after the first token over the tokens after it.
        tpot_ms: status === 'ok' && ttftMs !== null && completionTokens !== null && completionTokens > 1 ? round3((end - t0 - ttftMs) / (completionTokens - 1)) : null,
        e2e_ms: round3(end - t0),
        ...(status === 'error' ? { last_byte_ms: lastByteMs() } : {}),
        server_ttft_ms: serverTtftMs,
        itl: itlStats(gaps),
        chunks: parser.dataEvents,
        bytes,
        request_bytes: body.length,
        prompt_tokens: usage?.promptTokens ?? (status === 'ok' ? estimateTokensOfChars(bodyChars) : null),
        completion_tokens: completionTokens,
        cached_tokens: usage?.cachedTokens ?? null,
        tokens_estimated: estimated && status === 'ok',
        finish_reason: message.finishReason,
        tool_calls: message.toolCalls.map((c) => ({ name: c.name, arguments_bytes: Buffer.byteLength(c.arguments) })),
        content_chars: message.content.length,
        reasoning_chars: message.reasoning.length,
        error,
        hang,
        connection,
        ...(req.attempt === undefined ? {} : { attempt: req.attempt }),
        ...(buffered ? { buffered_stream: true as const } : {}),
        ...(req.recovery === undefined ? {} : { recovery: req.recovery }),
        ...(req.backoffMs === undefined || req.backoffMs <= 0 ? {} : { backoff_ms: Math.round(req.backoffMs) }),
        ...(req.retryAfterMs === undefined ? {} : { retry_after_ms: Math.round(req.retryAfterMs) }),
        ...(warnings.length === 0 ? {} : { warnings }),
      };
      return record;
    };

    /** The terminal transition (once; `via` names the callback, for an out-of-order one). `message`: the
     * answer when the caller already assembled it (assembled once a request). */
    const finish = (via: string, status: RequestStatus, error: ErrorInfo | null, hang: HangInfo | null, message?: AssembledMessage): void => {
      if (life.terminal) {
        life.late(via);
        return;
      }
      watch.stop();
      stop?.removeEventListener('abort', onStop);
      const end = clock.now();
      if (hangSeen !== null && hang === null) {
        // Under `wait` a request that hung stays a hang, whatever came after: one terminal state, the first
        // phase that stalled, and how it ended in `outcome`.
        const outcome = status === 'ok' ? 'completed' : error?.class === 'aborted' ? 'stopped' : 'error';
        hang = { ...hangSeen, outcome, waited_ms: Math.round(end - hangSeenAt) };
        status = 'hang';
        error = null;
      }
      life.end(TERMINAL[status], via);
      message ??= assembler.result();
      // Where the failed request went: a `/v1/v1/…` here tells at once that the base URL already ended in /v1.
      if (error !== null) error = { ...error, url_path: target.endpoint };
      const record = snapshot(status, error, hang, end, message);
      target.tracker.release(requestId);
      resolve({ record, message: status === 'ok' ? message : null, retryAfter: status === 'error' && httpStatus !== null && httpStatus >= 400 ? retryAfter : null });
    };

    /** Ends the request here, then aborts its transfer: the abort's own error must not become a second outcome. */
    const abortAfter = (reason: Error): void => {
      life.aborted();
      abort(reason);
    };
    const giveUp = (verdict: HangVerdict, hang: HangInfo): void => {
      finish('watchdog', 'hang', null, hang);
      abortAfter(new Error(`watchdog: ${verdict.deadline} ${verdict.deadline_ms} ms passed in phase ${verdict.phase}`));
      // Stuck before a socket was had: the lane's queue may be wedged behind it, so start the lane afresh.
      if (hang.phase === 'connect') target.lane.reset();
    };
    const watch = new RequestWatch(target.deadlines, clock, (verdict) => {
      if (life.terminal) {
        life.late('watchdog');
        return;
      }
      const now = clock.now();
      if (hangSeen !== null) {
        // `wait`: total_ms has passed too; the record keeps the first phase that stalled.
        giveUp(verdict, { ...hangSeen, outcome: 'total', waited_ms: Math.round(now - hangSeenAt) });
        return;
      }
      const hang: HangInfo = {
        ...verdict,
        chunks: parser.dataEvents,
        bytes,
        last_chunk_age_ms: lastChunkAt === null ? null : Math.round(now - lastChunkAt),
        policy,
        outcome: 'aborted',
        waited_ms: 0,
      };
      options.onHangDetected?.(snapshot('hang', null, hang, now));
      if (policy === 'wait' && verdict.phase !== 'total') {
        hangSeen = hang;
        hangSeenAt = now;
        watch.waitForTotal();
        return;
      }
      giveUp(verdict, hang);
    });

    const onStop = (): void => {
      finish('stop', 'error', errorInfo('aborted', 'the run stopped while this request was in flight'), null);
      abortAfter(new Error('run stopped'));
    };
    if (stop?.aborted) {
      onStop();
      return;
    }
    stop?.addEventListener('abort', onStop, { once: true });

    watch.start();
    abort = sendStream(
      target.lane,
      {
        method: 'POST',
        path: target.endpoint,
        headers: { ...target.headers, 'content-type': 'application/json', accept: 'text/event-stream', [REQUEST_ID_HEADER]: requestId },
        body,
      },
      {
        onStart() {
          watch.connected();
        },
        onHeaders(statusCode, headers) {
          if (!life.to('headers', 'headers')) return;
          headersAt = clock.now();
          httpStatus = statusCode;
          watch.headers(headersAt);
          if (statusCode >= 400) retryAfter = headerText(headers['retry-after']);
          else {
            const type = headerText(headers['content-type']);
            // A missing type is let through: the parser judges the bytes. Any other must be an event stream.
            if (type !== null && !/^\s*text\/event-stream\s*(;|$)/i.test(type)) {
              wrongType = type;
              location = headerText(headers['location']);
            }
          }
        },
        onData(chunk) {
          if (life.terminal) {
            life.late('data');
            return;
          }
          bytes += chunk.length;
          // The one clock reading of this socket read: the events parsed from it, and the watchdog's last byte.
          chunkAt = clock.now();
          watch.bytes(chunkAt);
          if (httpStatus !== null && httpStatus >= 400) {
            if (errorBody.length < MAX_ERROR_BODY) errorBody += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
            return;
          }
          if (wrongType !== null) {
            errorBody += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
            // Enough to quote: fail now rather than read a whole page (or wait on a body that never ends).
            if (errorBody.length >= MAX_ERROR_BODY) {
              finish('data', 'error', wrongTypeError(httpStatus ?? 0, wrongType, location, errorBody), null);
              abortAfter(new Error('wrong content type'));
            }
            return;
          }
          const before = parser.dataEvents;
          parser.feed(chunk);
          if (parser.dataEvents !== before) lastChunkAt = chunkAt;
        },
        onEnd() {
          if (life.terminal) {
            life.late('end');
            return;
          }
          if (httpStatus !== null && httpStatus >= 400) {
            // Whose answer it was: the server's JSON error, or a proxy's own page (the diagnosis reads it).
            const body = parseErrorBody(errorBody) === null ? ('page' as const) : ('json' as const);
            finish('end', 'error', { ...errorInfo(httpStatusClass(httpStatus), `HTTP ${httpStatus}: ${describeBody(errorBody)}`, String(httpStatus)), body }, null);
            return;
          }
          if (wrongType !== null) {
            finish('end', 'error', wrongTypeError(httpStatus ?? 0, wrongType, location, errorBody), null);
            return;
          }
          parser.end();
          // Assembled once: the checks below and the record share it.
          const message = assembler.result();
          if (streamProblem !== null) {
            finish('end', 'error', streamProblem, null, message);
            return;
          }
          if (message.finishReason === null && !message.sawDone) {
            const ignored = parser.ignoredLines === 0 ? '' : `; ${parser.ignoredLines} lines were not server-sent events and were ignored, the first: ${JSON.stringify(parser.firstIgnoredLine)}`;
            finish('end', 'error', errorInfo('truncated_stream', `stream ended after ${parser.dataEvents} events without finish_reason or [DONE]${ignored}`), null, message);
            return;
          }
          const shape = answerError(message);
          if (shape !== null) {
            finish('end', 'error', shape, null, message);
            return;
          }
          finish('end', 'ok', null, null, message);
        },
        onError(error) {
          if (life.terminal) {
            life.late('error');
            return;
          }
          const connection = target.tracker.connectionOf(requestId);
          const reused = connection !== null && connection.nth > 1 && headersAt === null;
          finish('error', 'error', throughProxy(classifyTransportError(error, reused, clock.now() - t0), error, target.proxyUrl ?? null), null);
        },
      },
    );
  });
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
