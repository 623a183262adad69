// The hop's public types: what starting it takes, what it hands back, what it counts and what a fault
// reports when it acts.
import type { HopFault } from '../config/index.js';
import type { HopFaultKind } from './faults.js';
import type { ConnectionClosed, ExchangeStart, ExchangeTap } from './tap.js';

export interface HopOptions {
  /** Base URL requests are forwarded to (`http://` or `https://`), e.g. the engine or a router. */
  upstream: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** @default [] */
  faults?: readonly HopFault[];
  /** Where the CA and server certificate are written (a CA already there is reused). Default: a temporary
   * folder, removed on close. */
  certDir?: string;
  /** PEM text of a CA to trust for an https upstream (besides Node's roots). @default null */
  upstreamCa?: string | null;
  /** Skip verifying an https upstream's certificate (the run passes `target.tls.insecure`). @default false */
  upstreamInsecure?: boolean;
  /** Name to verify an https upstream's certificate against (the run passes `target.tls.servername`). @default null */
  upstreamServername?: string | null;
  /** Idle keep-alive time of client connections (sent as the `Keep-Alive: timeout=` hint). @default 60000 */
  keepAliveTimeoutMs?: number;
  /** Longest upstream silence — before response headers or between chunks — before the hop gives up on an
   * upstream request (504 before headers, a cut connection after). @default 60000 */
  upstreamTimeoutMs?: number;
  /** Most upstream connections in the pool. @default 256 */
  upstreamConnections?: number;
  /** Told every time a fault acts (the run records them in events.jsonl). */
  onFault?: (fired: HopFaultFired) => void;
  /** Serve TLS with the hop's own CA (`false`: plain HTTP, what `roundload record` listens with by default).
   * @default true */
  tls?: boolean;
  /** One upstream keep-alive connection per client connection instead of a shared pool, and a client
   * connection is closed once its upstream one closes while idle: the client sees the upstream's connection
   * life (idle timeouts) as if it were connected directly. @default false */
  upstreamPerClient?: boolean;
  /** Called as each request arrives; the observer it returns sees the exchange through (null: not observed). */
  tap?: (start: ExchangeStart) => ExchangeTap | null;
  /** Told when a client connection closes. */
  onConnectionClose?: (closed: ConnectionClosed) => void;
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

export interface HopStats {
  connections: number;
  requests: number;
  /** Requests sent upstream. */
  forwarded: number;
  upstream_errors: number;
  faults: Record<HopFaultKind, number>;
}

export interface HopHandle {
  /** Base URL clients use, e.g. `https://127.0.0.1:8443` (`http://` without TLS). */
  url: string;
  host: string;
  port: number;
  /** PEM file of the CA that signed the hop's certificate: what a client trusts (null without TLS). */
  caFile: string | null;
  certFile: string | null;
  keyFile: string | null;
  upstream: string;
  faults: readonly HopFault[];
  stats(): HopStats;
  /** Stops listening, destroys every client and upstream socket; resolves within about 1 s. */
  close(): Promise<void>;
}
