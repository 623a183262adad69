// One interface for the hop's faults: each fault is a small module (fault-*.ts) acting at one or more of three
// points — a request arriving, a connection going idle, a response body passing — and HopFaults (fault-set.ts)
// applies them in a fixed order without knowing any of them.
import type http from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { HopFaultKind } from './faults.js';
import type { TapGuard } from './tap.js';

/** A client connection as the hop keeps it. */
export interface Conn {
  id: number;
  /** The socket requests arrive on: a TLS socket, or the TCP one itself without TLS. */
  socket: Socket;
  /** The TCP socket under a TLS one (a reset must go to it: TLS sockets cannot be reset). */
  raw: Socket | null;
  served: number;
  active: number;
  idleTimer: NodeJS.Timeout | null;
  /** Half-open from the client's view: nothing it sends is read or answered any more. */
  silent: boolean;
  /** performance.now() when its last response ended (null before the first). */
  lastEndMs: number | null;
  /** The client sent FIN (so the client closed it, unless the hop had ended it first). */
  clientEnded: boolean;
  /** The hop ended it (mirroring the upstream's close). */
  hopEnded: boolean;
  /** `upstreamPerClient`: this connection's own upstream agent, and whether its upstream socket closed. */
  agent: http.Agent | null;
  upstreamClosed: boolean;
}

/** What a fault may do to the hop: announce itself, count itself, reset a connection. */
export interface FaultTools {
  /** Counts the fault and tells the hop's `onFault` listener. */
  fire(fault: HopFaultKind, conn: Conn, request: number, detail: string): void;
  /** Counts the fault without an event (latency acts on every request). */
  count(fault: HopFaultKind): void;
  /** Resets the connection (RST on the TCP socket). */
  reset(conn: Conn): void;
  /** The hop is closing: start nothing new. */
  closed(): boolean;
}

/** A request arriving: its connection, its number on it (1 = first), its number on the hop, and the request. */
export interface FaultRequest {
  conn: Conn;
  nth: number;
  seq: number;
  req: IncomingMessage;
  tap: TapGuard;
}

/** What a fault made of a request: let it through, took it (the fault answered or dropped it), or delay it. */
export type RequestVerdict = { action: 'forward' } | { action: 'taken' } | { action: 'delay'; delayMs: number };

/** A response body on its way to the client. `pass` writes a chunk to the client (flow-controlled). */
export interface BodyFilter {
  data(chunk: Buffer, pass: (chunk: Buffer) => void): void;
  /** The upstream body ended: pass what is held; false keeps the client's response open (never ended). */
  end(pass: (chunk: Buffer) => void): boolean;
}

/** A fault acting on one request or connection. */
export interface HopFaultFired {
  fault: HopFaultKind;
  /** Hop-local id of the client connection (1, 2, …). */
  connection: number;
  /** Which request on that connection (1 = its first); 0 when the fault acted on an idle connection. */
  request: number;
  detail: string;
}

export interface HopFaultModule {
  readonly kind: HopFaultKind;
  /** A request arrived (before it is forwarded). */
  onRequest?(r: FaultRequest, tools: FaultTools): RequestVerdict;
  /** A connection has no request in flight any more. */
  onIdle?(conn: Conn, tools: FaultTools): void;
  /** A forwarded request's response body; null: the body passes untouched. */
  body?(conn: Conn, nth: number, streaming: boolean, tools: FaultTools): BodyFilter | null;
}

export const FORWARD: RequestVerdict = { action: 'forward' };
export const TAKEN: RequestVerdict = { action: 'taken' };
