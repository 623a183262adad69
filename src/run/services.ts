// What runs beside the agents for the length of a run (the monitor, canaries, probes, a metrics
// endpoint…). Each is started after the target is reachable and stopped, bounded, before results are
// written. A service that fails to start is recorded, not fatal to the run, except an endpoint that cannot
// listen on the address the user asked for (ERR_SERVER_START: the metrics port in use).
import type { Workload } from '../config/index.js';
import type { PathKind } from '../types/index.js';
import type { RunBus } from './bus.js';
import type { RouteInfo } from './route.js';
import { ClientMetricsService } from './client-metrics.js';
import { CanaryService } from './canary-service.js';
import { MonitorService } from '../monitor/index.js';

export interface RunContext {
  readonly workload: Workload;
  readonly dir: string;
  readonly bus: RunBus;
  /** performance.now() at run start. */
  readonly runStartMs: number;
  /** Where agent requests go (the hop or proxy in front of the engine, when there is one). */
  readonly requestUrl: string;
  /** The engine itself (the embedded one, or `target.url`). */
  readonly engineUrl: string;
  /** The embedded deployment's metrics endpoints (`router`, `prefill`, `decode`), when the run started one. */
  readonly embeddedTargets?: readonly { readonly name: string; readonly url: string }[] | null;
  readonly path: PathKind;
  /** The whole path: TLS, CONNECT proxy, and the direct URL around it (`bypassUrl`) for canaries.
   * Always set by a run; a context built by hand (tests) may leave it out: direct to `requestUrl`, no bypass. */
  readonly route?: RouteInfo;
  /** Aborted when the run stops. */
  readonly stop: AbortSignal;
  readonly log: (line: string) => void;
  /** Requests in flight right now. */
  inFlight(): number;
}

export interface RunService {
  readonly name: string;
  start(ctx: RunContext): Promise<void> | void;
  /** Must return within a couple of seconds whatever the network does. */
  stop(): Promise<void> | void;
}

/** The services a workload asks for, in start order. */
export function servicesFor(workload: Workload): RunService[] {
  const services: RunService[] = [];
  if (workload.client_metrics.port !== null) services.push(new ClientMetricsService({ host: workload.client_metrics.host, port: workload.client_metrics.port }));
  if (workload.monitor.canary_interval_s > 0) services.push(new CanaryService());
  if (workload.monitor.enabled) services.push(new MonitorService());
  return services;
}
