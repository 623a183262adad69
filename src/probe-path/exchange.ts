// One timed request of the path probe, on a connection of its own: when its headers and each body chunk
// arrived, how it ended (cleanly, with an error, or at our deadline) and which socket carried it. Every
// exchange is bounded by a deadline of our own; `stopAfterHeaders` ends it once the status is known.
import { performance } from 'node:perf_hooks';
import { ConnectionTracker, REQUEST_ID_HEADER, sendStream, Transport, type TlsOptions } from '../transport/index.js';

export interface ProbeRequest {
  method: 'GET' | 'POST';
  /** Path and query below the target's base path, e.g. `/v1/models`. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string | null;
}

export interface ChunkArrival {
  /** ms since the request was sent. */
  atMs: number;
  text: string;
}

export interface Exchange {
  /** HTTP status, or null when no response head arrived. */
  status: number | null;
  /** Response headers, lower-case names, repeated ones joined with `, `. */
  headers: Record<string, string>;
  /** ms from send to the response head, or null. */
  headersMs: number | null;
  chunks: ChunkArrival[];
  /** ms from send to the clean end of the response, or null. */
  endMs: number | null;
  /** The transport error that ended it, with when (ms since send), or null. */
  error: { code: string; message: string; atMs: number } | null;
  /** Our deadline ended it (no clean end, no error before it). */
  timedOut: boolean;
  /** The socket it went out on (ids are per probe), or null when it never left. */
  connection: { id: string; nth: number } | null;
}

export interface SendOptions {
  timeoutMs: number;
  /** Resolve once the response head arrived (the body is then aborted). @default false */
  stopAfterHeaders?: boolean;
  /** Resolve at the first body byte (the rest is aborted). @default false */
  stopAtFirstByte?: boolean;
}

/** One keep-alive connection of the probe. */
export interface ProbeConnection {
  send(request: ProbeRequest, options: SendOptions): Promise<Exchange>;
}

/** Where the probe's connections come from; a fake in unit tests. */
export interface PathClient {
  /** A fresh connection (its own socket, opened on first send). */
  connection(): ProbeConnection;
  close(): Promise<void>;
}

export interface PathClientOptions {
  url: string;
  tls: TlsOptions;
  connectProxy: string | null;
  /** Extra headers on every request (an Authorization). */
  headers: Record<string, string>;
  /** How long an idle socket may stay open on our side: longer than any gap the probe waits. */
  keepAliveTimeoutMs: number;
}

const BODY_TEXT_LIMIT = 1024 * 1024;

/** What went wrong with an exchange that got no answer, in words. */
export function failure(x: Exchange): string {
  if (x.error !== null) return `${x.error.code}: ${x.error.message}`;
  if (x.timedOut) return 'no answer before the deadline';
  return x.status === null ? 'no answer' : `HTTP ${x.status}`;
}

function flatHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function errorCode(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}

/** The probe's connections over roundload's own transport (direct, TLS, CONNECT proxy), one lane each. */
export function openPathClient(options: PathClientOptions): PathClient {
  const transport = new Transport({
    url: options.url,
    path: options.connectProxy === null ? 'direct' : 'proxy',
    tls: options.tls,
    connectProxy: options.connectProxy,
    connection: 'per-agent',
    agents: 1,
    poolConnections: null,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    connectTimeoutMs: 10_000,
    // Backstops only: every exchange has a precise deadline of its own.
    headersTimeoutMs: 3_600_000,
    bodyTimeoutMs: 3_600_000,
    ignoreKeepAliveHint: true,
  });
  const tracker = new ConnectionTracker();
  let lanes = 0;
  return {
    connection() {
      const lane = transport.lane(lanes);
      lanes += 1;
      return { send: (request, sendOptions) => exchange(lane, tracker, `${transport.basePath}${request.path}`, { ...request, headers: { ...options.headers, ...request.headers } }, sendOptions) };
    },
    async close() {
      tracker.close();
      await transport.close(200);
    },
  };
}

function exchange(lane: Parameters<typeof sendStream>[0], tracker: ConnectionTracker, path: string, request: ProbeRequest, options: SendOptions): Promise<Exchange> {
  const requestId = tracker.nextRequestId();
  const sentAt = performance.now();
  const since = (): number => performance.now() - sentAt;
  const x: Exchange = { status: null, headers: {}, headersMs: null, chunks: [], endMs: null, error: null, timedOut: false, connection: null };
  let kept = 0;
  return new Promise<Exchange>((resolve) => {
    let timer: NodeJS.Timeout | undefined = undefined;
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const info = tracker.connectionOf(requestId);
      x.connection = info === null ? null : { id: info.id, nth: info.nth };
      tracker.release(requestId);
      resolve(x);
    };
    const abort = sendStream(
      lane,
      { method: request.method, path, headers: { ...request.headers, [REQUEST_ID_HEADER]: requestId }, body: request.body ?? null },
      {
        onStart() {},
        onHeaders(statusCode, headers) {
          if (settled) return;
          x.status = statusCode;
          x.headers = flatHeaders(headers);
          x.headersMs = since();
          if (options.stopAfterHeaders === true) {
            done();
            abort(new Error('the probe had what it needed'));
          }
        },
        onData(chunk) {
          if (settled) return;
          const text = kept < BODY_TEXT_LIMIT ? chunk.toString('utf8') : '';
          kept += text.length;
          x.chunks.push({ atMs: since(), text });
          if (options.stopAtFirstByte === true) {
            done();
            abort(new Error('the probe had what it needed'));
          }
        },
        onEnd() {
          x.endMs = since();
          done();
        },
        onError(error) {
          if (settled) return;
          x.error = { code: errorCode(error), message: error.message, atMs: since() };
          done();
        },
      },
    );
    timer = setTimeout(() => {
      if (settled) return;
      x.timedOut = true;
      done();
      abort(new Error(`the probe's deadline of ${options.timeoutMs} ms passed`));
    }, options.timeoutMs);
  });
}
