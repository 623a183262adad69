// Seeded randomness, one generator: `Rng` (mulberry32, with int/below/pick/hex) draws conversation content,
// arrivals, bootstrap resampling, the embedded engine's answers and fault picks (seeded with `Rng.fromHex` from a
// hash of the engine seed and the prompt or the fault), the engine's run speed (from `engine.run_spread_seed` or a
// seed the OS draws, logged) and the fuzz tests.
// Small and fast, good enough for content and statistics, not for cryptography; seeds never come from time.

/** FNV-1a 32-bit hash of a string, to derive independent seeds from names. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32, with int/below/pick/hex over its uniform draws. */
export class Rng {
  #state: number;

  /** `state`: any 32-bit value (taken modulo 2^32). */
  constructor(state: number) {
    this.#state = state >>> 0;
  }

  /** A generator seeded from the parts (joined with NUL, hashed with FNV-1a). */
  static from(...parts: (string | number)[]): Rng {
    return new Rng(hash32(parts.join('\u0000')));
  }

  /** A generator seeded from the first 32 bits of a hex digest. */
  static fromHex(hex: string): Rng {
    return new Rng(Number.parseInt(hex.slice(0, 8), 16));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** `digits` lowercase hex characters. */
  hex(digits: number): string {
    let out = '';
    while (out.length < digits)
      out += Math.floor(this.next() * 0x1_0000_0000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, digits);
  }
}
