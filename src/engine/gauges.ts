// The scheduler gauges as /metrics shows them: refreshed the way SGLang refreshes them, only when stats are
// logged (each prefill batch, every `stats_interval_steps` decode steps), so an idle server keeps its last
// values; and the gauge faults that prove the monitor's verdicts (`pin`: stuck at 1, no flow; `rotate`).
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/index.js';

/** A server's scheduler gauges by name without the `sglang:` prefix (`num_running_reqs`…). */
export type GaugeValues = Readonly<Record<string, number>>;

export interface PublishedGaugesOptions {
  now?: () => number;
  /** Whether `engine.gauge_fault` acts on this server (in PD: the prefill only). @default true */
  faulted?: boolean;
}

export class PublishedGauges {
  readonly #settings: EngineSettings;
  readonly #live: () => GaugeValues;
  readonly #startedMs: number;
  readonly #now: () => number;
  readonly #faulted: boolean;
  #published: GaugeValues;
  /** Stats logs so far (for tests and the curious). */
  refreshes = 0;

  constructor(settings: EngineSettings, live: () => GaugeValues, options: PublishedGaugesOptions = {}) {
    this.#settings = settings;
    this.#live = live;
    this.#now = options.now ?? (() => performance.now());
    this.#faulted = options.faulted ?? true;
    this.#startedMs = this.#now();
    this.#published = Object.fromEntries(Object.keys(live()).map((k) => [k, 0]));
  }

  /** The scheduler formed a prefill batch (SGLang logs prefill stats then). */
  onPrefillBatch(): void {
    this.#refresh();
  }

  /** A decode step ran; `step` counts from 1. Returns whether stats were logged. */
  onDecodeStep(step: number): boolean {
    const every = this.#settings.stats_interval_steps;
    if (every <= 0 || step % every !== 0) return false;
    this.#refresh();
    return true;
  }

  /** The pin fault holds every KV transfer from its start on: nothing reaches decode, nothing completes. */
  holdTransfers(): boolean {
    const f = this.#fault();
    return f !== null && f.kind === 'pin' && this.#now() - this.#startedMs >= f.after_s * 1000;
  }

  /** What /metrics shows now. */
  read(): GaugeValues {
    const shown = this.#settings.stats_interval_steps === 0 ? this.#live() : this.#published;
    const f = this.#fault();
    if (f === null || !(f.gauge in shown)) return shown;
    const sinceMs = this.#now() - this.#startedMs;
    if (f.kind === 'pin') return sinceMs >= f.after_s * 1000 ? { ...shown, [f.gauge]: 1 } : shown;
    // Rotating load: 1 for most of each period, 0 for its last `dip_ms` (requests flow all along).
    const periodMs = f.period_s * 1000;
    return { ...shown, [f.gauge]: sinceMs % periodMs >= periodMs - f.dip_ms ? 0 : 1 };
  }

  #fault(): EngineSettings['gauge_fault'] {
    return this.#faulted ? this.#settings.gauge_fault : null;
  }

  #refresh(): void {
    this.refreshes += 1;
    this.#published = this.#live();
  }
}
