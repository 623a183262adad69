// The one seeded generator of run-side code (conversation content, bootstrap resampling): mulberry32,
// small and fast, good enough for content and statistics, not for cryptography.

export class Mulberry32 {
  #state: number;

  /** `state`: any 32-bit value (taken modulo 2^32). */
  constructor(state: number) {
    this.#state = state >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
