// Monitor cost: the client CPU share of scraping 3 targets every 100 ms (parse + select included), and how
// late scrapes start against their drift-free schedule (jitter), with an engine under load in its own process.
import { performance } from 'node:perf_hooks';
import { parseWorkload } from '../src/config/index.js';
import { Scraper, SeriesSelector, fetchMetrics } from '../src/monitor/index.js';
import { realClock } from '../src/watchdog/index.js';
import type { ScrapeEvent } from '../src/types/index.js';
import { bareRun } from './client-cost.js';
import { percentile, printTable, startEngineProcess } from './lib.js';

const INTERVAL_MS = 100;
const DURATION_MS = 10_000;

export async function monitorCostBench(): Promise<void> {
  const engine = await startEngineProcess({ decode_step_ms: 10, output_tokens_min: 2000, output_tokens_max: 2000, prefill_ms_per_1k_tokens: 0, stats_interval_steps: 1 });
  try {
    // Keep the engine busy (and its metrics moving) from another process's point of view: load from here
    // would be charged to the monitor, so the load runs only before and after the measured stretch.
    await bareRun(engine.url, 8, 8, JSON.stringify({ model: 'm', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }));
    const monitor = parseWorkload('', 'bench.yaml').monitor;
    const events: ScrapeEvent[] = [];
    const runStartMs = realClock.now();
    const scraper = new Scraper({
      targets: [
        { name: 'prefill', url: engine.url },
        { name: 'decode', url: engine.url },
        { name: 'router', url: engine.url },
      ],
      intervalMs: INTERVAL_MS,
      timeoutMs: 1000,
      burstIntervalMs: INTERVAL_MS,
      burstDurationMs: 1000,
      selector: new SeriesSelector(monitor.gauges, monitor.counters),
      clock: realClock,
      runStartMs,
      fetch: fetchMetrics,
      emit: (e) => {
        if (e.kind === 'scrape') events.push(e);
      },
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    scraper.start();
    await new Promise((r) => setTimeout(r, DURATION_MS));
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await scraper.stop();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    // Jitter: how far after its tick (the grid starts at the first scrape) each scrape began; run_ms is
    // rounded to the millisecond, so a start "1 ms before" its tick is rounding, counted as 0.
    const first = events[0]?.run_ms ?? 0;
    const lateness = events.map((e) => {
      const d = (e.run_ms - first) % INTERVAL_MS;
      return Math.max(0, d > INTERVAL_MS / 2 ? d - INTERVAL_MS : d);
    });
    const ok = events.filter((e) => e.ok).length;
    const duration = events.map((e) => e.duration_ms);
    printTable(
      `monitor cost: 3 targets every ${INTERVAL_MS} ms for ${DURATION_MS / 1000} s`,
      ['scrapes', 'ok', 'cpu ms', 'cpu share %', 'cpu µs/scrape', 'scrape p50 ms', 'scrape p99 ms', 'start jitter p50 ms', 'start jitter p99 ms'],
      [
        [
          String(events.length),
          ok,
          cpuMs,
          (100 * cpuMs) / wallMs,
          (cpuMs * 1000) / Math.max(1, events.length),
          percentile(duration, 50),
          percentile(duration, 99),
          percentile(lateness, 50),
          percentile(lateness, 99),
        ],
      ],
    );
  } finally {
    await engine.stop();
  }
}
