// Scrapes folded into compact series, in constant memory per change: for each gauge series the stretches it
// stayed non-zero and unchanged (not every sample), for each target when its counters moved (merged runs of
// scrape intervals) and when it did not answer, and the client's requests as (start, end, ok) and when tokens
// streamed. The verdicts (verdict.ts) and the diagnosis read these.
import { baseName, type GaugeSample, type RequestRecord, type ScrapeEvent, type ScrapeTargetSummary, type TargetDown } from '../types/index.js';
import { flowRank, isCounter, isFailureCounter } from './select.js';

/** How a stretch of unchanged non-zero value ended. */
export type StretchEnd = 'open' | 'changed' | 'unobserved';

/**
 * A run of samples at or above one level (the gauge's floor there): from the first sample at ≥ level since
 * the last one below it. `stepped`: a sample below the level came before it (the floor stepped up during the
 * run, rather than the gauge starting there). `returns`: times the value came back down to exactly the level
 * from above — rotation above a floor, not dips below it.
 */
export interface FloorRun {
  level: number;
  fromMs: number;
  lastMs: number;
  /** The first sample below the level after it (null while it holds). */
  toMs: number | null;
  stepped: boolean;
  returns: number;
  /** Samples above the level. */
  above: number;
}

/** Levels whose floors are followed (a stuck request is one, rarely a few). */
export const FLOOR_LEVELS = 4;
/** Closed floor runs kept per series: the longest, each held at least FLOOR_KEEP_MIN_MS (or the pin threshold
 * when shorter) with the value rotating above it. */
const MAX_FLOOR_RUNS = 20;
const FLOOR_KEEP_MIN_MS = 2000;

function keepLongest(runs: FloorRun[], run: FloorRun): void {
  if (runs.length < MAX_FLOOR_RUNS) {
    runs.push(run);
    return;
  }
  let shortest = 0;
  for (let i = 1; i < runs.length; i += 1) if (runs[i]!.lastMs - runs[i]!.fromMs < runs[shortest]!.lastMs - runs[shortest]!.fromMs) shortest = i;
  if (run.lastMs - run.fromMs > runs[shortest]!.lastMs - runs[shortest]!.fromMs) runs[shortest] = run;
}

export interface Stretch {
  value: number;
  /** First and last sample (ms since run start) with this value. */
  startMs: number;
  lastMs: number;
  samples: number;
  end: StretchEnd;
}

/** One gauge series (target, name, labels) over the run. */
export interface GaugeSeries {
  readonly target: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  samples: number;
  firstMs: number;
  lastMs: number;
  lastValue: number;
  nonZeroSamples: number;
  /** Zero samples after the first non-zero one: a gauge that never returns to 0 has a floor. */
  zerosAfterNonZero: number;
  minAfterNonZero: number;
  firstNonZeroMs: number | null;
  /** Drops (to a lower value or 0) after being non-zero. */
  dips: number;
  /** Samples whose value differs from the one before (rises and dips). */
  changes: number;
  longestMs: number;
  longestValue: number;
  /** Per level 1..FLOOR_LEVELS (index level − 1): the open floor run, or null while the value is below it. */
  readonly floorOpen: (FloorRun | null)[];
  /** Per level: whether a sample below it has been seen (so the next run there is a step). */
  readonly belowSeen: boolean[];
  /** Closed floor runs after a step with rotation above them (the longest MAX_FLOOR_RUNS). */
  readonly floorRuns: FloorRun[];
  /** Stretches kept: all while the gauge has never dipped; after that only those of at least `keepMinMs`
   * (shorter ones cannot change the verdict once it has dipped) and the last one. */
  readonly stretches: Stretch[];
}

/** When one counter of a target moved: merged runs of scrape intervals with a change. */
export interface CounterTrack {
  /** Name as exposed (first seen). */
  readonly name: string;
  /** Scrape intervals observed (between two good scrapes with no failed one between) / with a change. */
  intervals: number;
  movedIntervals: number;
  /** Sum of increases over the run (a reset counts its new value). */
  increase: number;
  /** [start, end] pairs, flattened: the counter changed between consecutive scrapes over each. */
  readonly moved: number[];
  /** [last sample before, first after] pairs, flattened: a series of it went back (the process restarted and
   * counted from 0 again), failed scrapes between them or not. */
  readonly resets: number[];
  /** When it was last read (kept across failed scrapes, unlike `lastMs`). */
  seenMs: number | null;
  lastMs: number | null;
  readonly last: Map<string, number>;
}

export interface TargetTrack {
  readonly name: string;
  url: string;
  scrapes: number;
  failed: number;
  burst: number;
  /** Gaps between consecutive scrapes outside bursts, rounded to ms → count (few distinct values). */
  readonly intervals: Map<number, number>;
  prevScrapeMs: number | null;
  prevBurst: boolean;
  firstMs: number | null;
  lastMs: number | null;
  lastError: string | null;
  /** By base name (no family prefix). */
  readonly counters: Map<string, CounterTrack>;
  /** Stretches of failed scrapes, in order (the first MAX_DOWN_PERIODS; `downPeriods` counts them all). */
  readonly down: TargetDown[];
  downPeriods: number;
}

/** Down stretches kept per target (the rest counted). */
const MAX_DOWN_PERIODS = 100;

export function labelKey(labels: Record<string, string>): string {
  const keys = Object.keys(labels).sort();
  return keys.map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',');
}

export class GaugeStore {
  readonly series = new Map<string, GaugeSeries>();
  readonly targets = new Map<string, TargetTrack>();
  readonly #keepMinMs: number;
  /** Series of each target, and the scrape that last saw each one (a series missing from an ok scrape is a gap). */
  readonly #byTarget = new Map<string, Set<GaugeSeries>>();
  readonly #seenAt = new WeakMap<GaugeSeries, number>();
  #scrapeSeq = 0;

  /** @param keepMinMs stretches at least this long are always kept (the pin threshold). */
  constructor(keepMinMs: number) {
    this.#keepMinMs = keepMinMs;
  }

  add(e: ScrapeEvent): void {
    this.#scrapeSeq += 1;
    const t = e.run_ms;
    let target = this.targets.get(e.target);
    if (target === undefined) {
      target = {
        name: e.target,
        url: e.url,
        scrapes: 0,
        failed: 0,
        burst: 0,
        intervals: new Map(),
        prevScrapeMs: null,
        prevBurst: false,
        firstMs: null,
        lastMs: null,
        lastError: null,
        counters: new Map(),
        down: [],
        downPeriods: 0,
      };
      this.targets.set(e.target, target);
    }
    target.scrapes += 1;
    if (e.burst) target.burst += 1;
    if (target.prevScrapeMs !== null && !e.burst && !target.prevBurst) {
      const gap = Math.round(t - target.prevScrapeMs);
      target.intervals.set(gap, (target.intervals.get(gap) ?? 0) + 1);
    }
    target.prevScrapeMs = t;
    target.prevBurst = e.burst;
    const own = this.#byTarget.get(e.target) ?? new Set<GaugeSeries>();
    this.#byTarget.set(e.target, own);
    const openDown = target.down.at(-1)?.to_ms === null ? target.down.at(-1) : undefined;
    if (!e.ok) {
      target.failed += 1;
      target.lastError = e.error;
      for (const s of own) breakSeries(s);
      // A counter is not watched across a gap: its change over the gap says nothing about when work flowed.
      for (const c of target.counters.values()) c.lastMs = null;
      if (openDown !== undefined) {
        openDown.failed += 1;
        openDown.error = e.error;
      } else {
        target.downPeriods += 1;
        if (target.down.length < MAX_DOWN_PERIODS) target.down.push({ from_ms: t, to_ms: null, failed: 1, error: e.error });
      }
      return;
    }
    if (openDown !== undefined) openDown.to_ms = t;
    target.firstMs ??= t;
    target.lastMs = t;
    const counters = new Map<string, GaugeSample[]>();
    for (const sample of e.samples) {
      if (isCounter(sample)) {
        const base = baseName(sample.name);
        const list = counters.get(base) ?? [];
        list.push(sample);
        counters.set(base, list);
        continue;
      }
      const key = `${e.target}\u0000${sample.name}\u0000${labelKey(sample.labels)}`;
      let s = this.series.get(key);
      if (s === undefined) {
        s = newSeries(e.target, sample.name, sample.labels);
        this.series.set(key, s);
        own.add(s);
      }
      this.#seenAt.set(s, this.#scrapeSeq);
      if (Number.isNaN(sample.value)) breakSeries(s);
      else this.#observe(s, t, sample.value);
    }
    for (const s of own) if (this.#seenAt.get(s) !== this.#scrapeSeq) breakSeries(s);
    for (const [base, samples] of counters) observeCounter(target, base, samples, t);
  }

  #observe(s: GaugeSeries, t: number, v: number): void {
    // A drop across a gap in observation still counts: the gauge was seen non-zero, then lower.
    if (s.samples > 0 && v !== s.lastValue) s.changes += 1;
    if (s.samples > 0 && s.lastValue > 0 && v < s.lastValue) {
      s.dips += 1;
      if (s.dips === 1) this.#compact(s);
    }
    s.samples += 1;
    if (s.samples === 1) s.firstMs = t;
    s.lastMs = t;
    if (v !== 0) {
      s.nonZeroSamples += 1;
      s.firstNonZeroMs ??= t;
      s.minAfterNonZero = Math.min(s.minAfterNonZero, v);
    } else if (s.firstNonZeroMs !== null) {
      s.zerosAfterNonZero += 1;
      s.minAfterNonZero = 0;
    }
    const open = s.stretches.at(-1);
    if (open !== undefined && open.end === 'open') {
      if (open.value === v) {
        open.lastMs = t;
        open.samples += 1;
        if (open.lastMs - open.startMs > s.longestMs) {
          s.longestMs = open.lastMs - open.startMs;
          s.longestValue = v;
        }
      } else {
        open.end = 'changed';
        this.#closed(s);
      }
    }
    const last = s.stretches.at(-1);
    if (v !== 0 && (last === undefined || last.end !== 'open')) {
      s.stretches.push({ value: v, startMs: t, lastMs: t, samples: 1, end: 'open' });
      if (s.longestValue === 0) s.longestValue = v;
    }
    this.#observeFloors(s, t, v);
    s.lastValue = v;
  }

  /** Follow the floor at each level: a run at ≥ level opens at its first sample and closes at the first below. */
  #observeFloors(s: GaugeSeries, t: number, v: number): void {
    for (let level = 1; level <= FLOOR_LEVELS; level += 1) {
      const i = level - 1;
      const run = s.floorOpen[i];
      if (v >= level) {
        if (run === null || run === undefined) {
          s.floorOpen[i] = { level, fromMs: t, lastMs: t, toMs: null, stepped: s.belowSeen[i] === true, returns: 0, above: v > level ? 1 : 0 };
          continue;
        }
        run.lastMs = t;
        if (v > level) run.above += 1;
        else if (s.lastValue > level) run.returns += 1;
        continue;
      }
      s.belowSeen[i] = true;
      if (run === null || run === undefined) continue;
      run.toMs = t;
      s.floorOpen[i] = null;
      const heldMs = run.lastMs - run.fromMs;
      if (run.stepped && (heldMs >= this.#keepMinMs || (run.returns >= 1 && heldMs >= FLOOR_KEEP_MIN_MS))) keepLongest(s.floorRuns, run);
    }
  }

  /** A stretch just closed: once the gauge has dipped, a short one cannot change the verdict. */
  #closed(s: GaugeSeries): void {
    const last = s.stretches.at(-1);
    if (last !== undefined && s.dips > 0 && last.lastMs - last.startMs < this.#keepMinMs) s.stretches.pop();
  }

  #compact(s: GaugeSeries): void {
    const open = s.stretches.at(-1)?.end === 'open' ? s.stretches.pop() : undefined;
    const kept = s.stretches.filter((x) => x.lastMs - x.startMs >= this.#keepMinMs);
    s.stretches.length = 0;
    s.stretches.push(...kept);
    if (open !== undefined) s.stretches.push(open);
  }
}

function newSeries(target: string, name: string, labels: Record<string, string>): GaugeSeries {
  return {
    target,
    name,
    labels: { ...labels },
    samples: 0,
    firstMs: 0,
    lastMs: 0,
    lastValue: 0,
    nonZeroSamples: 0,
    zerosAfterNonZero: 0,
    minAfterNonZero: Infinity,
    firstNonZeroMs: null,
    dips: 0,
    changes: 0,
    longestMs: 0,
    longestValue: 0,
    floorOpen: Array.from({ length: FLOOR_LEVELS }, () => null),
    belowSeen: Array.from({ length: FLOOR_LEVELS }, () => false),
    floorRuns: [],
    stretches: [],
  };
}

/** A gap in observation (failed scrape, series missing, NaN): the current stretch ends unobserved. */
function breakSeries(s: GaugeSeries): void {
  const open = s.stretches.at(-1);
  if (open !== undefined && open.end === 'open') open.end = 'unobserved';
}

function observeCounter(target: TargetTrack, base: string, samples: readonly GaugeSample[], t: number): void {
  let c = target.counters.get(base);
  if (c === undefined) {
    c = { name: samples[0]?.name ?? base, intervals: 0, movedIntervals: 0, increase: 0, moved: [], resets: [], seenMs: null, lastMs: null, last: new Map() };
    target.counters.set(base, c);
  }
  let changed = false;
  let wentBack = false;
  for (const s of samples) {
    if (Number.isNaN(s.value)) continue;
    const key = labelKey(s.labels);
    const before = c.last.get(key);
    if (before !== undefined && s.value !== before) {
      changed = true;
      wentBack ||= s.value < before;
      c.increase += s.value > before ? s.value - before : s.value;
    }
    c.last.set(key, s.value);
  }
  if (wentBack && c.seenMs !== null) c.resets.push(c.seenMs, t);
  c.seenMs = t;
  if (c.lastMs !== null) {
    c.intervals += 1;
    if (changed) {
      c.movedIntervals += 1;
      const n = c.moved.length;
      // Contiguous with the previous run of moving intervals: extend it.
      if (n >= 2 && c.moved[n - 1] === c.lastMs) c.moved[n - 1] = t;
      else c.moved.push(c.lastMs, t);
    }
  }
  c.lastMs = t;
}

/**
 * The counter that proves flow on a target, among its selected counters (`monitor.counters`, failure
 * counters left out): one that moved before one that never did, a token counter before any other and a
 * finished-request counter last, then the one that moved in the most intervals. Null: none exposed.
 */
export function flowCounter(target: TargetTrack | undefined): CounterTrack | null {
  if (target === undefined) return null;
  let best: { c: CounterTrack; key: [number, number, number] } | null = null;
  for (const [base, c] of target.counters) {
    if (isFailureCounter(base)) continue;
    const key: [number, number, number] = [c.movedIntervals > 0 ? 0 : 1, flowRank(base), -c.movedIntervals];
    if (best === null || key[0] < best.key[0] || (key[0] === best.key[0] && (key[1] < best.key[1] || (key[1] === best.key[1] && key[2] < best.key[2])))) best = { c, key };
  }
  return best?.c ?? null;
}

/** A request that failed or took long: what a floor step in a queue gauge is matched against. */
export interface HeldRequest {
  startMs: number;
  endMs: number;
  status: 'ok' | 'error' | 'hang';
  /** Where a hang was caught (`first_token`, …); null for others. */
  phase: string | null;
  /** Whether any token came back. */
  streamed: boolean;
}

/** An ok request at least this long is kept as a slow one. */
const HELD_SLOW_MS = 5000;
/** Held requests kept (a night of failures is judged from the first ones). */
const MAX_HELD = 2000;

/** The client's requests: when any was in flight, and when requests completed (to 50 ms). */
export class ClientActivity {
  /** Failed and slow requests one by one (the rest are kept only per bucket). */
  readonly held: HeldRequest[] = [];
  // Kept per 50 ms bucket of run time, not per request, so a night of requests costs a few MB at most
  // (bounded by the run's length): completions counted per bucket, and whether any request was in flight.
  #counts = new Uint32Array(1024);
  #busy = new Uint8Array(1024);
  /** Tokens arriving on some stream (first token to last). */
  #streaming = new Uint8Array(1024);
  #buckets = 0;
  #size = 0;
  #okEnds: number[] | null = null;
  #countPrefix: Float64Array | null = null;
  #busyPrefix: Uint32Array | null = null;
  #streamPrefix: Uint32Array | null = null;

  /** A request record: in flight from send to end, completed when ok, streaming from its first token to its
   * last byte (a hung stream: to its last data event). */
  addRecord(r: Pick<RequestRecord, 'run_ms' | 'e2e_ms' | 'status' | 'ttft_ms' | 'hang'>): void {
    this.add(r.run_ms, r.run_ms + r.e2e_ms, r.status === 'ok');
    if ((r.status !== 'ok' || r.e2e_ms >= HELD_SLOW_MS) && this.held.length < MAX_HELD) {
      this.held.push({ startMs: r.run_ms, endMs: r.run_ms + r.e2e_ms, status: r.status, phase: r.hang?.phase ?? null, streamed: typeof r.ttft_ms === 'number' });
    }
    if (typeof r.ttft_ms !== 'number') return;
    let end = r.run_ms + r.e2e_ms;
    if (r.status === 'hang' && r.hang !== null) {
      const detected = end - (r.hang.waited_ms ?? 0);
      end = detected - (r.hang.last_chunk_age_ms ?? r.hang.last_byte_age_ms);
    }
    this.addStreaming(r.run_ms + r.ttft_ms, end);
  }

  /** Tokens arrived on some stream over [fromMs, toMs]. */
  addStreaming(fromMs: number, toMs: number): void {
    if (!(toMs > fromMs)) return;
    const from = bucketOf(fromMs);
    const to = Math.max(from, Math.ceil(toMs / CLIENT_BUCKET_MS) - 1);
    this.#grow(to + 1);
    this.#streaming.fill(1, from, to + 1);
    this.#streamPrefix = null;
  }

  add(startMs: number, endMs: number, ok: boolean): void {
    // Busy from the start's bucket through the bucket holding the end (an end on a boundary stays out of
    // the next bucket); a completion counts in the bucket holding its end.
    const from = bucketOf(startMs);
    const to = Math.max(from, Math.ceil(Math.max(startMs, endMs) / CLIENT_BUCKET_MS) - 1);
    this.#grow(to + 1);
    this.#busy.fill(1, from, to + 1);
    if (ok) this.#counts[to] = this.#counts[to]! + 1;
    this.#size += 1;
    this.#okEnds = null;
    this.#countPrefix = null;
    this.#busyPrefix = null;
    this.#streamPrefix = null;
  }

  get size(): number {
    return this.#size;
  }

  /** Times of completed (ok) requests, sorted: one per 50 ms bucket that had any, at the bucket's end
   * (never before the real end, so a gap measured from it holds no request). */
  okEnds(): readonly number[] {
    if (this.#okEnds === null) {
      const ends: number[] = [];
      for (let i = 0; i < this.#buckets; i += 1) if (this.#counts[i]! > 0) ends.push((i + 1) * CLIENT_BUCKET_MS);
      this.#okEnds = ends;
    }
    return this.#okEnds;
  }

  /** Completed requests that ended in (fromMs, toMs] (to the bucket). */
  completionsIn(fromMs: number, toMs: number): number {
    if (this.#countPrefix === null) {
      const p = new Float64Array(this.#buckets + 1);
      for (let i = 0; i < this.#buckets; i += 1) p[i + 1] = p[i]! + this.#counts[i]!;
      this.#countPrefix = p;
    }
    // Bucket i counts as "in" when its end, (i + 1) × bucket, is in (from, to].
    const lo = this.#clamp(Math.floor(fromMs / CLIENT_BUCKET_MS));
    const hi = this.#clamp(Math.floor(toMs / CLIENT_BUCKET_MS));
    return hi > lo ? this.#countPrefix[hi]! - this.#countPrefix[lo]! : 0;
  }

  /** Share of [fromMs, toMs] with at least one request in flight (to the bucket). */
  coverage(fromMs: number, toMs: number): number {
    this.#busyPrefix ??= prefixOf(this.#busy, this.#buckets);
    return this.#share(this.#busy, this.#busyPrefix, fromMs, toMs);
  }

  /** Share of [fromMs, toMs] with tokens arriving on some stream (to the bucket). */
  streamingCoverage(fromMs: number, toMs: number): number {
    this.#streamPrefix ??= prefixOf(this.#streaming, this.#buckets);
    return this.#share(this.#streaming, this.#streamPrefix, fromMs, toMs);
  }

  /** The stretches of [fromMs, toMs] with tokens arriving, as [from, to] pairs (to the bucket). */
  streamingRuns(fromMs: number, toMs: number): [number, number][] {
    const runs: [number, number][] = [];
    let open: number | null = null;
    const last = Math.min(this.#buckets - 1, bucketOf(toMs));
    for (let i = bucketOf(fromMs); i <= last; i += 1) {
      if (this.#streaming[i] === 1) open ??= Math.max(fromMs, i * CLIENT_BUCKET_MS);
      else if (open !== null) {
        runs.push([open, i * CLIENT_BUCKET_MS]);
        open = null;
      }
    }
    if (open !== null) runs.push([open, Math.min(toMs, (last + 1) * CLIENT_BUCKET_MS)]);
    return runs;
  }

  #share(bits: Uint8Array, prefix: Uint32Array, fromMs: number, toMs: number): number {
    if (toMs <= fromMs) return 0;
    const first = bucketOf(fromMs);
    const last = bucketOf(toMs);
    let covered = 0;
    // Whole buckets inside, plus the partial first and last ones by their overlap.
    const at = (i: number): number => (i < this.#buckets ? bits[i]! : 0);
    if (first === last) return at(first);
    covered += at(first) * ((first + 1) * CLIENT_BUCKET_MS - fromMs);
    covered += at(last) * (toMs - last * CLIENT_BUCKET_MS);
    const lo = this.#clamp(first + 1);
    const hi = this.#clamp(last);
    if (hi > lo) covered += (prefix[hi]! - prefix[lo]!) * CLIENT_BUCKET_MS;
    return Math.min(1, Math.max(0, covered / (toMs - fromMs)));
  }

  #clamp(i: number): number {
    return Math.max(0, Math.min(this.#buckets, i));
  }

  #grow(buckets: number): void {
    if (buckets > this.#counts.length) {
      let n = this.#counts.length;
      while (n < buckets) n *= 2;
      const counts = new Uint32Array(n);
      counts.set(this.#counts);
      const busy = new Uint8Array(n);
      busy.set(this.#busy);
      const streaming = new Uint8Array(n);
      streaming.set(this.#streaming);
      this.#counts = counts;
      this.#busy = busy;
      this.#streaming = streaming;
    }
    this.#buckets = Math.max(this.#buckets, buckets);
  }
}

/** Resolution of the client activity the verdicts judge gauges against. */
export const CLIENT_BUCKET_MS = 50;

function prefixOf(bits: Uint8Array, n: number): Uint32Array {
  const p = new Uint32Array(n + 1);
  for (let i = 0; i < n; i += 1) p[i + 1] = p[i]! + bits[i]!;
  return p;
}

function bucketOf(ms: number): number {
  return Math.max(0, Math.floor(ms / CLIENT_BUCKET_MS));
}

/** How scraping each target went: counts, the cadence outside bursts, the last error, series seen. */
export function scrapeTargets(store: GaugeStore): ScrapeTargetSummary[] {
  const out: ScrapeTargetSummary[] = [];
  for (const t of store.targets.values()) {
    const gaps = [...t.intervals].sort(([a], [b]) => a - b);
    const total = gaps.reduce((n, [, c]) => n + c, 0);
    let median: number | null = null;
    let seen = 0;
    for (const [gap, count] of gaps) {
      seen += count;
      if (seen * 2 >= total) {
        median = gap;
        break;
      }
    }
    let series = 0;
    for (const s of store.series.values()) if (s.target === t.name) series += 1;
    for (const c of t.counters.values()) series += c.last.size;
    out.push({
      target: t.name,
      url: t.url,
      scrapes: t.scrapes,
      failed: t.failed,
      burst: t.burst,
      interval_ms_p50: median,
      interval_ms_max: gaps.at(-1)?.[0] ?? null,
      last_error: t.lastError,
      series,
      down: t.down.map((d) => ({ ...d })),
    });
  }
  return out.sort((a, b) => a.target.localeCompare(b.target));
}
