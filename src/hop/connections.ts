// The hop's client connections: each adopted once (its TLS socket matched to the TCP socket under it, which a
// reset must go to), the live set, each request's bookkeeping (its number on the connection, the idle time
// before it, how many are in flight) and — with an upstream connection per client — the client's connection
// closed once its upstream one closed while idle.
import type http from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Conn } from './fault.js';
import type { ConnectionClosed } from './tap.js';

export interface HopConnectionsOptions {
  /** Makes a client connection's own upstream agent (`upstreamPerClient`); null: they share the pool. */
  ownAgent: (() => http.Agent) | null;
  /** Told when a client connection closes. */
  onClose?: ((closed: ConnectionClosed) => void) | undefined;
}

/** A request arriving on a connection. */
export interface RequestArrival {
  conn: Conn;
  /** Which request on the connection (1 = its first). */
  nth: number;
  /** Since the connection's previous response ended (null on its first request, or with another in flight). */
  idleMs: number | null;
  /** performance.now() of the arrival. */
  atMs: number;
}

const peerKey = (socket: Socket): string => `${socket.remoteAddress}|${socket.remotePort}`;

export class HopConnections {
  readonly #options: HopConnectionsOptions;
  #opened = 0;
  readonly #bySocket = new WeakMap<Socket, Conn>();
  readonly #live = new Set<Conn>();
  /** Every accepted TCP socket, and those not yet matched to the TLS socket on them, by peer address. */
  readonly #raw = new Set<Socket>();
  readonly #rawByPeer = new Map<string, Socket>();
  /** Upstream sockets whose close is already mirrored to their client connection. */
  readonly #watchedUpstream = new WeakSet<Socket>();

  constructor(options: HopConnectionsOptions) {
    this.#options = options;
  }

  /** Client connections adopted so far. */
  get opened(): number {
    return this.#opened;
  }

  /** A TCP connection was accepted. `carriesRequests`: no TLS on it, so it is the connection itself. */
  accepted(raw: Socket, carriesRequests: boolean): void {
    this.#raw.add(raw);
    const key = peerKey(raw);
    this.#rawByPeer.set(key, raw);
    raw.once('close', () => {
      this.#raw.delete(raw);
      if (this.#rawByPeer.get(key) === raw) this.#rawByPeer.delete(key);
    });
    if (carriesRequests) this.adopt(raw);
  }

  /** Makes `socket` (the one requests arrive on) a client connection. */
  adopt(socket: Socket): Conn {
    this.#opened += 1;
    const key = peerKey(socket);
    const raw = this.#rawByPeer.get(key) ?? null;
    this.#rawByPeer.delete(key);
    const conn: Conn = {
      id: this.#opened,
      socket,
      raw,
      served: 0,
      active: 0,
      idleTimer: null,
      silent: false,
      lastEndMs: null,
      clientEnded: false,
      hopEnded: false,
      agent: this.#options.ownAgent?.() ?? null,
      upstreamClosed: false,
    };
    this.#bySocket.set(socket, conn);
    this.#live.add(conn);
    socket.setNoDelay(true);
    socket.once('end', () => {
      conn.clientEnded = true;
    });
    socket.once('close', (hadError: boolean) => {
      if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
      conn.agent?.destroy();
      this.#live.delete(conn);
      const atMs = performance.now();
      this.#options.onClose?.({
        connection: conn.id,
        served: conn.served,
        idleMs: conn.active > 0 || conn.lastEndMs === null ? null : atMs - conn.lastEndMs,
        by: hadError ? 'error' : conn.hopEnded || !conn.clientEnded ? 'hop' : 'client',
        atMs,
      });
    });
    return conn;
  }

  /** A request arrived on `socket`: counted on its connection (adopted if new), whose idle timer stops. */
  arrive(socket: Socket): RequestArrival {
    const conn = this.#bySocket.get(socket) ?? this.adopt(socket);
    const atMs = performance.now();
    conn.served += 1;
    if (conn.idleTimer !== null) {
      clearTimeout(conn.idleTimer);
      conn.idleTimer = null;
    }
    const idleMs = conn.active > 0 || conn.lastEndMs === null ? null : atMs - conn.lastEndMs;
    conn.active += 1;
    return { conn, nth: conn.served, idleMs, atMs };
  }

  /** A request's response closed. @returns true when the connection has no request in flight any more. */
  depart(conn: Conn): boolean {
    conn.active -= 1;
    conn.lastEndMs = performance.now();
    return conn.active === 0;
  }

  /** The upstream socket a request of `conn` went out on, with `conn`'s own agent: its close is mirrored. */
  upstreamSocket(conn: Conn, socket: Socket): void {
    if (this.#watchedUpstream.has(socket)) return;
    this.#watchedUpstream.add(socket);
    socket.once('close', () => {
      conn.upstreamClosed = true;
      this.mirrorUpstreamClose(conn);
    });
  }

  /** Ends the client's connection once its upstream one closed and no request is in flight on it. */
  mirrorUpstreamClose(conn: Conn): void {
    if (conn.upstreamClosed && conn.active === 0 && !conn.socket.destroyed) {
      conn.hopEnded = true;
      conn.socket.end();
    }
  }

  /** The hop is closing: idle timers stop, per-connection upstream agents go. */
  release(): void {
    for (const conn of this.#live) {
      if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
      conn.agent?.destroy();
    }
  }

  /** Destroys every accepted TCP socket. */
  destroyAll(): void {
    for (const raw of this.#raw) raw.destroy();
  }
}
