// What runs beside the agents for the length of a run (the monitor, canaries, probes…). Each is started
// after the target is reachable and stopped, bounded, before results are written. A service that fails to
// start is recorded, not fatal to the run, except an endpoint that cannot listen on the address the user
// asked for (ERR_SERVER_START). The metrics export is not one: it outlives them until the summary (run.ts).
import type { Workload } from '../config/index.js';
import type { RunService } from './service.js';
import { CanaryService } from './canary-service.js';
import { MonitorService } from '../monitor/index.js';

/** The services a workload asks for, in start order. */
export function servicesFor(workload: Workload): RunService[] {
  const services: RunService[] = [];
  if (workload.monitor.canary_interval_s > 0) services.push(new CanaryService());
  if (workload.monitor.enabled) services.push(new MonitorService());
  return services;
}
