// A copy of the resolved workload safe to write to run.json. A workload holds env var NAMES, not secrets, so this
// is a backstop: any string under a key that looks secret (`*api_key*`, `*token*`, `*password*`, `*secret*`) is masked.
import type { Workload } from './schema.js';

export const REDACTED = '[redacted]';
const SECRET_KEY = /api[_-]?key|token|passw(or)?d|secret/i;
// `api_key_env` and friends name an environment variable; the name is useful in run.json and is not the secret.
const ENV_NAME_KEY = /_env$/i;

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const secret = typeof child === 'string' && SECRET_KEY.test(key) && !ENV_NAME_KEY.test(key);
    // defineProperty keeps a `__proto__` key (possible under free-form tool parameters) an ordinary key.
    Object.defineProperty(out, key, { value: secret ? REDACTED : redact(child), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A deep copy of `workload` with secret-looking string values replaced by `[redacted]`; the input is untouched. */
export function redactWorkload(workload: Workload): unknown {
  return redact(workload);
}
