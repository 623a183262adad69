// The built-in hop: a TLS-terminating (or, for the recorder, plain HTTP) reverse proxy for streaming chat
// completions, with faults and an observer per exchange. Each upstream chunk is written to the client the
// moment it arrives (no SSE buffering), both sides keep their connections alive (a pool upstream, or one
// upstream connection per client connection), every upstream request is bounded and close() is bounded.
// startHop only wires the pieces: upstream.ts, connections.ts, fault-set.ts, forward.ts, requests.ts,
// listener.ts and close.ts.
import type { HopFault } from '../config/index.js';
import { closeWithin } from './close.js';
import { HopConnections } from './connections.js';
import type { HopFaultFired } from './fault.js';
import { HopFaults } from './fault-set.js';
import type { HopFaultKind } from './faults.js';
import { Forwarder } from './forward.js';
import { createHopServer, hopTls, listen, urlHost } from './listener.js';
import { HopRequests } from './requests.js';
import type { ConnectionClosed, ExchangeStart, ExchangeTap } from './tap.js';
import { Upstream } from './upstream.js';

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
  /** Longest a client request's head (request line and headers) may take from its first byte. @default 30000 */
  headersTimeoutMs?: number;
  /** Most client connections open at once (each also holds an upstream one with `upstreamPerClient`); a
   * connection past it is closed at once and counted (`dropped_connections`). null: no cap. @default 4096 */
  maxConnections?: number | null;
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

export interface HopStats {
  connections: number;
  requests: number;
  /** Requests sent upstream. */
  forwarded: number;
  upstream_errors: number;
  /** Client connections closed at once because `maxConnections` were open. */
  dropped_connections: number;
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

const CLOSE_BOUND_MS = 1_000;
/** A client connection's request head is whole within this, or the connection is closed (408). */
const HEADERS_TIMEOUT_MS = 30_000;
/** Client connections a hop holds at once by default: far above a harness's, far below a file-descriptor limit. */
const MAX_CONNECTIONS = 4096;

/** Starts the hop; resolves once it listens. @throws UsageError on a bad upstream URL, ServerStartError if it cannot listen. */
export async function startHop(opts: HopOptions): Promise<HopHandle> {
  const upstreamTls = { ca: opts.upstreamCa ?? null, insecure: opts.upstreamInsecure === true, servername: opts.upstreamServername ?? null };
  const upstream = new Upstream(opts.upstream, upstreamTls, opts.upstreamConnections ?? 256);
  const host = opts.host ?? '127.0.0.1';
  const faults = opts.faults ?? [];
  const tls = await hopTls(opts.tls !== false, opts.certDir);
  let closed = false;
  const isClosed = (): boolean => closed;
  const connections = new HopConnections({ ownAgent: opts.upstreamPerClient === true ? () => upstream.agent(1) : null, onClose: opts.onConnectionClose });
  const hopFaults = new HopFaults(faults, { onFault: opts.onFault, isClosed });
  const forwarder = new Forwarder({
    upstream,
    timeoutMs: opts.upstreamTimeoutMs ?? 60_000,
    bodyFilter: (conn, nth, streaming) => hopFaults.body(conn, nth, streaming),
    onUpstreamSocket: (conn, socket) => connections.upstreamSocket(conn, socket),
    isClosed,
  });
  const requests = new HopRequests({ connections, faults: hopFaults, forwarder, tap: opts.tap, isClosed });
  let dropped = 0;
  const limits = {
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? 60_000,
    headersTimeoutMs: opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
    maxConnections: opts.maxConnections === undefined ? MAX_CONNECTIONS : opts.maxConnections,
    onDrop: () => void (dropped += 1),
  };
  const server = createHopServer(tls.certs, limits, requests.handle, connections);
  const port = await listen(server, host, opts.port ?? 0).catch((error: unknown) => {
    upstream.pool.destroy();
    tls.release();
    throw error;
  });
  let closing: Promise<void> | null = null;
  const shutDown = (finish: () => void): void => {
    closed = true;
    requests.cancelDelays();
    connections.release();
    forwarder.abortAll();
    upstream.pool.destroy();
    server.close(() => finish());
    connections.destroyAll();
    server.closeAllConnections();
  };
  return {
    url: `${tls.certs === null ? 'http' : 'https'}://${urlHost(host)}:${port}`,
    host,
    port,
    caFile: tls.certs?.caFile ?? null,
    certFile: tls.certs?.certFile ?? null,
    keyFile: tls.certs?.keyFile ?? null,
    upstream: upstream.url.href,
    faults,
    stats: () => ({
      connections: connections.opened,
      requests: requests.count,
      forwarded: forwarder.forwarded,
      upstream_errors: forwarder.errors,
      dropped_connections: dropped,
      faults: hopFaults.counts(),
    }),
    close: () => (closing ??= closeWithin(CLOSE_BOUND_MS, shutDown, tls.release)),
  };
}
