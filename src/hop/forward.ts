// Forwarding one exchange upstream: the upstream request, bounded by the upstream's silence; its failure
// answered by the hop (502, or 504 when the bound ran out) before response headers and cut after; the
// response body through the faults' filter with flow control (never buffered), shown to the exchange's tap.
import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { BodyFilter, Conn } from './fault.js';
import { endToEnd, isEventStream, upstreamRequestHeaders } from './headers.js';
import type { TapGuard } from './tap.js';
import type { Upstream } from './upstream.js';

/** One client request on its way through the hop. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  conn: Conn;
  /** Which request on its connection (1 = its first). */
  nth: number;
  tap: TapGuard;
}

export interface ForwarderOptions {
  upstream: Upstream;
  /** Longest upstream silence (connecting, before headers, between chunks) before the request is given up. */
  timeoutMs: number;
  /** The filter the faults put on a response body (null: untouched). */
  bodyFilter: (conn: Conn, nth: number, streaming: boolean) => BodyFilter | null;
  /** The upstream socket a request went out on, when its connection has an agent of its own. */
  onUpstreamSocket: (conn: Conn, socket: Socket) => void;
  /** The hop is closing: nothing more is forwarded. */
  isClosed: () => boolean;
}

/** The error code of an upstream request given up after `timeoutMs` of silence. */
export const UPSTREAM_TIMEOUT = 'HOP_UPSTREAM_TIMEOUT';

/** The hop's own answer when the upstream fails before response headers: 504 when it stayed silent past the
 * bound, 502 otherwise, with an OpenAI-style error body naming the upstream. */
export function upstreamErrorAnswer(error: Error & { code?: string }, origin: string): { status: number; headers: { 'content-type': string }; body: string } {
  return {
    status: error.code === UPSTREAM_TIMEOUT ? 504 : 502,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { type: 'upstream_error', message: `roundload hop: upstream ${origin}: ${error.message}` } }),
  };
}

export class Forwarder {
  readonly #options: ForwarderOptions;
  #forwarded = 0;
  #errors = 0;
  readonly #inFlight = new Set<http.ClientRequest>();

  constructor(options: ForwarderOptions) {
    this.#options = options;
  }

  /** Requests sent upstream. */
  get forwarded(): number {
    return this.#forwarded;
  }

  /** Upstream requests that failed (refused, reset, timed out, …). */
  get errors(): number {
    return this.#errors;
  }

  /** Sends the exchange's request upstream and its response back (nothing once the hop closes or the client left). */
  forward({ req, res, conn, nth, tap }: Exchange): void {
    const { upstream, timeoutMs } = this.#options;
    if (this.#options.isClosed() || res.destroyed) return;
    this.#forwarded += 1;
    const up = upstream.request(req.method, req.url ?? '/', upstreamRequestHeaders(req, upstream.url.host), conn.agent ?? upstream.pool);
    if (conn.agent !== null) up.once('socket', (socket: Socket) => this.#options.onUpstreamSocket(conn, socket));
    this.#inFlight.add(up);
    up.once('close', () => this.#inFlight.delete(up));
    // Bounded: upstream silence (connecting, before headers, or between chunks) ends the request.
    up.setTimeout(timeoutMs, () => up.destroy(Object.assign(new Error(`upstream sent nothing for ${timeoutMs} ms`), { code: UPSTREAM_TIMEOUT })));
    up.on('error', (error: Error & { code?: string }) => {
      this.#errors += 1;
      if (res.headersSent || res.destroyed) {
        tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
        res.destroy();
        return;
      }
      const answer = upstreamErrorAnswer(error, upstream.url.origin);
      res.writeHead(answer.status, answer.headers);
      tap.response(answer.status, answer.headers, true);
      res.end(answer.body);
      tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
    });
    res.once('close', () => {
      // The client went away (or gave up): the upstream request goes too, freeing the engine's slot.
      if (!res.writableFinished) up.destroy();
    });
    up.on('response', (ur) => this.#respond(ur, { req, res, conn, nth, tap }));
    req.pipe(up);
  }

  /** The hop is closing: every upstream request in flight goes. */
  abortAll(): void {
    for (const up of this.#inFlight) up.destroy();
  }

  #respond(ur: IncomingMessage, { res, conn, nth, tap }: Exchange): void {
    res.writeHead(ur.statusCode ?? 502, endToEnd(ur.headers));
    // Headers go at once, even when the body is held back (buffer) or cut.
    res.flushHeaders();
    tap.response(ur.statusCode ?? 502, ur.headers, false);
    const filter = this.#options.bodyFilter(conn, nth, isEventStream(ur.headers));
    const write = (chunk: Buffer): void => {
      const flowing = res.write(chunk);
      // Seen after it was written: observing never delays a byte.
      tap.data(chunk);
      if (!flowing) {
        // Flow control, not buffering: wait for the client to take what was written.
        ur.pause();
        res.once('drain', () => ur.resume());
      }
    };
    ur.on('data', (chunk: Buffer) => (filter === null ? write(chunk) : filter.data(chunk, write)));
    ur.on('end', () => {
      // A filter may keep the response open: the client waits for the rest forever (its watchdog decides).
      if (filter !== null && !filter.end(write)) return;
      res.end();
      tap.end({ kind: 'complete' });
    });
    ur.on('error', (error: Error & { code?: string }) => {
      res.destroy();
      tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
    });
  }
}
