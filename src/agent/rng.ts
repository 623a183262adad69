// Seeded randomness for conversation content: the same seed gives the same conversations, byte for byte.
import { Mulberry32 } from '../util/index.js';

/** FNV-1a 32-bit hash of a string, to derive independent seeds from names. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The seeded generator of conversation content. */
export class Rng extends Mulberry32 {
  static from(...parts: (string | number)[]): Rng {
    return new Rng(hash32(parts.join('\u0000')));
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}
