// The client's own health every second: event-loop delay and utilisation, so a stall of ours is never
// blamed on the server; on the main thread also how far behind the results writer is (writer_lag_ms).
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { ClientSampleEvent } from '../types/index.js';
import type { WriterSample } from '../results/index.js';

const RESOLUTION_MS = 10;

export class ClientSampler {
  readonly #histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  #timer: NodeJS.Timeout | null = null;
  #lastElu: EventLoopUtilization = performance.eventLoopUtilization();
  #lastAt = performance.now();
  readonly #writer: (() => WriterSample) | null;

  /** @param options.writer the results writer's state (the main thread has one; worker threads do not). */
  constructor(options: { writer?: () => WriterSample } = {}) {
    this.#writer = options.writer ?? null;
  }

  start(intervalMs: number, runStartMs: number, inFlight: () => number, emit: (s: ClientSampleEvent) => void): void {
    this.#histogram.enable();
    this.#timer = setInterval(() => emit(this.sample(runStartMs, inFlight())), intervalMs);
    this.#timer.unref();
  }

  /** One sample of the window since the last one (and resets the window). */
  sample(runStartMs: number, inFlight: number): ClientSampleEvent {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.#lastElu);
    this.#lastElu = performance.eventLoopUtilization();
    const h = this.#histogram;
    // Node 20's values include the sampling resolution: subtract it.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 1000) / 1000);
    const sample: ClientSampleEvent = {
      kind: 'client_sample',
      t: new Date().toISOString(),
      run_ms: Math.round(now - runStartMs),
      window_ms: Math.round(now - this.#lastAt),
      loop_delay_p99_ms: h.count === 0 ? 0 : ms(h.percentile(99)),
      loop_delay_max_ms: h.count === 0 ? 0 : ms(h.max),
      loop_utilization: Math.round(elu.utilization * 1000) / 1000,
      in_flight: inFlight,
      rss_bytes: process.memoryUsage.rss(),
      ...this.#writer?.(),
    };
    h.reset();
    this.#lastAt = now;
    return sample;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#histogram.disable();
  }
}
