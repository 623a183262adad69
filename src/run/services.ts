// What runs beside the agents for the length of a run (the monitor, canaries, probes, a metrics
// endpoint…). Each is started after the target is reachable and stopped, bounded, before results are
// written. A service that fails to start is recorded, not fatal to the run, except an endpoint that cannot
// listen on the address the user asked for (ERR_SERVER_START: the metrics port in use).
import type { Workload } from '../config/index.js';
import type { RunService } from './service.js';
import { ClientMetricsService } from './client-metrics.js';
import { CanaryService } from './canary-service.js';
import { MonitorService } from '../monitor/index.js';

/** The services a workload asks for, in start order. */
export function servicesFor(workload: Workload): RunService[] {
  const services: RunService[] = [];
  if (workload.client_metrics.port !== null) services.push(new ClientMetricsService({ host: workload.client_metrics.host, port: workload.client_metrics.port }));
  if (workload.monitor.canary_interval_s > 0) services.push(new CanaryService());
  if (workload.monitor.enabled) services.push(new MonitorService());
  return services;
}
