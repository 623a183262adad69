// What the live dashboard shows, folded from the run's events as they come (it subscribes like the other
// sinks; nothing reads the run's own state): the progress figures, latency by round, throughput over time,
// the key gauges of every monitored target with their verdicts, and the hangs. Everything is bounded: series
// are coarsened past a point budget, the hang list keeps the latest ones. Pure apart from the clock it is given.
import { keyGaugeValues, isCounter, baseName, ClientActivity, GaugeStore, judgeGauges } from '../monitor/index.js';
import { LatencyHistogram } from '../metrics/index.js';
import { arrivalsSpec, commonLabels, labelKey, roundLatencySpec, throughputSpec, verdictRank, type ChartSeries, type ChartSpec } from '../report/index.js';
import { GAUGE_UNITS, gaugeUnit, type GaugeUnit, type GaugeVerdict, type HangEvent, type RequestRecord, type RunEvent } from '../types/index.js';
import { round3, traceLink } from '../util/index.js';

/** Most points a live series carries; past it, neighbouring buckets merge (the bucket width doubles). */
export const MAX_LIVE_POINTS = 300;
/** Hangs listed (the count covers them all). */
export const MAX_LIVE_HANGS = 50;
/** Gauge series drawn per target (the first seen). */
const MAX_GAUGES_PER_TARGET = 12;
/** The interval req/s and tok/s are measured over. */
const RATE_WINDOW_MS = 10_000;
/** Verdicts are recomputed at most this often (they scan the whole run so far). */
const VERDICT_EVERY_MS = 5000;

export interface DashboardPlan {
  name: string;
  target: string;
  /** Requests planned (a fixed-rounds run), or null (a `duration` run). */
  plannedRequests: number | null;
  /** The run's planned length, when it has one. */
  plannedMs: number | null;
  /** `monitor.pin_after_s`, for the gauge verdicts. */
  pinAfterS: number;
  /** `tracing.trace_url`: each hang's trace id a link to it. @default null */
  traceUrl?: string | null;
}

/** One row of the live hang list. */
export interface LiveHang {
  run_s: number;
  agent: number;
  conversation: string;
  round: number;
  /** Where the request was when the watchdog gave up. */
  phase: string;
  deadline: string;
  path: string;
  connection_nth: number | null;
  /** The W3C trace it started (null: none recorded), and the link to it when the run has `tracing.trace_url`. */
  trace_id: string | null;
  trace_link: string | null;
}

export interface LiveTarget {
  target: string;
  ok: boolean;
  last_error: string | null;
  /** Seconds since its last successful scrape (null: none yet). */
  age_s: number | null;
  /** The key gauges (short names) at the last scrape, summed over label sets. */
  key: [string, number][];
  /** The labels every series of the target carries alike (`engine_type="decode",tp_rank="0"`), said once; '' when none. */
  common_labels: string;
  /** Every gauge series' verdict so far, worst first: the gauge's name in full, with the labels that tell it apart. */
  verdicts: { series: string; verdict: string }[];
}

export interface DashboardSnapshot {
  name: string;
  target: string;
  status: 'starting' | 'running' | 'finished';
  elapsed_s: number;
  remaining_s: number | null;
  progress: {
    done: number;
    planned: number | null;
    ok: number;
    errors: number;
    hangs: number;
    in_flight: number;
    /** In-flight requests past their first token. */
    streaming: number;
    oldest_in_flight_s: number | null;
    requests_per_s: number;
    output_tokens_per_s: number;
    ttft_p50_ms: number | null;
    ttft_p99_ms: number | null;
    errors_by_class: Record<string, number>;
  };
  /** An open-loop run's conversations (`agents.arrival`, rate stages) so far; null for a closed-loop run. */
  arrivals: LiveArrivals | null;
  targets: LiveTarget[];
  hangs: LiveHang[];
  hangs_total: number;
  charts: ChartSpec[];
}

export interface LiveArrivals {
  started: number;
  /** Started after waiting for a slot (`max_active` conversations were running). */
  delayed: number;
  /** Conversations running now. */
  active: number;
  start_lag_p50_ms: number;
  start_lag_p99_ms: number;
}

/** Buckets of run time that merge pairwise when there are too many: a bounded series over any length. */
class Buckets<T> {
  widthMs: number;
  readonly #items: (T | undefined)[] = [];
  readonly #make: () => T;
  readonly #merge: (into: T, from: T) => void;

  constructor(widthMs: number, make: () => T, merge: (into: T, from: T) => void) {
    this.widthMs = widthMs;
    this.#make = make;
    this.#merge = merge;
  }

  at(runMs: number): T {
    let i = Math.max(0, Math.floor(runMs / this.widthMs));
    while (i >= MAX_LIVE_POINTS) {
      this.#halve();
      i = Math.max(0, Math.floor(runMs / this.widthMs));
    }
    while (this.#items.length <= i) this.#items.push(undefined);
    return (this.#items[i] ??= this.#make());
  }

  #halve(): void {
    const merged: (T | undefined)[] = [];
    for (let i = 0; i < this.#items.length; i += 2) {
      const a = this.#items[i];
      const b = this.#items[i + 1];
      if (a === undefined) merged.push(b);
      else {
        if (b !== undefined) this.#merge(a, b);
        merged.push(a);
      }
    }
    this.#items.length = 0;
    this.#items.push(...merged);
    this.widthMs *= 2;
  }

  entries(): [number, T][] {
    const out: [number, T][] = [];
    this.#items.forEach((v, i) => {
      if (v !== undefined) out.push([i, v]);
    });
    return out;
  }
}

interface Flow {
  requests: number;
  failed: number;
  tokens: number;
}

interface ArrivalPoint {
  starts: number;
  /** Longest start lag of the conversations started in the bucket. */
  lagMaxMs: number;
  /** Conversations running at the bucket's last start or end. */
  active: number;
}

interface GaugePoint {
  /** Latest values in the bucket, by series name. */
  values: Map<string, number>;
}

/** A gauge series of a target as the live charts draw it. */
interface LiveGauge {
  /** The gauge's name, as scraped. */
  gauge: string;
  labels: Record<string, string>;
  unit: GaugeUnit;
}

/** Each unit's chart: its id's suffix (the requests chart keeps the plain id) and its title. */
const UNIT_CHARTS: Record<GaugeUnit, { suffix: string; title: string }> = {
  requests: { suffix: '', title: 'requests by state' },
  share: { suffix: '-share', title: 'shares (0–1): KV usage, cache hits' },
  tokens: { suffix: '-tokens', title: 'tokens' },
  'tokens/s': { suffix: '-tokens-per-s', title: 'tokens/s' },
  value: { suffix: '-other', title: 'other gauges' },
};

/** A series as a person reads it: its gauge's name without the prefix, and the labels not common to its target. */
function shownName(name: string, labels: Record<string, string>, common: Record<string, string>): string {
  const own = labelKey(Object.fromEntries(Object.entries(labels).filter(([k]) => !(k in common))));
  return `${baseName(name)}${own === '' ? '' : `{${own}}`}`;
}

function seriesName(name: string, labels: Record<string, string>): string {
  const shown = Object.entries(labels).filter(([k]) => k !== 'model_name');
  return `${baseName(name)}${shown.length === 0 ? '' : `{${shown.map(([k, v]) => `${k}="${v}"`).join(',')}}`}`;
}

export class DashboardState {
  readonly #plan: DashboardPlan;
  readonly #now: () => number;
  readonly #startedAt: number;
  /** The run's clock origin on `now()`'s clock, estimated from events (each carries its run time). */
  #runStart = Infinity;
  #ended = false;
  /** Run time the run ended at (its run_end event). */
  #endRunMs: number | null = null;
  #done = 0;
  #ok = 0;
  #errors = 0;
  #hangs = 0;
  #hangRecords = 0;
  readonly #errorsByClass: Record<string, number> = {};
  /** Send time of each agent's request in flight, oldest first (an agent has one at a time). */
  readonly #inFlight = new Map<number, number>();
  readonly #ttft = new LatencyHistogram();
  readonly #rounds = new Map<number, { ttft: LatencyHistogram; e2e: LatencyHistogram; hangs: number }>();
  readonly #flow = new Buckets<Flow>(
    1000,
    () => ({ requests: 0, failed: 0, tokens: 0 }),
    (a, b) => {
      a.requests += b.requests;
      a.failed += b.failed;
      a.tokens += b.tokens;
    },
  );
  /** Request ends of the last RATE_WINDOW_MS: per-second counts in a ring. */
  readonly #recent = new Map<number, Flow>();
  /** Token events streamed so far per client thread (`streamed_tokens` of client samples; -1: main thread),
   * and their sum at each sample of the last RATE_WINDOW_MS: output tok/s while answers still stream. */
  readonly #streamed = new Map<number, number>();
  #streamedHistory: { runMs: number; tokens: number }[] = [];
  /** Agents whose in-flight request has its first token (its TTFT counted then). */
  readonly #firstSeen = new Set<number>();
  readonly #gauges = new Map<
    string,
    { buckets: Buckets<GaugePoint>; names: string[]; series: Map<string, LiveGauge>; last: { runMs: number; ok: boolean; error: string | null; key: [string, number][] } }
  >();
  readonly #store: GaugeStore;
  readonly #client = new ClientActivity();
  #verdicts: GaugeVerdict[] = [];
  #verdictsAt = -Infinity;
  #verdictsStale = false;
  readonly #hangList: LiveHang[] = [];
  readonly #arrivals = { started: 0, delayed: 0, active: 0, lag: new LatencyHistogram() };
  readonly #arrivalBuckets = new Buckets<ArrivalPoint>(
    1000,
    () => ({ starts: 0, lagMaxMs: 0, active: 0 }),
    (a, b) => {
      a.starts += b.starts;
      a.lagMaxMs = Math.max(a.lagMaxMs, b.lagMaxMs);
      a.active = b.active;
    },
  );

  constructor(plan: DashboardPlan, now: () => number) {
    this.#plan = plan;
    this.#now = now;
    this.#startedAt = now();
    this.#store = new GaugeStore(plan.pinAfterS * 1000);
  }

  /** Run time now, ms. */
  #runNow(): number {
    if (this.#endRunMs !== null) return this.#endRunMs;
    const origin = Number.isFinite(this.#runStart) ? this.#runStart : this.#startedAt;
    return Math.max(0, this.#now() - origin);
  }

  #seen(runMs: number): void {
    // An event is handled after it happened, never before: the earliest origin it implies is the closest.
    if (Number.isFinite(runMs)) this.#runStart = Math.min(this.#runStart, this.#now() - runMs);
  }

  /** Folds one run event in; returns the hang row when the event announced a hang. */
  add(event: RunEvent): LiveHang | null {
    switch (event.kind) {
      case 'request_start':
        this.#seen(event.run_ms);
        this.#inFlight.delete(event.agent);
        this.#inFlight.set(event.agent, event.run_ms);
        this.#firstSeen.delete(event.agent);
        return null;
      case 'first_token':
        this.#seen(event.run_ms);
        this.#firstSeen.add(event.agent);
        this.#ttft.recordMs(event.ttft_ms);
        return null;
      case 'client_sample':
        if (event.streamed_tokens !== undefined) this.#streamedSample(event.thread ?? -1, event.run_ms, event.streamed_tokens);
        return null;
      case 'request':
        this.#request(event.record);
        return null;
      case 'hang':
        return this.#hang(event);
      case 'scrape': {
        this.#seen(event.run_ms);
        this.#store.add(event);
        this.#verdictsStale = true;
        this.#scrape(event.target, event.run_ms, event.ok, event.error, event.ok ? event.samples : []);
        return null;
      }
      case 'conversation_start': {
        this.#seen(event.run_ms);
        const a = this.#arrivals;
        a.started += 1;
        if (event.delayed) a.delayed += 1;
        a.active += 1;
        a.lag.recordMs(Math.max(0, event.start_lag_ms));
        const point = this.#arrivalBuckets.at(event.run_ms);
        point.starts += 1;
        point.lagMaxMs = Math.max(point.lagMaxMs, event.start_lag_ms);
        point.active = a.active;
        return null;
      }
      case 'conversation_end': {
        this.#seen(event.run_ms);
        // Only conversations whose start was seen (a closed-loop run announces neither).
        if (this.#arrivals.started === 0) return null;
        this.#arrivals.active = Math.max(0, this.#arrivals.active - 1);
        this.#arrivalBuckets.at(event.run_ms).active = this.#arrivals.active;
        return null;
      }
      case 'run_end':
        this.#seen(event.run_ms);
        this.#ended = true;
        this.#endRunMs = event.run_ms;
        return null;
      default:
        return null;
    }
  }

  #request(r: RequestRecord): void {
    this.#inFlight.delete(r.agent);
    this.#done += 1;
    const endMs = r.run_ms + r.e2e_ms;
    this.#seen(endMs);
    this.#client.add(r.run_ms, endMs, r.status === 'ok');
    this.#verdictsStale = true;
    let round = this.#rounds.get(r.round);
    if (round === undefined) {
      round = { ttft: new LatencyHistogram(), e2e: new LatencyHistogram(), hangs: 0 };
      this.#rounds.set(r.round, round);
    }
    const tokens = r.completion_tokens ?? 0;
    const flow = this.#flow.at(endMs);
    flow.requests += 1;
    flow.tokens += tokens;
    const second = Math.floor(endMs / 1000);
    const recent = this.#recent.get(second) ?? { requests: 0, failed: 0, tokens: 0 };
    recent.requests += 1;
    recent.tokens += tokens;
    this.#recent.set(second, recent);
    for (const s of this.#recent.keys()) if (s < second - RATE_WINDOW_MS / 1000) this.#recent.delete(s);
    // The headline TTFT counted this request at its first token (when its source says so).
    const counted = this.#firstSeen.delete(r.agent);
    if (r.status === 'ok') {
      this.#ok += 1;
      if (r.ttft_ms !== null) {
        if (!counted) this.#ttft.recordMs(r.ttft_ms);
        round.ttft.recordMs(r.ttft_ms);
      }
      round.e2e.recordMs(r.e2e_ms);
      return;
    }
    flow.failed += 1;
    if (r.status === 'hang') {
      round.hangs += 1;
      // A hang event announced it at the deadline; the record comes at the request's end.
      this.#hangRecords += 1;
      return;
    }
    this.#errors += 1;
    const cls = r.error?.class ?? 'error';
    this.#errorsByClass[cls] = (this.#errorsByClass[cls] ?? 0) + 1;
  }

  #hang(e: HangEvent): LiveHang {
    this.#seen(e.run_ms);
    this.#hangs += 1;
    const r = e.record;
    const row: LiveHang = {
      run_s: round3(e.run_ms / 1000),
      agent: r.agent,
      conversation: r.conversation,
      round: r.round,
      phase: r.hang?.phase ?? 'unknown',
      deadline: r.hang === null ? '' : `${r.hang.deadline}${r.hang.deadline_ms === null ? '' : ` ${r.hang.deadline_ms} ms`}`,
      path: r.path,
      connection_nth: r.connection?.nth ?? null,
      trace_id: r.trace_id ?? null,
      trace_link: r.trace_id === undefined ? null : traceLink(this.#plan.traceUrl, r.trace_id),
    };
    this.#hangList.push(row);
    if (this.#hangList.length > MAX_LIVE_HANGS) this.#hangList.shift();
    return row;
  }

  #scrape(target: string, runMs: number, ok: boolean, error: string | null, samples: readonly { name: string; labels: Record<string, string>; value: number; type?: 'gauge' | 'counter' }[]): void {
    let t = this.#gauges.get(target);
    if (t === undefined) {
      t = {
        buckets: new Buckets<GaugePoint>(
          1000,
          () => ({ values: new Map() }),
          (a, b) => b.values.forEach((v, k) => a.values.set(k, v)),
        ),
        names: [],
        series: new Map(),
        last: { runMs, ok, error, key: [] },
      };
      this.#gauges.set(target, t);
    }
    t.last = { runMs: ok ? runMs : t.last.runMs, ok, error, key: ok ? keyGaugeValues(samples) : t.last.key };
    if (!ok) return;
    const point = t.buckets.at(runMs);
    for (const s of samples) {
      if (isCounter(s) || !Number.isFinite(s.value)) continue;
      const name = seriesName(s.name, s.labels);
      if (!t.names.includes(name)) {
        if (t.names.length >= MAX_GAUGES_PER_TARGET) continue;
        t.names.push(name);
        t.series.set(name, { gauge: s.name, labels: s.labels, unit: gaugeUnit(s.name) });
      }
      point.values.set(name, s.value);
    }
  }

  #currentVerdicts(): GaugeVerdict[] {
    const now = this.#now();
    if (this.#verdictsStale && (now - this.#verdictsAt >= VERDICT_EVERY_MS || this.#ended)) {
      this.#verdicts = judgeGauges(this.#store, this.#client, { pinAfterS: this.#plan.pinAfterS });
      this.#verdictsAt = now;
      this.#verdictsStale = false;
    }
    return this.#verdicts;
  }

  #streamedSample(thread: number, runMs: number, tokens: number): void {
    this.#streamed.set(thread, tokens);
    let sum = 0;
    for (const n of this.#streamed.values()) sum += n;
    // Threads sample at about the same moments: one point per moment, with every thread's latest count.
    if (this.#streamedHistory.at(-1)?.runMs === runMs) this.#streamedHistory.pop();
    this.#streamedHistory.push({ runMs, tokens: sum });
    // One sample older than the window stays: the rate spans the whole window.
    const from = this.#streamedHistory.findIndex((p) => p.runMs >= runMs - RATE_WINDOW_MS);
    if (from > 1) this.#streamedHistory = this.#streamedHistory.slice(from - 1);
  }

  /** Output tok/s over the last window from the live token count; null before two samples have it. */
  #streamedRate(): number | null {
    const h = this.#streamedHistory;
    if (h.length < 2) return null;
    const first = h[0]!;
    const last = h.at(-1)!;
    return last.runMs > first.runMs ? ((last.tokens - first.tokens) * 1000) / (last.runMs - first.runMs) : null;
  }

  snapshot(): DashboardSnapshot {
    const runMs = this.#runNow();
    const status = this.#ended ? 'finished' : this.#done === 0 && this.#inFlight.size === 0 ? 'starting' : 'running';
    const oldest = this.#inFlight.values().next();
    const nowSecond = Math.floor(runMs / 1000);
    let reqs = 0;
    let tokens = 0;
    for (const [s, f] of this.#recent) {
      if (s <= nowSecond - RATE_WINDOW_MS / 1000) continue;
      reqs += f.requests;
      tokens += f.tokens;
    }
    const spanS = Math.max(1, Math.min(RATE_WINDOW_MS, runMs) / 1000);
    const verdicts = this.#currentVerdicts();
    return {
      name: this.#plan.name,
      target: this.#plan.target,
      status,
      elapsed_s: round3(runMs / 1000),
      remaining_s: this.#plan.plannedMs === null ? null : round3(Math.max(0, this.#plan.plannedMs - runMs) / 1000),
      progress: {
        done: this.#done,
        planned: this.#plan.plannedRequests,
        ok: this.#ok,
        errors: this.#errors,
        hangs: Math.max(this.#hangs, this.#hangRecords),
        in_flight: this.#inFlight.size,
        streaming: this.#firstSeen.size,
        oldest_in_flight_s: oldest.done === true ? null : round3(Math.max(0, runMs - oldest.value) / 1000),
        requests_per_s: round3(reqs / spanS),
        output_tokens_per_s: round3(this.#streamedRate() ?? tokens / spanS),
        ttft_p50_ms: this.#ttft.count === 0 ? null : round3(this.#ttft.percentileMs(50)),
        ttft_p99_ms: this.#ttft.count === 0 ? null : round3(this.#ttft.percentileMs(99)),
        errors_by_class: { ...this.#errorsByClass },
      },
      arrivals:
        this.#arrivals.started === 0
          ? null
          : {
              started: this.#arrivals.started,
              delayed: this.#arrivals.delayed,
              active: this.#arrivals.active,
              start_lag_p50_ms: round3(this.#arrivals.lag.percentileMs(50)),
              start_lag_p99_ms: round3(this.#arrivals.lag.percentileMs(99)),
            },
      targets: [...this.#gauges.entries()].map(([target, t]) => {
        const own = verdicts.filter((v) => v.target === target);
        const common = commonLabels(own.map((v) => v.labels));
        return {
          target,
          ok: t.last.ok,
          last_error: t.last.error,
          age_s: Number.isFinite(t.last.runMs) ? round3(Math.max(0, runMs - t.last.runMs) / 1000) : null,
          key: t.last.key,
          common_labels: labelKey(common),
          verdicts: own.sort((a, b) => verdictRank(a.verdict) - verdictRank(b.verdict)).map((v) => ({ series: shownName(v.name, v.labels, common), verdict: v.verdict })),
        };
      }),
      hangs: [...this.#hangList],
      hangs_total: Math.max(this.#hangs, this.#hangRecords),
      charts: [...this.#latencyCharts(), this.#throughputChart(runMs), this.#arrivalsChart(), ...this.#gaugeCharts()].filter((c): c is ChartSpec => c !== null),
    };
  }

  #latencyCharts(): ChartSpec[] {
    const rounds = [...this.#rounds.keys()].sort((a, b) => a - b);
    if (rounds.length === 0) return [];
    const pct = (pick: 'ttft' | 'e2e', p: number) =>
      rounds.map((n) => {
        const h = this.#rounds.get(n)![pick];
        return h.count === 0 ? null : round3(h.percentileMs(p));
      });
    const markers = rounds.filter((n) => this.#rounds.get(n)!.hangs > 0).map((n) => ({ x: n, label: `${this.#rounds.get(n)!.hangs} hung` }));
    const spec = (id: string, title: string, key: 'ttft' | 'e2e'): ChartSpec =>
      roundLatencySpec({
        id,
        title,
        rounds,
        series: [
          { label: 'p50', values: pct(key, 50) },
          { label: 'p99', values: pct(key, 99) },
        ],
        markers,
        note: null,
      });
    return [spec('live-ttft', 'TTFT by round', 'ttft'), spec('live-e2e', 'End to end by round', 'e2e')];
  }

  #throughputChart(runMs: number): ChartSpec | null {
    const entries = this.#flow.entries();
    if (entries.length === 0) return null;
    const w = this.#flow.widthMs;
    const x: number[] = [];
    const tokens: (number | null)[] = [];
    const reqs: (number | null)[] = [];
    const failed: (number | null)[] = [];
    const last = entries[entries.length - 1]![0];
    // Every bucket up to the newest, empty ones as zeros (no request ended then: a real drop).
    const by = new Map(entries);
    let partial: ChartSpec['partial'] = null;
    // While the run goes on, the bucket still filling is left out (a few requests over a fraction of a
    // second would read as a spike or a drop); once it has ended, its last bucket is drawn as partial.
    const current = Math.floor(runMs / w);
    for (let i = 0; i <= last; i += 1) {
      if (!this.#ended && i >= current) break;
      const f = by.get(i) ?? { requests: 0, failed: 0, tokens: 0 };
      const start = i * w;
      const end = this.#ended && i === last && runMs < start + w ? Math.max(start + 1, runMs) : start + w;
      const lenS = (end - start) / 1000;
      if (end < start + w) partial = { from_x: round3(start / 1000), to_x: round3(end / 1000), covered_s: round3(lenS), window_s: round3(w / 1000) };
      x.push(round3(end / 1000));
      tokens.push(round3(f.tokens / lenS));
      reqs.push(round3(f.requests / lenS));
      failed.push(round3(f.failed / lenS));
    }
    if (x.length === 0) return null;
    return throughputSpec({
      id: 'live-throughput',
      title: 'Throughput',
      x_label: 's since start',
      x,
      tokens,
      requests: reqs,
      failed,
      markers: this.#hangList.map((h) => ({ x: h.run_s, label: `hang a${h.agent} r${h.round}` })),
      note: `per ${round3(w / 1000)} s, by request end`,
      partial,
    });
  }

  /** An open-loop run's conversations over time: started per second and running (right axis), and the
   * longest start lag of each bucket's starts (a growing lag: arrivals waiting for a slot). */
  #arrivalsChart(): ChartSpec | null {
    const entries = this.#arrivalBuckets.entries();
    if (entries.length === 0) return null;
    const w = this.#arrivalBuckets.widthMs;
    // A bucket with no start or end carries the running count of the one before it.
    let active = 0;
    const byIndex = new Map(entries);
    const last = entries[entries.length - 1]![0];
    const x: number[] = [];
    const starts: (number | null)[] = [];
    const running: (number | null)[] = [];
    const lag: (number | null)[] = [];
    for (let i = 0; i <= last; i += 1) {
      const p = byIndex.get(i);
      if (p !== undefined) active = p.active;
      x.push(round3(((i + 1) * w) / 1000));
      starts.push(round3((p?.starts ?? 0) / (w / 1000)));
      running.push(active);
      lag.push(p === undefined || p.starts === 0 ? null : round3(p.lagMaxMs));
    }
    return arrivalsSpec({
      id: 'live-arrivals',
      title: 'Arrivals',
      x_label: 's since start',
      x,
      started: starts,
      active: [{ label: 'active', values: running }],
      lag: { label: 'start lag max ms', values: lag },
      note: `per ${round3(w / 1000)} s`,
    });
  }

  /** Per target, one chart per unit (requests by state, shares 0–1, tokens, tokens/s, other values): an axis never
   * puts tens of thousands of tokens beside a 0–1 ratio. */
  #gaugeCharts(): ChartSpec[] {
    const out: ChartSpec[] = [];
    const verdicts = this.#verdicts;
    const markers = this.#hangList.map((h) => ({ x: h.run_s, label: `hang a${h.agent} r${h.round}` }));
    for (const [target, t] of this.#gauges) {
      const entries = t.buckets.entries();
      if (entries.length === 0 || t.names.length === 0) continue;
      const w = t.buckets.widthMs;
      const x = entries.map(([i]) => round3(((i + 1) * w) / 1000));
      const id = target.replace(/[^A-Za-z0-9_.-]+/g, '_');
      // Labels every series of the target carries alike (engine_type, tp_rank…) are said once, in the note; a
      // legend entry names its gauge in full and only the labels that tell it apart (two router workers).
      const common = commonLabels([...t.series.values()].map((x) => x.labels));
      for (const unit of GAUGE_UNITS) {
        const names = t.names.filter((n) => t.series.get(n)!.unit === unit);
        if (names.length === 0) continue;
        const series: ChartSeries[] = names.map((name) => {
          const g = t.series.get(name)!;
          const label = shownName(g.gauge, g.labels, common);
          const v = verdicts.find((x) => x.target === target && seriesName(x.name, x.labels) === name);
          return { label: v === undefined ? label : `${label} · ${v.verdict}`, values: entries.map(([, p]) => p.values.get(name) ?? null) };
        });
        const notes = [Object.keys(common).length === 0 ? null : labelKey(common), t.last.ok ? null : `last scrape failed: ${t.last.error ?? 'error'}`].filter((n) => n !== null);
        out.push({
          id: `live-gauges-${id}${UNIT_CHARTS[unit].suffix}`,
          title: `${target} · ${UNIT_CHARTS[unit].title}`,
          x_kind: 'seconds',
          x_label: 's since start',
          y_label: unit,
          y2_label: null,
          x,
          series,
          markers,
          note: notes.length === 0 ? null : notes.join('; '),
        });
      }
    }
    return out;
  }
}
