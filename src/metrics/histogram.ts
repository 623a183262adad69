// Latency histograms (HDR, 3 significant digits) recorded in microseconds, read in milliseconds.
// The only module that loads hdr-histogram-js; histograms merge exactly through their encoded form.
// Its parts are loaded from their own files: the package's index also loads the WebAssembly histograms, the log
// reader and writer (whose number formatter starts ICU) and the recorder, about 25 ms of every run's start
// (issue 26). test/metrics/histogram.test.ts checks these are the index's own and build() makes the same histogram.
import { createRequire } from 'node:module';
import type * as hdr from 'hdr-histogram-js';
import type { default as JsHistogramFile } from 'hdr-histogram-js/dist/JsHistogram.js';

const require = createRequire(import.meta.url);
/** The histogram class both build() and decoding make (its bucket-level methods are not in hdr.Histogram). */
type JsHistogram = JsHistogramFile.default;
const Int32Histogram = (require('hdr-histogram-js/dist/Int32Histogram.js') as { default: new (lowest: number, highest: number, digits: number) => JsHistogram }).default;
const { encodeIntoCompressedBase64, decodeFromCompressedBase64 } = require('hdr-histogram-js/dist/encoding.js') as {
  encodeIntoCompressedBase64: typeof hdr.encodeIntoCompressedBase64;
  /** A JsHistogram: the encoding's default (32-bit counts, no WebAssembly). */
  decodeFromCompressedBase64: (base64: string) => JsHistogram;
};

/** What hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue, numberOfSignificantValueDigits: 3, autoResize: true }) makes. */
function build(highest: number): JsHistogram {
  const h = new Int32Histogram(1, highest, 3);
  h.autoResize = true;
  return h;
}

/** A histogram's range grows with the values it holds (autoResize): its buckets are the same at any range, so
 * percentiles are too, and one of ITLs in ms keeps a third of the counts a range to one hour would (every
 * round keeps its own: bench/README.md, soak). The smallest range hdr-histogram-js allows at 3 digits. */
const INITIAL_HIGHEST_US = 4096;
const US_PER_MS = 1000;
/** One hour: anything longer is clamped (a total watchdog deadline is far below it). */
const HIGHEST_US = 3_600_000_000;

/** The percentiles every summary reports. */
export interface Percentiles {
  count: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
}

/** The percentiles of `Percentiles`, ascending (the one pass below relies on the order). */
const REPORTED = [50, 90, 99, 100] as const;

/** How many values lie at or below percentile `p` of `total`: hdr-histogram-js's getValueAtPercentile's count
 * (its ulp correction included), so the value found is the one it finds. */
function countAtPercentile(p: number, total: number): number {
  const fp = (Math.min(p, 100) / 100) * total;
  const ulp = Math.pow(2, Math.floor(Math.log2(fp)) - 52);
  return Math.max(Math.ceil(fp - ulp), 1);
}

export class LatencyHistogram {
  readonly #h: JsHistogram;

  constructor(from?: JsHistogram) {
    // A decoded histogram holds its encoder's range: it grows too when more is added into it.
    if (from !== undefined) from.autoResize = true;
    this.#h = from ?? build(INITIAL_HIGHEST_US);
  }

  /** Records one latency; negative or non-finite values are ignored (they are clock bugs, not latencies). */
  recordMs(ms: number, count = 1): void {
    if (!Number.isFinite(ms) || ms < 0 || count < 1) return;
    this.#h.recordValueWithCount(Math.min(HIGHEST_US, Math.max(1, Math.round(ms * US_PER_MS))), count);
  }

  get count(): number {
    return this.#h.totalCount;
  }

  percentileMs(p: number): number {
    return this.#h.totalCount === 0 ? 0 : this.#h.getValueAtPercentile(p) / US_PER_MS;
  }

  /**
   * The values hdr-histogram-js's getValueAtPercentile and mean give (test/metrics/histogram.test.ts), in one
   * pass over the buckets up to the largest value, visiting only the non-empty ones. Its own calls walk the
   * buckets once per percentile, and `mean` walks them through its iterator, several calls a bucket empty or
   * not: at the end of a short run that code is not yet compiled, and the summary's few dozen histograms cost
   * more than the rest of it (bench/README.md, start-up).
   */
  percentiles(): Percentiles {
    const h = this.#h;
    const total = h.totalCount;
    const at = REPORTED.map((p) => countAtPercentile(p, total));
    const found: number[] = [];
    let seen = 0;
    let sum = 0;
    for (let i = 0; seen < total && i < h.countsArrayLength; i += 1) {
      const n = h.getCountAtIndex(i);
      if (n === 0) continue;
      seen += n;
      // As the iterator under `mean`: the bucket's highest equivalent value, then its median.
      const highest = h.highestEquivalentValue(h.valueFromIndex(i));
      sum += h.medianEquivalentValue(highest) * n;
      while (found.length < at.length && seen >= at[found.length]!) found.push(highest);
    }
    const ms = (us: number | undefined) => (total === 0 || us === undefined ? 0 : Math.round((us / US_PER_MS) * 1000) / 1000);
    return {
      count: total,
      p50_ms: ms(found[0]),
      p90_ms: ms(found[1]),
      p99_ms: ms(found[2]),
      // The bucket's highest equivalent value: the same before and after encoding (maxValue is not).
      max_ms: ms(found[3]),
      mean_ms: ms(total === 0 ? 0 : sum / total),
    };
  }

  /** Adds every value of `other` into this one (exact: same bucket layout). */
  add(other: LatencyHistogram): void {
    this.#h.add(other.#h);
  }

  /** A new histogram of this one's values less `other`'s, which this one must contain (an all-rounds
   * histogram less its rounds); empty when `other` holds as many values or more. */
  minus(other: LatencyHistogram): LatencyHistogram {
    const rest = new LatencyHistogram();
    if (other.count >= this.count) return rest;
    rest.add(this);
    rest.#h.subtract(other.#h);
    return rest;
  }

  /** Compressed base64 form (the HdrHistogram standard encoding), for histograms.json and merging. */
  encode(): string {
    return encodeIntoCompressedBase64(this.#h);
  }

  static decode(encoded: string): LatencyHistogram {
    return new LatencyHistogram(decodeFromCompressedBase64(encoded));
  }
}
