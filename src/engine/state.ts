// Everything one embedded SGLang server shares across its requests: its role (unified, prefill, decode), its
// scheduler, prefix cache, counters and histograms, its log, and the two views of them: stats() for tests and
// callers, metricFamilies() for /metrics with the labels SGLang writes (`engine_type`, `model_name`,
// `moe_ep_rank`, `pp_rank`, `tp_rank` on scheduler series; `engine_type`, `model_name` on tokenizer series).
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/index.js';
import { DecodeScheduler } from './decode-scheduler.js';
import { PublishedGauges, type GaugeValues } from './gauges.js';
import { KV_CAPACITY_TOKENS, type KvFabric } from './kv.js';
import type { ServerLog } from './logs.js';
import type { EngineTraces } from './tracing.js';
import { Histogram, type Labels, type MetricFamily } from './metrics.js';
import { PrefillScheduler } from './prefill-scheduler.js';
import { PrefixCache } from './prefix-cache.js';
import { Scheduler } from './scheduler.js';
import { SERVER_FAMILIES } from '../types/index.js';

/** Every series the embedded engine exposes carries SGLang's prefix. */
const SGLANG = SERVER_FAMILIES.sglang.prefix;

export type ServerRole = 'unified' | 'prefill' | 'decode';

/** Counters and current state of one server. Token totals are over finished (or aborted) requests. */
export interface ServerStats {
  readonly role: ServerRole;
  /** Chat requests accepted (valid bodies). */
  readonly requests: number;
  /** Requests answered with a 4xx error. */
  readonly rejected: number;
  /** Chat requests in flight, in any stage. */
  readonly active: number;
  /** The waiting queue (`num_queue_reqs`). */
  readonly queued: number;
  readonly prefilling: number;
  /** The prefill inflight queue (`num_prefill_inflight_queue_reqs`; the unified server's simulated transfer). */
  readonly transferring: number;
  /** The running batch (`num_running_reqs`; 0 on a prefill server between batches). */
  readonly running: number;
  /** PD queues: prefill bootstrap, decode prealloc and transfer (0 elsewhere). */
  readonly bootstrap: number;
  readonly prealloc: number;
  readonly decodeTransfer: number;
  readonly completed: number;
  /** Ended by the client (disconnect) or by close() before finishing. */
  readonly aborted: number;
  /** Ended by a PD failure (bootstrap or transfer, a timeout…). */
  readonly failed: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
  readonly decodeSteps: number;
}

const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128];
const ITL_BUCKETS_S = [0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8];
const E2E_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

const GAUGE_HELP: Readonly<Record<string, string>> = {
  num_running_reqs: 'The number of running requests.',
  num_queue_reqs: 'The number of requests in the waiting queue.',
  num_used_tokens: 'The number of used tokens.',
  token_usage: 'The token usage.',
  gen_throughput: 'The generation throughput (token/s).',
  cache_hit_rate: 'The prefix cache hit rate.',
  num_prefill_bootstrap_queue_reqs: 'The number of requests in the prefill bootstrap queue.',
  num_prefill_inflight_queue_reqs: 'The number of requests in the prefill inflight queue.',
  num_decode_prealloc_queue_reqs: 'The number of requests in the decode prealloc queue.',
  num_decode_transfer_queue_reqs: 'The number of requests in the decode transfer queue.',
};

function fixed2(n: number): string {
  return n.toFixed(2);
}

export class ServerState {
  readonly cache = new PrefixCache();
  readonly unified: Scheduler | null = null;
  readonly prefill: PrefillScheduler | null = null;
  readonly decode: DecodeScheduler | null = null;
  readonly published: PublishedGauges;
  readonly ttftSeconds = new Histogram(TTFT_BUCKETS_S);
  readonly itlSeconds = new Histogram(ITL_BUCKETS_S);
  readonly e2eSeconds = new Histogram(E2E_BUCKETS_S);
  readonly schedulerLabels: Labels;
  readonly tokenizerLabels: Labels;
  requests = 0;
  rejected = 0;
  active = 0;
  completed = 0;
  aborted = 0;
  failed = 0;
  promptTokens = 0;
  cachedTokens = 0;
  completionTokens = 0;
  bootstrapFailed = 0;
  transferFailed = 0;
  /** Prompt and cached tokens at admission, for the cache hit rate (known before any request ends). */
  admittedPromptTokens = 0;
  admittedCachedTokens = 0;
  /** performance.now() of the last output the scheduler produced (a token, a finished prefill): `/health` watches it. */
  lastOutputMs = -Infinity;
  /** The deployment's request traces (`--enable-trace`); null when tracing is off. */
  traces: EngineTraces | null = null;
  #lastPrefillLogMs = performance.now();

  constructor(
    readonly role: ServerRole,
    readonly settings: EngineSettings,
    readonly modelName: string,
    readonly log: ServerLog,
    readonly kv: KvFabric | null,
    /** The start's run speed factor (run-speed.ts), shared by every server of the deployment. */
    readonly speedFactor: number,
  ) {
    // Newest SGLang builds add moe_ep_rank; dp_rank appears only with data parallelism (dp > 1), which this server has not.
    this.schedulerLabels = { engine_type: role, model_name: modelName, moe_ep_rank: '0', pp_rank: '0', tp_rank: '0' };
    this.tokenizerLabels = { engine_type: role, model_name: modelName };
    if (role === 'unified') {
      const s = new Scheduler(settings, speedFactor);
      s.hooks = {
        onPrefillBatch: (size, tokens) => this.prefillStats(size, tokens, 0),
        onDecodeStep: (step) => this.decodeStats(step),
        holdTransfers: () => this.published.holdTransfers(),
      };
      this.unified = s;
    } else if (role === 'prefill') {
      const s = new PrefillScheduler(settings, log, speedFactor);
      s.hooks = {
        onPrefillBatch: (batch, tokens) => this.prefillStats(batch.length, tokens, batch.reduce((sum, j) => sum + j.promptTokens, 0) - tokens),
        onFailure: (kind) => {
          this.failed += 1;
          if (kind === 'bootstrap') this.bootstrapFailed += 1;
          else this.transferFailed += 1;
        },
        holdTransfers: () => this.published.holdTransfers(),
      };
      this.prefill = s;
    } else {
      const s = new DecodeScheduler(settings, log, speedFactor);
      s.hooks = {
        onDecodeStep: (step) => this.decodeStats(step),
        onFailure: () => {
          this.failed += 1;
          this.transferFailed += 1;
        },
      };
      this.decode = s;
    }
    // After the scheduler: the published values start as zeros of its gauges.
    this.published = new PublishedGauges(settings, () => this.liveGauges(), { faulted: role !== 'decode' });
  }

  /** Stops the scheduler: every job dropped without a callback (the server destroys the sockets). */
  stop(): void {
    this.unified?.stop();
    this.prefill?.stop();
    this.decode?.stop();
  }

  stats(): ServerStats {
    const base = {
      role: this.role,
      requests: this.requests,
      rejected: this.rejected,
      active: this.active,
      completed: this.completed,
      aborted: this.aborted,
      failed: this.failed,
      promptTokens: this.promptTokens,
      cachedTokens: this.cachedTokens,
      completionTokens: this.completionTokens,
    };
    const zero = { queued: 0, prefilling: 0, transferring: 0, running: 0, bootstrap: 0, prealloc: 0, decodeTransfer: 0, decodeSteps: 0 };
    if (this.unified !== null) {
      const g = this.unified.gauges();
      return { ...base, ...zero, queued: g.waiting, prefilling: g.prefilling, transferring: g.transferring, running: g.running, decodeSteps: g.decodeSteps };
    }
    if (this.prefill !== null) {
      const g = this.prefill.gauges();
      return { ...base, ...zero, queued: g.waiting, prefilling: g.prefilling, transferring: g.inflight, running: g.prefilling, bootstrap: g.bootstrap };
    }
    const g = this.decode!.gauges();
    return { ...base, ...zero, queued: g.waiting, running: g.running, prealloc: g.prealloc, decodeTransfer: g.transfer, decodeSteps: g.decodeSteps };
  }

  /** The scheduler gauges as they are right now (what a stats log publishes), by role. */
  liveGauges(): GaugeValues {
    const hitRate = this.admittedPromptTokens === 0 ? 0 : this.admittedCachedTokens / this.admittedPromptTokens;
    if (this.unified !== null) {
      const g = this.unified.gauges();
      return { ...core(g.running, g.waiting, g.usedTokens, g.genTokensPerSec, hitRate), num_prefill_inflight_queue_reqs: g.transferring };
    }
    if (this.prefill !== null) {
      const g = this.prefill.gauges();
      return { ...core(g.prefilling, g.waiting, g.usedTokens, 0, hitRate), num_prefill_bootstrap_queue_reqs: g.bootstrap, num_prefill_inflight_queue_reqs: g.inflight };
    }
    const g = this.decode!.gauges();
    // SGLang's decode path reports no cache hit rate (it sets 0).
    return { ...core(g.running, g.waiting, g.usedTokens, g.genTokensPerSec, 0), num_decode_prealloc_queue_reqs: g.prealloc, num_decode_transfer_queue_reqs: g.transfer };
  }

  /** The SGLang series this server exposes: scheduler gauges as last published (SGLang refreshes them only
   * when it logs stats), counters and histograms live. */
  metricFamilies(): MetricFamily[] {
    const g = this.published.read();
    const sched = this.schedulerLabels;
    const tok = this.tokenizerLabels;
    const families: MetricFamily[] = Object.entries(g).map(([name, value]) => ({ name: `${SGLANG}${name}`, help: GAUGE_HELP[name] ?? name, type: 'gauge', samples: [{ labels: sched, value }] }));
    const counter = (name: string, help: string, value: number, labels: Labels = tok): MetricFamily => ({ name: `${SGLANG}${name}`, help, type: 'counter', samples: [{ labels, value }] });
    families.push(
      counter('prompt_tokens_total', 'Number of prefill tokens processed.', this.promptTokens),
      counter('generation_tokens_total', 'Number of generation tokens processed.', this.completionTokens),
      counter('num_requests_total', 'Number of requests processed.', this.completed + this.aborted + this.failed),
      counter('cached_tokens_total', 'Number of cached prompt tokens by source (device/host/storage).', this.cachedTokens, { ...tok, cache_source: 'device' }),
    );
    if (this.role !== 'unified') {
      families.push(
        counter('num_bootstrap_failed_reqs_total', 'The number of bootstrap failed requests.', this.bootstrapFailed, sched),
        counter('num_transfer_failed_reqs_total', 'The number of transfer failed requests.', this.transferFailed, sched),
      );
    }
    const histogram = (name: string, help: string, h: Histogram): MetricFamily => ({ name: `${SGLANG}${name}`, help, type: 'histogram', samples: [{ labels: tok, histogram: h }] });
    families.push(
      histogram('time_to_first_token_seconds', 'Histogram of time to first token in seconds.', this.ttftSeconds),
      histogram('inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', this.itlSeconds),
      histogram('e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', this.e2eSeconds),
    );
    return families;
  }

  /** A prefill batch formed: SGLang publishes its gauges and logs `Prefill batch, …`. */
  private prefillStats(newSeq: number, newTokens: number, cachedTokens: number): void {
    this.published.onPrefillBatch();
    const now = performance.now();
    const seconds = Math.max(1e-3, (now - this.#lastPrefillLogMs) / 1000);
    this.#lastPrefillLogMs = now;
    const g = this.liveGauges();
    const disagg = this.role === 'prefill' ? `#prealloc-req: ${g['num_prefill_bootstrap_queue_reqs'] ?? 0}, #inflight-req: ${g['num_prefill_inflight_queue_reqs'] ?? 0}, ` : '';
    this.log.scheduler(
      `Prefill batch, #new-seq: ${newSeq}, #new-token: ${newTokens}, #cached-token: ${cachedTokens}, token usage: ${fixed2(g['token_usage'] ?? 0)}, #running-req: ${this.role === 'prefill' ? 0 : (g['num_running_reqs'] ?? 0)}, #queue-req: ${g['num_queue_reqs'] ?? 0}, ${disagg}input throughput (token/s): ${fixed2(newTokens / seconds)}, `,
    );
  }

  /** Every `stats_interval_steps` decode steps: SGLang publishes its gauges and logs `Decode batch, …`. */
  private decodeStats(step: number): void {
    if (!this.published.onDecodeStep(step)) return;
    const g = this.liveGauges();
    const disagg =
      this.role === 'decode'
        ? `pre-allocated usage: 0.00, #prealloc-req: ${g['num_decode_prealloc_queue_reqs'] ?? 0}, #transfer-req: ${g['num_decode_transfer_queue_reqs'] ?? 0}, #retracted-req: 0, `
        : '';
    this.log.scheduler(
      `Decode batch, #running-req: ${g['num_running_reqs'] ?? 0}, #token: ${g['num_used_tokens'] ?? 0}, token usage: ${fixed2(g['token_usage'] ?? 0)}, ${disagg}cuda graph: True, gen throughput (token/s): ${fixed2(g['gen_throughput'] ?? 0)}, #queue-req: ${g['num_queue_reqs'] ?? 0}, `,
    );
  }
}

function core(running: number, queued: number, usedTokens: number, genTokensPerSec: number, cacheHitRate: number): GaugeValues {
  return {
    num_running_reqs: running,
    num_queue_reqs: queued,
    num_used_tokens: usedTokens,
    token_usage: usedTokens / KV_CAPACITY_TOKENS,
    gen_throughput: genTokensPerSec,
    cache_hit_rate: cacheHitRate,
  };
}
