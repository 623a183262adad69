// The live dashboard's HTTP server: `/` the page, `/events` the server-sent events (a snapshot of the
// dashboard state every tick while someone watches, each hang the moment it is announced), and once the run
// is over `/` and `/report.html` the written report, to which open pages switch. A slow or gone browser never
// slows the run: each client has a bounded queue that drops its oldest messages (and says how many), and
// writes wait for the socket to drain. The server closes a bounded time after the run.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { loadChartAssets, type ChartAssets } from '../report/index.js';
import type { RunEvent } from '../types/index.js';
import { ServerStartError } from '../errors.js';
import { hostHeaderName, isLoopbackHost } from '../util/index.js';
import type { DashboardAddress } from './address.js';
import { SseClient, sse } from './sse.js';
import { dashboardPage } from './page.js';
import { DashboardState, type DashboardPlan } from './state.js';

export interface DashboardOptions extends DashboardAddress {
  plan: DashboardPlan;
  /** How often watching pages get a snapshot. @default 1000 */
  tickMs?: number;
  /** After the run, how long open pages get to load the report before the server closes. @default 10000 */
  lingerMs?: number;
  /** Messages a client may have waiting before the oldest are dropped. @default 16 */
  maxQueued?: number;
  assets?: ChartAssets;
  /** Clock for run time (tests). @default performance.now */
  now?: () => number;
}

export interface Dashboard {
  /** `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** Subscribe the run's events here. Never blocks and never throws. */
  onEvent(event: RunEvent): void;
  /**
   * The run is over: open pages switch to the written report (`path`; null when none was written). Resolves
   * once every page that was open has loaded it, or `lingerMs` passed, and the server is closed.
   */
  finish(report: { path: string | null; status: string }): Promise<void>;
  /** Closes at once (a failed run). */
  close(): Promise<void>;
}

const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' };

/** Starts the dashboard server. @throws ServerStartError when it cannot listen. */
export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const now = o.now ?? (() => performance.now());
  const tickMs = o.tickMs ?? 1000;
  const lingerMs = o.lingerMs ?? 10_000;
  const maxQueued = o.maxQueued ?? 16;
  const state = new DashboardState(o.plan, now);
  const page = dashboardPage(o.plan, o.assets ?? loadChartAssets());
  const clients = new Set<SseClient>();
  let ended: { path: string | null; status: string } | null = null;
  let reportsServed = 0;
  let onReportServed: (() => void) | null = null;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    // DNS rebinding: a page of another site whose name now resolves to 127.0.0.1 sends its own name as Host.
    // Only loopback names, and the address the dashboard was bound to, are answered.
    const host = req.headers.host;
    if (host !== undefined && !isLoopbackHost(hostHeaderName(host)) && hostHeaderName(host) !== o.host.toLowerCase()) {
      res
        .writeHead(403, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS })
        .end('this dashboard answers to loopback names only (127.0.0.1, localhost, [::1]) or the address it was bound to\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET', ...SECURITY_HEADERS }).end();
      return;
    }
    if (path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive', ...SECURITY_HEADERS });
      // A retry hint, and the state right away: a page opened mid-run is complete at once.
      res.write('retry: 1000\n\n');
      const client = new SseClient(res, maxQueued);
      if (ended !== null) {
        client.send(sse('end', endMessage(ended)));
        client.end();
        return;
      }
      clients.add(client);
      res.on('close', () => clients.delete(client));
      client.send(sse('snapshot', state.snapshot()));
      return;
    }
    if (path === '/' || path === '/index.html' || path === '/report.html') {
      if (ended !== null && ended.path !== null) {
        serveReport(ended.path, res);
        return;
      }
      if (path === '/report.html') {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end('the report is written when the run ends\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(page);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end('not found\n');
  };

  const serveReport = (file: string, res: ServerResponse): void => {
    readFile(file)
      .then((body) => {
        res.on('finish', () => {
          reportsServed += 1;
          onReportServed?.();
        });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(body);
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end(`report.html cannot be read: ${error instanceof Error ? error.message : String(error)}\n`);
      });
  };

  const server: Server = createServer(handle);
  // A page that never reads its stream is bounded by its queue; one that never sends its request is cut off.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new ServerStartError('the live dashboard', `${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`, { cause: error, context: { host: o.host, port: o.port } }));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  const url = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}/`;

  // Snapshots only while someone watches: an unwatched dashboard costs the run its event folding alone.
  const timer = setInterval(() => {
    // Nothing after the end message: the pages are leaving for the report.
    if (clients.size === 0 || ended !== null) return;
    const message = sse('snapshot', state.snapshot());
    for (const c of clients) c.send(message);
  }, tickMs);
  timer.unref();

  let closed: Promise<void> | null = null;
  let stopLinger: (() => void) | null = null;
  const close = (): Promise<void> => {
    stopLinger?.();
    closed ??= new Promise<void>((resolve) => {
      clearInterval(timer);
      for (const c of clients) c.end();
      clients.clear();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };

  return {
    url,
    onEvent(event) {
      try {
        const hang = state.add(event);
        if (hang !== null && clients.size > 0 && ended === null) {
          const message = sse('hang', hang);
          for (const c of clients) c.send(message);
        }
      } catch {
        // The dashboard must never break the run it watches.
      }
    },
    async finish(report) {
      if (ended !== null) return close();
      ended = report;
      const watching = clients.size;
      // The last state (status finished), then where the report is.
      const last = sse('snapshot', state.snapshot());
      const end = sse('end', endMessage(report));
      for (const c of clients) {
        c.send(last);
        c.send(end);
      }
      if (report.path !== null && watching > 0) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(done, lingerMs);
          t.unref();
          stopLinger = done;
          onReportServed = () => {
            if (reportsServed >= watching) done();
          };
          onReportServed();
        });
      }
      await close();
    },
    close,
  };
}

function endMessage(report: { path: string | null; status: string }): { status: string; report: string | null } {
  return { status: report.status, report: report.path === null ? null : '/report.html' };
}
