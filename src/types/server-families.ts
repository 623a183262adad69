// The inference servers roundload reads metrics from, each declared once: its metric-name prefix, which gauges
// count running and waiting requests, SGLang PD's hand-off queues, and which counters prove work flows. The
// monitor's defaults, the series selection, the verdicts, the diagnosis, the live line and the report read
// them from here, so a new family (say `trtllm:`) is one entry. No runtime dependencies.

/** How a token counter moves: while streams run (best proof of flow), when requests finish, or with prompts only. */
type Moves = 'while_streaming' | 'at_finish' | 'prompt';

/** The server of a PD deployment a series comes from: the prefill (prompts, the first token) or the decode
 * (every later token: the one whose counters say answers flow). */
export type PdSide = 'prefill' | 'decode';

interface ServerFamily {
  /** The prefix of its metric names, colon included (`sglang:`), or '' when its names carry their own (`tgi_`). */
  prefix: string;
  /** Gauges of requests being worked on, with the live line's short name. */
  running: readonly (readonly [string, string])[];
  /** Gauges of requests waiting for a slot, with the live line's short name ('' when the line leaves it out). */
  queue: readonly (readonly [string, string])[];
  /** SGLang PD's hand-off queues (a request passes through in a KV transfer's time), with short names and
   * the server that exposes them. */
  handoff: readonly (readonly [string, string, PdSide])[];
  /** Other gauges kept by default (usage, throughput, ratios). */
  other: readonly string[];
  /** Of those, the share of the KV cache in use (0–1): a capacity stage's evidence. */
  kv: readonly string[];
  /** Counters of generated or processed tokens: proof of flow, by how they move. */
  tokens: readonly (readonly [string, Moves])[];
  /** Counters of finished requests: they count aborted ones too, so they prove flow last. */
  requests: readonly string[];
  /** Counters of failures kept by default (never proof of flow). */
  failures: readonly string[];
}

export const SERVER_FAMILIES = {
  sglang: {
    prefix: 'sglang:',
    running: [['num_running_reqs', 'running']],
    queue: [
      ['num_queue_reqs', 'queue'],
      ['num_grammar_queue_reqs', ''],
    ],
    handoff: [
      ['num_prefill_prealloc_queue_reqs', 'bootstrap', 'prefill'],
      ['num_prefill_bootstrap_queue_reqs', 'bootstrap', 'prefill'],
      ['num_prefill_inflight_queue_reqs', 'inflight', 'prefill'],
      // The misspelling of older builds.
      ['num_prefill_infight_queue_reqs', 'inflight', 'prefill'],
      ['num_decode_prealloc_queue_reqs', '', 'decode'],
      ['num_decode_transfer_queue_reqs', 'transfer', 'decode'],
    ],
    other: ['num_used_tokens', 'token_usage', 'gen_throughput', 'cache_hit_rate'],
    kv: ['token_usage'],
    tokens: [
      ['realtime_tokens_total', 'while_streaming'],
      ['generation_tokens_total', 'at_finish'],
      ['prompt_tokens_total', 'prompt'],
    ],
    requests: ['num_requests_total'],
    failures: ['num_bootstrap_failed_reqs_total', 'num_transfer_failed_reqs_total'],
  },
  vllm: {
    prefix: 'vllm:',
    running: [['num_requests_running', 'running']],
    queue: [['num_requests_waiting', 'queue']],
    handoff: [],
    other: ['kv_cache_usage_perc', 'gpu_cache_usage_perc'],
    kv: ['kv_cache_usage_perc', 'gpu_cache_usage_perc'],
    tokens: [
      ['generation_tokens_total', 'at_finish'],
      ['prompt_tokens_total', 'prompt'],
    ],
    requests: ['request_success_total'],
    failures: [],
  },
  llamacpp: {
    prefix: 'llamacpp:',
    running: [['requests_processing', 'running']],
    queue: [['requests_deferred', 'queue']],
    handoff: [],
    other: ['kv_cache_usage_ratio'],
    kv: ['kv_cache_usage_ratio'],
    tokens: [
      ['n_decode_total', 'while_streaming'],
      ['tokens_predicted_total', 'at_finish'],
      ['prompt_tokens_total', 'prompt'],
    ],
    requests: [],
    failures: [],
  },
  tgi: {
    prefix: '',
    running: [['tgi_batch_current_size', 'running']],
    queue: [['tgi_queue_size', 'queue']],
    handoff: [],
    other: [],
    kv: [],
    tokens: [
      ['tgi_batch_inference_count', 'while_streaming'],
      ['tgi_request_generated_tokens_sum', 'at_finish'],
    ],
    requests: ['tgi_request_success'],
    failures: ['tgi_request_failure'],
  },
  /** The PD router (sgl-router): requests in flight per worker, and its errors (its request counter counts
   * arrivals, not work done: no proof of flow). */
  sgl_router: {
    prefix: '',
    running: [['sgl_router_running_requests', '']],
    queue: [],
    handoff: [],
    other: [],
    kv: [],
    tokens: [],
    requests: [],
    failures: ['sgl_router_request_errors_total'],
  },
} as const satisfies Record<string, ServerFamily>;

const FAMILIES: readonly ServerFamily[] = Object.values(SERVER_FAMILIES);
const names = (pick: (f: ServerFamily) => readonly (string | readonly [string, ...unknown[]])[]): string[] => [
  ...new Set(FAMILIES.flatMap((f) => pick(f).map((x) => (typeof x === 'string' ? x : x[0])))),
];

const PREFIXES = FAMILIES.map((f) => f.prefix).filter((p) => p !== '');
const PREFIX_PATTERN = new RegExp(`^(${PREFIXES.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`);

/** A name without its server family's prefix (`sglang:num_running_reqs` → `num_running_reqs`). */
export function baseName(name: string): string {
  return name.replace(PREFIX_PATTERN, '');
}

/** Gauges of running requests, of waiting requests, and SGLang PD's hand-off queues (names without prefix). */
export const RUNNING_GAUGES: ReadonlySet<string> = new Set(names((f) => f.running));
export const QUEUE_GAUGES: ReadonlySet<string> = new Set(names((f) => f.queue));
export const HANDOFF_GAUGES: ReadonlySet<string> = new Set(names((f) => f.handoff));
/**
 * Gauges that count the requests a server holds — running, waiting, or in a PD hand-off queue (names without
 * prefix): their sum over one server's series is how many requests it has (SGLang `num_running_reqs` +
 * `num_queue_reqs` + `num_grammar_queue_reqs` + its hand-off queues; llama-server `requests_processing` +
 * `requests_deferred`; the PD router's `sgl_router_running_requests`). Summed within a server, never across
 * the servers of a deployment: a PD request is held by the decode from its prealloc on and by the prefill until
 * its KV is sent (counted twice in between), and a router counts what its workers hold.
 */
export const HELD_GAUGES: ReadonlySet<string> = new Set([...RUNNING_GAUGES, ...QUEUE_GAUGES, ...HANDOFF_GAUGES]);
/** Gauges of the share of the KV cache in use, 0–1 (names without prefix). */
export const KV_USAGE_GAUGES: ReadonlySet<string> = new Set(names((f) => f.kv));

/** What a gauge counts, so that a chart's axis carries one unit: requests (running, waiting, hand-off), a share
 * 0–1, tokens, tokens per second, or some other value. */
export const GAUGE_UNITS = ['requests', 'share', 'tokens', 'tokens/s', 'value'] as const;
export type GaugeUnit = (typeof GAUGE_UNITS)[number];

/** The units of the other gauges kept by default (names without prefix); the rest are `value`. */
const OTHER_GAUGE_UNITS: Readonly<Record<string, GaugeUnit>> = {
  num_used_tokens: 'tokens',
  gen_throughput: 'tokens/s',
  cache_hit_rate: 'share',
  ...Object.fromEntries([...KV_USAGE_GAUGES].map((n) => [n, 'share'] as const)),
};

/** The unit of a gauge (`sglang:token_usage` → `share`). */
export function gaugeUnit(name: string): GaugeUnit {
  const base = baseName(name);
  if (RUNNING_GAUGES.has(base) || QUEUE_GAUGES.has(base) || HANDOFF_GAUGES.has(base)) return 'requests';
  return OTHER_GAUGE_UNITS[base] ?? 'value';
}

/** The gauges kept by default, family by family: running, waiting, the others, the hand-off queues. */
export const DEFAULT_GAUGES: readonly string[] = [...new Set(FAMILIES.flatMap((f) => names(() => [...f.running, ...f.queue, ...f.other, ...f.handoff])))];

const MOVES_ORDER: readonly Moves[] = ['while_streaming', 'at_finish', 'prompt'];

/** Token counters, best proof of flow first: those moving while streams run, then at a request's end, then prompts. */
export const TOKEN_COUNTERS: readonly string[] = MOVES_ORDER.flatMap((moves) => names((f) => f.tokens.filter(([, m]) => m === moves)));

/** Token counters of answers as they finish: what a server made, to weigh against what the client received. */
export const ANSWER_TOKEN_COUNTERS: ReadonlySet<string> = new Set(names((f) => f.tokens.filter(([, m]) => m === 'at_finish')));

/** Counters of finished requests (they count aborted ones too, so they come last as proof of flow). */
export const REQUEST_COUNTERS: readonly string[] = names((f) => f.requests);

/** The counters kept by default: token counters, request counters, failure counters. */
export const DEFAULT_COUNTERS: readonly string[] = [...new Set([...TOKEN_COUNTERS, ...REQUEST_COUNTERS, ...names((f) => f.failures)])];

/** Gauges the live line shows, with their short names (running, queue, then the hand-off queues). */
export const KEY_GAUGES: readonly (readonly [string, string])[] = FAMILIES.flatMap((f) => [...f.running, ...f.queue, ...f.handoff.map(([name, short]) => [name, short] as const)]).filter(
  ([, short]) => short !== '',
);

const PD_SIDES: ReadonlyMap<string, PdSide> = new Map(FAMILIES.flatMap((f) => f.handoff.map(([name, , side]) => [name, side] as const)));

/** The PD server a series says it comes from: its `engine_type` label (SGLang's), else a hand-off queue only
 * that server has; null when it says neither, or another engine_type (a single server, a router, another family). */
export function pdSideOf(name: string, labels: Readonly<Record<string, string>>): PdSide | null {
  const type = labels['engine_type'];
  if (type === 'prefill' || type === 'decode') return type;
  // Another engine_type (SGLang's `unified`: one server doing both) says it is no PD server, whatever queue
  // names it exposes (the embedded unified server shows a prefill's inflight queue).
  if (type !== undefined) return null;
  return PD_SIDES.get(baseName(name)) ?? null;
}
