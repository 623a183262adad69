// The built-in hop: a TLS-terminating (or, for the recorder, plain HTTP) reverse proxy for streaming chat
// completions, with faults and an observer per exchange. Each upstream chunk is written to the client the
// moment it arrives (no SSE buffering), both sides keep their connections alive (a pool upstream, or one
// upstream connection per client connection), every upstream request is bounded and close() is bounded.
// startHop only wires the pieces: upstream.ts, connections.ts, fault-set.ts, forward.ts, requests.ts,
// listener.ts and close.ts.
import { closeWithin } from './close.js';
import { HopConnections } from './connections.js';
import { HopFaults } from './fault-set.js';
import { Forwarder } from './forward.js';
import { createHopServer, hopTls, listen, urlHost } from './listener.js';
import { HopRequests } from './requests.js';
import type { HopHandle, HopOptions } from './types.js';
import { Upstream } from './upstream.js';

const CLOSE_BOUND_MS = 1_000;

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
  const server = createHopServer(tls.certs, opts.keepAliveTimeoutMs ?? 60_000, requests.handle, connections);
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
    stats: () => ({ connections: connections.opened, requests: requests.count, forwarded: forwarder.forwarded, upstream_errors: forwarder.errors, faults: hopFaults.counts() }),
    close: () => (closing ??= closeWithin(CLOSE_BOUND_MS, shutDown, tls.release)),
  };
}
