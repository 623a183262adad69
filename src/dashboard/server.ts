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
  /** Applied to the page and to every message before it is sent (the run's secret scrubber: events carry
   * error messages and URLs a server or proxy may have echoed a header into). @default as is */
  scrub?: (text: string) => string;
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

/** How the run ended: its written report (null when none was written) and its status. */
interface RunEnd {
  path: string | null;
  status: string;
}

/** Starts the dashboard server. @throws ServerStartError when it cannot listen. */
export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const live = new LiveDashboard(o);
  const url = await live.listen();
  return {
    url,
    onEvent: (event) => live.onEvent(event),
    finish: (report) => live.finish(report),
    close: () => live.close(),
  };
}

/** The server and what it serves: the run's state folded from its events, the watching pages, how the run ended. */
class LiveDashboard {
  readonly server: Server;
  readonly #o: DashboardOptions;
  readonly #tickMs: number;
  readonly #lingerMs: number;
  readonly #maxQueued: number;
  readonly #state: DashboardState;
  readonly #page: string;
  readonly #clients = new Set<SseClient>();
  readonly #scrub: (text: string) => string;
  #ended: RunEnd | null = null;
  #reportsServed = 0;
  #onReportServed: (() => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #closed: Promise<void> | null = null;
  #stopLinger: (() => void) | null = null;

  constructor(o: DashboardOptions) {
    const now = o.now ?? (() => performance.now());
    this.#o = o;
    this.#tickMs = o.tickMs ?? 1000;
    this.#lingerMs = o.lingerMs ?? 10_000;
    this.#maxQueued = o.maxQueued ?? 16;
    this.#scrub = o.scrub ?? ((text) => text);
    this.#state = new DashboardState(o.plan, now);
    this.#page = this.#scrub(dashboardPage(o.plan, o.assets ?? loadChartAssets()));
    this.server = createServer((req, res) => this.#handle(req, res));
    // A page that never reads its stream is bounded by its queue; one that never sends its request is cut off.
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 10_000;
  }

  /** Listens, then starts the snapshot ticks. Resolves to the dashboard's URL. @throws ServerStartError */
  async listen(): Promise<string> {
    const o = this.#o;
    const server = this.server;
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
    this.#timer = setInterval(() => {
      // Nothing after the end message: the pages are leaving for the report.
      if (this.#clients.size === 0 || this.#ended !== null) return;
      const message = this.#sse('snapshot', this.#state.snapshot());
      for (const c of this.#clients) c.send(message);
    }, this.#tickMs);
    this.#timer.unref();
    return url;
  }

  onEvent(event: RunEvent): void {
    try {
      const hang = this.#state.add(event);
      if (hang !== null && this.#clients.size > 0 && this.#ended === null) {
        const message = this.#sse('hang', hang);
        for (const c of this.#clients) c.send(message);
      }
    } catch {
      // The dashboard must never break the run it watches.
    }
  }

  async finish(report: RunEnd): Promise<void> {
    if (this.#ended !== null) return this.close();
    this.#ended = report;
    const watching = this.#clients.size;
    // The last state (status finished), then where the report is.
    const last = this.#sse('snapshot', this.#state.snapshot());
    const end = this.#sse('end', endMessage(report));
    for (const c of this.#clients) {
      c.send(last);
      c.send(end);
    }
    if (report.path !== null && watching > 0) await this.#linger(watching);
    await this.close();
  }

  close(): Promise<void> {
    this.#stopLinger?.();
    this.#closed ??= new Promise<void>((resolve) => {
      clearInterval(this.#timer);
      for (const c of this.#clients) c.end();
      this.#clients.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.#closed;
  }

  /** Resolves once `watching` pages loaded the report, or `lingerMs` passed, or close() was called. */
  #linger(watching: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(done, this.#lingerMs);
      t.unref();
      this.#stopLinger = done;
      this.#onReportServed = () => {
        if (this.#reportsServed >= watching) done();
      };
      this.#onReportServed();
    });
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    // DNS rebinding: a page of another site whose name now resolves to 127.0.0.1 sends its own name as Host.
    // Only loopback names, and the address the dashboard was bound to, are answered.
    const host = req.headers.host;
    if (host !== undefined && !isLoopbackHost(hostHeaderName(host)) && hostHeaderName(host) !== this.#o.host.toLowerCase()) {
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
      this.#watch(res);
      return;
    }
    if (path === '/' || path === '/index.html' || path === '/report.html') {
      this.#servePage(path, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end('not found\n');
  }

  /** `/events`: the page's stream, or the end message alone once the run is over. */
  #watch(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive', ...SECURITY_HEADERS });
    // A retry hint, and the state right away: a page opened mid-run is complete at once.
    res.write('retry: 1000\n\n');
    const client = new SseClient(res, this.#maxQueued);
    if (this.#ended !== null) {
      client.send(this.#sse('end', endMessage(this.#ended)));
      client.end();
      return;
    }
    this.#clients.add(client);
    res.on('close', () => this.#clients.delete(client));
    client.send(this.#sse('snapshot', this.#state.snapshot()));
  }

  /** One server-sent event, scrubbed (a JSON line: what the scrubber puts in, `***`, needs no escaping). */
  #sse(event: string, data: unknown): string {
    return this.#scrub(sse(event, data));
  }

  /** `/`, `/index.html`: the live page until the report is written, then the report; `/report.html` the report. */
  #servePage(path: string, res: ServerResponse): void {
    if (this.#ended !== null && this.#ended.path !== null) {
      this.#serveReport(this.#ended.path, res);
      return;
    }
    if (path === '/report.html') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end('the report is written when the run ends\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(this.#page);
  }

  #serveReport(file: string, res: ServerResponse): void {
    readFile(file)
      .then((body) => {
        res.on('finish', () => {
          this.#reportsServed += 1;
          this.#onReportServed?.();
        });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(body);
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end(`report.html cannot be read: ${error instanceof Error ? error.message : String(error)}\n`);
      });
  }
}

function endMessage(report: RunEnd): { status: string; report: string | null } {
  return { status: report.status, report: report.path === null ? null : '/report.html' };
}
