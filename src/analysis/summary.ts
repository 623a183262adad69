// Pure aggregation: request records (and client samples) in, summary.json out. Streaming, so a night's
// records are summarised in constant memory, and the same code rebuilds a killed run from its files.
import { HistogramSet, LatencyHistogram, LATENCY_METRICS, ALL_ROUNDS, type LatencyMetric, type Percentiles } from '../metrics/index.js';
import type {
  ArrivalsEndEvent,
  CanaryEvent,
  ProbeEvent,
  ClientSampleEvent,
  ConversationEndEvent,
  ConversationStartEvent,
  Diagnosis,
  GaugeVerdict,
  HangPhase,
  PhaseEvent,
  PhaseLoad,
  RequestRecord,
  ScrapeEvent,
  ScrapeTargetSummary,
} from '../types/index.js';
import { RESULTS_SCHEMA_VERSION } from '../types/index.js';
import { WindowBuilder, type WindowChoice, type WindowFigures, type WindowSetting } from './windows.js';
import { DiagnosisCollector, withEngineTraceFacts, type EngineTraceEnd, type HungTrace } from './diagnosis/index.js';
import { OpeningStats, type OpeningFigures } from './opening.js';
import { ArrivalStats, lagLimitMs, type PhaseArrivals, type RunArrivals } from './arrivals.js';
import { CapacityCollector, type Capacity } from './capacity.js';
import { evaluateThresholds, DEFAULT_THRESHOLDS, type ThresholdLimits } from './thresholds.js';
import { ClientActivity, GaugeStore, judgeGauges, scrapeTargets } from '../monitor/index.js';
import { WARNING_CLASSES } from '../agent/index.js';
import type { ReplaySummary } from './replay.js';
import { isLoopbackUrl, round3 } from '../util/index.js';

export interface RoundSummary {
  round: number;
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  prompt_tokens_mean: number;
  /** Null when the server reported cached tokens for no request of the run (`totals.cached_tokens`). */
  cached_tokens_mean: number | null;
  completion_tokens_mean: number;
  /** Ok requests of this round whose token counts are estimated (no usage chunk). Absent in older summaries. */
  tokens_estimated?: number;
  /** Tool calls in this round's ok answers, and the ok answers with at least one. Absent in older summaries. */
  tool_calls?: number;
  tool_call_answers?: number;
  /** Mean decode speed of one stream: (completion tokens − 1) / (last token − first token). */
  stream_tokens_per_s_mean: number;
  ttft: Percentiles;
  itl: Percentiles;
  e2e: Percentiles;
  // The figures below are absent in summaries from before they existed.
  /** Send → first content or tool-call token, over ok answers that had one. */
  ttfc?: Percentiles;
  /** Per request (e2e − ttft) ÷ (completion tokens − 1): SGLang's bench scripts' TPOT. */
  tpot?: Percentiles;
  /** First → last reasoning token, over ok answers that reasoned. */
  reasoning?: Percentiles;
  /** Mean reasoning tokens of an ok answer (0 for one that did not reason), and the ok answers whose (non-zero)
   * count is the client's estimate (no count in the usage chunk). */
  reasoning_tokens_mean?: number;
  reasoning_tokens_estimated?: number;
  /** Mean completion tokens per token-carrying stream event (1: an event a token; more: coalesced or
   * buffered), over ok answers; null when none had such an event. */
  tokens_per_event_mean?: number | null;
}

export interface PhaseSummary {
  phase: string;
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  wall_s: number;
  output_tokens_per_s: number;
  requests_per_s: number;
  /** Ok requests of the phase (warm-up left out) whose token counts are estimated. Absent in older summaries. */
  tokens_estimated?: number;
  ttft: Percentiles;
  itl: Percentiles;
  e2e: Percentiles;
  /** As in `RoundSummary`, over the whole phase. Absent in older summaries. */
  ttfc?: Percentiles;
  tpot?: Percentiles;
  reasoning?: Percentiles;
  reasoning_tokens_mean?: number;
  tokens_per_event_mean?: number | null;
  rounds: RoundSummary[];
  /** Requests sent during the phase's warm-up (a sweep's `warmup_s`), left out of every figure above but
   * counted in the run's totals, error classes and hang breakdowns. Present when the phase had any. */
  warmup?: { requests: number; ok: number; errors: number; hangs: number };
  /** A stage of `agents.stages` (or the phase of `agents.arrival`): its level from start to end, its length,
   * and when it began (`start_ms`, since the run started). */
  load?: PhaseLoad & { start_ms: number };
  /** An open-loop phase: its conversations' arrivals, start lag and the conversations active. */
  arrivals?: PhaseArrivals;
}

/** One threshold checked at the end of a run (`thresholds:` in the workload). */
export interface ThresholdResult {
  /** The workload key, e.g. `ttft_p99_ms`. */
  name: string;
  limit: number;
  actual: number;
  ok: boolean;
  /** A sentence for people and JUnit, e.g. `ttft p99 6120 ms > limit 5000 ms`. */
  message: string;
  /** True on the check no workload turns off (`ok_requests`: at least one request ended ok). */
  always_on?: true;
  /** True when `actual` is in part the client's estimate (token counts without a usage chunk). */
  estimated?: true;
}

/** The first error of one class, and how many there were (`first_errors`). */
export interface FirstError {
  class: string;
  count: number;
  message: string;
  http_status: number | null;
  code: string | null;
  /** The path the request went to (`/v1/v1/chat/completions` gives a doubled /v1 away). */
  url_path: string | null;
  /** When it ended, ms since the run started, and which request it was. */
  run_ms: number;
  agent: number;
  conversation: string;
  round: number;
}

/** A warning class of answers that still counted as ok (`warnings`). */
export interface WarningSummary {
  class: string;
  count: number;
  /** What it means and what to check (`WARNING_CLASSES`). */
  meaning: string;
  /** The first request it was seen on. */
  first: { run_ms: number; conversation: string; round: number };
}

export interface Summary {
  schema_version: number;
  run: {
    name: string;
    status: string;
    started_at: string | null;
    ended_at: string | null;
    wall_s: number;
    target: string;
    path: string;
    labels: Record<string, string>;
  };
  totals: {
    requests: number;
    ok: number;
    errors: number;
    hangs: number;
    error_rate: number;
    prompt_tokens: number;
    completion_tokens: number;
    /** Cached prompt tokens the server reported; null when it reported them for no request ("not reported":
     * SGLang sends `prompt_tokens_details: null` unless started with `--enable-cache-report`). */
    cached_tokens: number | null;
    /** Share of prompt tokens (of requests with a usage chunk) the server reported as cached; null when not
     * reported. Once the server reports cached tokens for some request, a request without them counts 0
     * (SGLang leaves `prompt_tokens_details` out when the count is 0). */
    cache_hit_ratio: number | null;
    /** Ok requests whose usage carried `prompt_tokens_details.cached_tokens`. Absent in older summaries. */
    cached_tokens_reported?: number;
    /** Requests whose token counts are the client's estimate (no usage chunk): `completion_tokens` and every
     * figure made from it (throughput, tokens/s thresholds) are then in part estimated. */
    tokens_estimated: number;
    /** Tool calls in ok answers. Absent in older summaries. */
    tool_calls?: number;
    /** Reasoning tokens of ok answers (in `completion_tokens`); `reasoning_tokens_estimated`: ok answers whose
     * non-zero count is the client's estimate (an answer that streamed no reasoning counts 0, not an estimate); `reasoning_answers`: ok answers that streamed any reasoning;
     * `reasoning_only_answers`: of those, the ones with no content or tool call at all (max_tokens reached
     * while thinking, typically). Absent in older summaries. */
    reasoning_tokens?: number;
    reasoning_tokens_estimated?: number;
    reasoning_answers?: number;
    reasoning_only_answers?: number;
  };
  throughput: {
    output_tokens_per_s: number;
    /** Requests (warm-up left out) over the span from the first of them sent to the last ended. */
    requests_per_s: number;
    /** Requests counted in `output_tokens_per_s` whose token counts are estimated (0: all from usage chunks).
     * Absent in older summaries. */
    tokens_estimated?: number;
  };
  phases: PhaseSummary[];
  errors_by_class: Record<string, number>;
  /** The first error of each class (message, status, URL path) with its count, most frequent class first.
   * Absent in older summaries. */
  first_errors?: FirstError[];
  /** `finish_reason` of every request that got one (`stop`, `tool_calls`, `length`…). Absent in older summaries. */
  finish_reasons?: Record<string, number>;
  /** Warning classes of ok answers (e.g. `tool_markup_in_content`), most frequent first. Absent in older summaries. */
  warnings?: WarningSummary[];
  /** Rounds sent (first attempts: resends left out), conversations that `conversation.max_context_tokens`
   * ended before their last round and the rounds they did not send, and the requests the run planned (null
   * for a run that lasts a time, or when not known). Absent in older summaries. */
  conversations?: { rounds_sent: number; context_capped: number; rounds_not_sent: number; requests_planned: number | null };
  hangs: {
    total: number;
    by_phase: Partial<Record<HangPhase, number>>;
    by_round: Record<string, number>;
    /** Hangs by the `nth` request on their socket: many at nth ≥ 2 points at keep-alive reuse. */
    by_connection_reuse: Record<string, number>;
    /** The trace ids of the first hung requests (at most 20), in the order they ended: each one's trace in
     * Jaeger or Tempo (docs/tracing.md). Absent without a hang, or in older summaries. */
    trace_ids?: string[];
  };
  connections: { distinct: number; requests_on_reused: number; max_requests_per_connection: number };
  /** What the OTLP export of the run's spans did (docs/tracing.md); absent when it was off. A rebuilt summary
   * keeps the previous summary.json's (the export is not in the folder). */
  tracing?: TracingSummary;
  client: {
    samples: number;
    loop_delay_p99_ms_max: number;
    loop_utilization_max: number;
    /** Sample windows where the client itself was saturated (its latencies there are suspect). */
    saturated_windows: number;
    /** The longest a results line waited for the disk (null: not sampled, a run older than the writer thread). */
    writer_lag_ms_max: number | null;
    /** Sample windows whose writer lag passed WRITER_LAG_FLAG_MS: the results volume was slow there, or the
     * machine too busy to run the writer thread (the timings are not affected; a kill there would lose more
     * than the last 250 ms of lines). */
    writer_lagging_windows: number;
    /** Results lines never written (the writer's queue was full, or a file failed): the files hold fewer than
     * this summary counts. */
    writer_dropped_lines: number;
    /** What opening sockets cost, and the requests sent in a start-up rush (absent in older summaries). */
    opening?: OpeningFigures;
  };
  /** Figures per `window_s` time window, in time order (drift over a soak, resampling units for A/B). */
  windows: WindowFigures[];
  /** The length of those windows and how it was chosen (`window_s: auto`); absent in summaries written
   * before it existed (their windows are `window_s` of run.json, 10 s by default then). */
  window?: WindowChoice;
  /** Verdict per monitored gauge series (empty when the monitor did not run). */
  gauges: GaugeVerdict[];
  /** How scraping each monitored target went (absent in summaries written before it existed). */
  scrape_targets?: ScrapeTargetSummary[];
  /** Where the hangs come from (verdict `none` when there were none). */
  diagnosis: Diagnosis;
  /** An open-loop run (`agents.arrival`): arrivals, start lag and active conversations in all, and per
   * window. Absent for a closed-loop run. */
  arrivals?: RunArrivals;
  /** A ramp (`agents.stages`) or sweep of rising load: each stage judged, the knee (the highest stage whose
   * service held) and the first stage past it, with why (docs/arrival.md, "Capacity: the knee"). Absent for a
   * run of one level. */
  capacity?: Capacity;
  /** Thresholds verdict: `ok` false drives exit code 1 and failing JUnit cases. */
  thresholds: { ok: boolean; results: ThresholdResult[] };
  /** A replay (`replay:`) against its recording, round by round; absent in generated runs. */
  replay?: ReplaySummary;
}

interface RoundAcc {
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  prompt: number;
  cached: number;
  completion: number;
  tokenCounted: number;
  estimated: number;
  toolCalls: number;
  toolCallAnswers: number;
  streamRateSum: number;
  streamRateN: number;
  reasoning: ReasoningAcc;
}

/** Reasoning tokens and tokens per event of ok answers, for a round's or a phase's means. */
interface ReasoningAcc {
  tokens: number;
  estimated: number;
  perEventSum: number;
  perEventN: number;
}

/** A reasoning count that is the client's estimate and says something: an estimate of 0 (no reasoning streamed,
 * none reported) is what was seen, not a guess worth a caveat. */
function reasoningEstimated(r: RequestRecord): boolean {
  return r.reasoning_tokens_estimated === true && (r.reasoning_tokens ?? 0) > 0;
}

function reasoningAcc(): ReasoningAcc {
  return { tokens: 0, estimated: 0, perEventSum: 0, perEventN: 0 };
}

function addReasoning(acc: ReasoningAcc, r: RequestRecord): void {
  acc.tokens += r.reasoning_tokens ?? 0;
  if (reasoningEstimated(r)) acc.estimated += 1;
  if (typeof r.tokens_per_event === 'number') {
    acc.perEventSum += r.tokens_per_event;
    acc.perEventN += 1;
  }
}

interface PhaseAcc {
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  completion: number;
  estimated: number;
  firstStartMs: number;
  lastEndMs: number;
  reasoning: ReasoningAcc;
  rounds: Map<number, RoundAcc>;
  warmup: { requests: number; ok: number; errors: number; hangs: number };
}

/** The phases' counts added up: the run's totals, and the steady requests' span and throughput (warm-up left out). */
interface PhaseTally {
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  completion: number;
  steadyRequests: number;
  steadyEstimated: number;
  firstStartMs: number;
  lastEndMs: number;
}

/** An open-loop run's arrivals, for the run and per phase (`ArrivalStats.build`). */
type BuiltArrivals = ReturnType<ArrivalStats['build']>;

/** Loop delay p99 above this, or utilisation above 0.9, marks a client sample window as saturated. */
export const SATURATED_LOOP_DELAY_MS = 50;
export const SATURATED_UTILIZATION = 0.9;
/** A client sample whose results writer lag passes this is flagged (the SIGKILL loss bound in docs/results.md). */
export const WRITER_LAG_FLAG_MS = 250;
/** summary.json `tracing`: the OTLP span export of the run. */
export interface TracingSummary {
  /** The traces URL (credentials redacted) and `http/protobuf` or `http/json`. */
  endpoint: string;
  protocol: string;
  /** roundload's spans made, taken by the receiver, and dropped (the queue full, an export that failed, the
   * end's bound run out): a dead or slow collector costs spans, counted here, never the run's latency. */
  spans: number;
  exported: number;
  dropped: number;
  requests: number;
  failed_requests: number;
  last_error: string | null;
  /** The run's own trace id (its run and conversation spans). */
  run_trace_id?: string;
  /** The embedded engine's spans (router, prefill, decode), when it exported them too. */
  engine?: { spans: number; exported: number; dropped: number };
  /** Where the embedded engine's traces of the hung requests end (at most 200), so a summary rebuilt from the
   * folder (`roundload report`) names them as the run did. Absent without one. */
  engine_trace_ends?: EngineTraceEnd[];
}

/** Engine trace ends of hung requests kept in summary.json. */
const MAX_ENGINE_TRACE_ENDS = 200;

/** Hung requests whose trace ids summary.json names. */
const MAX_HANG_TRACES = 20;

/** Whether a client sample window was saturated: its latencies are the client's, not the server's. */
export function isSaturatedSample(s: Pick<ClientSampleEvent, 'loop_delay_p99_ms' | 'loop_utilization'>): boolean {
  return s.loop_delay_p99_ms > SATURATED_LOOP_DELAY_MS || s.loop_utilization > SATURATED_UTILIZATION;
}

export class SummaryBuilder {
  readonly histograms: HistogramSet;
  /** When false, ITL gaps are recorded by the caller straight into `histograms` (live runs). */
  readonly #itlFromRecords: boolean;
  readonly #phases = new Map<string, PhaseAcc>();
  readonly #errors: Record<string, number> = {};
  readonly #hangPhase: Partial<Record<HangPhase, number>> = {};
  readonly #hangRound: Record<string, number> = {};
  readonly #hangReuse: Record<string, number> = {};
  #tracing: TracingSummary | null = null;
  /** The hung requests' traces (first MAX_HANG_TRACES), and where the embedded engine's traces of them end. */
  readonly #hungTraces: HungTrace[] = [];
  #engineTraceEnds: readonly EngineTraceEnd[] = [];
  /** The first hung requests' trace ids, in the order they ended. */
  readonly #hangTraces: string[] = [];
  /** Sockets seen: each socket's first request (nth 1) counts it, so no per-socket id is kept in memory. */
  #connections = 0;
  #reusedRequests = 0;
  #maxNth = 0;
  #prompt = 0;
  #completion = 0;
  #cached = 0;
  /** Prompt tokens of ok requests with a usage chunk (what a cache hit ratio is over). */
  #promptWithUsage = 0;
  #cachedReported = 0;
  #estimated = 0;
  #toolCalls = 0;
  #reasoningTokens = 0;
  #reasoningEstimated = 0;
  #reasoningAnswers = 0;
  #reasoningOnly = 0;
  /** Ok answers with any warning (the `answer_warnings` threshold's count). */
  #warnedAnswers = 0;
  #okAnswers = 0;
  #aborted = 0;
  readonly #firstErrors = new Map<string, FirstError>();
  readonly #finishReasons: Record<string, number> = {};
  readonly #warnings = new Map<string, WarningSummary>();
  #contextCapped = 0;
  #roundsSent = 0;
  #roundsNotSent = 0;
  readonly #plannedRequests: number | null;
  #samples = 0;
  #loopP99Max = 0;
  #eluMax = 0;
  #saturated = 0;
  #writerLagMax: number | null = null;
  #writerLagging = 0;
  #writerDropped = 0;

  readonly #windows: WindowBuilder;
  /** Hangs, canaries and saturated client windows, for the diagnosis. */
  readonly #diagnosis: DiagnosisCollector;
  readonly #thresholds: ThresholdLimits;
  /** Gauge scrapes folded compactly, and the client's requests, for the gauge verdicts. */
  readonly #gauges: GaugeStore;
  readonly #client = new ClientActivity();
  readonly #opening = new OpeningStats();
  readonly #pinAfterS: number;
  /** Open-loop conversations (`conversation_start`/`_end`, `arrivals_end`) and the stages they ran in. */
  readonly #arrivals: ArrivalStats;
  readonly #loads = new Map<string, PhaseLoad & { start_ms: number }>();
  /** The stages and sweep levels, and what the gauges read in each, for the knee. */
  readonly #capacity = new CapacityCollector();

  /** @param options.thresholds the workload's `thresholds:`; default: `DEFAULT_THRESHOLDS` (a hang fails, so do errors on more than 1%).
   * @param options.pinAfterS `monitor.pin_after_s` for the gauge verdicts (default 30).
   * @param options.windowS `window_s` (default 10); with `auto`, `plannedS` is the run's planned length
   * (`plannedLengthS`; null or absent: a run of rounds, re-binned at the end).
   * @param options.plannedRequests requests the run planned (null: it lasts a time, or unknown).
   * @param options.targetUrl the agents' target: on loopback, nothing lies between (no network to blame).
   * @param options.thinkTimeMs `agents.think_time_ms` (default 100): an open-loop stage whose start lag p99
   * passes it (10 ms at least) is `lagging`. */
  constructor(options: {
    histograms?: HistogramSet;
    itlFromRecords: boolean;
    windowS?: WindowSetting;
    plannedS?: number | null;
    thresholds?: ThresholdLimits;
    pinAfterS?: number;
    plannedRequests?: number | null;
    thinkTimeMs?: number;
    targetUrl?: string | null;
  }) {
    this.#diagnosis = new DiagnosisCollector(isLoopbackUrl(options.targetUrl ?? null));
    this.#thresholds = options.thresholds ?? DEFAULT_THRESHOLDS;
    this.#plannedRequests = options.plannedRequests ?? null;
    this.#pinAfterS = options.pinAfterS ?? 30;
    this.#gauges = new GaugeStore(this.#pinAfterS * 1000);
    this.histograms = options.histograms ?? new HistogramSet();
    this.#itlFromRecords = options.itlFromRecords;
    this.#windows = new WindowBuilder(options.windowS ?? 10, options.plannedS ?? null);
    this.#arrivals = new ArrivalStats(this.#windows.windowMs, lagLimitMs(options.thinkTimeMs ?? 100));
  }

  /** A stage beginning, and an open-loop run's conversations starting and ending (events.jsonl, in time order). */
  addLoad(e: PhaseEvent | ConversationStartEvent | ConversationEndEvent | ArrivalsEndEvent): void {
    switch (e.kind) {
      case 'phase':
        this.#capacity.addPhase(e);
        if (e.load === undefined || this.#loads.has(e.name)) return;
        this.#loads.set(e.name, { ...e.load, start_ms: e.run_ms });
        // A stage is a phase of the summary even if no request was sent in it.
        this.#phase(e.name);
        this.#arrivals.addPhase(e);
        return;
      case 'conversation_start':
        this.#arrivals.addStart(e);
        return;
      case 'conversation_end':
        this.#arrivals.addEnd(e);
        return;
      case 'arrivals_end':
        this.#arrivals.addArrivalsEnd(e);
    }
  }

  #phase(name: string): PhaseAcc {
    let phase = this.#phases.get(name);
    if (phase === undefined) {
      phase = {
        requests: 0,
        ok: 0,
        errors: 0,
        hangs: 0,
        completion: 0,
        estimated: 0,
        firstStartMs: Infinity,
        lastEndMs: -Infinity,
        reasoning: reasoningAcc(),
        rounds: new Map(),
        warmup: { requests: 0, ok: 0, errors: 0, hangs: 0 },
      };
      this.#phases.set(name, phase);
    }
    return phase;
  }

  add(r: RequestRecord): void {
    this.#client.addRecord(r);
    this.#windows.add(r);
    this.#diagnosis.add(r);
    this.#opening.add(r);
    this.#addAnswer(r);
    const phase = this.#phase(r.phase);
    if (r.warmup === true) {
      this.#addWarmup(phase, r);
      return;
    }
    phase.firstStartMs = Math.min(phase.firstStartMs, r.run_ms);
    phase.lastEndMs = Math.max(phase.lastEndMs, r.run_ms + r.e2e_ms);
    let round = phase.rounds.get(r.round);
    if (round === undefined) {
      round = {
        requests: 0,
        ok: 0,
        errors: 0,
        hangs: 0,
        prompt: 0,
        cached: 0,
        completion: 0,
        tokenCounted: 0,
        estimated: 0,
        toolCalls: 0,
        toolCallAnswers: 0,
        streamRateSum: 0,
        streamRateN: 0,
        reasoning: reasoningAcc(),
      };
      phase.rounds.set(r.round, round);
    }
    phase.requests += 1;
    round.requests += 1;
    if (r.connection !== null) {
      if (r.connection.nth === 1) this.#connections += 1;
      if (r.connection.nth > 1) this.#reusedRequests += 1;
      this.#maxNth = Math.max(this.#maxNth, r.connection.nth);
    }
    if (r.status === 'ok') {
      phase.ok += 1;
      round.ok += 1;
      const completion = r.completion_tokens ?? 0;
      phase.completion += completion;
      round.prompt += r.prompt_tokens ?? 0;
      round.cached += r.cached_tokens ?? 0;
      round.completion += completion;
      round.tokenCounted += 1;
      round.toolCalls += r.tool_calls.length;
      if (r.tool_calls.length > 0) round.toolCallAnswers += 1;
      if (r.tokens_estimated) {
        phase.estimated += 1;
        round.estimated += 1;
      }
      this.#addTokens(r);
      addReasoning(round.reasoning, r);
      addReasoning(phase.reasoning, r);
      if (r.ttft_ms !== null) this.histograms.recordMs('ttft', r.phase, r.round, r.ttft_ms);
      this.histograms.recordMs('e2e', r.phase, r.round, r.e2e_ms);
      // From the records, like ttft and e2e: a rebuild or a merge gets them back from requests.jsonl.
      if (typeof r.ttfc_ms === 'number') this.histograms.recordMs('ttfc', r.phase, r.round, r.ttfc_ms);
      if (typeof r.tpot_ms === 'number') this.histograms.recordMs('tpot', r.phase, r.round, r.tpot_ms);
      if (typeof r.reasoning_ms === 'number') this.histograms.recordMs('reasoning', r.phase, r.round, r.reasoning_ms);
      if (r.ttft_ms !== null && completion > 1) {
        const decodeS = (r.e2e_ms - r.ttft_ms) / 1000;
        if (decodeS > 0) {
          round.streamRateSum += (completion - 1) / decodeS;
          round.streamRateN += 1;
        }
      }
      if (this.#itlFromRecords && r.itl !== null) {
        // Rebuilding without histograms.json: each request's gaps are known only by their stats.
        this.histograms.recordMs('itl', r.phase, r.round, r.itl.p50_ms, Math.max(1, r.itl.count - 1));
        this.histograms.recordMs('itl', r.phase, r.round, r.itl.max_ms, 1);
      }
    } else if (r.status === 'hang') {
      phase.hangs += 1;
      round.hangs += 1;
      this.#addHang(r);
    } else {
      phase.errors += 1;
      round.errors += 1;
      this.#addError(r);
    }
  }

  /** Token totals of an ok request (warm-up ones too). */
  #addTokens(r: RequestRecord): void {
    this.#prompt += r.prompt_tokens ?? 0;
    this.#completion += r.completion_tokens ?? 0;
    this.#cached += r.cached_tokens ?? 0;
    if (r.cached_tokens !== null) this.#cachedReported += 1;
    if (r.tokens_estimated) this.#estimated += 1;
    else this.#promptWithUsage += r.prompt_tokens ?? 0;
    this.#toolCalls += r.tool_calls.length;
    this.#reasoningTokens += r.reasoning_tokens ?? 0;
    if (reasoningEstimated(r)) this.#reasoningEstimated += 1;
    if (typeof r.reasoning_ms === 'number') {
      this.#reasoningAnswers += 1;
      // No content or tool call at all: the answer ended while the model was still thinking.
      if (r.ttfc_ms === null) this.#reasoningOnly += 1;
    }
  }

  /** An error: its class count and, the first time, its evidence (warm-up ones too). */
  #addError(r: RequestRecord): void {
    const cls = r.error?.class ?? 'other';
    this.#errors[cls] = (this.#errors[cls] ?? 0) + 1;
    if (cls === 'aborted') this.#aborted += 1;
    const first = this.#firstErrors.get(cls);
    if (first !== undefined) {
      first.count += 1;
      return;
    }
    this.#firstErrors.set(cls, {
      class: cls,
      count: 1,
      message: r.error?.message ?? '',
      http_status: r.http_status,
      code: r.error?.code ?? null,
      url_path: r.error?.url_path ?? null,
      run_ms: Math.round(r.run_ms + r.e2e_ms),
      agent: r.agent,
      conversation: r.conversation,
      round: r.round,
    });
  }

  /** What every request says about its answer: finish reason, warnings, a context cap. */
  #addAnswer(r: RequestRecord): void {
    if ((r.attempt ?? 1) === 1) this.#roundsSent += 1;
    if (r.finish_reason !== null) this.#finishReasons[r.finish_reason] = (this.#finishReasons[r.finish_reason] ?? 0) + 1;
    if (r.status === 'ok') this.#okAnswers += 1;
    if ((r.warnings ?? []).length > 0) this.#warnedAnswers += 1;
    for (const cls of r.warnings ?? []) {
      const seen = this.#warnings.get(cls);
      if (seen !== undefined) seen.count += 1;
      else
        this.#warnings.set(cls, {
          class: cls,
          count: 1,
          meaning: (WARNING_CLASSES as Record<string, string>)[cls] ?? cls,
          first: { run_ms: Math.round(r.run_ms + r.e2e_ms), conversation: r.conversation, round: r.round },
        });
    }
    if (r.context_cap !== undefined) {
      this.#contextCapped += 1;
      this.#roundsNotSent += r.context_cap.rounds_left;
    }
  }

  /** A hang in the breakdowns: its phase, round, socket reuse, and its trace id among the first ones named. */
  #addHang(r: RequestRecord): void {
    if (r.hang !== null) this.#hangPhase[r.hang.phase] = (this.#hangPhase[r.hang.phase] ?? 0) + 1;
    this.#hangRound[String(r.round)] = (this.#hangRound[String(r.round)] ?? 0) + 1;
    const nth = String(r.connection?.nth ?? 0);
    this.#hangReuse[nth] = (this.#hangReuse[nth] ?? 0) + 1;
    if (r.trace_id !== undefined && this.#hangTraces.length < MAX_HANG_TRACES) {
      this.#hangTraces.push(r.trace_id);
      this.#hungTraces.push({ trace_id: r.trace_id, request_id: r.request_id ?? null, detected_ms: r.run_ms + r.e2e_ms - (r.hang?.waited_ms ?? 0) });
    }
  }

  /** A warm-up request: out of its phase's figures, in the run's totals and breakdowns (a hang is never hidden). */
  #addWarmup(phase: PhaseAcc, r: RequestRecord): void {
    phase.warmup.requests += 1;
    if (r.connection !== null) {
      if (r.connection.nth === 1) this.#connections += 1;
      if (r.connection.nth > 1) this.#reusedRequests += 1;
      this.#maxNth = Math.max(this.#maxNth, r.connection.nth);
    }
    if (r.status === 'ok') {
      phase.warmup.ok += 1;
      this.#addTokens(r);
    } else if (r.status === 'hang') {
      phase.warmup.hangs += 1;
      this.#addHang(r);
    } else {
      phase.warmup.errors += 1;
      this.#addError(r);
    }
  }

  /** Latency percentiles over every phase and round together (for the thresholds). */
  #overall(phases: readonly PhaseSummary[]): Record<LatencyMetric, Percentiles> {
    const out = {} as Record<LatencyMetric, Percentiles>;
    for (const metric of LATENCY_METRICS) {
      const only = phases.length === 1 ? phases[0]![metric] : undefined;
      if (only !== undefined) {
        out[metric] = only;
        continue;
      }
      const all = new LatencyHistogram();
      for (const p of phases) if (this.histograms.has(metric, p.phase, ALL_ROUNDS)) all.add(this.histograms.get(metric, p.phase, ALL_ROUNDS));
      out[metric] = all.percentiles();
    }
    return out;
  }

  addClientSample(s: ClientSampleEvent): void {
    this.#samples += 1;
    this.#loopP99Max = Math.max(this.#loopP99Max, s.loop_delay_p99_ms);
    this.#eluMax = Math.max(this.#eluMax, s.loop_utilization);
    if (isSaturatedSample(s)) this.#saturated += 1;
    this.#diagnosis.addClientSample(s);
    this.#arrivals.addClientSample(s);
    if (s.writer_lag_ms !== undefined) {
      this.#writerLagMax = Math.max(this.#writerLagMax ?? 0, s.writer_lag_ms);
      if (s.writer_lag_ms > WRITER_LAG_FLAG_MS) this.#writerLagging += 1;
    }
    if (s.writer_dropped_lines !== undefined) this.#writerDropped = Math.max(this.#writerDropped, s.writer_dropped_lines);
  }

  /** The writer's final count of lines not written (after its last drain, which no sample saw). */
  /** What the span export did, once it finished (before the summary is built). */
  setTracing(stats: TracingSummary): void {
    this.#tracing = stats;
  }

  /** Where the embedded engine's traces of failed requests end (the diagnosis names the hung ones'). */
  setEngineTraceEnds(ends: readonly EngineTraceEnd[]): void {
    this.#engineTraceEnds = ends;
  }

  /** The export's figures, with the engine's trace ends of the hung requests (what a rebuild needs again). */
  #tracingWithEnds(tracing: TracingSummary): TracingSummary {
    const hung = new Set(this.#hungTraces.map((h) => h.trace_id));
    const ends = this.#engineTraceEnds.filter((e) => hung.has(e.trace_id)).slice(0, MAX_ENGINE_TRACE_ENDS);
    const { engine_trace_ends: _previous, ...rest } = tracing;
    return ends.length === 0 ? { ...rest } : { ...rest, engine_trace_ends: ends.map((e) => ({ ...e })) };
  }

  setWriterDropped(lines: number): void {
    this.#writerDropped = Math.max(this.#writerDropped, lines);
  }

  /** A gauge scrape (gauges.jsonl): folded into run-length series for the verdicts, not kept sample by sample. */
  addScrape(e: ScrapeEvent): void {
    this.#gauges.add(e);
    this.#diagnosis.addScrape(e);
    this.#capacity.addScrape(e);
  }

  /** A probe's run: its output is read for the engine's watchdog and timeout lines. */
  addProbe(e: ProbeEvent): void {
    this.#diagnosis.addProbe(e);
  }

  /** A canary result (events.jsonl `canary`): the diagnosis compares the proxied path with the direct one. */
  addCanary(e: CanaryEvent): void {
    this.#diagnosis.addCanary(e);
  }

  build(run: Summary['run']): Summary {
    const cachedReported = this.#cachedReported > 0;
    const arrivals = this.#arrivals.seen ? this.#arrivals.build(run.wall_s * 1000) : null;
    const { phases, tally } = this.#phaseSummaries(cachedReported, arrivals);
    const activeS = Number.isFinite(tally.firstStartMs) ? Math.max(0.001, (tally.lastEndMs - tally.firstStartMs) / 1000) : 0;
    const outputTokensPerS = activeS === 0 ? 0 : round3(tally.completion / activeS);
    // An open-loop phase is steady while its conversations keep arriving, not until its first agent is done.
    const windows = this.#windows.build(run.wall_s, this.#arrivals.openLoopPhases());
    const summary: Summary = {
      schema_version: RESULTS_SCHEMA_VERSION,
      run,
      totals: this.#totals(tally, cachedReported),
      throughput: {
        output_tokens_per_s: outputTokensPerS,
        // Over the same span as the requests it counts: the warm-up's requests are out of both.
        requests_per_s: activeS === 0 ? 0 : round3(tally.steadyRequests / activeS),
        tokens_estimated: tally.steadyEstimated,
      },
      phases,
      errors_by_class: { ...this.#errors },
      first_errors: [...this.#firstErrors.values()].sort((a, b) => b.count - a.count || a.run_ms - b.run_ms).map((e) => ({ ...e })),
      finish_reasons: { ...this.#finishReasons },
      warnings: [...this.#warnings.values()].sort((a, b) => b.count - a.count).map((w) => ({ ...w, first: { ...w.first } })),
      conversations: { rounds_sent: this.#roundsSent, context_capped: this.#contextCapped, rounds_not_sent: this.#roundsNotSent, requests_planned: this.#plannedRequests },
      hangs: {
        total: tally.hangs,
        by_phase: { ...this.#hangPhase },
        by_round: { ...this.#hangRound },
        by_connection_reuse: { ...this.#hangReuse },
        ...(this.#hangTraces.length === 0 ? {} : { trace_ids: [...this.#hangTraces] }),
      },
      connections: { distinct: this.#connections, requests_on_reused: this.#reusedRequests, max_requests_per_connection: this.#maxNth },
      ...(this.#tracing === null ? {} : { tracing: this.#tracingWithEnds(this.#tracing) }),
      client: this.#clientSummary(),
      windows,
      window: this.#windows.choice(run.wall_s),
      gauges: judgeGauges(this.#gauges, this.#client, { pinAfterS: this.#pinAfterS }),
      scrape_targets: scrapeTargets(this.#gauges),
      // Set below, once the gauge verdicts are in.
      diagnosis: { verdict: 'none', evidence: [] },
      thresholds: { ok: true, results: [] },
      ...(arrivals === null ? {} : { arrivals: arrivals.run }),
    };
    const capacity = this.#capacity.build({
      phases,
      windows,
      histogram: (metric, phase) => (this.histograms.has(metric, phase, ALL_ROUNDS) ? this.histograms.get(metric, phase, ALL_ROUNDS) : null),
      thresholds: this.#thresholds,
      wallMs: run.wall_s * 1000,
    });
    if (capacity !== null) summary.capacity = capacity;
    summary.diagnosis = withEngineTraceFacts(this.#diagnosis.diagnose(summary.gauges, this.#gauges, this.#client), this.#hungTraces, this.#engineTraceEnds);
    // After the diagnosis: the buffered-streams limit reads its figures.
    summary.thresholds = evaluateThresholds(this.#thresholds, {
      requests: tally.requests,
      ok: tally.ok,
      errors: tally.errors,
      hangs: tally.hangs,
      aborted: this.#aborted,
      errors_by_class: this.#errors,
      output_tokens_per_s: outputTokensPerS,
      tokens_estimated: tally.steadyEstimated,
      ...this.#overall(phases),
      empty_answers: this.#warnings.get('empty_answer')?.count ?? 0,
      answers: { ok: this.#okAnswers, warned: this.#warnedAnswers, by_class: Object.fromEntries([...this.#warnings.values()].map((w) => [w.class, w.count])) },
      windows,
      ...(summary.diagnosis.buffering === undefined ? {} : { buffering: summary.diagnosis.buffering }),
    });
    return summary;
  }

  /** Every phase's summary, in the order the phases began, and their counts added up for the run. */
  #phaseSummaries(cachedReported: boolean, arrivals: BuiltArrivals | null): { phases: PhaseSummary[]; tally: PhaseTally } {
    const phases: PhaseSummary[] = [];
    const tally: PhaseTally = { requests: 0, ok: 0, errors: 0, hangs: 0, completion: 0, steadyRequests: 0, steadyEstimated: 0, firstStartMs: Infinity, lastEndMs: 0 };
    for (const [name, p] of this.#phases) {
      phases.push(this.#phaseSummary(name, p, cachedReported, arrivals));
      tally.requests += p.requests + p.warmup.requests;
      tally.ok += p.ok + p.warmup.ok;
      tally.errors += p.errors + p.warmup.errors;
      tally.hangs += p.hangs + p.warmup.hangs;
      tally.completion += p.completion;
      tally.steadyRequests += p.requests;
      tally.steadyEstimated += p.estimated;
      if (p.requests > 0) {
        tally.firstStartMs = Math.min(tally.firstStartMs, p.firstStartMs);
        tally.lastEndMs = Math.max(tally.lastEndMs, p.lastEndMs);
      }
    }
    return { phases, tally };
  }

  /** One phase's figures (warm-up left out), its rounds in order, and its load and arrivals when it had them. */
  #phaseSummary(name: string, p: PhaseAcc, cachedReported: boolean, arrivals: BuiltArrivals | null): PhaseSummary {
    // A phase of warm-up requests only has no steady part to measure.
    const wallS = p.requests === 0 ? 0 : Math.max(0.001, (p.lastEndMs - p.firstStartMs) / 1000);
    const rounds: RoundSummary[] = [...p.rounds.entries()].sort(([a], [b]) => a - b).map(([round, r]) => this.#roundSummary(name, round, r, cachedReported));
    return {
      phase: name,
      requests: p.requests,
      ok: p.ok,
      errors: p.errors,
      hangs: p.hangs,
      wall_s: round3(wallS),
      output_tokens_per_s: wallS === 0 ? 0 : round3(p.completion / wallS),
      requests_per_s: wallS === 0 ? 0 : round3(p.requests / wallS),
      tokens_estimated: p.estimated,
      ttft: this.histograms.percentiles('ttft', name, ALL_ROUNDS),
      itl: this.histograms.percentiles('itl', name, ALL_ROUNDS),
      e2e: this.histograms.percentiles('e2e', name, ALL_ROUNDS),
      ttfc: this.histograms.percentiles('ttfc', name, ALL_ROUNDS),
      tpot: this.histograms.percentiles('tpot', name, ALL_ROUNDS),
      reasoning: this.histograms.percentiles('reasoning', name, ALL_ROUNDS),
      reasoning_tokens_mean: mean(p.reasoning.tokens, p.ok),
      tokens_per_event_mean: p.reasoning.perEventN === 0 ? null : mean(p.reasoning.perEventSum, p.reasoning.perEventN),
      rounds,
      ...(p.warmup.requests > 0 ? { warmup: { ...p.warmup } } : {}),
      ...(this.#loads.has(name) ? { load: { ...this.#loads.get(name)! } } : {}),
      ...(arrivals?.phases.has(name) === true ? { arrivals: arrivals.phases.get(name)! } : {}),
    };
  }

  /** One round of a phase: counts, token means and latency percentiles. */
  #roundSummary(phase: string, round: number, r: RoundAcc, cachedReported: boolean): RoundSummary {
    return {
      round,
      requests: r.requests,
      ok: r.ok,
      errors: r.errors,
      hangs: r.hangs,
      prompt_tokens_mean: mean(r.prompt, r.tokenCounted),
      cached_tokens_mean: cachedReported ? mean(r.cached, r.tokenCounted) : null,
      completion_tokens_mean: mean(r.completion, r.tokenCounted),
      tokens_estimated: r.estimated,
      tool_calls: r.toolCalls,
      tool_call_answers: r.toolCallAnswers,
      stream_tokens_per_s_mean: mean(r.streamRateSum, r.streamRateN),
      ttft: this.histograms.percentiles('ttft', phase, round),
      itl: this.histograms.percentiles('itl', phase, round),
      e2e: this.histograms.percentiles('e2e', phase, round),
      ttfc: this.histograms.percentiles('ttfc', phase, round),
      tpot: this.histograms.percentiles('tpot', phase, round),
      reasoning: this.histograms.percentiles('reasoning', phase, round),
      reasoning_tokens_mean: mean(r.reasoning.tokens, r.tokenCounted),
      reasoning_tokens_estimated: r.reasoning.estimated,
      tokens_per_event_mean: r.reasoning.perEventN === 0 ? null : mean(r.reasoning.perEventSum, r.reasoning.perEventN),
    };
  }

  /** The run's counts (warm-up included) and token totals. */
  #totals(tally: PhaseTally, cachedReported: boolean): Summary['totals'] {
    return {
      requests: tally.requests,
      ok: tally.ok,
      errors: tally.errors,
      hangs: tally.hangs,
      error_rate: tally.requests === 0 ? 0 : round3((tally.errors + tally.hangs) / tally.requests),
      prompt_tokens: this.#prompt,
      completion_tokens: this.#completion,
      cached_tokens: cachedReported ? this.#cached : null,
      cache_hit_ratio: !cachedReported ? null : this.#promptWithUsage === 0 ? 0 : round3(this.#cached / this.#promptWithUsage),
      cached_tokens_reported: this.#cachedReported,
      tokens_estimated: this.#estimated,
      tool_calls: this.#toolCalls,
      reasoning_tokens: this.#reasoningTokens,
      reasoning_tokens_estimated: this.#reasoningEstimated,
      reasoning_answers: this.#reasoningAnswers,
      reasoning_only_answers: this.#reasoningOnly,
    };
  }

  /** How the client itself fared: event loop, results writer, opening sockets. */
  #clientSummary(): Summary['client'] {
    return {
      samples: this.#samples,
      loop_delay_p99_ms_max: round3(this.#loopP99Max),
      loop_utilization_max: round3(this.#eluMax),
      saturated_windows: this.#saturated,
      writer_lag_ms_max: this.#writerLagMax,
      writer_lagging_windows: this.#writerLagging,
      writer_dropped_lines: this.#writerDropped,
      opening: this.#opening.build(),
    };
  }
}

function mean(sum: number, n: number): number {
  return n === 0 ? 0 : round3(sum / n);
}
