// Latency histograms (HDR, 3 significant digits) recorded in microseconds, read in milliseconds.
// The only module that loads hdr-histogram-js; histograms merge exactly through their encoded form.
// Its parts are loaded from their own files: the package's index also loads the WebAssembly histograms, the log
// reader and writer (whose number formatter starts ICU) and the recorder, about 25 ms of every run's start
// (issue 26). test/metrics/histogram.test.ts checks these are the index's own and build() makes the same histogram.
import { createRequire } from 'node:module';
import type * as hdr from 'hdr-histogram-js';

const require = createRequire(import.meta.url);
const Int32Histogram = (require('hdr-histogram-js/dist/Int32Histogram.js') as { default: new (lowest: number, highest: number, digits: number) => hdr.Histogram }).default;
const { encodeIntoCompressedBase64, decodeFromCompressedBase64 } = require('hdr-histogram-js/dist/encoding.js') as Pick<typeof hdr, 'encodeIntoCompressedBase64' | 'decodeFromCompressedBase64'>;

/** What hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue, numberOfSignificantValueDigits: 3, autoResize: true }) makes. */
function build(highest: number): hdr.Histogram {
  const h = new Int32Histogram(1, highest, 3);
  h.autoResize = true;
  return h;
}

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

export class LatencyHistogram {
  readonly #h: hdr.Histogram;

  constructor(from?: hdr.Histogram) {
    this.#h = from ?? build(HIGHEST_US);
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

  percentiles(): Percentiles {
    const h = this.#h;
    const round3 = (v: number) => Math.round(v * 1000) / 1000;
    return {
      count: h.totalCount,
      p50_ms: round3(this.percentileMs(50)),
      p90_ms: round3(this.percentileMs(90)),
      p99_ms: round3(this.percentileMs(99)),
      // The bucket's highest equivalent value: the same before and after encoding (maxValue is not).
      max_ms: round3(this.percentileMs(100)),
      mean_ms: round3(h.totalCount === 0 ? 0 : h.mean / US_PER_MS),
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
