// The built-in hop: a TLS-terminating (or, for the recorder, plain HTTP) reverse proxy for streaming chat
// completions, with faults and an observer per exchange. Each upstream chunk is written to the client the
// moment it arrives (no SSE buffering), both sides keep their connections alive (a pool upstream, or one
// upstream connection per client connection), every upstream request is bounded and close() is bounded.
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import type { HopFault } from '../config/index.js';
import { ServerStartError, UsageError } from '../errors.js';
import { makeCertificates } from './cert.js';
import type { HopFaultKind } from './faults.js';
import type { Conn, FaultTools, HopFaultModule } from './fault.js';
import { faultModules } from './fault-set.js';
import { guardTap, type ConnectionClosed, type ExchangeStart, type ExchangeTap, type TapGuard } from './tap.js';

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

const CLOSE_BOUND_MS = 1_000;
/** Hop-by-hop headers (RFC 9110 §7.6.1) are the hop's own business, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim()),
  );
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
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
  const modules: readonly HopFaultModule[] = faultModules(faults);
  const upstreamTimeoutMs = opts.upstreamTimeoutMs ?? 60_000;
  const basePath = upstream.pathname.replace(/\/+$/, '');

  const useTls = opts.tls !== false;
  const ownsCertDir = useTls && opts.certDir === undefined;
  const certDir = useTls ? (opts.certDir ?? mkdtempSync(join(tmpdir(), 'roundload-hop-'))) : null;
  const certs = certDir === null ? null : await makeCertificates(certDir);

  const upstreamHttps = upstream.protocol === 'https:';
  const makeAgent = (maxSockets: number): http.Agent => {
    const agentOptions = { keepAlive: true, maxSockets, scheduling: 'lifo' as const };
    return upstreamHttps
      ? new https.Agent({
          ...agentOptions,
          rejectUnauthorized: opts.upstreamInsecure !== true,
          ...(opts.upstreamCa ? { ca: opts.upstreamCa } : {}),
          ...(opts.upstreamServername ? { servername: opts.upstreamServername } : {}),
        })
      : new http.Agent(agentOptions);
  };
  const agent = makeAgent(opts.upstreamConnections ?? 256);
  const requestUpstream = upstreamHttps ? https.request : http.request;

  const stats: HopStats = { connections: 0, requests: 0, forwarded: 0, upstream_errors: 0, faults: { stall: 0, cut: 0, buffer: 0, idle_close: 0, reset: 0, latency: 0 } };
  const conns = new WeakMap<Socket, Conn>();
  const live = new Set<Conn>();
  const rawSockets = new Set<Socket>();
  const rawByPeer = new Map<string, Socket>();
  const inFlight = new Set<http.ClientRequest>();
  /** Upstream sockets whose close is mirrored to their client connection (`upstreamPerClient`). */
  const watchedUpstream = new WeakSet<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let requestSeq = 0;

  const tools: FaultTools = {
    fire: (fault: HopFaultKind, conn: Conn, request: number, detail: string): void => {
      stats.faults[fault] += 1;
      opts.onFault?.({ fault, connection: conn.id, request, detail });
    },
    count: (fault) => {
      stats.faults[fault] += 1;
    },
    reset: (conn) => {
      if (conn.raw !== null) conn.raw.resetAndDestroy();
      else conn.socket.destroy();
    },
    closed: () => closed,
  };

  const adopt = (socket: Socket): Conn => {
    stats.connections += 1;
    const key = `${socket.remoteAddress}|${socket.remotePort}`;
    const raw = rawByPeer.get(key) ?? null;
    rawByPeer.delete(key);
    const conn: Conn = {
      id: stats.connections,
      socket,
      raw,
      served: 0,
      active: 0,
      idleTimer: null,
      silent: false,
      lastEndMs: null,
      clientEnded: false,
      hopEnded: false,
      agent: opts.upstreamPerClient === true ? makeAgent(1) : null,
      upstreamClosed: false,
    };
    conns.set(socket, conn);
    live.add(conn);
    socket.setNoDelay(true);
    socket.once('end', () => {
      conn.clientEnded = true;
    });
    socket.once('close', (hadError: boolean) => {
      if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
      conn.agent?.destroy();
      live.delete(conn);
      const atMs = performance.now();
      opts.onConnectionClose?.({
        connection: conn.id,
        served: conn.served,
        idleMs: conn.active > 0 || conn.lastEndMs === null ? null : atMs - conn.lastEndMs,
        by: hadError ? 'error' : conn.hopEnded || !conn.clientEnded ? 'hop' : 'client',
        atMs,
      });
    });
    return conn;
  };

  /** `upstreamPerClient`: the upstream closed this connection's socket; close the client's once it is idle. */
  const mirrorUpstreamClose = (conn: Conn): void => {
    if (conn.upstreamClosed && conn.active === 0 && !conn.socket.destroyed) {
      conn.hopEnded = true;
      conn.socket.end();
    }
  };

  const forward = (req: IncomingMessage, res: ServerResponse, conn: Conn, nth: number, tap: TapGuard): void => {
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
      agent: conn.agent ?? agent,
    });
    if (conn.agent !== null) {
      up.once('socket', (socket: Socket) => {
        if (watchedUpstream.has(socket)) return;
        watchedUpstream.add(socket);
        socket.once('close', () => {
          conn.upstreamClosed = true;
          mirrorUpstreamClose(conn);
        });
      });
    }
    inFlight.add(up);
    up.once('close', () => inFlight.delete(up));
    // Bounded: upstream silence (connecting, before headers, or between chunks) ends the request.
    up.setTimeout(upstreamTimeoutMs, () => up.destroy(Object.assign(new Error(`upstream sent nothing for ${upstreamTimeoutMs} ms`), { code: 'HOP_UPSTREAM_TIMEOUT' })));
    up.on('error', (error: Error & { code?: string }) => {
      stats.upstream_errors += 1;
      if (res.headersSent || res.destroyed) {
        tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
        res.destroy();
        return;
      }
      const status = error.code === 'HOP_UPSTREAM_TIMEOUT' ? 504 : 502;
      const headers = { 'content-type': 'application/json' };
      res.writeHead(status, headers);
      tap.response(status, headers, true);
      res.end(JSON.stringify({ error: { type: 'upstream_error', message: `roundload hop: upstream ${upstream.origin}: ${error.message}` } }));
      tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
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
      tap.response(ur.statusCode ?? 502, ur.headers, false);
      // The first fault that filters bodies acts on this one (a held body is never cut too).
      const filter = modules.reduce<ReturnType<NonNullable<HopFaultModule['body']>>>((found, m) => found ?? m.body?.(conn, nth, streaming, tools) ?? null, null);
      const write = (chunk: Buffer): void => {
        const flowing = res.write(chunk);
        // Seen after it was written: observing never delays a byte.
        tap.data(chunk);
        if (!flowing) {
          // Flow control, not buffering: wait for the client to take what was written.
          ur.pause();
          res.once('drain', () => ur.resume());
        }
      };
      ur.on('data', (chunk: Buffer) => (filter === null ? write(chunk) : filter.data(chunk, write)));
      ur.on('end', () => {
        // A filter may keep the response open: the client waits for the rest forever (its watchdog decides).
        if (filter !== null && !filter.end(write)) return;
        res.end();
        tap.end({ kind: 'complete' });
      });
      ur.on('error', (error: Error & { code?: string }) => {
        res.destroy();
        tap.end({ kind: 'upstream_error', message: error.message, code: error.code ?? null });
      });
    });
    req.pipe(up);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const conn = conns.get(req.socket) ?? adopt(req.socket);
    const atMs = performance.now();
    conn.served += 1;
    const nth = conn.served;
    stats.requests += 1;
    requestSeq += 1;
    if (conn.idleTimer !== null) {
      clearTimeout(conn.idleTimer);
      conn.idleTimer = null;
    }
    const idleMs = conn.active > 0 || conn.lastEndMs === null ? null : atMs - conn.lastEndMs;
    conn.active += 1;
    const tap = guardTap(opts.tap?.({ connection: conn.id, nth, idleMs, atMs, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }) ?? null);
    if (tap.observed) req.on('data', (chunk: Buffer) => tap.requestData(chunk));
    res.once('close', () => {
      conn.active -= 1;
      conn.lastEndMs = performance.now();
      tap.end(closed ? { kind: 'closed' } : { kind: 'client_gone' });
      if (conn.active === 0) {
        for (const m of modules) m.onIdle?.(conn, tools);
        mirrorUpstreamClose(conn);
      }
    });
    let delayMs: number | null = null;
    for (const m of modules) {
      const verdict = m.onRequest?.({ conn, nth, seq: requestSeq, req, tap }, tools);
      if (verdict === undefined || verdict.action === 'forward') continue;
      if (verdict.action === 'taken') return;
      delayMs = verdict.delayMs;
      break;
    }
    if (delayMs !== null) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        forward(req, res, conn, nth, tap);
      }, delayMs);
      timers.add(timer);
      res.once('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    forward(req, res, conn, nth, tap);
  };

  const keepAliveTimeoutMs = opts.keepAliveTimeoutMs ?? 60_000;
  const server = certs === null ? http.createServer(onRequest) : https.createServer({ key: certs.key, cert: certs.cert, ALPNProtocols: ['http/1.1'] }, onRequest);
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
    // Without TLS the TCP socket is the one requests arrive on.
    if (certs === null) adopt(raw);
  });
  server.on('secureConnection', (tls: Socket) => {
    adopt(tls);
  });
  // A client that fails the handshake (it does not trust the CA, say) is its own business: never a crash.
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new ServerStartError('the hop', `${host.includes(':') ? `[${host}]` : host}:${opts.port ?? 0}`, { cause: error })));
    server.listen(opts.port ?? 0, host, () => resolve());
  }).catch((error: unknown) => {
    agent.destroy();
    if (ownsCertDir && certDir !== null) rmSync(certDir, { recursive: true, force: true });
    throw error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? 0);
  let closing: Promise<void> | null = null;
  return {
    url: `${certs === null ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    host,
    port,
    caFile: certs?.caFile ?? null,
    certFile: certs?.certFile ?? null,
    keyFile: certs?.keyFile ?? null,
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
          if (ownsCertDir && certDir !== null) rmSync(certDir, { recursive: true, force: true });
          done();
        };
        const bound = setTimeout(finish, CLOSE_BOUND_MS);
        bound.unref();
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const conn of live) {
          if (conn.idleTimer !== null) clearTimeout(conn.idleTimer);
          conn.agent?.destroy();
        }
        for (const up of inFlight) up.destroy();
        agent.destroy();
        server.close(() => finish());
        for (const raw of rawSockets) raw.destroy();
        server.closeAllConnections();
      })),
  };
}
