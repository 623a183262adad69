// Histograms per metric × phase × round: the per-round latency figures of a run, and their file form.
import { LatencyHistogram, type Percentiles } from './histogram.js';

/** `ttft`: send → first token of any kind; `ttfc`: send → first content or tool-call token; `itl`: gaps
 * between streamed events; `e2e`: send → end; `tpot`: (e2e − ttft) ÷ (completion tokens − 1) per request;
 * `reasoning`: first → last reasoning token per request. */
export const LATENCY_METRICS = ['ttft', 'itl', 'e2e', 'ttfc', 'tpot', 'reasoning'] as const;
export type LatencyMetric = (typeof LATENCY_METRICS)[number];

/** Round 0 holds all rounds of a phase together. */
export const ALL_ROUNDS = 0;

export interface HistogramKey {
  metric: LatencyMetric;
  phase: string;
  round: number;
}

/** histograms.json */
export interface HistogramsFile {
  version: 1;
  /** Unit of the recorded values inside the encodings. */
  unit: 'us';
  histograms: (HistogramKey & { count: number; encoded: string })[];
}

export class HistogramSet {
  readonly #byKey = new Map<string, { key: HistogramKey; h: LatencyHistogram }>();

  /** The histogram of one key, created on first use. */
  get(metric: LatencyMetric, phase: string, round: number): LatencyHistogram {
    const id = `${metric}\u0000${phase}\u0000${round}`;
    let entry = this.#byKey.get(id);
    if (entry === undefined) {
      entry = { key: { metric, phase, round }, h: new LatencyHistogram() };
      this.#byKey.set(id, entry);
    }
    return entry.h;
  }

  /** Records into the round's histogram and the phase's all-rounds one. */
  recordMs(metric: LatencyMetric, phase: string, round: number, ms: number, count = 1): void {
    this.get(metric, phase, round).recordMs(ms, count);
    this.get(metric, phase, ALL_ROUNDS).recordMs(ms, count);
  }

  has(metric: LatencyMetric, phase: string, round: number): boolean {
    return this.#byKey.has(`${metric}\u0000${phase}\u0000${round}`);
  }

  keys(): HistogramKey[] {
    return [...this.#byKey.values()].map((e) => e.key);
  }

  percentiles(metric: LatencyMetric, phase: string, round: number): Percentiles {
    return this.get(metric, phase, round).percentiles();
  }

  /** Adds every histogram of `other` (shards, repeats) into this set. */
  merge(other: HistogramSet): void {
    for (const { key, h } of other.#byKey.values()) this.get(key.metric, key.phase, key.round).add(h);
  }

  toFile(): HistogramsFile {
    return {
      version: 1,
      unit: 'us',
      histograms: [...this.#byKey.values()].map(({ key, h }) => ({ ...key, count: h.count, encoded: h.encode() })),
    };
  }

  static fromFile(file: HistogramsFile): HistogramSet {
    const set = new HistogramSet();
    for (const entry of file.histograms) set.get(entry.metric, entry.phase, entry.round).add(LatencyHistogram.decode(entry.encoded));
    return set;
  }
}
