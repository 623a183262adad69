// The router's view of its workers, as sgl-router keeps it: every `health_check_interval_s` a `GET /health` to
// each worker (bounded by `health_check_timeout_s`); `health_failure_threshold` failures in a row mark a worker
// unhealthy — the router then sends it nothing — and `health_success_threshold` successes mark it healthy again.
import { request as httpRequest } from 'node:http';
import type { EngineSettings } from '../config/index.js';
import type { ServerLog } from './logs.js';
import type { RouterMetrics } from './router-metrics.js';

export type WorkerRole = 'prefill' | 'decode';

export interface WorkerHealth {
  readonly url: string;
  readonly role: WorkerRole;
  healthy: boolean;
  failures: number;
  successes: number;
}

const TARGET = 'sgl_router::core::health_checker';

export class HealthChecker {
  readonly workers: WorkerHealth[];
  readonly #settings: EngineSettings['router'];
  readonly #log: ServerLog;
  readonly #metrics: RouterMetrics;
  #timer: NodeJS.Timeout | null = null;
  readonly #inFlight = new Set<() => void>();
  /** Workers with a check under way: a slow check is never doubled by the next tick. */
  readonly #checking = new Set<WorkerHealth>();
  #closed = false;

  constructor(workers: readonly { url: string; role: WorkerRole }[], settings: EngineSettings['router'], log: ServerLog, metrics: RouterMetrics) {
    this.workers = workers.map((w) => ({ ...w, healthy: true, failures: 0, successes: 0 }));
    this.#settings = settings;
    this.#log = log;
    this.#metrics = metrics;
    for (const w of this.workers) metrics.set('sgl_router_worker_health', { worker: w.url }, 1);
    metrics.set('sgl_router_active_workers', {}, this.workers.length);
  }

  start(): void {
    if (this.#closed || this.#timer !== null) return;
    this.#timer = setInterval(() => {
      for (const w of this.workers) void this.#check(w);
    }, this.#settings.health_check_interval_s * 1000);
    this.#timer.unref();
  }

  /** A healthy worker of a role, or null (the router then answers 503). */
  pick(role: WorkerRole): WorkerHealth | null {
    return this.workers.find((w) => w.role === role && w.healthy) ?? null;
  }

  stop(): void {
    this.#closed = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    for (const abort of this.#inFlight) abort();
    this.#inFlight.clear();
  }

  async #check(w: WorkerHealth): Promise<void> {
    if (this.#checking.has(w)) return;
    this.#checking.add(w);
    const problem = await this.#probe(w.url);
    this.#checking.delete(w);
    if (this.#closed) return;
    if (problem === null) {
      w.failures = 0;
      w.successes += 1;
      if (!w.healthy && w.successes >= this.#settings.health_success_threshold) {
        w.healthy = true;
        this.#log.router('INFO', TARGET, `Worker ${w.url} is healthy again after ${w.successes} successful health checks`);
        this.#changed(w);
      }
      return;
    }
    w.successes = 0;
    w.failures += 1;
    this.#log.router('WARN', TARGET, `Health check failed for worker ${w.url}: ${problem}`);
    if (w.healthy && w.failures >= this.#settings.health_failure_threshold) {
      w.healthy = false;
      this.#log.router('WARN', TARGET, `Worker ${w.url} marked unhealthy after ${w.failures} consecutive failed health checks`);
      this.#changed(w);
    }
  }

  #changed(w: WorkerHealth): void {
    this.#metrics.set('sgl_router_worker_health', { worker: w.url }, w.healthy ? 1 : 0);
    this.#metrics.set('sgl_router_active_workers', {}, this.workers.filter((x) => x.healthy).length);
  }

  /** One `GET /health`: null when it answered 2xx in time, else what went wrong. */
  #probe(url: string): Promise<string | null> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (problem: string | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#inFlight.delete(abort);
        req.destroy();
        resolve(problem);
      };
      const req = httpRequest(`${url}/health`, { method: 'GET', agent: false }, (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        done(status >= 200 && status < 300 ? null : `status ${status}`);
      });
      req.on('error', (err) => done(err.message));
      const timeoutS = this.#settings.health_check_timeout_s;
      const timer = setTimeout(() => done(`operation timed out after ${timeoutS}s`), timeoutS * 1000);
      const abort = (): void => done('router shutting down');
      this.#inFlight.add(abort);
      req.end();
    });
  }
}
