// Seeded randomness for the engine: a stable hash of strings and a small PRNG seeded from it, so the same
// seed and conversation always give the same answer (no Math.random anywhere in answer generation).
import { createHash } from 'node:crypto';

/** Hex SHA-1 of the parts joined with a separator that cannot appear in JSON text unescaped. */
export function hashHex(...parts: readonly string[]): string {
  const h = createHash('sha1');
  for (const part of parts) {
    h.update(part);
    h.update('\u0000');
  }
  return h.digest('hex');
}

/** Xorshift32 generator: fast and good enough for picking words; seeded from a hash, never from time. */
export class Rng {
  private state: number;

  constructor(seedHex: string) {
    // A zero state would make xorshift emit zeros forever.
    this.state = Number.parseInt(seedHex.slice(0, 8), 16) >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }

  /** Uniform integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
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
    while (out.length < digits) out += Math.floor(this.next() * 0x1_0000_0000).toString(16).padStart(8, '0');
    return out.slice(0, digits);
  }
}
