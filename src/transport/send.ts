// One streaming request through undici's dispatch API (the cheapest per chunk), with an abort that works
// whenever it is called: before a socket is had, the abort is remembered and applied the moment one is.
import type { Dispatcher } from 'undici';

export interface StreamRequest {
  method: 'POST' | 'GET';
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  body: string | null;
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

export function sendStream(dispatcher: Dispatcher, request: StreamRequest, cb: StreamCallbacks): Abort {
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
      if (settled) return;
      settled = true;
      cb.onError(error);
    },
  };
  try {
    dispatcher.dispatch({ method: request.method, path: request.path, headers: request.headers, body: request.body }, handler);
  } catch (error) {
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
