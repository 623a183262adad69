// Which socket each request went out on, and how many requests that socket had carried before it.
// Subscribes to undici's diagnostics_channel; requests are recognised by a header only this tracker sets.
import diagnostics from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ConnectionInfo } from '../types/index.js';
import { socketTiming } from './timing.js';
import { round1 } from '../util/index.js';

export const REQUEST_ID_HEADER = 'x-roundload-request';

interface SocketState {
  id: string;
  openedAtMs: number;
  sent: number;
  lastEndAtMs: number | null;
}

interface SendHeadersMessage {
  headers: string;
  socket: Socket;
}

let trackerSeq = 0;

export class ConnectionTracker {
  readonly #prefix: string;
  readonly #sockets = new WeakMap<Socket, SocketState>();
  readonly #byRequest = new Map<string, { info: ConnectionInfo; state: SocketState; sentAtMs: number }>();
  #requestSeq = 0;
  #socketSeq = 0;
  readonly #onSendHeaders = (message: unknown): void => this.#sendHeaders(message as SendHeadersMessage);
  #closed = false;

  readonly #idPrefix: string;

  /** `idPrefix` keeps socket ids apart when several trackers feed one run (worker threads: `w1.c3`). */
  constructor(options: { idPrefix?: string } = {}) {
    this.#idPrefix = options.idPrefix ?? '';
    trackerSeq += 1;
    this.#prefix = `${process.pid.toString(36)}${trackerSeq.toString(36)}-`;
    diagnostics.subscribe('undici:client:sendHeaders', this.#onSendHeaders);
  }

  /** A fresh request id to send in {@link REQUEST_ID_HEADER}. */
  nextRequestId(): string {
    this.#requestSeq += 1;
    return `${this.#prefix}${this.#requestSeq}`;
  }

  /** Sockets opened so far by requests of this tracker. */
  get socketsOpened(): number {
    return this.#socketSeq;
  }

  /** The connection a request was sent on, once its headers went out (null before, or if it never left). */
  connectionOf(requestId: string): ConnectionInfo | null {
    return this.#byRequest.get(requestId)?.info ?? null;
  }

  /** When the request's headers went out on its socket (performance.now()), or null before. */
  sentAtMs(requestId: string): number | null {
    return this.#byRequest.get(requestId)?.sentAtMs ?? null;
  }

  /** The request reached its terminal state: its socket is idle from now (for the next request's idle time). */
  release(requestId: string): void {
    const entry = this.#byRequest.get(requestId);
    if (entry === undefined) return;
    entry.state.lastEndAtMs = performance.now();
    this.#byRequest.delete(requestId);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    diagnostics.unsubscribe('undici:client:sendHeaders', this.#onSendHeaders);
  }

  #sendHeaders({ headers, socket }: SendHeadersMessage): void {
    const at = headers.indexOf(`${REQUEST_ID_HEADER}: ${this.#prefix}`);
    if (at < 0) return; // another tracker's (or nobody's) request
    const start = at + REQUEST_ID_HEADER.length + 2;
    const end = headers.indexOf('\r\n', start);
    const requestId = headers.slice(start, end < 0 ? undefined : end);
    const now = performance.now();
    let state = this.#sockets.get(socket);
    if (state === undefined) {
      this.#socketSeq += 1;
      state = { id: `${this.#idPrefix}c${this.#socketSeq}`, openedAtMs: now, sent: 0, lastEndAtMs: null };
      this.#sockets.set(socket, state);
    }
    state.sent += 1;
    // What opening the socket cost belongs to its first request; a reused socket cost nothing to open.
    const opened = state.sent === 1 ? socketTiming(socket) : undefined;
    const tlsSocket = socket as Partial<TLSSocket>;
    const isTls = typeof tlsSocket.getProtocol === 'function';
    const info: ConnectionInfo = {
      id: state.id,
      nth: state.sent,
      local_port: socket.localPort ?? null,
      age_ms: round1(now - state.openedAtMs),
      idle_ms: state.lastEndAtMs === null ? null : round1(now - state.lastEndAtMs),
      tls: isTls
        ? {
            protocol: tlsSocket.getProtocol?.() ?? null,
            session_reused: tlsSocket.isSessionReused?.() ?? false,
            authorized: tlsSocket.authorized ?? false,
          }
        : null,
      connect_ms: opened?.connectMs ?? null,
      tls_ms: opened?.tlsMs ?? null,
      opening: opened?.opening ?? null,
    };
    this.#byRequest.set(requestId, { info, state, sentAtMs: now });
  }
}
