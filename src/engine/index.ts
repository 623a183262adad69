// The embedded deployment's public face: SGLang PD in miniature (a router, a prefill server and a decode server,
// each its own HTTP server with its own /metrics and log file, in this process) or one unified server, all
// speaking SGLang's wire format. Code outside src/engine imports only this file.
import type { Server } from 'node:http';
import { dirname, join } from 'node:path';
import type { EngineFaultKind } from '../config/index.js';
import { FaultInjector } from './faults.js';
import { KvFabric } from './kv.js';
import { ServerLog } from './logs.js';
import { createRouterMetricsServer, createRouterServer, type RouterServer } from './router.js';
import { RouterMetrics } from './router-metrics.js';
import { drawRunSpeed, runSpeedText, type RunSpeed } from './run-speed.js';
import { ServerState, type ServerRole, type ServerStats } from './state.js';
import { createWorkerServer, type WorkerServer } from './worker.js';
import { EngineTraces } from './tracing.js';
import type { EngineOptions, EngineServerInfo, EngineServerName, EngineTopology } from './options.js';

export type { ServerStats } from './state.js';
export { runSpeedText, type RunSpeed } from './run-speed.js';

export type { EngineOptions, EngineServerInfo, EngineServerName, EngineTopology } from './options.js';
export type { EngineSpan, EngineTraces } from './tracing.js';

/** Counters and current state of the deployment, as the client sees it (in PD: the decode server's requests, the
 * prefill server's queues), with every server's own figures. */
export interface EngineStats {
  /** Chat requests accepted (valid bodies). */
  readonly requests: number;
  /** Requests answered with a 4xx error. */
  readonly rejected: number;
  readonly active: number;
  /** Waiting for prefill (`num_queue_reqs` of the prefill or unified server). */
  readonly queued: number;
  readonly prefilling: number;
  /** In KV transfer (`num_prefill_inflight_queue_reqs`). */
  readonly transferring: number;
  /** In the decode batch (`num_running_reqs` of the decode or unified server). */
  readonly running: number;
  readonly completed: number;
  readonly aborted: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
  readonly decodeSteps: number;
  /** Times each `engine.faults` kind fired. */
  readonly faultsFired: Readonly<Partial<Record<EngineFaultKind, number>>>;
  /** Each server's own figures, by name. */
  readonly servers: Readonly<Partial<Record<Exclude<EngineServerName, 'router'>, ServerStats>>>;
  /** PD: the router's answers that never reached a worker (429, 408, 503). */
  readonly routerRefused: number;
}

export interface EngineHandle {
  /** The entry URL clients use (the router in `pd`), e.g. `http://127.0.0.1:30000`. */
  readonly url: string;
  readonly port: number;
  readonly topology: EngineTopology;
  readonly modelName: string;
  readonly servers: readonly EngineServerInfo[];
  /** This start's speed factor (`engine.run_spread_pct`), drawn once and kept until close. */
  readonly runSpeed: RunSpeed;
  /** What a monitor scrapes for this deployment: `router`, `prefill`, `decode` (pd) or `engine` (single). */
  readonly monitorTargets: readonly { readonly name: string; readonly url: string }[];
  /** Stops every server: drops every job and destroys every socket, streaming ones included; resolves within about 1 s. */
  close(): Promise<void>;
  stats(): EngineStats;
  /** The last lines of a server's log (kept in memory whether or not a file is written). */
  logLines(name: EngineServerName): readonly string[];
  /** Its request traces when started with `trace: true` (take the finished spans; `close()` hands the open ones
   * over, cut at the stop, once the servers closed); null otherwise. */
  readonly traces: EngineTraces | null;
}

/** Bound on close(): sockets are destroyed at once, this only covers a server that never reports closed. */
const CLOSE_BOUND_MS = 1_000;

function hostUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    if (!server.listening) return done();
    server.close(() => done());
    server.closeAllConnections();
  });
}

function sglangStartup(log: ServerLog, url: string, speed: RunSpeed): void {
  // Where SGLang logs its server_args: the start's speed, so a slow run can be told from a slow build.
  if (speed.spreadPct > 0) log.server(runSpeedText(speed));
  log.server(`INFO:     Uvicorn running on ${url} (Press CTRL+C to quit)`);
  log.server('The server is fired up and ready to roll!');
}

export async function startEngine(opts: EngineOptions): Promise<EngineHandle> {
  const host = opts.host ?? '127.0.0.1';
  const modelName = opts.modelName ?? 'deepseek-v4-flash';
  const settings = opts.settings;
  const logFor = (name: EngineServerName): ServerLog => new ServerLog(opts.logDir === undefined || opts.logDir === null ? null : join(opts.logDir, `${name}.log`));
  const faults = new FaultInjector(settings.faults, settings.seed);
  // Once per start, shared by every server: a restart is what makes a deployment faster or slower.
  const runSpeed = drawRunSpeed(settings.run_spread_pct, settings.run_spread_seed);
  const servers: Server[] = [];
  const logs = new Map<EngineServerName, ServerLog>();
  const states: ServerState[] = [];
  const stoppers: (() => void)[] = [];
  const traces = opts.trace === true ? new EngineTraces() : null;
  let router: RouterServer | null = null;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      router?.close();
      for (const s of states) s.stop();
      for (const stop of stoppers) stop();
      // Hung and stalled responses too: their sockets go with closeAllConnections, their timers here.
      faults.close();
      await new Promise<void>((done) => {
        const bound = setTimeout(done, CLOSE_BOUND_MS);
        bound.unref();
        void Promise.all(servers.map(closeServer)).then(() => {
          clearTimeout(bound);
          done();
        });
      });
      await Promise.all([...logs.values()].map((l) => l.close()));
    })());

  const startWorker = async (role: ServerRole, name: EngineServerName, port: number, kv: KvFabric | null, entryFaults: FaultInjector | null): Promise<{ state: ServerState; url: string }> => {
    const log = logFor(name);
    logs.set(name, log);
    const state = new ServerState(role, settings, modelName, log, kv, runSpeed.factor);
    state.traces = traces;
    states.push(state);
    const worker: WorkerServer = createWorkerServer(state, entryFaults);
    stoppers.push(() => worker.close());
    servers.push(worker.server);
    const url = hostUrl(host, await listen(worker.server, port, host));
    sglangStartup(log, url, runSpeed);
    return { state, url };
  };

  try {
    if (settings.topology === 'single') {
      const { state, url } = await startWorker('unified', 'engine', opts.port ?? 0, null, faults);
      const info: EngineServerInfo = { name: 'engine', url, metricsUrl: `${url}/metrics`, logFile: logs.get('engine')?.file ?? null };
      return handle(url, [info], () => singleStats(state, faults));
    }
    const kv = new KvFabric();
    const decode = await startWorker('decode', 'decode', opts.decodePort ?? 0, kv, null);
    const prefill = await startWorker('prefill', 'prefill', opts.prefillPort ?? 0, kv, null);
    const routerLog = logFor('router');
    logs.set('router', routerLog);
    const routerMetrics = new RouterMetrics();
    const prefillPort = Number(new URL(prefill.url).port);
    router = createRouterServer({ settings, log: routerLog, metrics: routerMetrics, faults, prefillUrl: prefill.url, decodeUrl: decode.url, bootstrapHost: host, bootstrapPort: prefillPort, traces });
    servers.push(router.server);
    const metricsServer = createRouterMetricsServer(routerMetrics);
    servers.push(metricsServer);
    const metricsPort = await listen(metricsServer, opts.routerMetricsPort ?? 0, host);
    const routerPort = await listen(router.server, opts.port ?? 0, host);
    const routerUrl = hostUrl(host, routerPort);
    const metricsUrl = `${hostUrl(host, metricsPort)}/metrics`;
    routerLog.router(
      'INFO',
      'sgl_router::server',
      `Starting router on ${host}:${routerPort} | mode: PrefillDecode { prefill_urls: [("${prefill.url}", Some(${prefillPort}))], decode_urls: ["${decode.url}"] } | max_concurrent_requests: ${settings.router.max_concurrent_requests} | queue_size: ${settings.router.queue_size}`,
    );
    routerLog.router('INFO', 'sgl_router::metrics', `Prometheus metrics on ${hostUrl(host, metricsPort)}`);
    const infos: EngineServerInfo[] = [
      { name: 'router', url: routerUrl, metricsUrl, logFile: routerLog.file },
      { name: 'prefill', url: prefill.url, metricsUrl: `${prefill.url}/metrics`, logFile: logs.get('prefill')?.file ?? null },
      { name: 'decode', url: decode.url, metricsUrl: `${decode.url}/metrics`, logFile: logs.get('decode')?.file ?? null },
    ];
    return handle(routerUrl, infos, () => pdStats(prefill.state, decode.state, faults, routerMetrics));
  } catch (error) {
    await close();
    throw error;
  }

  function handle(url: string, infos: readonly EngineServerInfo[], stats: () => EngineStats): EngineHandle {
    return {
      url,
      port: Number(new URL(url).port),
      topology: settings.topology,
      modelName,
      servers: infos,
      runSpeed,
      monitorTargets: infos.map((s) => ({ name: s.name, url: s.metricsUrl })),
      close,
      stats,
      logLines: (name) => logs.get(name)?.recent() ?? [],
      traces,
    };
  }
}

function singleStats(state: ServerState, faults: FaultInjector): EngineStats {
  const s = state.stats();
  return { ...common(s), queued: s.queued, prefilling: s.prefilling, transferring: s.transferring, faultsFired: faults.fired(), servers: { engine: s }, routerRefused: 0 };
}

function pdStats(prefill: ServerState, decode: ServerState, faults: FaultInjector, metrics: RouterMetrics): EngineStats {
  const p = prefill.stats();
  const d = decode.stats();
  const route = { route: '/v1/chat/completions' };
  const refused =
    ['rate_limited', 'queue_timeout'].reduce((n, t) => n + metrics.count('sgl_router_request_errors_total', { ...route, error_type: t }), 0) +
    metrics.count('sgl_router_pd_errors_total', { error_type: 'server_selection' });
  return { ...common(d), queued: p.queued, prefilling: p.prefilling, transferring: p.transferring, faultsFired: faults.fired(), servers: { prefill: p, decode: d }, routerRefused: refused };
}

/** The client-side figures: requests and tokens as the server that answers the client counts them. */
function common(s: ServerStats): Omit<EngineStats, 'queued' | 'prefilling' | 'transferring' | 'faultsFired' | 'servers' | 'routerRefused'> {
  const { requests, rejected, active, running, completed, aborted, promptTokens, cachedTokens, completionTokens, decodeSteps } = s;
  return { requests, rejected, active, running, completed, aborted, promptTokens, cachedTokens, completionTokens, decodeSteps };
}

export { startEngineThread, type EngineThreadHandle } from './thread.js';

/** One line saying what runs where (a run's start notice), and this start's speed when it has a spread. */
export function engineStartLine(engine: Pick<EngineHandle, 'topology' | 'url' | 'servers' | 'runSpeed'>): string {
  const speed = engine.runSpeed.spreadPct > 0 ? `; ${runSpeedText(engine.runSpeed)}` : '';
  if (engine.topology === 'single') return `embedded engine on ${engine.url}${logsNote(engine)}${speed}`;
  const [router, prefill, decode] = engine.servers;
  return `embedded PD deployment: router ${router?.url} (metrics ${router?.metricsUrl}) → prefill ${prefill?.url} → decode ${decode?.url}${logsNote(engine)}${speed}`;
}

function logsNote(engine: Pick<EngineHandle, 'servers'>): string {
  const file = engine.servers[0]?.logFile ?? null;
  return file === null ? '' : `; logs in ${dirname(file)}`;
}
