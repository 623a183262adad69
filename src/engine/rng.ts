// Seeded randomness for the engine: a stable hash of strings and a small generator seeded from it, so the same
// seed and conversation always give the same answer (no Math.random anywhere in answer generation).
import { createHash } from 'node:crypto';
import { RandomDraws } from '../util/index.js';

/** Hex SHA-1 of the parts joined with a separator that cannot appear in JSON text unescaped. */
export function hashHex(...parts: readonly string[]): string {
  const h = createHash('sha1');
  for (const part of parts) {
    h.update(part);
    h.update('\u0000');
  }
  return h.digest('hex');
}

/** The engine's generator: xorshift32 seeded from a hash, never from time. Kept (not util's mulberry32) so a
 * seed gives the answers and fault picks it always gave; int/pick/hex are util's. */
export class EngineRng extends RandomDraws {
  private state: number;

  constructor(seedHex: string) {
    super();
    // A zero state would make xorshift emit zeros forever.
    this.state = Number.parseInt(seedHex.slice(0, 8), 16) >>> 0 || 0x9e3779b9;
  }

  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }
}
