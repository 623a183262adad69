// Everything a signal may ask about a stretch of the run: the canaries sent then, the scrapes, the client's
// own samples, the flow counters, the client's requests. Built once per diagnosis from its input.
import type { BufferingFigures, GaugeVerdict, PathKind, PdSide } from '../../types/index.js';
import {
  withSamplerLateness,
  type CanaryPoint,
  type ClientWindow,
  type CompletedPoint,
  type ErrorSpan,
  type FlowTrack,
  type HangSpan,
  type IdleReuse,
  type ProbeRead,
  type RequestActivity,
  type ScrapePoint,
} from './inputs.js';
import type { KeptFailures } from './episodes.js';
import type { InFlightPoint } from './in-flight.js';
import { median } from './text.js';
import { partitionPoint } from '../../util/index.js';

/** Share of an episode's scrapes with a request in a PD hand-off queue from which it was held there throughout
 * (the first scrapes of an episode may still show the load that went before it). */
const HANDOFF_HELD_SHARE = 0.8;

export interface DiagnosisInput {
  /** The agents' path: `direct` means there is no proxy to blame. @default null (unknown: taken from the failures) */
  path?: PathKind | null;
  /** The agents' target is on this machine (127.0.0.0/8, ::1, localhost): with a direct path, no network lies
   * between. @default null (unknown) */
  loopback?: boolean | null;
  hangs: readonly HangSpan[];
  /** @default [] */
  errors?: readonly ErrorSpan[];
  /** Exact tallies of the run's stretches of failures, of which the hangs and errors above are those kept
   * (a long run's sample and each stretch's ends). @default null (the spans are all the failures) */
  kept?: KeptFailures | null;
  canaries: readonly CanaryPoint[];
  /** @default [] */
  scrapes?: readonly ScrapePoint[];
  /** @default [] */
  flows?: readonly FlowTrack[];
  gauges: readonly GaugeVerdict[];
  /** The client's sample windows, all of them. @default [] */
  client?: readonly ClientWindow[];
  /** The client's requests over time. @default null */
  activity?: RequestActivity | null;
  /** @default null */
  buffering?: BufferingFigures | null;
  /** What the probes read, with the engine's known log lines in it. @default [] */
  probes?: readonly ProbeRead[];
  /** The successful requests by connection reuse and idle gap. @default null (not known) */
  idleReuse?: IdleReuse | null;
  /** Completed requests, what they were and their TTFT: all of them, or a uniform sample of a long run. @default [] */
  completed?: readonly CompletedPoint[];
  /** The client's requests in flight at each scrape time, and the hung ones among them. @default null (not known) */
  inFlight?: readonly InFlightPoint[] | null;
}

/** A client sample window whose loop delay reached this is late: what the client measured then measures itself. */
export const CLIENT_LATE_MS = 250;

/** A gauge of one target that held requests through a window: at `held` of its `scrapes`, up to `max`. */
export interface HeldGauge {
  target: string;
  held: number;
  scrapes: number;
  max: number;
}

export interface Window {
  from_ms: number;
  to_ms: number;
}

function overlaps(aFrom: number, aTo: number, bFrom: number, bTo: number): boolean {
  return aFrom <= bTo && bFrom <= aTo;
}

export class Context {
  readonly path: PathKind | null;
  readonly loopback: boolean | null;
  readonly probes: readonly ProbeRead[];
  readonly canaries: readonly CanaryPoint[];
  readonly scrapes: readonly ScrapePoint[];
  readonly flows: readonly FlowTrack[];
  readonly gauges: readonly GaugeVerdict[];
  readonly client: readonly ClientWindow[];
  readonly activity: RequestActivity | null;
  readonly idleReuse: IdleReuse | null;
  readonly completed: readonly CompletedPoint[];
  readonly inFlight: readonly InFlightPoint[] | null;
  /** Median gap between canaries of one leg (null: fewer than two). */
  readonly canaryIntervalMs: number | null;
  readonly targets: readonly string[];
  /** Stretches the whole diagnosis treats as trouble (episodes), for baselines taken outside them. */
  troubled: Window[] = [];
  /** The late client windows by start, and the latest end among the first i of them: an overlap test in
   * O(log n), asked for every canary, scrape and slice of a night's run. */
  readonly #late: readonly ClientWindow[];
  readonly #lateMaxTo: Float64Array;
  readonly #outside = new Map<string, ScrapePoint[]>();
  readonly #sides = new Map<string, PdSide>();

  constructor(input: DiagnosisInput) {
    this.canaries = [...input.canaries].sort((a, b) => a.run_ms - b.run_ms);
    this.scrapes = [...(input.scrapes ?? [])].sort((a, b) => a.run_ms - b.run_ms);
    this.flows = input.flows ?? [];
    this.gauges = input.gauges;
    this.client = withSamplerLateness(input.client ?? []);
    this.#late = this.client.filter((c) => c.delay_max_ms >= CLIENT_LATE_MS);
    this.#lateMaxTo = new Float64Array(this.#late.length);
    let maxTo = -Infinity;
    this.#late.forEach((c, i) => {
      maxTo = Math.max(maxTo, c.to_ms);
      this.#lateMaxTo[i] = maxTo;
    });
    this.activity = input.activity ?? null;
    this.idleReuse = input.idleReuse ?? null;
    this.completed = input.completed ?? [];
    this.inFlight = input.inFlight ?? null;
    this.path = input.path ?? input.hangs[0]?.path ?? input.errors?.[0]?.path ?? null;
    this.loopback = input.loopback ?? null;
    this.probes = [...(input.probes ?? [])].sort((a, b) => a.run_ms - b.run_ms);
    const direct = this.canaries.filter((c) => c.leg === 'direct').map((c) => c.run_ms);
    const gaps: number[] = [];
    for (let i = 1; i < direct.length; i += 1) gaps.push(direct[i]! - direct[i - 1]!);
    this.canaryIntervalMs = median(gaps);
    this.targets = [...new Set(this.scrapes.map((s) => s.target))].sort();
    for (const s of this.scrapes) if (s.side !== undefined && s.side !== null && !this.#sides.has(s.target)) this.#sides.set(s.target, s.side);
  }

  /** The PD server `target` is (prefill or decode), null when its scrapes never said. */
  sideOf(target: string): PdSide | null {
    return this.#sides.get(target) ?? null;
  }

  /** Those of `items` whose counters say answers were made: in a PD deployment (a decode among them) the
   * prefills' counters move with prompts and first tokens alone, so the prefills are left out. */
  answering<T>(items: readonly T[], target: (x: T) => string): T[] {
    const pd = items.some((x) => this.sideOf(target(x)) === 'decode');
    return pd ? items.filter((x) => this.sideOf(target(x)) !== 'prefill') : [...items];
  }

  /** Canaries whose life ([send, send + latency]) touches the window. */
  canariesIn(w: Window): CanaryPoint[] {
    return this.canaries.filter((c) => overlaps(c.run_ms, c.run_ms + Math.max(0, c.latency_ms), w.from_ms, w.to_ms));
  }

  /** Scrapes of `target` whose life touches the window. */
  scrapesIn(target: string, w: Window): ScrapePoint[] {
    return this.scrapes.filter((s) => s.target === target && overlaps(s.run_ms, s.run_ms + s.duration_ms, w.from_ms, w.to_ms));
  }

  /** Scrapes of `target` outside every troubled stretch (set `troubled` first). */
  scrapesOutside(target: string): ScrapePoint[] {
    let out = this.#outside.get(target);
    if (out === undefined) {
      out = this.scrapes.filter((s) => s.target === target && !this.troubled.some((w) => overlaps(s.run_ms, s.run_ms + s.duration_ms, w.from_ms, w.to_ms)));
      this.#outside.set(target, out);
    }
    return out;
  }

  clientIn(w: Window): ClientWindow[] {
    return this.client.filter((c) => overlaps(c.from_ms, c.to_ms, w.from_ms, w.to_ms));
  }

  /** Whether the client's event loop was late (≥ CLIENT_LATE_MS) at some point of [from, to]. */
  clientLate(fromMs: number, toMs: number): boolean {
    // The last late window starting by `toMs`; any of it or those before overlaps when one ends at `fromMs` or later.
    const lo = partitionPoint(this.#late, (c) => c.from_ms <= toMs);
    return lo > 0 && this.#lateMaxTo[lo - 1]! >= fromMs;
  }

  /** The queue gauges over the window: scrapes that read one, those with requests waiting, the most waiting.
   * Nothing is observed unless most scrapes of the window answered: a queue read only at the edges of a
   * freeze says nothing about the freeze. */
  queueIn(w: Window): { observed: number; queued: number; max: number } {
    let scrapes = 0;
    let observed = 0;
    let queued = 0;
    let max = 0;
    for (const s of this.scrapes) {
      if (s.run_ms < w.from_ms || s.run_ms > w.to_ms) continue;
      scrapes += 1;
      if (!s.ok || s.queue === null) continue;
      observed += 1;
      if (s.queue >= 1) queued += 1;
      max = Math.max(max, s.queue);
    }
    return observed * 2 < scrapes ? { observed: 0, queued: 0, max: 0 } : { observed, queued, max };
  }

  /** The targets whose PD hand-off queues held at least one request at nearly every answered scrape of the
   * window (HANDOFF_HELD_SHARE of them, at least two, most of the window's scrapes answered): the share of
   * scrapes and the most held. */
  handoffHeldIn(w: Window): HeldGauge[] {
    return this.heldIn(w, (s) => s.handoff);
  }

  /** The targets reporting a request running at nearly every answered scrape of the window, as handoffHeldIn. */
  runningHeldIn(w: Window): HeldGauge[] {
    return this.heldIn(w, (s) => s.running);
  }

  private heldIn(w: Window, read: (s: ScrapePoint) => number | null | undefined): HeldGauge[] {
    const out: HeldGauge[] = [];
    for (const target of this.targets) {
      const mine = this.scrapes.filter((s) => s.target === target && s.run_ms >= w.from_ms && s.run_ms <= w.to_ms);
      const values = mine.flatMap((s) => (s.ok ? [read(s)] : [])).filter((v): v is number => v !== undefined && v !== null);
      if (values.length < 2 || values.length * 2 < mine.length) continue;
      const held = values.filter((v) => v >= 1);
      if (held.length >= HANDOFF_HELD_SHARE * values.length) out.push({ target, held: held.length, scrapes: values.length, max: Math.max(...held) });
    }
    return out;
  }

  /** The answer tokens `target` made over the window, by its answer-token counters' increases between
   * consecutive answered scrapes (a reset counts its new value); null when fewer than two read them. */
  answeredIn(target: string, w: Window): number | null {
    let prev: number | null = null;
    let reads = 0;
    let made = 0;
    for (const s of this.scrapes) {
      if (s.target !== target || s.run_ms < w.from_ms || s.run_ms > w.to_ms || !s.ok || s.answered === undefined || s.answered === null) continue;
      reads += 1;
      if (prev !== null) made += s.answered >= prev ? s.answered - prev : s.answered;
      prev = s.answered;
    }
    return reads < 2 ? null : made;
  }

  /** Whether a target's flow counter moved at some point of the window. */
  flowMoved(f: FlowTrack, w: Window): boolean {
    for (let i = 0; i < f.moved.length; i += 2) if (overlaps(f.moved[i]!, f.moved[i + 1]!, w.from_ms, w.to_ms)) return true;
    return false;
  }
}
