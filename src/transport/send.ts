// One streaming request through undici's dispatch API (the cheapest per chunk: our handler is the only one
// between undici and the callbacks), with an abort that works whenever it is called: before a socket is had,
// the abort is remembered and applied the moment one is.
import type { Dispatcher } from 'undici';
import type { Lane } from './dispatcher.js';

export interface StreamRequest {
  method: 'POST' | 'GET';
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** A Buffer goes out as it is (a string would be encoded by undici on every send). */
  body: Buffer | string | null;
}

export interface StreamCallbacks {
  /** The request got a socket and is about to be written. */
  onStart(): void;
  onHeaders(statusCode: number, headers: Record<string, string | string[] | undefined>): void;
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** Aborts an in-progress request. Safe to call at any time, any number of times. */
export type Abort = (reason: Error) => void;

/** Sends `request` on `lane`; a transport error is shown to the lane first (`Lane.failed`: a poisoned
 * connection is replaced there, with no handler of its own in the data path). */
export function sendStream(lane: Pick<Lane, 'dispatcher' | 'failed'>, request: StreamRequest, cb: StreamCallbacks): Abort {
  const dispatcher = lane.dispatcher;
  let controller: Dispatcher.DispatchController | null = null;
  let pendingAbort: Error | null = null;
  let settled = false;
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      if (pendingAbort !== null) {
        c.abort(pendingAbort);
        return;
      }
      cb.onStart();
    },
    onResponseStart(_c, statusCode, headers) {
      cb.onHeaders(statusCode, headers);
    },
    onResponseData(_c, chunk) {
      cb.onData(chunk);
    },
    onResponseEnd() {
      if (settled) return;
      settled = true;
      cb.onEnd();
    },
    onResponseError(_c, error) {
      lane.failed(error, dispatcher);
      if (settled) return;
      settled = true;
      cb.onError(error);
    },
  };
  try {
    dispatcher.dispatch({ method: request.method, path: request.path, headers: request.headers, body: request.body }, handler);
  } catch (error) {
    lane.failed(error as Error, dispatcher);
    settled = true;
    queueMicrotask(() => cb.onError(error as Error));
  }
  return (reason: Error) => {
    if (controller === null) {
      pendingAbort = reason;
      return;
    }
    if (!controller.aborted) controller.abort(reason);
  };
}
