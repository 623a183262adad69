// The client's own health every second: event-loop delay, utilisation and the process's CPU time, so a stall
// of ours is never blamed on the server, and a busy client is told from one its host starved of CPU; on the
// main thread also how far behind the results writer is (writer_lag_ms).
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { ClientSampleEvent } from '../types/index.js';
import type { WriterSample } from '../results/index.js';

const RESOLUTION_MS = 10;
/** The sampler's own delay probe: a timer this often, its lateness kept as the window's delay too. Node's
 * histogram loses a stall that begins right after a reset (its first tick after a reset only notes the time),
 * so a client stall starting at a window's edge — in the timers phase that ran the sample — read 0 ms. */
const PROBE_MS = 50;

/** Nanoseconds this thread has waited in the run queue (runnable, no CPU given), from Linux's schedstat of the
 * calling thread; null where there is none (another OS, a kernel without schedstats). One small read a second. */
export function runQueueWaitNs(): number | null {
  try {
    const fields = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(/\s+/);
    const wait = Number(fields[1]);
    return Number.isFinite(wait) ? wait : null;
  } catch {
    return null;
  }
}

export class ClientSampler {
  readonly #histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  #timer: NodeJS.Timeout | null = null;
  #probe: NodeJS.Timeout | null = null;
  #probeAt = performance.now();
  /** The probe's largest lateness since the last sample, ms. */
  #probeLateMs = 0;
  #lastElu: EventLoopUtilization = performance.eventLoopUtilization();
  #lastAt = performance.now();
  #lastCpu: NodeJS.CpuUsage = process.cpuUsage();
  #lastWaitNs: number | null = runQueueWaitNs();
  readonly #writer: (() => WriterSample) | null;

  /** @param options.writer the results writer's state (the main thread has one; worker threads do not). */
  constructor(options: { writer?: () => WriterSample } = {}) {
    this.#writer = options.writer ?? null;
  }

  /** @param streamed token events received so far (the run's live token count), reported as `streamed_tokens`. */
  start(intervalMs: number, runStartMs: number, inFlight: () => number, emit: (s: ClientSampleEvent) => void, streamed?: () => number): void {
    // The first window starts now, not when the sampler was made (start-up is not the run's time).
    this.#lastAt = performance.now();
    this.#lastElu = performance.eventLoopUtilization();
    this.#lastCpu = process.cpuUsage();
    this.#lastWaitNs = runQueueWaitNs();
    this.#histogram.enable();
    this.#probeAt = performance.now();
    this.#probe = setInterval(() => {
      const now = performance.now();
      this.#probeLateMs = Math.max(this.#probeLateMs, now - this.#probeAt - PROBE_MS);
      this.#probeAt = now;
    }, PROBE_MS);
    this.#probe.unref();
    this.#timer = setInterval(() => {
      const sample = this.sample(runStartMs, inFlight());
      emit(streamed === undefined ? sample : { ...sample, streamed_tokens: streamed() });
    }, intervalMs);
    this.#timer.unref();
  }

  /** One sample of the window since the last one (and resets the window). */
  sample(runStartMs: number, inFlight: number): ClientSampleEvent {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.#lastElu);
    this.#lastElu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage(this.#lastCpu);
    this.#lastCpu = process.cpuUsage();
    const waitNs = runQueueWaitNs();
    const cpuWaitMs = waitNs === null || this.#lastWaitNs === null ? null : Math.round((waitNs - this.#lastWaitNs) / 1e5) / 10;
    this.#lastWaitNs = waitNs;
    const h = this.#histogram;
    // Node 20's values include the sampling resolution: subtract it.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 1000) / 1000);
    const sample: ClientSampleEvent = {
      kind: 'client_sample',
      t: new Date().toISOString(),
      run_ms: Math.round(now - runStartMs),
      window_ms: Math.round(now - this.#lastAt),
      loop_delay_p99_ms: h.count === 0 ? 0 : ms(h.percentile(99)),
      loop_delay_max_ms: Math.max(h.count === 0 ? 0 : ms(h.max), Math.round(Math.max(0, this.#probeLateMs) * 1000) / 1000),
      loop_utilization: Math.round(elu.utilization * 1000) / 1000,
      in_flight: inFlight,
      rss_bytes: process.memoryUsage.rss(),
      cpu_ms: Math.round((cpu.user + cpu.system) / 100) / 10,
      cpu_wait_ms: cpuWaitMs,
      ...this.#writer?.(),
    };
    h.reset();
    this.#probeLateMs = 0;
    this.#lastAt = now;
    return sample;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    if (this.#probe !== null) clearInterval(this.#probe);
    this.#timer = null;
    this.#probe = null;
    this.#histogram.disable();
  }
}
