// Seeds for the engine: a stable hash of strings, so the same seed and conversation always give the same
// answer (no Math.random anywhere in answer generation). The generator itself is util's Rng.
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
