// A stable hash of strings: the prefix cache's chain links, and the seeds of the engine's generators (util's
// `Rng.fromHex`), so the same seed and conversation always give the same answer and the same fault picks.
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
