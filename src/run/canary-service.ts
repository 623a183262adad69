// The canaries as a run service: started once the target answers, on the agents' path and around it
// (the route's bypass URL), their events on the bus (events.jsonl, the summary's diagnosis).
import { startCanaries, type CanaryHandle } from '../monitor/index.js';
import type { RunContext, RunService } from './service.js';
import { requestHeaders } from './headers.js';

export class CanaryService implements RunService {
  readonly name = 'canaries';
  #handle: CanaryHandle | null = null;

  start(ctx: RunContext): void {
    const route = ctx.route;
    const m = ctx.workload.monitor;
    if (route === undefined || m.canary_interval_s <= 0) return;
    if (route.bypassUrl === null) {
      // Only worth saying when there is a proxy to compare with.
      if (route.path !== 'direct') ctx.log('canaries off: no target.bypass (a direct URL of the engine) to compare the proxied path with');
      return;
    }
    this.#handle = startCanaries({
      proxied: { url: route.requestUrl, path: route.path, tls: route.tls, connectProxy: route.connectProxy },
      direct: { url: route.bypassUrl, path: 'direct', tls: route.bypassTls, connectProxy: null },
      model: ctx.workload.target.model,
      headers: requestHeaders(ctx.workload.target),
      extraBody: ctx.workload.target.extra_body,
      intervalMs: m.canary_interval_s * 1000,
      timeoutMs: m.canary_timeout_ms,
      concurrency: m.canary_concurrency,
      runStartMs: ctx.runStartMs,
      emit: (event) => ctx.bus.emit(event),
    });
    ctx.log(`canaries every ${m.canary_interval_s} s (up to ${m.canary_concurrency} out per leg): ${route.requestUrl} (${route.path}) and ${route.bypassUrl} (direct)`);
  }

  async stop(): Promise<void> {
    await this.#handle?.stop();
    this.#handle = null;
  }
}
