// The client's own Prometheus endpoint (`--metrics-port`, `client_metrics:`): what the agents see —
// requests in flight, completed by status, hangs, errors by class, TTFT and e2e histograms — scrapeable
// during the run, so a soak's client view sits beside the engine's gauges in Grafana. The only importer
// of prom-client; it only subscribes to run events.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ServerStartError } from '../errors.js';
import type { RunContext, RunService } from './service.js';

/** Latency buckets in seconds: from a fast first token to a request at the total deadline. */
const LATENCY_BUCKETS_S = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
/** A scrape that takes longer is answered 503 rather than left hanging. */
const SCRAPE_TIMEOUT_MS = 2000;
const CLOSE_TIMEOUT_MS = 1000;

export class ClientMetricsService implements RunService {
  readonly name = 'client metrics endpoint';
  readonly #host: string;
  readonly #port: number;
  #server: Server | null = null;
  /** `http://host:port/metrics` once listening. */
  url: string | null = null;

  constructor(options: { host: string; port: number }) {
    this.#host = options.host;
    this.#port = options.port;
  }

  async start(ctx: RunContext): Promise<void> {
    const registry = new Registry();
    registry.setDefaultLabels({ workload: ctx.workload.name });
    new Gauge({
      name: 'roundload_requests_in_flight',
      help: 'Requests sent and not yet at their terminal state',
      registers: [registry],
      collect() {
        this.set(ctx.inFlight());
      },
    });
    const completed = new Counter({
      name: 'roundload_requests_total',
      help: 'Requests at their terminal state, by phase and status (ok, error, hang)',
      labelNames: ['phase', 'status'],
      registers: [registry],
    });
    const hangs = new Counter({ name: 'roundload_hangs_total', help: 'Hung requests, by the phase of the request the watchdog gave up in', labelNames: ['hang_phase'], registers: [registry] });
    const errors = new Counter({ name: 'roundload_errors_total', help: 'Failed requests, by error class', labelNames: ['class'], registers: [registry] });
    const conversations = new Counter({ name: 'roundload_conversations_total', help: 'Conversations started (round 1 sent)', registers: [registry] });
    const outputTokens = new Counter({ name: 'roundload_output_tokens_total', help: 'Completion tokens of successful requests', registers: [registry] });
    const ttft = new Histogram({ name: 'roundload_ttft_seconds', help: 'Time to first token of successful requests', labelNames: ['phase'], buckets: LATENCY_BUCKETS_S, registers: [registry] });
    const e2e = new Histogram({ name: 'roundload_e2e_seconds', help: 'End-to-end time of successful requests', labelNames: ['phase'], buckets: LATENCY_BUCKETS_S, registers: [registry] });

    ctx.bus.on('request_start', (e) => {
      if (e.round === 1) conversations.inc();
    });
    ctx.bus.on('request', ({ record: r }) => {
      completed.inc({ phase: r.phase, status: r.status });
      if (r.status === 'hang') hangs.inc({ hang_phase: r.hang?.phase ?? 'unknown' });
      else if (r.status === 'error') errors.inc({ class: r.error?.class ?? 'other' });
      else {
        if (r.ttft_ms !== null) ttft.observe({ phase: r.phase }, r.ttft_ms / 1000);
        e2e.observe({ phase: r.phase }, r.e2e_ms / 1000);
        outputTokens.inc(r.completion_tokens ?? 0);
      }
    });

    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('roundload client metrics: GET /metrics\n');
        return;
      }
      const timer = setTimeout(() => res.writeHead(503).end('metrics timed out\n'), SCRAPE_TIMEOUT_MS);
      registry.metrics().then(
        (text) => {
          clearTimeout(timer);
          if (!res.headersSent) res.writeHead(200, { 'content-type': registry.contentType }).end(text);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!res.headersSent) res.writeHead(500).end(`${String(error)}\n`);
        },
      );
    });
    server.keepAliveTimeout = 5000;
    const asked = `${this.#host.includes(':') ? `[${this.#host}]` : this.#host}:${this.#port}`;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(new ServerStartError('the client metrics endpoint', asked, { cause: error }));
      server.once('error', onError);
      server.listen(this.#port, this.#host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.#server = server;
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}/metrics`;
    ctx.log(`client metrics on ${this.url}`);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      // A Prometheus server keeps its scrape connection alive: close idle and open sockets now.
      server.closeAllConnections();
    });
  }
}
