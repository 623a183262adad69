// Timers of the latency model: a cancellable wait (a zero wait runs on setImmediate so back-to-back steps share
// TCP reads) and a sliding token rate for `gen_throughput`.

/** Runs `fn` after `ms`; returns the function that cancels it. */
export function after(ms: number, fn: () => void): () => void {
  if (ms <= 0) {
    const immediate = setImmediate(fn);
    return () => clearImmediate(immediate);
  }
  const timeout = setTimeout(fn, ms);
  return () => clearTimeout(timeout);
}

const RATE_BUCKET_MS = 500;
const RATE_BUCKETS = 10;

/** Output tokens per second over a sliding window of fixed buckets (no per-token allocation). */
export class TokenRate {
  private readonly counts = new Array<number>(RATE_BUCKETS).fill(0);
  private readonly epochs = new Array<number>(RATE_BUCKETS).fill(-1);

  add(tokens: number, nowMs: number): void {
    const epoch = Math.floor(nowMs / RATE_BUCKET_MS);
    const slot = epoch % RATE_BUCKETS;
    if (this.epochs[slot] !== epoch) {
      this.epochs[slot] = epoch;
      this.counts[slot] = 0;
    }
    this.counts[slot] = (this.counts[slot] ?? 0) + tokens;
  }

  perSecond(nowMs: number): number {
    const epoch = Math.floor(nowMs / RATE_BUCKET_MS);
    let total = 0;
    for (let i = 0; i < RATE_BUCKETS; i += 1) {
      const e = this.epochs[i] ?? -1;
      if (e > epoch - RATE_BUCKETS && e <= epoch) total += this.counts[i] ?? 0;
    }
    return total / ((RATE_BUCKETS * RATE_BUCKET_MS) / 1000);
  }
}
