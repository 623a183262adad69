// The schema of the monitor (`monitor:`): scrape targets and cadence, selected series, burst sampling on a
// hang, the pin threshold of the verdicts, and probes. Mounted by schema.ts; kept apart because it is long.
// The embedded engine's gauge options (`engine.stats_interval_steps`, `engine.gauge_fault`) are here too.
import { z } from 'zod';
import { DEFAULT_COUNTERS, DEFAULT_GAUGES } from '../types/index.js';

const int = () => z.number().int();
const positiveInt = () => int().min(1);

/** The gauges and counters kept by default: those of every server family roundload knows (types/server-families.ts),
 * matched without the family prefix. The verdicts and the diagnosis judge flow by the counters (docs/monitor.md,
 * "Flow counters"). */
export const DEFAULT_MONITOR_GAUGES: readonly string[] = DEFAULT_GAUGES;
export const DEFAULT_MONITOR_COUNTERS: readonly string[] = DEFAULT_COUNTERS;

const metricName = () => z.string().regex(/^[A-Za-z_:][A-Za-z0-9_:]*$/, 'must be a Prometheus metric name (letters, digits, _ and :)');

/** One server whose `/metrics` the monitor scrapes. */
const targetSchema = z.strictObject({
  /** Short name used in gauges.jsonl, the verdicts and the live line (e.g. `prefill`, `decode`, `router`). */
  name: z.string().regex(/^[A-Za-z0-9._-]{1,32}$/, 'must be 1-32 letters, digits, ., _ or -'),
  /** The metrics URL; a URL with no path (`http://prefill:30000`) gets `/metrics`. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
});

/** One shell command run at start, on a hang, and/or at the end; its output goes to events.jsonl. */
const probeSchema = z.strictObject({
  /** Name used in events.jsonl. */
  name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, ., _ or -'),
  /** Run with `/bin/sh -c`, e.g. `journalctl -u sglang-prefill --since -2min | grep -i watchdog`. */
  command: z.string().min(1),
  /** When it runs. @default ["hang"] */
  on: z
    .array(z.enum(['start', 'hang', 'end']))
    .min(1)
    .default(['hang']),
  /** Killed (its whole process group) after this long. @default 10 */
  timeout_s: z.number().positive().max(3600).default(10),
});

/** Burst sampling: dense scrapes right after a hang (or a slow request), then back to `interval_ms`. */
const burstSchema = z.strictObject({
  /** Scrape interval while bursting. @default 100 */
  interval_ms: int().min(10).max(60_000).default(100),
  /** How long a burst lasts; a new trigger during a burst extends it. @default 15 */
  duration_s: z.number().positive().max(3600).default(15),
  /** Also burst when a request has been in flight this long (`null`: only on hangs). @default null */
  latency_ms: positiveInt().nullable().default(null),
});

export const monitorSchema = z.strictObject({
  /** Scrape gauges, run probes, judge gauges. Off: none of it. @default true */
  enabled: z.boolean().default(true),
  /** Servers to scrape. Empty with the embedded deployment: its `router`, `prefill` and `decode` (or `engine` with
   * `engine.topology: single`). @default [] */
  targets: z.array(targetSchema).default([]),
  /** Time between two scrapes of a target (scrapes of one target never overlap). @default 1000 */
  interval_ms: int().min(50).max(3_600_000).default(1000),
  /** One scrape's deadline; a target that misses it is recorded down and tried again. @default 2000 */
  timeout_ms: positiveInt().max(600_000).default(2000),
  /** Gauges to keep, matched with or without a family prefix (`sglang:`, `vllm:`, `llamacpp:`).
   * @default SGLang's scheduler and disaggregation gauges, and the running/waiting gauges of vLLM, llama.cpp and TGI */
  gauges: z.array(metricName()).default([...DEFAULT_MONITOR_GAUGES]),
  /** Counters to keep (with or without a family prefix and `_total`). Every one of them that is not a
   * failure counter can prove flow to the verdicts: a token counter that moved first, then any other that
   * moved, finished-request counters last. @default the flow and failure counters of SGLang, vLLM, llama.cpp and TGI */
  counters: z.array(metricName()).default([...DEFAULT_MONITOR_COUNTERS]),
  /** A gauge unchanged and non-zero this long with no flow is pinned; shorter than this, a steady gauge
   * tells nothing (the incident: 18 s looked pinned, 85 s showed rotating load). @default 30 */
  pin_after_s: z.number().min(0.1).max(86_400).default(30),
  burst: burstSchema.prefault({}),
  /** Commands run at start, on hangs and at the end. @default [] */
  probes: z.array(probeSchema).default([]),
  /** A hang probe runs at most once per this many seconds (and never two at once). @default 30 */
  probe_min_interval_s: z.number().min(0).max(86_400).default(30),
  /** Most bytes of a probe's stdout and of its stderr kept (the rest is cut, and marked so). @default 65536 */
  probe_max_output_bytes: positiveInt()
    .max(16 * 1024 * 1024)
    .default(65_536),
  /** Seconds between two canaries: a tiny request on the agents' path and one straight to the engine
   * (`target.bypass`), so a hang can be placed in the proxy or the engine. Runs whenever a bypass is known
   * (set, or implied by `target.via` hop / tls-proxy), whatever `enabled` says; 0: no canaries. @default 5 */
  canary_interval_s: z.number().min(0).max(3600).default(5),
  /** One canary's deadline (connect, headers, first token and total alike). @default 5000 */
  canary_timeout_ms: positiveInt().max(600_000).default(5000),
  /** Canaries of one leg allowed out at once. Each leg sends on a fixed grid (every `canary_interval_s`,
   * whatever its earlier canaries do), so both legs sample the same moments; a slot whose leg already has
   * this many out is recorded `not_sent` and counts as failed (the path held every canary). @default 2 */
  canary_concurrency: positiveInt().max(64).default(2),
});
export type MonitorSettings = z.output<typeof monitorSchema>;

const faultGauge = () => z.enum(['num_prefill_inflight_queue_reqs', 'num_running_reqs', 'num_queue_reqs']).default('num_prefill_inflight_queue_reqs');

/** A fault of the embedded engine's gauges, to prove the verdicts: `pin` sticks a gauge at 1 and stops the
 * flow (KV transfers never finish); `rotate` shows rotating load (the gauge at 1, dropping to 0 for `dip_ms`
 * at the end of every `period_s`) while requests complete normally. */
export const gaugeFaultSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('pin'),
    /** The gauge reported stuck at 1 (one of the engine's request gauges). @default "num_prefill_inflight_queue_reqs" */
    gauge: faultGauge(),
    /** Seconds after the engine starts when the pin begins (before it, all is normal). @default 0 */
    after_s: z.number().min(0).default(0),
  }),
  z
    .strictObject({
      kind: z.literal('rotate'),
      /** The gauge that rotates (one of the engine's request gauges). @default "num_prefill_inflight_queue_reqs" */
      gauge: faultGauge(),
      /** One rotation: at 1 for `period_s` minus `dip_ms`, then 0 for `dip_ms`. @default 30 */
      period_s: z.number().positive().default(30),
      /** How long each dip to 0 lasts. @default 500 */
      dip_ms: positiveInt().default(500),
    })
    .superRefine((f, ctx) => {
      if (f.dip_ms >= f.period_s * 1000) ctx.addIssue({ code: 'custom', path: ['dip_ms'], message: `must be shorter than period_s (${f.period_s} s)` });
    }),
]);
