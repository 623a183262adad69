// The embedded deployment's settings (`engine:`): its topology (SGLang PD in miniature — router, prefill,
// decode — or one unified server), SGLang's own defaults (5 s keep-alive, no cache report, 1M context), the
// latency model, the PD timeouts, the router's flow control and health checks, and the faults. Mounted by
// schema.ts; kept apart because it is long.
import { z } from 'zod';
import { engineFaultSchema, PD_FAULT_KINDS } from './engine-faults.js';
import { gaugeFaultSchema } from './monitor.js';

const int = () => z.number().int();
const nonNegative = () => z.number().min(0);
const positiveInt = () => int().min(1);
const seconds = () => z.number().positive().max(86_400);

/** The prefill server (`topology: pd`). */
const prefillSchema = z.strictObject({
  /** How long a request may wait in the bootstrap queue for the decode side to preallocate its KV, like
   * `SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT`: past it the request fails, logged as SGLang logs it. @default 300 */
  bootstrap_timeout_s: seconds().default(300),
  /** Force-fail a request stuck this long in the inflight queue (its KV transfer never finishing), writing a
   * WARNING line to the prefill's log, like the incident build's `SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT`.
   * `null`: never (SGLang has no such watchdog). @default null */
  inflight_timeout_s: seconds().nullable().default(null),
});

/** The decode server (`topology: pd`). */
const decodeSchema = z.strictObject({
  /** How long a preallocated request may wait for its KV to arrive, like `SGLANG_DISAGGREGATION_WAITING_TIMEOUT`:
   * past it the request fails with an error event. @default 300 */
  waiting_timeout_s: seconds().default(300),
});

/** The router (`topology: pd`), with sgl-router's defaults. */
const routerSchema = z.strictObject({
  /** Requests admitted at once (a token bucket of this size, refilled at this rate per second), like
   * `--max-concurrent-requests`. @default 256 */
  max_concurrent_requests: positiveInt().max(1_000_000).default(256),
  /** Requests waiting for a token when none is free (`--queue-size`); 0 answers 429 at once, logging
   * `No tokens available and queuing is disabled, returning 429`. @default 100 */
  queue_size: int().min(0).max(1_000_000).default(100),
  /** A queued request gets 408 after this long (`--queue-timeout-secs`). @default 60 */
  queue_timeout_s: seconds().default(60),
  /** Bound on one request to the workers, streaming included (`--request-timeout-secs`). @default 1800 */
  request_timeout_s: seconds().default(1800),
  /** Seconds between two health checks of each worker (`GET /health`, `--health-check-interval-secs`). @default 60 */
  health_check_interval_s: seconds().default(60),
  /** One health check's deadline (`--health-check-timeout-secs`). @default 5 */
  health_check_timeout_s: seconds().default(5),
  /** Consecutive failed checks that mark a worker unhealthy; the router then sends it nothing. @default 3 */
  health_failure_threshold: positiveInt().max(1000).default(3),
  /** Consecutive good checks that mark it healthy again. @default 2 */
  health_success_threshold: positiveInt().max(1000).default(2),
});

/** The embedded deployment, used when `target.url` is null (and by `roundload engine`). */
export const engineSchema = z
  .strictObject({
    /** `pd`: SGLang PD in miniature — a router, a prefill server and a decode server, each its own HTTP server
     * with its own `/metrics` (the router's on its own metrics port) and log file; `single`: one unified
     * server. See docs/engine.md. @default "pd" */
    topology: z.enum(['pd', 'single']).default('pd'),
    /** Seed of generated answers. @default 7 */
    seed: int().min(0).default(7),
    /** Largest prompt plus `max_tokens`, in tokens, as SGLang's `--context-length` (DeepSeek V4 Flash: 1M);
     * a request past it gets SGLang's 400. @default 1048576 */
    context_length: positiveInt().default(1_048_576),
    /** Idle keep-alive of every server, in seconds (uvicorn's `--timeout-keep-alive`, 5 s), with no
     * `Keep-Alive` header, as uvicorn sends none. @default 5 */
    keep_alive_s: z.number().positive().max(3600).default(5),
    /** Report cached tokens (`usage.prompt_tokens_details.cached_tokens`), like `--enable-cache-report`;
     * off, SGLang sends `prompt_tokens_details: null`. @default false */
    enable_cache_report: z.boolean().default(false),
    /** `/health` generates one token (as SGLang's does) and answers 503 when none came within this long
     * (SGLang's `HEALTH_CHECK_TIMEOUT`). @default 20 */
    health_timeout_s: seconds().default(20),
    /** Prefill cost per 1000 uncached prompt tokens (a per-conversation prefix cache makes repeats cheap). @default 15 */
    prefill_ms_per_1k_tokens: nonNegative().default(15),
    /** Time of one decode step (one token for every running stream) with one stream running. @default 8 */
    decode_step_ms: nonNegative().default(8),
    /** Added to the decode step per running stream, so streams slow down as concurrency grows. @default 0.15 */
    decode_step_ms_per_running: nonNegative().default(0.15),
    /** Divides decode step time: 1.128 is a 12.8% faster decode (for A/B tests). @default 1 */
    decode_speedup: z.number().positive().default(1),
    /** Run-to-run spread of the deployment's speed, in percent: each start of the engine draws one factor
     * f = 1 + run_spread_pct/100 · z (z standard normal, clamped to ±3; f at least 0.5) and prefills and decodes f
     * times as fast until it stops, as a real deployment differs by a few percent from restart to restart (GPU
     * placement, clocks, memory layout). 0: every start runs at the modelled speed. @default 0 */
    run_spread_pct: nonNegative().max(50).default(0),
    /** Seed of that draw, for a reproducible speed (a test, or a start whose factor you want again: the engine
     * logs its seed); null: a fresh random seed at every start. @default null */
    run_spread_seed: int().min(0).max(0xffff_ffff).nullable().default(null),
    /** Fixed part of a KV transfer from prefill to decode (`num_prefill_inflight_queue_reqs` counts it). @default 3 */
    kv_transfer_ms: nonNegative().default(3),
    /** KV transfer bandwidth in Gbit/s (one 400G RDMA link): a prompt's KV, 64 KiB a token, adds its size over
     * this to the transfer (10 000 tokens: 13 ms). `null`: only `kv_transfer_ms`. @default 400 */
    kv_transfer_gbps: z.number().positive().nullable().default(400),
    /** Streams decoded at once; more wait in the queue (`num_queue_reqs`; in PD, the decode prealloc queue). @default 128 */
    max_running_requests: positiveInt().default(128),
    /** Share of rounds answered with tool calls when tools are offered and `tool_choice` is `auto`. @default 0.5 */
    tool_call_ratio: z.number().min(0).max(1).default(0.5),
    /** Fewest output tokens of a content answer. @default 24 */
    output_tokens_min: positiveInt().default(24),
    /** Most output tokens of a content answer (capped by the request's `max_tokens`). @default 96 */
    output_tokens_max: positiveInt().default(96),
    /** Whether answers start with `reasoning_content`: `auto` for a served model name containing `deepseek`
     * (SGLang's `deepseek-v4` reasoning parser); a request's `chat_template_kwargs: {thinking: false}` turns it
     * off, as DeepSeek's chat template does. @default "auto" */
    reasoning: z.enum(['auto', 'on', 'off']).default('auto'),
    /** Most `reasoning_content` tokens streamed before an answer when reasoning is on (0: none). @default 32 */
    reasoning_tokens_max: int().min(0).default(32),
    /** Faults to inject, for tests and demos (docs/engine.md, "Faults"). @default [] */
    faults: z.array(engineFaultSchema).default([]),
    /** Scheduler gauges are refreshed, as SGLang does, only when stats are logged: on each prefill batch and
     * every this many decode steps; an idle server keeps its last values. 0: gauges always live. @default 40 */
    stats_interval_steps: int().min(0).default(40),
    /** A fault of the gauges (`pin` or `rotate`), to prove the monitor's verdicts; in `pd` it acts on the
     * prefill server. @default null */
    gauge_fault: gaugeFaultSchema.nullable().default(null),
    prefill: prefillSchema.prefault({}),
    decode: decodeSchema.prefault({}),
    router: routerSchema.prefault({}),
  })
  .superRefine((e, ctx) => {
    if (e.topology !== 'single') return;
    e.faults.forEach((f, i) => {
      if (PD_FAULT_KINDS.has(f.kind)) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'kind'], message: `${f.kind} happens between prefill and decode: it needs engine.topology pd (the default)` });
      }
    });
  });
export type EngineSettings = z.output<typeof engineSchema>;
