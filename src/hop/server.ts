// The built-in hop: a TLS-terminating reverse proxy for streaming chat completions, with faults. Each
// upstream chunk is written to the client the moment it arrives (no SSE buffering), both sides keep their
// connections alive (a pool upstream), every upstream request is bounded and close() is bounded.
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { HopFault } from '../config/index.js';
import { ServerStartError, UsageError } from '../errors.js';
import { makeCertificates } from './cert.js';
import { seededUnit, type HopFaultKind } from './faults.js';
import { SseCutter } from './sse-cut.js';

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
  /** Base URL clients use, e.g. `https://127.0.0.1:8443`. */
  url: string;
  host: string;
  port: number;
  /** PEM file of the CA that signed the hop's certificate: what a client trusts. */
  caFile: string;
  certFile: string;
  keyFile: string;
  upstream: string;
  faults: readonly HopFault[];
  stats(): HopStats;
  /** Stops listening, destroys every client and upstream socket; resolves within about 1 s. */
  close(): Promise<void>;
}

interface Conn {
  id: number;
  tls: TLSSocket;
  /** The TCP socket under the TLS one (a reset must go to it: TLS sockets cannot be reset). */
  raw: Socket | null;
  served: number;
  active: number;
  idleTimer: NodeJS.Timeout | null;
  /** Half-open from the client's view: nothing it sends is read or answered any more. */
  silent: boolean;
}

const CLOSE_BOUND_MS = 1_000;
/** Hop-by-hop headers (RFC 9110 §7.6.1) are the hop's own business, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const named = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((s) => s.trim()));
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function faultOf<K extends HopFaultKind>(faults: readonly HopFault[], kind: K): Extract<HopFault, { kind: K }> | null {
  return (faults.find((f) => f.kind === kind) as Extract<HopFault, { kind: K }> | undefined) ?? null;
}

function isEventStream(headers: IncomingHttpHeaders): boolean {
  return String(headers['content-type'] ?? '').includes('text/event-stream');
}

/** Starts the hop; resolves once it listens. @throws UsageError on a bad upstream URL, ServerStartError if it cannot listen. */
export async function startHop(opts: HopOptions): Promise<HopHandle> {
  let upstream: URL;
  try {
    upstream = new URL(opts.upstream);
  } catch (cause) {
    throw new UsageError(`hop upstream "${opts.upstream}" is not a URL`, { cause });
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') throw new UsageError(`hop upstream must be http:// or https://, got ${opts.upstream}`);
  const host = opts.host ?? '127.0.0.1';
  const faults = opts.faults ?? [];
  const stall = faultOf(faults, 'stall');
  const cut = faultOf(faults, 'cut');
  const buffer = faultOf(faults, 'buffer');
  const idleClose = faultOf(faults, 'idle_close');
  const reset = faultOf(faults, 'reset');
  const latency = faultOf(faults, 'latency');
  const upstreamTimeoutMs = opts.upstreamTimeoutMs ?? 60_000;
  const basePath = upstream.pathname.replace(/\/+$/, '');

  const ownsCertDir = opts.certDir === undefined;
  const certDir = opts.certDir ?? mkdtempSync(join(tmpdir(), 'roundload-hop-'));
  const certs = await makeCertificates(certDir);

  const upstreamHttps = upstream.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxSockets: opts.upstreamConnections ?? 256, scheduling: 'lifo' as const };
  const agent = upstreamHttps
    ? new https.Agent({
        ...agentOptions,
        rejectUnauthorized: opts.upstreamInsecure !== true,
        ...(opts.upstreamCa ? { ca: opts.upstreamCa } : {}),
        ...(opts.upstreamServername ? { servername: opts.upstreamServername } : {}),
      })
    : new http.Agent(agentOptions);
  const requestUpstream = upstreamHttps ? https.request : http.request;

  const stats: HopStats = { connections: 0, requests: 0, forwarded: 0, upstream_errors: 0, faults: { stall: 0, cut: 0, buffer: 0, idle_close: 0, reset: 0, latency: 0 } };
  const conns = new WeakMap<TLSSocket, Conn>();
  const live = new Set<Conn>();
  const rawSockets = new Set<Socket>();
  const rawByPeer = new Map<string, Socket>();
  const inFlight = new Set<http.ClientRequest>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let requestSeq = 0;

  const fire = (fault: HopFaultKind, conn: Conn, request: number, detail: string): void => {
    stats.faults[fault] += 1;
    opts.onFault?.({ fault, connection: conn.id, request, detail });
  };

  const resetConn = (conn: Conn): void => {
    if (conn.raw !== null) conn.raw.resetAndDestroy();
    else conn.tls.destroy();
  };

  const armIdle = (conn: Conn): void => {
    if (idleClose === null || closed || conn.silent) return;
    conn.idleTimer = setTimeout(() => {
      conn.idleTimer = null;
      if (conn.active > 0 || closed) return;
      if (idleClose.mode === 'rst') {
        fire('idle_close', conn, 0, `reset after ${idleClose.after_s} s idle`);
        resetConn(conn);
        return;
      }
      fire('idle_close', conn, 0, `went silent after ${idleClose.after_s} s idle (socket kept open, nothing read or answered)`);
      conn.silent = true;
      // Keep the TCP connection: no FIN, no RST, and Node's own keep-alive timer must not close it either.
      conn.tls.setTimeout(0);
      conn.tls.pause();
    }, idleClose.after_s * 1000);
  };

  const adopt = (tls: TLSSocket): Conn => {
    stats.connections += 1;
    const key = `${tls.remoteAddress}|${tls.remotePort}`;
    const raw = rawByPeer.get(key) ?? null;
    rawByPeer.delete(key);
    const conn: Conn = { id: stats.connections, tls, raw, served: 0, active: 0, idleTimer: null, silent: false };
    conns.set(tls, conn);
    live.add(conn);
    tls.setNoDelay(true);
    tls.once('close', () => {
      if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
      live.delete(conn);
    });
    return conn;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, conn: Conn, nth: number): void => {
    if (closed || res.destroyed) return;
    stats.forwarded += 1;
    const headers = endToEnd(req.headers);
    headers.host = upstream.host;
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
    headers['x-forwarded-proto'] = 'https';
    const up = requestUpstream({
      protocol: upstream.protocol,
      hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
      port: upstream.port === '' ? undefined : Number(upstream.port),
      method: req.method,
      path: `${basePath}${req.url ?? '/'}`,
      headers,
      agent,
    });
    inFlight.add(up);
    up.once('close', () => inFlight.delete(up));
    // Bounded: upstream silence (connecting, before headers, or between chunks) ends the request.
    up.setTimeout(upstreamTimeoutMs, () => up.destroy(Object.assign(new Error(`upstream sent nothing for ${upstreamTimeoutMs} ms`), { code: 'HOP_UPSTREAM_TIMEOUT' })));
    up.on('error', (error: Error & { code?: string }) => {
      stats.upstream_errors += 1;
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      const status = error.code === 'HOP_UPSTREAM_TIMEOUT' ? 504 : 502;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'upstream_error', message: `roundload hop: upstream ${upstream.origin}: ${error.message}` } }));
    });
    res.once('close', () => {
      // The client went away (or gave up): the upstream request goes too, freeing the engine's slot.
      if (!res.writableFinished) up.destroy();
    });
    up.on('response', (ur) => {
      const streaming = isEventStream(ur.headers);
      res.writeHead(ur.statusCode ?? 502, endToEnd(ur.headers));
      // Headers go at once, even when the body is held back (buffer) or cut.
      res.flushHeaders();
      const cutter = cut !== null && streaming ? new SseCutter(cut.after_chunks) : null;
      const held: Buffer[] | null = buffer !== null ? [] : null;
      let cutFired = false;
      const write = (chunk: Uint8Array): void => {
        if (!res.write(chunk)) {
          // Flow control, not buffering: wait for the client to take what was written.
          ur.pause();
          res.once('drain', () => ur.resume());
        }
      };
      ur.on('data', (chunk: Buffer) => {
        if (held !== null) {
          held.push(chunk);
          return;
        }
        if (cutter !== null) {
          if (cutter.done) return; // keep draining upstream so its connection goes back to the pool
          const part = cutter.take(chunk);
          if (part.length > 0) write(part);
          if (cutter.done && !cutFired) {
            cutFired = true;
            fire('cut', conn, nth, `stopped forwarding after ${cut!.after_chunks} SSE events (socket kept open)`);
          }
          return;
        }
        write(chunk);
      });
      ur.on('end', () => {
        if (cutFired || (cutter !== null && cutter.done)) {
          if (!cutFired) fire('cut', conn, nth, `stopped forwarding after ${cut!.after_chunks} SSE events (socket kept open)`);
          return; // the client waits for the rest forever (its watchdog decides)
        }
        if (held !== null) {
          fire('buffer', conn, nth, `held ${held.reduce((n, c) => n + c.length, 0)} bytes until the upstream response ended`);
          res.end(Buffer.concat(held));
          return;
        }
        res.end();
      });
      ur.on('error', () => res.destroy());
    });
    req.pipe(up);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const tls = req.socket as TLSSocket;
    const conn = conns.get(tls) ?? adopt(tls);
    conn.served += 1;
    const nth = conn.served;
    stats.requests += 1;
    requestSeq += 1;
    if (conn.idleTimer !== null) {
      clearTimeout(conn.idleTimer);
      conn.idleTimer = null;
    }
    conn.active += 1;
    res.once('close', () => {
      conn.active -= 1;
      if (conn.active === 0) armIdle(conn);
    });
    if (conn.silent) {
      req.resume();
      return;
    }
    if (stall !== null && nth > stall.after_requests) {
      fire('stall', conn, nth, `request ${nth} on a connection that carried ${stall.after_requests}: read, never forwarded nor answered`);
      req.resume();
      return;
    }
    if (reset !== null && nth === 1 && seededUnit(reset.seed, conn.id) < reset.ratio) {
      fire('reset', conn, nth, `connection ${conn.id} reset at its first request (ratio ${reset.ratio}, seed ${reset.seed})`);
      resetConn(conn);
      return;
    }
    if (latency !== null) {
      const delayMs = latency.ms + latency.jitter_ms * seededUnit(7, requestSeq);
      stats.faults.latency += 1;
      const timer = setTimeout(() => {
        timers.delete(timer);
        forward(req, res, conn, nth);
      }, delayMs);
      timers.add(timer);
      res.once('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    forward(req, res, conn, nth);
  };

  const keepAliveTimeoutMs = opts.keepAliveTimeoutMs ?? 60_000;
  const server = https.createServer({ key: certs.key, cert: certs.cert, ALPNProtocols: ['http/1.1'] }, onRequest);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  // Must exceed keepAliveTimeout, or Node may cut an idle kept-alive socket as a slow request.
  server.headersTimeout = keepAliveTimeoutMs + 1_000;
  server.requestTimeout = 0;
  server.on('connection', (raw: Socket) => {
    rawSockets.add(raw);
    const key = `${raw.remoteAddress}|${raw.remotePort}`;
    rawByPeer.set(key, raw);
    raw.once('close', () => {
      rawSockets.delete(raw);
      if (rawByPeer.get(key) === raw) rawByPeer.delete(key);
    });
  });
  server.on('secureConnection', (tls: TLSSocket) => {
    adopt(tls);
  });
  // A client that fails the handshake (it does not trust the CA, say) is its own business: never a crash.
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new ServerStartError('the hop', `${host.includes(':') ? `[${host}]` : host}:${opts.port ?? 0}`, { cause: error })));
    server.listen(opts.port ?? 0, host, () => resolve());
  }).catch((error: unknown) => {
    agent.destroy();
    if (ownsCertDir) rmSync(certDir, { recursive: true, force: true });
    throw error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? 0);
  let closing: Promise<void> | null = null;
  return {
    url: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    host,
    port,
    caFile: certs.caFile,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    upstream: upstream.href,
    faults,
    stats: () => ({ ...stats, faults: { ...stats.faults } }),
    close: () =>
      (closing ??= new Promise<void>((done) => {
        closed = true;
        let finished = false;
        const finish = (): void => {
          if (finished) return;
          finished = true;
          clearTimeout(bound);
          if (ownsCertDir) rmSync(certDir, { recursive: true, force: true });
          done();
        };
        const bound = setTimeout(finish, CLOSE_BOUND_MS);
        bound.unref();
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const conn of live) if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
        for (const up of inFlight) up.destroy();
        agent.destroy();
        server.close(() => finish());
        for (const raw of rawSockets) raw.destroy();
        server.closeAllConnections();
      })),
  };
}
