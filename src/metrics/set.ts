// Histograms per metric × phase × round: the per-round latency figures of a run, and their file form.
// Each value is recorded once, in its round's histogram; a phase's all-rounds histogram (round 0) is derived
// when it is read, written or merged (HDR histograms add exactly), so the hot path pays one record per value.
import { LatencyHistogram, type Percentiles } from './histogram.js';

/** `ttft`: send → first token of any kind; `ttfc`: send → first content or tool-call token; `itl`: gaps
 * between streamed events; `e2e`: send → end; `tpot`: (e2e − ttft) ÷ (completion tokens − 1) per request;
 * `reasoning`: first → last reasoning token per request. */
export const LATENCY_METRICS = ['ttft', 'itl', 'e2e', 'ttfc', 'tpot', 'reasoning'] as const;
export type LatencyMetric = (typeof LATENCY_METRICS)[number];

/** Round 0 holds all rounds of a phase together (derived from the rounds when read). */
export const ALL_ROUNDS = 0;

export interface HistogramKey {
  metric: LatencyMetric;
  phase: string;
  round: number;
}

/** The version of histograms.json's own format, apart from the results schema's: a reader refuses another. */
export const HISTOGRAMS_FILE_VERSION = 1;

/** histograms.json */
export interface HistogramsFile {
  version: typeof HISTOGRAMS_FILE_VERSION;
  /** Unit of the recorded values inside the encodings. */
  unit: 'us';
  /** Every round's histogram, and per metric × phase the all-rounds one (round 0: every round's values
   * together, and any value recorded without a round). */
  histograms: (HistogramKey & { count: number; encoded: string })[];
}

/** One metric × phase: its rounds, and the values recorded without a round (round 0 itself). */
interface PhaseEntry {
  metric: LatencyMetric;
  phase: string;
  rounds: Map<number, LatencyHistogram>;
}

export class HistogramSet {
  readonly #byPhase = new Map<string, PhaseEntry>();

  #entry(metric: LatencyMetric, phase: string): PhaseEntry {
    const id = `${metric}\u0000${phase}`;
    let entry = this.#byPhase.get(id);
    if (entry === undefined) {
      entry = { metric, phase, rounds: new Map() };
      this.#byPhase.set(id, entry);
    }
    return entry;
  }

  /** The stored histogram of one round (round 0: values recorded without a round), created on first use. */
  #stored(metric: LatencyMetric, phase: string, round: number): LatencyHistogram {
    const rounds = this.#entry(metric, phase).rounds;
    let h = rounds.get(round);
    if (h === undefined) {
      h = new LatencyHistogram();
      rounds.set(round, h);
    }
    return h;
  }

  /**
   * The histogram of one round, created on first use: record into it. For `ALL_ROUNDS` it is the phase's
   * all-rounds histogram, derived now from its rounds: a copy to read (recording into it changes nothing;
   * `recordMs(…, ALL_ROUNDS, …)` records a value whose round is unknown).
   */
  get(metric: LatencyMetric, phase: string, round: number): LatencyHistogram {
    if (round !== ALL_ROUNDS) return this.#stored(metric, phase, round);
    const all = new LatencyHistogram();
    const entry = this.#byPhase.get(`${metric}\u0000${phase}`);
    if (entry !== undefined) for (const h of entry.rounds.values()) all.add(h);
    return all;
  }

  /** Records one value, once: into its round's histogram (the all-rounds one is derived from them). */
  recordMs(metric: LatencyMetric, phase: string, round: number, ms: number, count = 1): void {
    this.#stored(metric, phase, round).recordMs(ms, count);
  }

  /** Whether anything was recorded (or asked for) for this key; for `ALL_ROUNDS`, in any round of the phase. */
  has(metric: LatencyMetric, phase: string, round: number): boolean {
    const entry = this.#byPhase.get(`${metric}\u0000${phase}`);
    if (entry === undefined) return false;
    return round === ALL_ROUNDS ? entry.rounds.size > 0 : entry.rounds.has(round);
  }

  /** Every key there is a histogram for: each round's, and each phase's all-rounds one. */
  keys(): HistogramKey[] {
    const keys: HistogramKey[] = [];
    for (const { metric, phase, rounds } of this.#byPhase.values()) {
      if (rounds.size === 0) continue;
      keys.push({ metric, phase, round: ALL_ROUNDS });
      for (const round of rounds.keys()) if (round !== ALL_ROUNDS) keys.push({ metric, phase, round });
    }
    return keys;
  }

  percentiles(metric: LatencyMetric, phase: string, round: number): Percentiles {
    return this.get(metric, phase, round).percentiles();
  }

  /** Adds every histogram of `other` (shards, repeats, a file's ITL), or only those of `metric`, into this set. */
  merge(other: HistogramSet, metric?: LatencyMetric): void {
    for (const entry of other.#byPhase.values()) {
      if (metric !== undefined && entry.metric !== metric) continue;
      for (const [round, h] of entry.rounds) this.#stored(entry.metric, entry.phase, round).add(h);
    }
  }

  toFile(): HistogramsFile {
    const histograms: HistogramsFile['histograms'] = [];
    for (const key of this.keys()) {
      const h = this.get(key.metric, key.phase, key.round);
      histograms.push({ ...key, count: h.count, encoded: h.encode() });
    }
    return { version: HISTOGRAMS_FILE_VERSION, unit: 'us', histograms };
  }

  /** Reads histograms.json. Its round 0 holds every round's values again: what it holds beyond the sum of
   * the rounds (values recorded without a round) is kept as such, the rest is derived again when read. */
  static fromFile(file: HistogramsFile): HistogramSet {
    const set = new HistogramSet();
    const allRounds: { metric: LatencyMetric; phase: string; h: LatencyHistogram }[] = [];
    for (const entry of file.histograms) {
      const h = LatencyHistogram.decode(entry.encoded);
      if (entry.round === ALL_ROUNDS) allRounds.push({ metric: entry.metric, phase: entry.phase, h });
      else set.#stored(entry.metric, entry.phase, entry.round).add(h);
    }
    for (const { metric, phase, h } of allRounds) {
      const rest = h.minus(set.get(metric, phase, ALL_ROUNDS));
      if (rest.count > 0) set.#stored(metric, phase, ALL_ROUNDS).add(rest);
      else set.#entry(metric, phase);
    }
    return set;
  }
}
