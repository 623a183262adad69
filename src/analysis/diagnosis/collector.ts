// Collects, in bounded memory, what the diagnosis reads from a run's stream of records and events: hung and
// failed requests, canaries, scrapes, every client sample, TTFT over time and buffered streams. The gauge
// verdicts, flow counters and client activity come from the summary's own monitor store at the end.
import type { BufferingFigures, CanaryEvent, ClientSampleEvent, Diagnosis, GaugeVerdict, PathKind, ProbeEvent, RequestRecord, ScrapeEvent } from '../../types/index.js';
import { flowCounter, type ClientActivity, type GaugeStore } from '../../monitor/index.js';
import { MAX_PROBE_READS, probeRead } from './engine-log.js';
import {
  canaryPoint,
  clientWindow,
  errorSpan,
  featuresOf,
  hangSpan,
  scrapePoint,
  withSamplerLateness,
  type CanaryPoint,
  type ClientWindow,
  type CompletedPoint,
  type ErrorSpan,
  type FlowTrack,
  type HangSpan,
  type ProbeRead,
  type RequestActivity,
  type ScrapePoint,
} from './inputs.js';
import { tallyError, tallyHang } from './episodes.js';
import { FailureKeeper, Reservoir, type KeepLimits } from './failure-keeper.js';
import { IdleTally } from './idle-signal.js';
import { InFlightCounter } from './in-flight.js';
import { diagnose, MERGE_GAP_MS } from './judge.js';

/**
 * What is kept of each kind of failure (hangs, errors) over a night, in bounded memory: a uniform sample of
 * 5,000 across the run, the first 20 and last 20 of each stretch, 250 stretches apart (past that the two
 * closest merge), and exact counts of all. At most 15,000 spans of each kind.
 */
export const KEEP_LIMITS: Readonly<KeepLimits> = { sample: 5000, edge: 20, stretches: 250, gapMs: MERGE_GAP_MS, seed: 0x5eed };
/** Test knob: `ROUNDLOAD_TEST_DIAGNOSIS_KEEP=n` keeps a sample of n and n at each end of a stretch, so a
 * test's short run is judged from a sample as a night is (docs/development.md). */
function keepLimits(): KeepLimits {
  const n = Number(process.env.ROUNDLOAD_TEST_DIAGNOSIS_KEEP);
  return Number.isInteger(n) && n > 0 ? { ...KEEP_LIMITS, sample: n, edge: n } : { ...KEEP_LIMITS };
}
/** Completed requests kept, a uniform sample across the run: what the failures' features are tested against. */
const COMPLETED_SAMPLE = 5000;
/** Most items of each other kind kept: bounded memory over a night. */
const MAX_CANARIES = 100_000;
const MAX_SCRAPES = 200_000;
const MAX_CLIENT_WINDOWS = 200_000;
/** A stream with at least this many tokens can tell buffered from streamed. */
export const BUFFERED_MIN_TOKENS = 8;
/** TTFT kept per quarter second of send time: sums and counts, not requests. */
const TTFT_BUCKET_MS = 250;
/** Streams judged for buffering, counted per second of their end. */
const STREAM_BUCKET_MS = 1000;
/** A client this late reads a whole stream at once whatever the path did: its streams are not judged. */
const BUFFER_LATE_MS = 200;

/** Counts per fixed bucket of run time, growing as needed. */
class Buckets {
  #counts = new Uint32Array(256);
  size = 0;

  add(i: number): void {
    if (i >= this.#counts.length) {
      let n = this.#counts.length;
      while (n <= i) n *= 2;
      const next = new Uint32Array(n);
      next.set(this.#counts);
      this.#counts = next;
    }
    this.#counts[i] = this.#counts[i]! + 1;
    this.size = Math.max(this.size, i + 1);
  }

  at(i: number): number {
    return i < this.size ? this.#counts[i]! : 0;
  }
}

/** Mean TTFT of completed requests by send time, in fixed buckets. */
class TtftTimeline {
  #sum = new Float64Array(1024);
  #count = new Uint32Array(1024);
  #buckets = 0;

  add(sentMs: number, ttftMs: number): void {
    const i = Math.max(0, Math.floor(sentMs / TTFT_BUCKET_MS));
    if (i >= this.#sum.length) {
      let n = this.#sum.length;
      while (n <= i) n *= 2;
      const sum = new Float64Array(n);
      sum.set(this.#sum);
      const count = new Uint32Array(n);
      count.set(this.#count);
      this.#sum = sum;
      this.#count = count;
    }
    this.#sum[i] = this.#sum[i]! + ttftMs;
    this.#count[i] = this.#count[i]! + 1;
    this.#buckets = Math.max(this.#buckets, i + 1);
  }

  mean(fromMs: number, toMs: number): { count: number; meanMs: number } {
    let sum = 0;
    let count = 0;
    const last = Math.min(this.#buckets - 1, Math.floor(toMs / TTFT_BUCKET_MS));
    for (let i = Math.max(0, Math.floor(fromMs / TTFT_BUCKET_MS)); i <= last; i += 1) {
      sum += this.#sum[i]!;
      count += this.#count[i]!;
    }
    return { count, meanMs: count === 0 ? 0 : sum / count };
  }
}

/** Error classes of answers that came whole over a working path but were wrong in shape: the summary counts
 * them; they place no fault in the proxy, the engine's availability or the client. */
export const ANSWER_SHAPE_CLASSES: ReadonlySet<string> = new Set(['truncated_tool_call', 'invalid_tool_arguments', 'protocol_error']);

export class DiagnosisCollector {
  readonly #hangs: FailureKeeper<HangSpan>;
  readonly #errors: FailureKeeper<ErrorSpan>;
  readonly #canaries: CanaryPoint[] = [];
  readonly #scrapes: ScrapePoint[] = [];
  readonly #client: ClientWindow[] = [];
  readonly #ttft = new TtftTimeline();
  #path: PathKind | null = null;
  readonly #judged = new Buckets();
  readonly #buffered = new Buckets();
  readonly #loopback: boolean | null;
  readonly #probes: ProbeRead[] = [];
  readonly #idle = new IdleTally();
  readonly #completed: Reservoir<CompletedPoint>;
  readonly #inFlight = new InFlightCounter();

  /**
   * @param loopback the agents' target is on this machine (null: unknown).
   * @param limits what is kept of the hangs and errors. @default KEEP_LIMITS
   */
  constructor(loopback: boolean | null = null, limits: Partial<KeepLimits> = {}) {
    this.#loopback = loopback;
    const keep = { ...keepLimits(), ...limits };
    this.#hangs = new FailureKeeper('hangs', keep, tallyHang);
    this.#errors = new FailureKeeper('errors', keep, tallyError);
    this.#completed = new Reservoir<CompletedPoint>(COMPLETED_SAMPLE, keep.seed);
  }

  /** Any request record (hangs and errors of the path are kept; see ANSWER_SHAPE_CLASSES). */
  add(r: RequestRecord): void {
    this.#path ??= r.path;
    if (r.status === 'hang') {
      const span = hangSpan(r);
      this.#inFlight.addRequest(r.run_ms, r.run_ms + r.e2e_ms, span.from_ms);
      this.#hangs.add(span);
      return;
    }
    this.#inFlight.addRequest(r.run_ms, r.run_ms + r.e2e_ms, null);
    if (r.status === 'error') {
      // The run's own stop is not a failure of anything it measures.
      if (r.error?.class === 'aborted') return;
      // An answer that arrived whole but was wrong in shape (cut by max_tokens inside a tool call, bad tool
      // JSON, a protocol slip) is about what the model said, not about where the path failed: no episode.
      if (ANSWER_SHAPE_CLASSES.has(r.error?.class ?? '')) return;
      this.#errors.add(errorSpan(r));
    } else {
      this.#idle.add(r.connection?.nth ?? null, r.connection?.idle_ms ?? null);
      this.#completed.add({ run_ms: r.run_ms, features: featuresOf(r), ttft_ms: r.ttft_ms });
      if (r.ttft_ms !== null) this.#ttft.add(r.run_ms, r.ttft_ms);
      if (r.ttft_ms !== null && (r.completion_tokens ?? 0) >= BUFFERED_MIN_TOKENS) {
        const i = Math.max(0, Math.floor((r.run_ms + r.e2e_ms) / STREAM_BUCKET_MS));
        this.#judged.add(i);
        if (r.buffered_stream === true) this.#buffered.add(i);
      }
    }
  }

  addCanary(e: CanaryEvent): void {
    if (this.#canaries.length < MAX_CANARIES) this.#canaries.push(canaryPoint(e));
  }

  addScrape(e: ScrapeEvent): void {
    if (this.#scrapes.length >= MAX_SCRAPES) return;
    this.#scrapes.push(scrapePoint(e));
    this.#inFlight.addScrape(e.run_ms);
  }

  /** A probe's output: the engine's known log lines in it. */
  addProbe(e: ProbeEvent): void {
    if (this.#probes.length < MAX_PROBE_READS) this.#probes.push(probeRead(e));
  }

  /** Every client sample (the diagnosis decides which were late). */
  addClientSample(s: ClientSampleEvent): void {
    if (this.#client.length < MAX_CLIENT_WINDOWS) this.#client.push(clientWindow(s));
  }

  /** Streams that arrived whole, those that ended while the client was late left out. */
  buffering(): BufferingFigures {
    const late = new Uint8Array(this.#judged.size);
    for (const w of withSamplerLateness(this.#client)) {
      if (w.delay_max_ms < BUFFER_LATE_MS) continue;
      const last = Math.min(late.length - 1, Math.floor(w.to_ms / STREAM_BUCKET_MS));
      for (let i = Math.max(0, Math.floor(w.from_ms / STREAM_BUCKET_MS)); i <= last; i += 1) late[i] = 1;
    }
    let judged = 0;
    let buffered = 0;
    let excluded = 0;
    for (let i = 0; i < this.#judged.size; i += 1) {
      if (late[i] === 1) excluded += this.#judged.at(i);
      else {
        judged += this.#judged.at(i);
        buffered += this.#buffered.at(i);
      }
    }
    return { judged, buffered, share: judged === 0 ? 0 : Math.round((buffered / judged) * 1000) / 1000, excluded_client_late: excluded };
  }

  diagnose(gauges: readonly GaugeVerdict[], store: GaugeStore | null = null, client: ClientActivity | null = null): Diagnosis {
    const flows: FlowTrack[] = [];
    for (const t of store?.targets.values() ?? []) {
      const c = flowCounter(t);
      if (c !== null) flows.push({ target: t.name, counter: c.name, moved: c.moved, resets: c.resets });
    }
    const ttft = this.#ttft;
    const activity: RequestActivity | null =
      client === null || client.size === 0
        ? null
        : {
            completionsIn: (a, b) => client.completionsIn(a, b),
            streamingShare: (a, b) => client.streamingCoverage(a, b),
            inFlightShare: (a, b) => client.coverage(a, b),
            ttft: (a, b) => ttft.mean(a, b),
          };
    return diagnose({
      path: this.#path,
      loopback: this.#loopback,
      hangs: this.#hangs.kept(),
      errors: this.#errors.kept(),
      kept: {
        tallies: [...this.#hangs.tallies(), ...this.#errors.tallies()],
        total: this.#hangs.total + this.#errors.total,
        merged: this.#hangs.merged + this.#errors.merged,
      },
      canaries: this.#canaries,
      scrapes: this.#scrapes,
      flows,
      gauges,
      client: this.#client,
      activity,
      buffering: this.buffering(),
      probes: this.#probes,
      idleReuse: this.#idle,
      completed: this.#completed.items,
      inFlight: this.#inFlight.points(),
    });
  }
}
