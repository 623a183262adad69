// The monitor as a run service: scrapes the targets beside the agents (the embedded engine when none are
// named), bursts on hangs and slow requests, and runs the probes at start, on hangs and at the end.
import type { MonitorSettings, Workload } from '../config/index.js';
import { boundedGet } from '../transport/index.js';
import { realClock, type Clock } from '../watchdog/index.js';
import type { RunEvent, RunEventKind, RunEventOf } from '../types/index.js';
import { ProbeRunner } from './probes.js';
import { Scraper, type FetchText, type ScrapeTarget } from './scraper.js';
import { SeriesSelector } from './select.js';

/** Largest /metrics body read (a big multi-rank server's exposition is a few hundred KiB). */
const MAX_METRICS_BYTES = 16 * 1024 * 1024;

export const fetchMetrics: FetchText = (url, timeoutMs) => boundedGet(url, { timeoutMs, maxBytes: MAX_METRICS_BYTES, headers: { accept: 'text/plain;version=0.0.4' } });

/**
 * The targets a run scrapes: those named, else the embedded deployment's servers — `router`, `prefill`, `decode`
 * in PD (the router on its own metrics port), `engine` for a single server. A `target.url` of your own is not
 * assumed to have /metrics.
 * @param embedded the embedded deployment's targets, or its entry URL (a single server's /metrics), or null
 */
export function monitorTargets(monitor: MonitorSettings, embedded: readonly ScrapeTarget[] | string | null): ScrapeTarget[] {
  if (!monitor.enabled) return [];
  if (monitor.targets.length > 0) return monitor.targets.map((t) => ({ name: t.name, url: t.url }));
  if (embedded === null) return [];
  return typeof embedded === 'string' ? [{ name: 'engine', url: `${embedded}/metrics` }] : embedded.map((t) => ({ name: t.name, url: t.url }));
}

/** What the monitor needs of a run (a structural subset of the run's RunContext, so monitor/ never imports run/). */
export interface MonitorContext {
  readonly workload: Workload;
  readonly dir: string;
  readonly bus: {
    on<K extends RunEventKind>(kind: K, listener: (event: RunEventOf<K>) => void): void;
    emit(event: RunEvent): void;
  };
  /** performance.now() at run start (the clock's time base). */
  readonly runStartMs: number;
  /** The engine itself (the embedded one, or `target.url`). */
  readonly engineUrl: string;
  /** The embedded deployment's metrics endpoints (router, prefill, decode), when one runs. */
  readonly embeddedTargets?: readonly ScrapeTarget[] | null;
  readonly log: (line: string) => void;
}

export interface MonitorServiceOptions {
  clock?: Clock;
  fetch?: FetchText;
}

export class MonitorService {
  readonly name = 'monitor';
  readonly #clock: Clock;
  readonly #fetch: FetchText;
  #scraper: Scraper | null = null;
  #probes: ProbeRunner | null = null;
  readonly #slow = new Map<number, unknown>();
  #stopped = false;

  constructor(options: MonitorServiceOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#fetch = options.fetch ?? fetchMetrics;
  }

  start(ctx: MonitorContext): void {
    const m = ctx.workload.monitor;
    if (!m.enabled) return;
    const targets = monitorTargets(m, ctx.workload.target.url === null ? (ctx.embeddedTargets ?? ctx.engineUrl) : null);
    const emit = (e: RunEvent): void => ctx.bus.emit(e);
    if (targets.length > 0) {
      const scraper = new Scraper({
        targets,
        intervalMs: m.interval_ms,
        timeoutMs: m.timeout_ms,
        burstIntervalMs: m.burst.interval_ms,
        burstDurationMs: m.burst.duration_s * 1000,
        selector: new SeriesSelector(m.gauges, m.counters),
        clock: this.#clock,
        runStartMs: ctx.runStartMs,
        fetch: this.#fetch,
        emit,
      });
      this.#scraper = scraper;
      scraper.start();
      ctx.log(`monitor: scraping ${targets.map((t) => `${t.name} (${t.url})`).join(', ')} every ${m.interval_ms} ms`);
    }
    if (m.probes.length > 0) {
      this.#probes = new ProbeRunner({ probes: m.probes, minIntervalMs: m.probe_min_interval_s * 1000, maxOutputBytes: m.probe_max_output_bytes, runStartMs: ctx.runStartMs, dir: ctx.dir, emit });
      // Start probes run beside the agents, not before them.
      void this.#probes.run('start');
    }
    ctx.bus.on('hang', (e) => {
      if (this.#stopped) return;
      const r = e.record;
      this.#scraper?.burst('hang', { agent: r.agent, conversation: r.conversation, round: r.round });
      this.#probes?.onHang(e);
    });
    const latencyMs = m.burst.latency_ms;
    if (latencyMs !== null && this.#scraper !== null) {
      ctx.bus.on('request_start', (e) => {
        if (this.#stopped) return;
        this.#clearSlow(e.agent);
        const trigger = { agent: e.agent, conversation: e.conversation, round: e.round };
        this.#slow.set(
          e.agent,
          this.#clock.setTimer(() => {
            this.#slow.delete(e.agent);
            if (!this.#stopped) this.#scraper?.burst('latency', trigger);
          }, latencyMs),
        );
      });
      ctx.bus.on('request', (e) => this.#clearSlow(e.record.agent));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const agent of [...this.#slow.keys()]) this.#clearSlow(agent);
    // End probes run while the last scrapes finish; all of it is bounded (scrape timeout, probe timeouts).
    await Promise.all([this.#scraper?.stop(), this.#probes?.run('end').then(() => this.#probes?.stop())]);
  }

  #clearSlow(agent: number): void {
    const t = this.#slow.get(agent);
    if (t !== undefined) this.#clock.clearTimer(t);
    this.#slow.delete(agent);
  }
}
