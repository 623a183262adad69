// `roundload record`'s engine: the hop, listening plain or with TLS, with one upstream connection per client
// connection, and an observer on every chat request that hands its line to the trace writer as it completes.
// Nothing in the forwarding path waits for the trace: a full, failing or stalled volume stops the recording
// (counted, said once), never the forwarding (trace-writer.ts).
import { performance } from 'node:perf_hooks';
import type { ExchangeEnd, ExchangeStart, ExchangeTap, HopHandle } from '../hop/index.js';
import { TraceWriter, type TraceWriterResult } from './trace-writer.js';
import { VERSION } from '../version.js';
import { ConversationInference } from './conversations.js';
import { ResponseObserver } from './observe.js';
import { Hasher, requestContents, requestShape } from './shape.js';
import { TRACE_FORMAT, TRACE_VERSION, type TraceHeader, type TraceIncomplete, type TraceRequest, type TraceRequestShape } from './types.js';
import { round1, isObject, redactUrlCredentials } from '../util/index.js';

export interface RecorderOptions {
  /** Where requests are forwarded (the router), http:// or https://. */
  upstream: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** 0: a free port. @default 0 */
  port?: number;
  /** Listen with TLS, with the hop's CA (written to `certDir`, or a temporary folder). @default false */
  tls?: boolean;
  certDir?: string;
  /** The trace file; appended to, created when missing. */
  out: string;
  /** Keep message and tools contents (`--content`). @default false */
  content?: boolean;
  /** A request header naming the conversation (`--session-header X-Session-Id`). @default null */
  sessionHeader?: string | null;
  upstreamCa?: string | null;
  upstreamInsecure?: boolean;
  /** Longest upstream silence before the recorder gives up on a request (a 504, or a cut stream). @default 600000 */
  upstreamTimeoutMs?: number;
  /** Idle keep-alive of client connections the recorder allows (the harness and the upstream decide
   * sooner). @default 600000 */
  keepAliveTimeoutMs?: number;
  /** Told of each request line as it is handed to the trace writer. */
  onRequest?: (line: TraceRequest) => void;
  /** Notices about the trace volume: recording stopped (once, with why), the volume stalled. */
  log?: (line: string) => void;
  /** Bytes of trace lines waiting for the volume past which recording stops. @default 16 MiB */
  maxQueueBytes?: number;
}

export interface RecorderTally {
  requests: number;
  conversations: number;
  connections: number;
  errors: number;
  /** Requests through the recorder that were not chat completions (forwarded, not recorded). */
  passed_through: number;
  /** Chat requests forwarded but not in the trace: its volume was full, failing or stalled (`requests`
   * counts them too). */
  not_recorded: number;
  /** Why recording stopped before forwarding did, or null. */
  stopped: { at_ms: number; reason: string } | null;
  /** Harness connections closed at once because the recorder held its most (the hop's `maxConnections`). */
  dropped_connections: number;
}

export interface RecorderHandle {
  url: string;
  /** PEM file of the CA to trust (with TLS), else null. */
  caFile: string | null;
  out: string;
  tally(): RecorderTally;
  /** Stops: in-flight requests are cut and recorded as `closed`, the trace is closed (waiting at most about
   * 2 s for its volume; lines it has not taken by then are counted in `not_recorded`). Bounded (about 3 s). */
  close(): Promise<void>;
}

/** Request bodies larger than this are forwarded but recorded without their shape. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const CHAT_PATH = /\/chat\/completions$/;

const EMPTY_SHAPE = (bytes: number): TraceRequestShape => ({
  model: null,
  stream: false,
  stream_options: null,
  max_tokens: null,
  max_tokens_key: 'max_tokens',
  tool_choice: null,
  messages: [],
  tools: null,
  extra: {},
  extra_keys: [],
  bytes,
});

function failureOf(end: ExchangeEnd): { kind: string; message: string } | null {
  switch (end.kind) {
    case 'complete':
      return null;
    case 'upstream_error':
      return { kind: 'upstream_error', message: end.message };
    case 'client_gone':
      return { kind: 'client_gone', message: 'the client closed the connection before the response ended' };
    case 'closed':
      return { kind: 'closed', message: 'the recorder stopped while the request was in flight' };
    case 'fault':
      return { kind: 'fault', message: end.fault };
  }
}

/** What every exchange through one recorder shares. */
interface Recording {
  readonly opts: RecorderOptions;
  readonly writer: TraceWriter;
  readonly hasher: Hasher;
  readonly conversations: ConversationInference;
  readonly sessionHeader: string | null;
  /** Hashes of the tools and message contents already in the trace (`--content`): each is written once. */
  readonly written: Set<string>;
  /** performance.now() at the start: the trace's times are since then. */
  readonly t0: number;
  readonly tally: Omit<RecorderTally, 'dropped_connections'>;
  /** Client connections that carried a chat request. */
  readonly connections: Set<number>;
  seq: number;
}

/** Starts recording; resolves once it listens.
 * @throws ResultsError (exit 4) before listening when `out` cannot be opened or takes no header line. */
export async function startRecorder(opts: RecorderOptions): Promise<RecorderHandle> {
  const startedAt = new Date();
  const t0 = performance.now();
  const writer = await TraceWriter.open(opts.out, traceHeader(opts, startedAt, upstreamHref(opts.upstream)), {
    ...(opts.maxQueueBytes === undefined ? {} : { maxQueueBytes: opts.maxQueueBytes }),
    ...(opts.log === undefined ? {} : { log: opts.log }),
  });
  const rec: Recording = {
    opts,
    writer,
    hasher: new Hasher(),
    conversations: new ConversationInference(),
    sessionHeader: opts.sessionHeader?.toLowerCase() ?? null,
    written: new Set<string>(),
    t0,
    tally: { requests: 0, conversations: 0, connections: 0, errors: 0, passed_through: 0, not_recorded: 0, stopped: null },
    connections: new Set<number>(),
    seq: 0,
  };
  let hop;
  try {
    hop = await listen(rec);
  } catch (error) {
    // The same --out can be used again once the address is fixed.
    await writer.discard();
    throw error;
  }
  let closing: Promise<void> | null = null;
  let result: TraceWriterResult | null = null;
  const started = hop;
  return {
    url: started.url,
    caFile: started.caFile,
    out: opts.out,
    tally: () => ({ ...tallyOf(rec, result), dropped_connections: started.stats().dropped_connections }),
    close: () =>
      (closing ??= (async () => {
        await started.close();
        result = await writer.close((stop) => incompleteLine(rec, stop.atMs, stop.reason));
      })()),
  };
}

/** The upstream as the hop will name it (the hop itself rejects a bad URL). */
function upstreamHref(upstream: string): string {
  try {
    return new URL(upstream).href;
  } catch {
    return upstream;
  }
}

function tallyOf(rec: Recording, result: TraceWriterResult | null): Omit<RecorderTally, 'dropped_connections'> {
  const stop = result?.stopped ?? rec.writer.stopped;
  return {
    ...rec.tally,
    not_recorded: result?.requestsNotRecorded ?? rec.writer.notRecorded.requests,
    stopped: stop === null ? null : { at_ms: round1(stop.atMs - rec.t0), reason: stop.reason },
  };
}

/** The trace's last line when recording stopped early; its counts are final only if the volume takes it, and
 * then everything handed over before it is on the volume: only what was dropped is missing. */
function incompleteLine(rec: Recording, stoppedAtMs: number, reason: string): TraceIncomplete {
  const missing = rec.writer.notRecorded;
  return { kind: 'incomplete', at_ms: round1(stoppedAtMs - rec.t0), reason, requests_not_recorded: missing.requests, lines_not_recorded: missing.lines };
}

/** The hop in front of the upstream, with one upstream connection per client connection, observing every exchange.
 * Its code is loaded here, not with the trace module: a replay reads traces and never records one. */
async function listen(rec: Recording): Promise<HopHandle> {
  const { opts, writer, t0 } = rec;
  const { startHop } = await import('../hop/index.js');
  return startHop({
    upstream: opts.upstream,
    host: opts.host ?? '127.0.0.1',
    port: opts.port ?? 0,
    tls: opts.tls === true,
    ...(opts.certDir === undefined ? {} : { certDir: opts.certDir }),
    upstreamCa: opts.upstreamCa ?? null,
    upstreamInsecure: opts.upstreamInsecure ?? false,
    upstreamTimeoutMs: opts.upstreamTimeoutMs ?? 600_000,
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? 600_000,
    upstreamPerClient: true,
    tap: (start) => tapExchange(rec, start),
    onConnectionClose: (c) => {
      // Connections that carried no chat request (health checks, /v1/models) are not the harness's pattern.
      if (c.served === 0 || !rec.connections.has(c.connection)) return;
      writer.write({
        kind: 'close',
        connection: c.connection,
        at_ms: round1(c.atMs - t0),
        served: c.served,
        idle_ms: c.idleMs === null ? null : round1(c.idleMs),
        by: c.by === 'hop' ? 'proxy' : c.by,
      });
    },
  });
}

/** The observer of one request: a chat completion is recorded as it ends; anything else is only counted. */
function tapExchange(rec: Recording, start: ExchangeStart): ExchangeTap | null {
  const path = start.url.split('?')[0] ?? start.url;
  if (start.method !== 'POST' || !CHAT_PATH.test(path)) {
    rec.tally.passed_through += 1;
    return null;
  }
  rec.seq += 1;
  const mySeq = rec.seq;
  rec.connections.add(start.connection);
  const wallStart = new Date();
  const body: Buffer[] = [];
  let bodyBytes = 0;
  const observer = new ResponseObserver(start.atMs);
  const session = rec.sessionHeader === null ? null : start.headers[rec.sessionHeader];
  return {
    onRequestData(chunk) {
      bodyBytes += chunk.length;
      if (bodyBytes <= MAX_BODY_BYTES) body.push(chunk);
    },
    onResponse(status, headers, byHop) {
      observer.response(status, String(headers['content-type'] ?? ''), byHop);
    },
    onResponseData(chunk) {
      observer.data(chunk);
    },
    onEnd(end) {
      const { response, answer } = observer.finish(failureOf(end), rec.hasher);
      const parsed = bodyBytes <= MAX_BODY_BYTES ? parseBody(body) : null;
      const shape = parsed === null ? EMPTY_SHAPE(bodyBytes) : requestShape(parsed, bodyBytes, rec.hasher);
      const assigned = rec.conversations.assign({
        messages: shape.messages.map((m) => m.hash),
        session: typeof session === 'string' && session !== '' ? session : null,
        startedAtMs: start.atMs,
        endedAtMs: performance.now(),
        answer,
        failed: response.error !== null,
      });
      if (rec.opts.content === true && parsed !== null) writeContents(rec, parsed, shape);
      const line: TraceRequest = {
        kind: 'request',
        seq: mySeq,
        t: wallStart.toISOString(),
        start_ms: round1(start.atMs - rec.t0),
        connection: { id: start.connection, nth: start.nth, idle_ms: start.idleMs === null ? null : round1(start.idleMs) },
        conversation: assigned.conversation,
        round: assigned.round,
        think_ms: assigned.thinkMs === null ? null : round1(assigned.thinkMs),
        path,
        request: shape,
        response,
      };
      rec.writer.write(line);
      rec.tally.requests += 1;
      if (response.error !== null) rec.tally.errors += 1;
      rec.tally.conversations = rec.conversations.count;
      rec.tally.connections = rec.connections.size;
      rec.opts.onRequest?.(line);
    },
  };
}

/** A request body as a JSON object, else null. */
function parseBody(body: Buffer[]): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.concat(body).toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    // recorded as a request of unknown shape
    return null;
  }
}

/** With `--content`: the tools and messages of a request that the trace does not hold yet. */
function writeContents(rec: Recording, parsed: Record<string, unknown>, shape: TraceRequestShape): void {
  const contents = requestContents(parsed, shape);
  if (contents.tools !== null && !rec.written.has(contents.tools.hash)) {
    rec.written.add(contents.tools.hash);
    rec.writer.write({ kind: 'tools', hash: contents.tools.hash, tools: contents.tools.tools });
  }
  for (const c of contents.messages) {
    if (rec.written.has(c.hash)) continue;
    rec.written.add(c.hash);
    rec.writer.write({ kind: 'content', hash: c.hash, message: c.message });
  }
}

function traceHeader(opts: RecorderOptions, startedAt: Date, upstream: string): TraceHeader {
  return {
    kind: 'header',
    format: TRACE_FORMAT,
    version: TRACE_VERSION,
    roundload: VERSION,
    started_at: startedAt.toISOString(),
    source: 'record',
    // A trace is made to be handed over: the upstream's credentials stay here (the terminal masks them too).
    upstream: redactUrlCredentials(upstream),
    tls: opts.tls === true,
    content: opts.content === true,
    session_header: opts.sessionHeader ?? null,
    hash: 'hmac-sha256-64',
  };
}
