// Everything one engine instance shares across requests: settings, prefix cache, scheduler, counters and
// histograms, and the two views of them: stats() for tests and callers, metricFamilies() for /metrics.
import type { EngineSettings } from '../config/schema.js';
import type { EngineFaultKind } from '../config/index.js';
import { Histogram, type MetricFamily } from './metrics.js';
import { PrefixCache } from './prefix-cache.js';
import { Scheduler } from './scheduler.js';
import { PublishedGauges, type SchedulerGaugeValues } from './gauges.js';
import { FaultInjector } from './faults.js';

/** Counters and current state of an engine. Token totals are over finished (or aborted) requests. */
export interface EngineStats {
  /** Chat requests accepted (valid bodies). */
  readonly requests: number;
  /** Requests answered with a 4xx error. */
  readonly rejected: number;
  /** Chat requests in flight, in any stage. */
  readonly active: number;
  /** Waiting for a decode slot or the prefill worker (`num_queue_reqs`). */
  readonly queued: number;
  readonly prefilling: number;
  /** In KV transfer (`num_prefill_inflight_queue_reqs`). */
  readonly transferring: number;
  /** In the decode batch (`num_running_reqs`). */
  readonly running: number;
  readonly completed: number;
  /** Ended by the client (disconnect) or by close() before finishing. */
  readonly aborted: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
  readonly decodeSteps: number;
  /** Times each `engine.faults` kind fired. */
  readonly faultsFired: Readonly<Partial<Record<EngineFaultKind, number>>>;
}

/** Tokens of KV cache the engine pretends to have, for `token_usage`. */
export const KV_CAPACITY_TOKENS = 1_048_576;
const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128];
const E2E_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

export class EngineState {
  readonly cache = new PrefixCache();
  readonly scheduler: Scheduler;
  /** `engine.faults`: which requests hang, stall, drip, fail… */
  readonly faults: FaultInjector;
  readonly ttftSeconds = new Histogram(TTFT_BUCKETS_S);
  readonly e2eSeconds = new Histogram(E2E_BUCKETS_S);
  /** Scheduler gauges as /metrics shows them: refreshed on stats logging, with `engine.gauge_fault`. */
  readonly published: PublishedGauges;
  requests = 0;
  rejected = 0;
  active = 0;
  completed = 0;
  aborted = 0;
  promptTokens = 0;
  cachedTokens = 0;
  completionTokens = 0;
  /** Prompt and cached tokens at admission, for the cache hit rate (known before any request ends). */
  admittedPromptTokens = 0;
  admittedCachedTokens = 0;

  constructor(
    readonly settings: EngineSettings,
    readonly modelName: string,
  ) {
    this.scheduler = new Scheduler(settings);
    this.published = new PublishedGauges(settings, () => this.liveGauges());
    this.scheduler.hooks = this.published;
    this.faults = new FaultInjector(settings.faults, settings.seed);
  }

  stats(): EngineStats {
    const g = this.scheduler.gauges();
    return {
      requests: this.requests,
      rejected: this.rejected,
      active: this.active,
      queued: g.waiting,
      prefilling: g.prefilling,
      transferring: g.transferring,
      running: g.running,
      completed: this.completed,
      aborted: this.aborted,
      promptTokens: this.promptTokens,
      cachedTokens: this.cachedTokens,
      completionTokens: this.completionTokens,
      decodeSteps: g.decodeSteps,
      faultsFired: this.faults.fired(),
    };
  }

  /** The scheduler gauges as they are right now (what a stats log publishes). */
  liveGauges(): SchedulerGaugeValues {
    const g = this.scheduler.gauges();
    return {
      num_running_reqs: g.running,
      num_queue_reqs: g.waiting,
      num_prefill_inflight_queue_reqs: g.transferring,
      num_used_tokens: g.usedTokens,
      token_usage: g.usedTokens / KV_CAPACITY_TOKENS,
      gen_throughput: g.genTokensPerSec,
      cache_hit_rate: this.admittedPromptTokens === 0 ? 0 : this.admittedCachedTokens / this.admittedPromptTokens,
    };
  }

  /** The SGLang series this engine exposes: scheduler gauges as last published (SGLang refreshes them only when
   * it logs stats), counters and histograms live. */
  metricFamilies(): MetricFamily[] {
    const g = this.published.read();
    return [
      { name: 'sglang:num_running_reqs', help: 'The number of running requests.', type: 'gauge', value: g.num_running_reqs },
      { name: 'sglang:num_queue_reqs', help: 'The number of requests in the waiting queue.', type: 'gauge', value: g.num_queue_reqs },
      { name: 'sglang:num_prefill_inflight_queue_reqs', help: 'The number of requests in the prefill inflight (KV transfer) queue.', type: 'gauge', value: g.num_prefill_inflight_queue_reqs },
      { name: 'sglang:num_used_tokens', help: 'The number of used KV cache tokens.', type: 'gauge', value: g.num_used_tokens },
      { name: 'sglang:token_usage', help: 'The token usage (fraction of the KV cache in use).', type: 'gauge', value: g.token_usage },
      { name: 'sglang:gen_throughput', help: 'The generation throughput (token/s).', type: 'gauge', value: g.gen_throughput },
      { name: 'sglang:cache_hit_rate', help: 'The prefix cache hit rate.', type: 'gauge', value: g.cache_hit_rate },
      { name: 'sglang:prompt_tokens_total', help: 'Number of prefill tokens processed.', type: 'counter', value: this.promptTokens },
      { name: 'sglang:generation_tokens_total', help: 'Number of generation tokens processed.', type: 'counter', value: this.completionTokens },
      { name: 'sglang:num_requests_total', help: 'Number of requests processed.', type: 'counter', value: this.completed + this.aborted },
      { name: 'sglang:time_to_first_token_seconds', help: 'Histogram of time to first token in seconds.', type: 'histogram', histogram: this.ttftSeconds },
      { name: 'sglang:e2e_request_latency_seconds', help: 'Histogram of End-to-end request latency in seconds', type: 'histogram', histogram: this.e2eSeconds },
    ];
  }
}
