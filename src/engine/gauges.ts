// The scheduler gauges as /metrics shows them: refreshed the way SGLang refreshes them, only when stats are
// logged (each prefill batch, every `stats_interval_steps` decode steps), so an idle engine keeps its last
// values; and the gauge faults that prove the monitor's verdicts (`pin`: stuck at 1, no flow; `rotate`).
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/schema.js';

export interface SchedulerGaugeValues {
  readonly num_running_reqs: number;
  readonly num_queue_reqs: number;
  readonly num_prefill_inflight_queue_reqs: number;
  readonly num_used_tokens: number;
  readonly token_usage: number;
  readonly gen_throughput: number;
  readonly cache_hit_rate: number;
}

export type SchedulerGaugeName = keyof SchedulerGaugeValues;

const ZERO: SchedulerGaugeValues = { num_running_reqs: 0, num_queue_reqs: 0, num_prefill_inflight_queue_reqs: 0, num_used_tokens: 0, token_usage: 0, gen_throughput: 0, cache_hit_rate: 0 };

function faultedName(name: string): SchedulerGaugeName | null {
  const base = name.startsWith('sglang:') ? name.slice('sglang:'.length) : name;
  return base in ZERO ? (base as SchedulerGaugeName) : null;
}

export class PublishedGauges {
  readonly #settings: EngineSettings;
  readonly #live: () => SchedulerGaugeValues;
  readonly #startedMs: number;
  readonly #now: () => number;
  #published: SchedulerGaugeValues = ZERO;
  /** Stats logs so far (for tests and the curious). */
  refreshes = 0;

  constructor(settings: EngineSettings, live: () => SchedulerGaugeValues, now: () => number = () => performance.now()) {
    this.#settings = settings;
    this.#live = live;
    this.#now = now;
    this.#startedMs = now();
  }

  /** The scheduler formed a prefill batch (SGLang logs prefill stats then). */
  onPrefillBatch(): void {
    this.#refresh();
  }

  /** A decode step ran; `step` counts from 1. */
  onDecodeStep(step: number): void {
    const every = this.#settings.stats_interval_steps;
    if (every > 0 && step % every === 0) this.#refresh();
  }

  /** The pin fault holds every KV transfer from its start on: nothing reaches decode, nothing completes. */
  holdTransfers(): boolean {
    const f = this.#settings.gauge_fault;
    return f !== null && f.kind === 'pin' && this.#now() - this.#startedMs >= f.after_s * 1000;
  }

  /** What /metrics shows now. */
  read(): SchedulerGaugeValues {
    const shown = this.#settings.stats_interval_steps === 0 ? this.#live() : this.#published;
    const f = this.#settings.gauge_fault;
    if (f === null) return shown;
    const name = faultedName(f.gauge);
    if (name === null) return shown;
    const sinceMs = this.#now() - this.#startedMs;
    if (f.kind === 'pin') return sinceMs >= f.after_s * 1000 ? { ...shown, [name]: 1 } : shown;
    // Rotating load: 1 for most of each period, 0 for its last `dip_ms` (requests flow all along).
    const periodMs = f.period_s * 1000;
    return { ...shown, [name]: sinceMs % periodMs >= periodMs - f.dip_ms ? 0 : 1 };
  }

  #refresh(): void {
    this.refreshes += 1;
    this.#published = this.#live();
  }
}
