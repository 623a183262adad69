// What the hop tells an observer about each exchange it forwards (the recorder subscribes here): the client
// connection and the request as they arrive, then the response's bytes as they are forwarded. Observing never
// holds a byte back: the hop writes each chunk to the client before the observer sees it.
import type { IncomingHttpHeaders } from 'node:http';

/** One request arriving on a client connection. */
export interface ExchangeStart {
  /** Hop-local id of the client connection (1, 2, …). */
  connection: number;
  /** Which request on that connection (1 = its first). */
  nth: number;
  /** Since the previous response on this connection ended (null on its first request). */
  idleMs: number | null;
  /** performance.now() when the request's headers arrived. */
  atMs: number;
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
}

/** How an exchange ended, exactly once. */
export type ExchangeEnd =
  /** The response was forwarded to its end. */
  | { kind: 'complete' }
  /** The upstream failed (the hop answered 502/504 itself, or cut a started response). */
  | { kind: 'upstream_error'; message: string; code: string | null }
  /** The client went away before the response ended. */
  | { kind: 'client_gone' }
  /** A fault of the hop held, dropped or reset it. */
  | { kind: 'fault'; fault: string }
  /** The hop closed while it was in flight. */
  | { kind: 'closed' };

/** The observer of one exchange. Every callback is optional; `onEnd` comes exactly once. */
export interface ExchangeTap {
  onRequestData?(chunk: Buffer): void;
  /** Response headers, as forwarded (`byHop`: the hop answered itself, e.g. a 502). */
  onResponse?(status: number, headers: IncomingHttpHeaders, byHop: boolean): void;
  onResponseData?(chunk: Buffer): void;
  onEnd(end: ExchangeEnd): void;
}

/** A client connection closed. */
export interface ConnectionClosed {
  connection: number;
  /** Requests it carried. */
  served: number;
  /** Since its last response ended (null: it carried none, or closed mid-request). */
  idleMs: number | null;
  /** Who closed it: the client (it sent FIN), the hop (idle timeout, shutdown, upstream mirror), or an error. */
  by: 'client' | 'hop' | 'error';
  /** performance.now() of the close. */
  atMs: number;
}

/** An exchange's observer with its callbacks guarded: every one safe to call, `end` acting once. */
export interface TapGuard {
  readonly observed: boolean;
  requestData(chunk: Buffer): void;
  response(status: number, headers: IncomingHttpHeaders, byHop: boolean): void;
  data(chunk: Buffer): void;
  end(end: ExchangeEnd): void;
}

export function guardTap(tap: ExchangeTap | null): TapGuard {
  let ended = tap === null;
  return {
    observed: tap !== null,
    requestData: (chunk) => {
      if (!ended) tap?.onRequestData?.(chunk);
    },
    response: (status, headers, byHop) => {
      if (!ended) tap?.onResponse?.(status, headers, byHop);
    },
    data: (chunk) => {
      if (!ended) tap?.onResponseData?.(chunk);
    },
    end: (end) => {
      if (ended) return;
      ended = true;
      tap?.onEnd(end);
    },
  };
}
