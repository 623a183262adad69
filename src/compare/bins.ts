// Latencies of one window kept as log-spaced bins (0.5% wide), so pooled percentiles of thousands of
// bootstrap resamples cost a merge and a scan, not a sort, and a long run's windows stay small in memory.

/** Bin edges grow by this factor: a value is known to ±0.25%, finer than any delta worth reporting. */
const RATIO = 1.005;
const LOG_RATIO = Math.log(RATIO);
/** The lowest value binned (1 µs in ms); anything below lands in bin 0. */
const FLOOR_MS = 0.001;
/** 1 µs … about 2 hours. */
export const BIN_COUNT = Math.ceil(Math.log(7_200_000 / FLOOR_MS) / LOG_RATIO) + 1;

export function binOf(valueMs: number): number {
  if (!(valueMs > FLOOR_MS)) return 0;
  return Math.min(BIN_COUNT - 1, Math.floor(Math.log(valueMs / FLOOR_MS) / LOG_RATIO));
}

/** The geometric middle of a bin. */
export function binValue(bin: number): number {
  return FLOOR_MS * RATIO ** (bin + 0.5);
}

/** Weighted values of one window, as sparse bins. */
export class Bins {
  readonly #acc = new Map<number, number>();
  #frozen: { bins: Int32Array; weights: Float64Array } | null = null;

  add(valueMs: number, weight = 1): void {
    if (!Number.isFinite(valueMs) || !(weight > 0)) return;
    const bin = binOf(valueMs);
    this.#acc.set(bin, (this.#acc.get(bin) ?? 0) + weight);
    this.#frozen = null;
  }

  get total(): number {
    let sum = 0;
    for (const w of this.#acc.values()) sum += w;
    return sum;
  }

  /** Sorted bin indexes and their weights. */
  entries(): { bins: Int32Array; weights: Float64Array } {
    if (this.#frozen === null) {
      const keys = [...this.#acc.keys()].sort((a, b) => a - b);
      this.#frozen = { bins: Int32Array.from(keys), weights: Float64Array.from(keys.map((k) => this.#acc.get(k)!)) };
    }
    return this.#frozen;
  }
}

/**
 * The p-quantile (0..1) of the values of several windows pooled (a window drawn twice counts twice); NaN when
 * they hold no values. `scratch` is a reusable Float64Array(BIN_COUNT).
 */
export function pooledQuantile(windows: readonly Bins[], p: number, scratch: Float64Array = new Float64Array(BIN_COUNT)): number {
  scratch.fill(0);
  let total = 0;
  let lo = BIN_COUNT;
  let hi = -1;
  for (const w of windows) {
    const { bins, weights } = w.entries();
    for (let i = 0; i < bins.length; i += 1) {
      const b = bins[i]!;
      scratch[b] = scratch[b]! + weights[i]!;
      total += weights[i]!;
      if (b < lo) lo = b;
      if (b > hi) hi = b;
    }
  }
  if (total <= 0) return NaN;
  const target = p * total;
  let cum = 0;
  for (let b = lo; b <= hi; b += 1) {
    cum += scratch[b]!;
    if (cum >= target && cum > 0) return binValue(b);
  }
  return binValue(hi);
}
