// The knee of a ramp (`agents.stages`) or a sweep (`sweep.agents`): per stage, in order of the load offered,
// whether its service held — TTFT and ITL within the workload's limits (or, without one, no queueing beyond the
// lightest stage's spread), throughput still rising beyond its noise, errors within the error rate, arrivals
// starting on time — the highest stage that held (the knee) and the first past it, with why and with what the
// engine's gauges said there. The rule is in docs/arrival.md ("Capacity: the knee").
import type { LatencyHistogram } from '../metrics/index.js';
import { baseName, HANDOFF_GAUGES, KV_USAGE_GAUGES, QUEUE_GAUGES, RUNNING_GAUGES, type CapacityReasonKind, type PhaseEvent, type ScrapeEvent } from '../types/index.js';
import { round3 } from '../util/index.js';
import { wilson } from './diagnosis/index.js';
import type { ThresholdLimits } from './thresholds.js';
import type { WindowFigures } from './windows.js';
import type { PhaseArrivals } from './arrivals.js';

/** z of a two-sided 95% interval. */
const Z95 = 1.96;
/** The error rate a stage may reach when `thresholds.error_rate` is off (the workload default). */
const DEFAULT_ERROR_RATE = 0.01;

/** A latency percentile pair of one stage with their 95% intervals (distribution-free: the values at the ranks
 * n·q ± 1.96·√(n·q·(1−q))) and the sample count they rest on. */
export interface LatencyEstimate {
  count: number;
  p50_ms: number;
  p50_low_ms: number;
  p50_high_ms: number;
  p99_ms: number;
  p99_low_ms: number;
  p99_high_ms: number;
}

/** Output tokens per second while the stage ran: the mean of its windows (all phases' tokens, windows wholly
 * inside the stage) and its standard error (null with fewer than 2 windows). */
export interface StageThroughput {
  output_tokens_per_s: number;
  se: number | null;
  windows: number;
}

/** What one monitored target's gauges read over a stage (null: the target reported no such gauge). */
export interface StageGauges {
  target: string;
  scrapes: number;
  /** Requests waiting (`num_queue_reqs` and the like, SGLang PD's hand-off queues included: a request waiting for
   * a KV transfer or for room on the decode server waits there; label sets added up). */
  queue_mean: number | null;
  queue_max: number | null;
  running_mean: number | null;
  running_max: number | null;
  /** Share of the KV cache in use, 0–1 (`token_usage` and the like), the most any series read. */
  kv_usage_max: number | null;
}

export interface CapacityReason {
  kind: CapacityReasonKind;
  /** The figures that decided it, in words. */
  text: string;
}

export interface CapacityStage {
  phase: string;
  /** The load offered: conversations started per second (a rate stage) or agents (a count stage, a sweep level);
   * a linear stage's mean level. */
  rate_per_s?: number;
  agents?: number;
  requests: number;
  errors: number;
  hangs: number;
  ttft: LatencyEstimate | null;
  itl: LatencyEstimate | null;
  throughput: StageThroughput;
  /** Open-loop stages: start lag p99 and the arrivals that waited for a slot or never started. */
  start_lag_p99_ms?: number;
  delayed?: number;
  /** Start lag p99 above one think time (`phases[].arrivals.lagging`). */
  lagging?: boolean;
  /** Per monitored target; null: no scrape in the stage ("not reported"). */
  gauges: StageGauges[] | null;
  holds: boolean;
  reasons: CapacityReason[];
}

/** A stage named by its phase and level. */
export interface CapacityPoint {
  phase: string;
  rate_per_s?: number;
  agents?: number;
}

/** summary.json `capacity`: a run of two stages or more of rising load. */
export interface Capacity {
  /** `rate_per_s`: open-loop stages; `agents`: count stages or a sweep. */
  unit: 'rate_per_s' | 'agents';
  stages: CapacityStage[];
  /** The highest stage whose service held, every stage before it holding too; null when the first did not hold. */
  knee: CapacityPoint | null;
  /** The first stage that did not hold, with why and the gauges there; null when every stage held (the knee is
   * at or above the last stage). */
  past: (CapacityPoint & { reasons: CapacityReason[]; gauges: StageGauges[] | null }) | null;
  /** The limits the stages were judged against, in words. */
  basis: string;
}

/** Where a stage ran (ms since the run started) and the load it offered. */
interface StageSpan {
  phase: string;
  startMs: number;
  /** From here its figures count (after a sweep level's warm-up). */
  judgedFromMs: number;
  /** null: until the next stage (a sweep level), or the run's end. */
  endMs: number | null;
  unit: 'rate_per_s' | 'agents';
  level: number;
}

interface GaugeAcc {
  scrapes: number;
  queue: { sum: number; max: number; n: number };
  running: { sum: number; max: number; n: number };
  kvMax: number | null;
}

/** What the summary hands over for the knee: its phases (figures, load, arrivals), windows, histograms, limits. */
export interface CapacityInput {
  phases: readonly { phase: string; requests: number; errors: number; hangs: number; output_tokens_per_s: number; arrivals?: PhaseArrivals }[];
  windows: readonly WindowFigures[];
  histogram: (metric: 'ttft' | 'itl', phase: string) => LatencyHistogram | null;
  thresholds: ThresholdLimits;
  wallMs: number;
}

/** Collects the stages (from `phase` events) and what the gauges read in each (from scrapes, in time order). */
export class CapacityCollector {
  readonly #spans: StageSpan[] = [];
  /** Per stage, per target. */
  readonly #gauges = new Map<string, Map<string, GaugeAcc>>();

  /** A stage of `agents.stages` (its `load`) or a sweep level (its `agents`); other phases are not stages. */
  addPhase(e: PhaseEvent): void {
    if (this.#spans.some((s) => s.phase === e.name)) return; // another shard announcing it
    if (e.load !== undefined) {
      const level = e.load.ramp === 'linear' ? (e.load.from + e.load.to) / 2 : e.load.to;
      this.#spans.push({ phase: e.name, startMs: e.run_ms, judgedFromMs: e.run_ms, endMs: e.run_ms + e.load.length_ms, unit: e.load.kind === 'arrival' ? 'rate_per_s' : 'agents', level });
    } else if (e.agents !== undefined && /^c\d+$/.test(e.name)) {
      this.#spans.push({ phase: e.name, startMs: e.run_ms, judgedFromMs: e.run_ms + (e.warmup_ms ?? 0), endMs: null, unit: 'agents', level: e.agents });
    } else return;
    this.#spans.sort((a, b) => a.startMs - b.startMs);
  }

  addScrape(e: ScrapeEvent): void {
    if (!e.ok) return;
    const span = this.#spanAt(e.run_ms);
    if (span === null) return;
    let byTarget = this.#gauges.get(span.phase);
    if (byTarget === undefined) {
      byTarget = new Map();
      this.#gauges.set(span.phase, byTarget);
    }
    let acc = byTarget.get(e.target);
    if (acc === undefined) {
      acc = { scrapes: 0, queue: { sum: 0, max: 0, n: 0 }, running: { sum: 0, max: 0, n: 0 }, kvMax: null };
      byTarget.set(e.target, acc);
    }
    acc.scrapes += 1;
    let queue: number | null = null;
    let running: number | null = null;
    for (const s of e.samples) {
      if (s.type === 'counter' || !Number.isFinite(s.value)) continue;
      const name = baseName(s.name);
      if (QUEUE_GAUGES.has(name) || HANDOFF_GAUGES.has(name)) queue = (queue ?? 0) + s.value;
      else if (RUNNING_GAUGES.has(name)) running = (running ?? 0) + s.value;
      else if (KV_USAGE_GAUGES.has(name)) acc.kvMax = Math.max(acc.kvMax ?? 0, s.value);
    }
    fold(acc.queue, queue);
    fold(acc.running, running);
  }

  /** The stage a scrape at `ms` belongs to (null: between stages, in a warm-up, or after the last). */
  #spanAt(ms: number): StageSpan | null {
    let at: StageSpan | null = null;
    for (const s of this.#spans) if (s.startMs <= ms) at = s;
    if (at === null || ms < at.judgedFromMs || (at.endMs !== null && ms > at.endMs)) return null;
    return at;
  }

  /** The knee; null when the run had fewer than two stages of rising load. */
  build(input: CapacityInput): Capacity | null {
    const spans = risingStages(this.#spans);
    if (spans.length < 2) return null;
    const unit = spans[0]!.unit;
    const stages = spans.map((span, i) => this.#stage(span, spans[i + 1], input));
    judge(stages, input.thresholds);
    const pastIndex = stages.findIndex((s) => !s.holds);
    const point = (s: CapacityStage): CapacityPoint => ({ phase: s.phase, ...(unit === 'rate_per_s' ? { rate_per_s: s.rate_per_s! } : { agents: s.agents! }) });
    const knee = pastIndex === 0 ? null : point(stages[pastIndex < 0 ? stages.length - 1 : pastIndex - 1]!);
    const pastStage = pastIndex < 0 ? null : stages[pastIndex]!;
    return {
      unit,
      stages,
      knee,
      past: pastStage === null ? null : { ...point(pastStage), reasons: pastStage.reasons, gauges: pastStage.gauges },
      basis: basisText(input.thresholds),
    };
  }

  #stage(span: StageSpan, next: StageSpan | undefined, input: CapacityInput): CapacityStage {
    const phase = input.phases.find((p) => p.phase === span.phase);
    const endMs = span.endMs ?? next?.startMs ?? input.wallMs;
    const arrivals = phase?.arrivals;
    const ttft = input.histogram('ttft', span.phase);
    const itl = input.histogram('itl', span.phase);
    const gauges = this.#gauges.get(span.phase);
    return {
      phase: span.phase,
      ...(span.unit === 'rate_per_s' ? { rate_per_s: round3(span.level) } : { agents: round3(span.level) }),
      requests: phase?.requests ?? 0,
      errors: phase?.errors ?? 0,
      hangs: phase?.hangs ?? 0,
      ttft: ttft === null ? null : estimate(ttft),
      itl: itl === null ? null : estimate(itl),
      throughput: throughputOver(input.windows, span.judgedFromMs, endMs, phase?.output_tokens_per_s ?? 0),
      ...(arrivals === undefined ? {} : { start_lag_p99_ms: arrivals.start_lag.p99_ms, delayed: arrivals.delayed + (arrivals.not_started ?? 0), lagging: arrivals.lagging }),
      gauges: gauges === undefined ? null : [...gauges.entries()].map(([target, g]) => gaugeFigures(target, g)),
      holds: true,
      reasons: [],
    };
  }
}

function fold(acc: { sum: number; max: number; n: number }, v: number | null): void {
  if (v === null) return;
  acc.sum += v;
  acc.max = Math.max(acc.max, v);
  acc.n += 1;
}

function gaugeFigures(target: string, g: GaugeAcc): StageGauges {
  const mean = (a: GaugeAcc['queue']) => (a.n === 0 ? null : Math.round((a.sum / a.n) * 10) / 10);
  return {
    target,
    scrapes: g.scrapes,
    queue_mean: mean(g.queue),
    queue_max: g.queue.n === 0 ? null : g.queue.max,
    running_mean: mean(g.running),
    running_max: g.running.n === 0 ? null : g.running.max,
    kv_usage_max: g.kvMax === null ? null : round3(g.kvMax),
  };
}

/** The stages in run order while the load rises: a pause (level 0) is skipped, and the first stage that offers
 * no more than the one before ends the ramp (a ramp down is not the way to a knee). */
function risingStages(spans: readonly StageSpan[]): StageSpan[] {
  const out: StageSpan[] = [];
  for (const s of spans) {
    if (s.level <= 0) continue;
    const last = out.at(-1);
    if (last !== undefined && (s.level <= last.level || s.unit !== last.unit)) break;
    out.push(s);
  }
  return out;
}

/** p50 and p99 with their 95% intervals: the values at the ranks n·q ± 1.96·√(n·q·(1−q)). */
export function estimate(h: LatencyHistogram): LatencyEstimate | null {
  const n = h.count;
  if (n === 0) return null;
  const at = (q: number) => round3(h.percentileMs(Math.min(100, Math.max(0, q * 100))));
  const half = (q: number) => Z95 * Math.sqrt((q * (1 - q)) / n);
  return {
    count: n,
    p50_ms: at(0.5),
    p50_low_ms: at(0.5 - half(0.5)),
    p50_high_ms: at(0.5 + half(0.5)),
    p99_ms: at(0.99),
    p99_low_ms: at(0.99 - half(0.99)),
    p99_high_ms: at(0.99 + half(0.99)),
  };
}

/** The stage's output tokens/s over the windows wholly inside it (every phase's tokens: what the server made
 * under this load); the phase's own figure, without a standard error, when no window fits. */
function throughputOver(windows: readonly WindowFigures[], fromMs: number, toMs: number, fallback: number): StageThroughput {
  const byStart = new Map<number, { start: number; end: number; tokens: number }>();
  for (const w of windows) {
    if (w.start_s * 1000 < fromMs - 1 || w.end_s * 1000 > toMs + 1) continue;
    const acc = byStart.get(w.start_s) ?? { start: w.start_s, end: w.end_s, tokens: 0 };
    acc.tokens += w.output_tokens;
    byStart.set(w.start_s, acc);
  }
  const rates = [...byStart.values()].map((w) => w.tokens / Math.max(0.001, w.end - w.start));
  if (rates.length === 0) return { output_tokens_per_s: fallback, se: null, windows: 0 };
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  if (rates.length < 2) return { output_tokens_per_s: round3(mean), se: null, windows: 1 };
  const variance = rates.reduce((a, r) => a + (r - mean) ** 2, 0) / (rates.length - 1);
  return { output_tokens_per_s: round3(mean), se: round3(Math.sqrt(variance / rates.length)), windows: rates.length };
}

/** Sets each stage's `holds` and `reasons` (docs/arrival.md, "Capacity: the knee"). */
function judge(stages: CapacityStage[], limits: ThresholdLimits): void {
  const base = stages.find((s) => s.ttft !== null) ?? null;
  stages.forEach((s, i) => {
    const reasons: CapacityReason[] = [];
    const add = (kind: CapacityReasonKind, text: string) => reasons.push({ kind, text });
    const failed = s.errors + s.hangs;
    const errorLimit = limits.error_rate ?? DEFAULT_ERROR_RATE;
    if (s.requests > 0 && failed > 0) {
      const w = wilson(failed, s.requests);
      if (w.low > errorLimit) add('errors', `${failed} of ${s.requests} requests failed (${pct(failed / s.requests)}, 95% ${pct(w.low)}–${pct(w.high)}) > ${pct(errorLimit)}`);
    }
    for (const [metric, limit] of [
      ['ttft', limits.ttft_p99_ms],
      ['itl', limits.itl_p99_ms],
    ] as const) {
      const e = s[metric];
      if (limit === null || e === null || e.p99_low_ms <= limit) continue;
      add('latency', `${metric.toUpperCase()} p99 ${ms(e.p99_ms)} (95% ${ms(e.p99_low_ms)}–${ms(e.p99_high_ms)}, n ${e.count}) > limit ${ms(limit)}`);
    }
    if (limits.ttft_p99_ms === null && base !== null && s !== base && s.ttft !== null && s.ttft.p50_low_ms > base.ttft!.p99_ms) {
      add(
        'queueing',
        `TTFT p50 ${ms(s.ttft.p50_ms)} (95% ${ms(s.ttft.p50_low_ms)}–${ms(s.ttft.p50_high_ms)}, n ${s.ttft.count}) > ${base.phase}'s TTFT p99 ${ms(base.ttft!.p99_ms)} (n ${base.ttft!.count})`,
      );
    }
    const prev = stages[i - 1];
    if (prev !== undefined && s.throughput.se !== null && prev.throughput.se !== null) {
      const rise = s.throughput.output_tokens_per_s - prev.throughput.output_tokens_per_s;
      const noise = Z95 * Math.hypot(s.throughput.se, prev.throughput.se);
      const change = rise < -noise ? `it fell by ${tps(-rise)}, more than its noise ±${tps(noise)}` : `a rise of ${tps(rise)}, within its noise ±${tps(noise)}`;
      if (rise <= noise)
        add(
          'throughput_flat',
          `output ${tps(prev.throughput.output_tokens_per_s)} → ${tps(s.throughput.output_tokens_per_s)} tok/s: ${change} (95%, ${prev.throughput.windows} and ${s.throughput.windows} windows)`,
        );
    }
    if (s.delayed !== undefined && s.delayed > 0) add('start_lag', `${s.delayed} arrivals waited for a slot or never started (max_active reached)`);
    else if (s.lagging === true) add('start_lag', `start lag p99 ${ms(s.start_lag_p99_ms ?? 0)} above one think time: arrivals started late`);
    s.reasons = reasons;
    s.holds = reasons.length === 0;
  });
}

/** The limits in words, for summary.json and the report. */
function basisText(limits: ThresholdLimits): string {
  const latency = [limits.ttft_p99_ms === null ? null : `TTFT p99 ≤ ${ms(limits.ttft_p99_ms)}`, limits.itl_p99_ms === null ? null : `ITL p99 ≤ ${ms(limits.itl_p99_ms)}`].filter((x) => x !== null);
  const queueing = limits.ttft_p99_ms === null ? "TTFT p50 not above the lightest stage's TTFT p99 (thresholds.ttft_p99_ms unset)" : null;
  const rules = [...latency, queueing, 'throughput rising beyond its noise', `errors ≤ ${pct(limits.error_rate ?? DEFAULT_ERROR_RATE)}`, 'arrivals starting on time'].filter((x) => x !== null);
  return `${rules.join('; ')}; each judged on its 95% interval`;
}

function pct(v: number): string {
  return `${round3(v * 100)}%`;
}

function ms(v: number): string {
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`;
}

function tps(v: number): string {
  return Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
}
