// The PD router, as sgl-router routes: admission (token bucket, queue, 429), then every chat request goes to a
// healthy prefill and a healthy decode server at once with the same `bootstrap_room`, the decode server's
// answer streams back, the prefill's is drained. Its errors, log lines and `sgl_router_*` series are the real
// router's. Client-facing faults (`engine.faults`) act here, where clients connect.
import { Agent, createServer, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/index.js';
import type { ChatResponse, FaultInjector, FaultSubject } from './faults.js';
import { TokenBucketLimiter, type Admission } from './limiter.js';
import type { ServerLog } from './logs.js';
import { HealthChecker, type WorkerHealth } from './router-health.js';
import type { RouterMetrics } from './router-metrics.js';
import type { EngineTraces } from './tracing.js';
import { applyKeepAlive, FAULT_HEADER, readBody } from './worker.js';
import { isObject } from '../util/index.js';

const CHAT_ROUTE = '/v1/chat/completions';
const TARGET = 'sgl_router::routers::http::pd_router';
const MIDDLEWARE = 'sgl_router::middleware';
/** Headers a proxy never forwards (hop-by-hop) or sets itself. */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection', 'te', 'trailer']);
/** Rooms are 48-bit (the real router draws them from 63 bits; JSON numbers past 2^53 would lose digits here). */
const MAX_ROOM = 2 ** 48 - 1;

export interface RouterOptions {
  readonly settings: EngineSettings;
  readonly log: ServerLog;
  readonly metrics: RouterMetrics;
  readonly faults: FaultInjector;
  readonly prefillUrl: string;
  readonly decodeUrl: string;
  /** Where the decode side bootstraps with the prefill (`bootstrap_host`, `bootstrap_port`). */
  readonly bootstrapHost: string;
  readonly bootstrapPort: number;
  /** The deployment's request traces (`--enable-trace`); null or absent: off. */
  readonly traces?: EngineTraces | null;
}

export interface RouterServer {
  readonly server: Server;
  readonly health: HealthChecker;
  /** Stops health checks, the admission queue and upstream requests. */
  close(): void;
}

const NO_SUBJECT: FaultSubject = { stream: false, messages: [] };

/** What a fault needs to select a request (read only when some fault selects requests: a big body parses slowly). */
function subjectOf(raw: string): FaultSubject {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return NO_SUBJECT;
  }
  if (!isObject(json)) return NO_SUBJECT;
  const messages = Array.isArray(json['messages']) ? (json['messages'] as unknown[]) : [];
  return { stream: json['stream'] === true, messages: messages.map((m) => ({ role: isObject(m) ? String(m['role']) : '' })) };
}

/** The body with the bootstrap fields added, written into the text (no parse and re-serialise of a long
 * conversation); null when the body is not a JSON object. */
function withBootstrap(raw: string, fields: string): string | null {
  const start = raw.indexOf('{');
  const end = raw.lastIndexOf('}');
  if (start < 0 || end < start || raw.slice(0, start).trim() !== '' || raw.slice(end + 1).trim() !== '') return null;
  const inner = raw.slice(start + 1, end);
  return inner.trim() === '' ? `{${fields}}` : `{${inner},${fields}}`;
}

function text(res: ServerResponse | ChatResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

function forwardHeaders(headers: IncomingHttpHeaders, body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (HOP_HEADERS.has(name) || name === FAULT_HEADER || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['content-length'] = String(Buffer.byteLength(body));
  return out;
}

/** One upstream request; its response (headers received) or the error that ended it first. */
function send(agent: Agent, url: string, path: string, method: string, headers: Record<string, string>, body: string | null): { req: ClientRequest; response: Promise<IncomingMessage> } {
  const req = httpRequest(`${url}${path}`, { method, headers, agent });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  // Errors after the response started are the response's to report.
  response.catch(() => {});
  req.end(body ?? undefined);
  return { req, response };
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new Error('connection closed before the response ended'));
    });
  });
}

/** One chat request under way at its workers. `end` releases it, once: the answer relayed, the client gone,
 * the request timed out or the router closed; `finished` says whether that happened. */
interface Flight {
  readonly finished: boolean;
  end(): void;
}

/** The router's state (admission, worker health, the upstream pool, the requests under way) and one method per
 * route, read in the order a request meets them. */
class PdRouter implements RouterServer {
  readonly server: Server;
  readonly health: HealthChecker;
  readonly #opts: RouterOptions;
  readonly #settings: EngineSettings['router'];
  readonly #log: ServerLog;
  readonly #metrics: RouterMetrics;
  readonly #faults: FaultInjector;
  readonly #limiter: TokenBucketLimiter;
  readonly #agent: Agent;
  /** How to abort each chat request under way (close() aborts them all). */
  readonly #open = new Set<() => void>();

  constructor(opts: RouterOptions) {
    const { settings, log, metrics, faults } = opts;
    const r = settings.router;
    this.#opts = opts;
    this.#settings = r;
    this.#log = log;
    this.#metrics = metrics;
    this.#faults = faults;
    this.#limiter = new TokenBucketLimiter(r.max_concurrent_requests, r.queue_size, r.queue_timeout_s * 1000);
    this.health = new HealthChecker(
      [
        { url: opts.prefillUrl, role: 'prefill' },
        { url: opts.decodeUrl, role: 'decode' },
      ],
      r,
      log,
      metrics,
    );
    // Idle upstream sockets are dropped a second before the workers' own keep-alive would close them, so the
    // router never reuses a socket a worker is closing (hyper's pool would retry such a request; Node's does not).
    this.#agent = new Agent({ keepAlive: true, timeout: Math.max(500, settings.keep_alive_s * 1000 - 1000) });
    this.server = createServer((req, res) => this.#route(req, res));
    applyKeepAlive(this.server, settings.keep_alive_s);
    this.health.start();
  }

  close(): void {
    this.health.stop();
    this.#limiter.close();
    for (const abort of [...this.#open]) abort();
    this.#agent.destroy();
  }

  #route(req: IncomingMessage, res: ServerResponse): void {
    if (this.#faults.arrive(req, res)) return;
    // Like the workers: no Keep-Alive hint (see docs/engine.md on the router's idle timeout).
    if (!res.hasHeader('connection') && !/close/i.test(req.headers.connection ?? '')) res.setHeader('connection', 'keep-alive');
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const fail = (error: unknown): void => {
      this.#log.router('ERROR', TARGET, `Request failed: ${(error as Error).message}`);
      if (!res.headersSent) text(res, 500, 'Internal Server Error');
      else res.destroy();
    };
    if (path === CHAT_ROUTE && method === 'POST') this.#chat(req, res).catch(fail);
    else if ((path === '/v1/models' || path.startsWith('/v1/models/')) && method === 'GET') this.#forward(req.url ?? path, 'GET', null, res).catch(fail);
    // sgl-model-gateway's /tokenize: answered by a worker, which has the tokenizer.
    else if ((path === '/tokenize' || path === '/v1/tokenize') && method === 'POST')
      readAll(req)
        .then((body) => this.#forward(req.url ?? path, 'POST', body.toString('utf8'), res, String(req.headers['content-type'] ?? 'application/json')))
        .catch(fail);
    else if (path === '/health' && method === 'GET') this.#healthReport(res);
    else if (path === '/health_generate' && method === 'GET') this.#healthGenerate(res).catch(fail);
    else {
      res.writeHead(404, { 'content-length': '0' });
      res.end();
    }
  }

  async #chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedMs = performance.now();
    // Its trace on the router, parented on the client's traceparent; the workers' spans are its children.
    const trace = this.#opts.traces?.start('router', req.headers.traceparent, { 'http.route': CHAT_ROUTE }) ?? null;
    trace?.stage('router_wait');
    res.once('close', () => trace?.end(res.writableFinished && res.statusCode < 400 ? null : res.writableFinished ? `HTTP ${res.statusCode}` : 'the connection closed before the answer ended'));
    this.#metrics.inc('sgl_router_requests_total', { route: CHAT_ROUTE });
    res.once('close', () => this.#metrics.observe('sgl_router_request_duration_seconds', { route: CHAT_ROUTE }, (performance.now() - startedMs) / 1000));
    const admission = await this.#limiter.acquire();
    if (admission !== 'admitted') {
      if (!res.destroyed) this.#refuse(res, admission);
      return;
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#limiter.release();
    };
    if (res.destroyed) return release();
    res.once('close', release);
    const raw = await readBody(req, () => {
      res.setHeader('connection', 'close');
      text(res, 413, 'Failed to buffer the request body: length limit exceeded');
    });
    if (raw === null || res.destroyed) return;

    const faults = this.#faults;
    const decision = faults.respond(req, res, faults.selectsRequests ? subjectOf(raw) : NO_SUBJECT, `router-${randomInt(MAX_ROOM)}`);
    const out = decision.out;
    if (out === null) return;

    const prefill = this.health.pick('prefill');
    const decode = this.health.pick('decode');
    if (prefill === null || decode === null) {
      const which = prefill === null ? 'prefill' : 'decode';
      const why = `No ${which} workers available. Please check if ${which} servers are configured and healthy.`;
      this.#log.router('ERROR', TARGET, `Failed to select PD pair error=${why}`);
      this.#metrics.inc('sgl_router_pd_errors_total', { error_type: 'server_selection' });
      text(out, 503, `No available servers: ${why}`);
      return;
    }
    this.#log.router('INFO', TARGET, `PD routing decision route=${CHAT_ROUTE} prefill_url=${prefill.url} decode_url=${decode.url}`);
    trace?.stage('router_dispatch');
    await this.#dispatch(req, res, out, raw, decision.pd, prefill, decode, startedMs, trace?.traceparent ?? null);
  }

  #refuse(res: ServerResponse, admission: Admission): void {
    if (admission === 'queue_timeout') {
      this.#log.router('WARN', MIDDLEWARE, 'Request timed out in queue, returning 408');
      this.#metrics.inc('sgl_router_request_errors_total', { route: CHAT_ROUTE, error_type: 'queue_timeout' });
      res.writeHead(408, { 'content-length': '0' });
    } else if (admission === 'queue_full') {
      this.#log.router('WARN', MIDDLEWARE, 'Request queue is full, returning 429');
      this.#metrics.inc('sgl_router_request_errors_total', { route: CHAT_ROUTE, error_type: 'rate_limited' });
      res.writeHead(429, { 'content-length': '0' });
    } else if (admission === 'queue_disabled') {
      this.#log.router('WARN', MIDDLEWARE, 'No tokens available and queuing is disabled, returning 429');
      this.#metrics.inc('sgl_router_request_errors_total', { route: CHAT_ROUTE, error_type: 'rate_limited' });
      res.writeHead(429, { 'content-length': '0' });
    } else {
      res.writeHead(503, { 'content-length': '0' });
    }
    res.end();
  }

  /** Sends the request to both workers, waits for both to answer (or fail), then relays the decode server's answer. */
  async #dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    out: ChatResponse,
    raw: string,
    pd: unknown,
    prefill: WorkerHealth,
    decode: WorkerHealth,
    startedMs: number,
    traceparent: string | null,
  ): Promise<void> {
    // A body that is not a JSON object goes to the decode server alone, whose 400 the client then sees.
    const injected = withBootstrap(raw, `"bootstrap_host":${JSON.stringify(this.#opts.bootstrapHost)},"bootstrap_port":${this.#opts.bootstrapPort},"bootstrap_room":${randomInt(MAX_ROOM)}`);
    const body = injected ?? raw;
    const headers = forwardHeaders(req.headers, body);
    if (pd !== null) headers[FAULT_HEADER] = JSON.stringify(pd);
    if (traceparent !== null) headers.traceparent = traceparent;
    const toDecode = send(this.#agent, decode.url, CHAT_ROUTE, 'POST', headers, body);
    const toPrefill = injected === null ? null : send(this.#agent, prefill.url, CHAT_ROUTE, 'POST', headers, body);
    const running = [decode.url, ...(toPrefill === null ? [] : [prefill.url])];
    const flight = this.#track(res, decode, running, [toDecode.req, ...(toPrefill === null ? [] : [toPrefill.req])]);

    const [prefillResult, decodeResult] = await Promise.allSettled([toPrefill?.response ?? Promise.resolve(null), toDecode.response]);
    if (flight.finished) return;
    this.#metrics.observe('sgl_router_pd_request_duration_seconds', { route: CHAT_ROUTE }, (performance.now() - startedMs) / 1000);
    this.#metrics.inc('sgl_router_pd_requests_total', { route: CHAT_ROUTE });
    if (toPrefill !== null) this.#metrics.inc('sgl_router_pd_prefill_requests_total', { worker: prefill.url });
    this.#metrics.inc('sgl_router_pd_decode_requests_total', { worker: decode.url });
    this.#settlePrefill(prefill, prefillResult, decodeResult);
    if (decodeResult.status === 'rejected') {
      const message = String((decodeResult.reason as Error).message);
      this.#log.router('ERROR', TARGET, `Decode request failed decode_url=${decode.url} error=${message}`);
      this.#metrics.inc('sgl_router_pd_decode_errors_total', { worker: decode.url });
      text(out, 502, `Decode server error: ${message}`);
      flight.end();
      return;
    }
    const d = decodeResult.value;
    if ((d.statusCode ?? 502) >= 300) return this.#relayError(out, decode, d, flight);
    if (!String(d.headers['content-type'] ?? '').startsWith('text/event-stream')) return this.#relayWhole(res, out, decode, d, flight);
    this.#relayStream(res, out, decode, d, flight);
  }

  /** Counts the request as running at its workers until it ends, and ends it when the client leaves, at the
   * request timeout or at close(). */
  #track(res: ServerResponse, decode: WorkerHealth, running: readonly string[], upstream: readonly ClientRequest[]): Flight {
    const metrics = this.#metrics;
    for (const w of running) metrics.add('sgl_router_running_requests', { worker: w }, 1);
    let finished = false;
    const cleanup = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timeout);
      this.#open.delete(abort);
      for (const w of running) metrics.add('sgl_router_running_requests', { worker: w }, -1);
      for (const req of upstream) req.destroy();
    };
    const abort = (): void => {
      cleanup();
      res.destroy();
    };
    this.#open.add(abort);
    const timeout = setTimeout(() => {
      this.#log.router('ERROR', TARGET, `Request to ${decode.url} timed out after ${this.#settings.request_timeout_s}s`);
      metrics.inc('sgl_router_request_errors_total', { route: CHAT_ROUTE, error_type: 'timeout' });
      abort();
    }, this.#settings.request_timeout_s * 1000);
    timeout.unref();
    // The client leaving ends both upstream requests: the workers see their sockets close and cancel.
    res.once('close', cleanup);
    return {
      get finished() {
        return finished;
      },
      end: cleanup,
    };
  }

  /** Counts the prefill's failure; its answer, when it came, is drained. */
  #settlePrefill(prefill: WorkerHealth, prefillResult: PromiseSettledResult<IncomingMessage | null>, decodeResult: PromiseSettledResult<IncomingMessage>): void {
    if (prefillResult.status === 'rejected') {
      this.#log.router('ERROR', TARGET, `Prefill server failed (non-critical) prefill_url=${prefill.url} error=${String((prefillResult.reason as Error).message)}`);
      this.#metrics.inc('sgl_router_pd_prefill_errors_total', { worker: prefill.url });
    } else if (prefillResult.value !== null) {
      const p = prefillResult.value;
      if ((p.statusCode ?? 0) >= 300 && decodeResult.status === 'fulfilled' && (decodeResult.value.statusCode ?? 0) < 300) {
        this.#metrics.inc('sgl_router_pd_prefill_errors_total', { worker: prefill.url });
      }
      // The prefill's own answer only says it is done: drained, never shown.
      p.on('error', () => {});
      p.resume();
    }
  }

  /** The decode server's error status and body, as it sent them. */
  async #relayError(out: ChatResponse, decode: WorkerHealth, d: IncomingMessage, flight: Flight): Promise<void> {
    const status = d.statusCode ?? 502;
    this.#metrics.inc('sgl_router_pd_decode_errors_total', { worker: decode.url });
    this.#log.router('ERROR', TARGET, `Decode server returned error status decode_url=${decode.url} status=${status} ${d.statusMessage ?? ''}`.trimEnd());
    const errorBody = await readAll(d).catch(() => null);
    if (errorBody === null) text(out, status, 'Decode server error: connection closed');
    else {
      out.writeHead(status, { 'content-type': String(d.headers['content-type'] ?? 'application/json') });
      out.end(errorBody.toString('utf8'));
    }
    flight.end();
  }

  /** A non-streamed answer, read whole and sent on. */
  async #relayWhole(res: ServerResponse, out: ChatResponse, decode: WorkerHealth, d: IncomingMessage, flight: Flight): Promise<void> {
    const requestId = d.headers['x-engine-request-id'];
    const whole = await readAll(d).catch(() => null);
    if (whole === null) return this.#streamError(decode, res, flight);
    out.writeHead(d.statusCode ?? 502, { 'content-type': String(d.headers['content-type'] ?? 'application/json'), ...(requestId === undefined ? {} : { 'x-engine-request-id': String(requestId) }) });
    out.end(whole.toString('utf8'));
    flight.end();
  }

  #relayStream(res: ServerResponse, out: ChatResponse, decode: WorkerHealth, d: IncomingMessage, flight: Flight): void {
    const requestId = d.headers['x-engine-request-id'];
    out.writeHead(200, { 'content-type': 'text/event-stream', ...(requestId === undefined ? {} : { 'x-engine-request-id': String(requestId) }) });
    out.flushHeaders();
    // Whole SSE blocks only, so a stream fault counts events as the client will.
    const decoder = new TextDecoder();
    let buffer = '';
    d.on('data', (piece: Buffer) => {
      buffer += decoder.decode(piece, { stream: true });
      const cut = buffer.lastIndexOf('\n\n');
      if (cut < 0) return;
      out.write(buffer.slice(0, cut + 2));
      buffer = buffer.slice(cut + 2);
    });
    d.on('error', () => {});
    d.on('close', () => {
      if (flight.finished) return;
      if (!d.complete) return this.#streamError(decode, res, flight);
      out.end(buffer);
      flight.end();
    });
  }

  #streamError(decode: WorkerHealth, res: ServerResponse, flight: Flight): void {
    this.#log.router('ERROR', TARGET, `Stream error from decode server ${decode.url}: error decoding response body`);
    this.#metrics.inc('sgl_router_pd_stream_errors_total', { worker: decode.url });
    flight.end();
    // The client sees its stream cut, as hyper aborts a body whose source failed.
    res.destroy();
  }

  async #forward(path: string, method: 'GET' | 'POST', body: string | null, res: ServerResponse, contentType = 'application/json'): Promise<void> {
    const first = this.health.workers.find((w) => w.role === 'prefill')!;
    const { req, response } = send(this.#agent, first.url, path, method, body === null ? {} : { 'content-type': contentType }, body);
    try {
      const upstream = await response;
      const body = await readAll(upstream);
      res.writeHead(upstream.statusCode ?? 502, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
      res.end(body);
    } catch (error) {
      text(res, 500, `Failed to send request: ${(error as Error).message}`);
    } finally {
      req.destroy();
    }
  }

  #healthReport(res: ServerResponse): void {
    const bad = this.health.workers.filter((w) => !w.healthy).map((w) => w.url);
    if (bad.length === 0) text(res, 200, 'All servers healthy');
    else text(res, 503, `Unhealthy servers: [${bad.map((u) => JSON.stringify(u)).join(', ')}]`);
  }

  async #healthGenerate(res: ServerResponse): Promise<void> {
    const prefill = this.health.pick('prefill');
    const decode = this.health.pick('decode');
    if (prefill === null || decode === null) return text(res, 503, 'No healthy worker pair available');
    const errors: string[] = [];
    await Promise.all(
      [prefill, decode].map(async (w) => {
        const { req, response } = send(this.#agent, w.url, '/health_generate', 'GET', {}, null);
        try {
          const upstream = await response;
          upstream.resume();
          if ((upstream.statusCode ?? 0) >= 300) errors.push(`${w.role === 'prefill' ? 'Prefill' : 'Decode'} ${w.url} returned status ${upstream.statusCode}`);
        } catch (error) {
          errors.push(`${w.role === 'prefill' ? 'Prefill' : 'Decode'} ${w.url} error: ${(error as Error).message}`);
        } finally {
          req.destroy();
        }
      }),
    );
    if (errors.length === 0) text(res, 200, `Health generate passed on selected pair: prefill=${prefill.url}, decode=${decode.url}`);
    else text(res, 503, `Health generate failed: [${errors.map((e) => JSON.stringify(e)).join(', ')}]`);
  }
}

export function createRouterServer(opts: RouterOptions): RouterServer {
  return new PdRouter(opts);
}

/** The router's Prometheus listener (its own port, 29000 by default on a real router). */
export function createRouterMetricsServer(metrics: RouterMetrics): Server {
  return createServer((req, res) => {
    if ((req.method ?? 'GET') !== 'GET') {
      res.writeHead(405, { 'content-length': '0' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(metrics.render());
  });
}
