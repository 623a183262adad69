// A copy of the resolved workload safe to write to run.json, and the secret values a run must never write.
// A workload holds env var NAMES, not secrets, so masking by key is a backstop: any string under a key that
// looks secret (`*api_key*`, `*token*`, `*password*`, `*secret*`) is masked, and credentials in any URL are
// redacted (`https://user:***@host`). `target.headers` is the exception that holds values: one whose name looks
// secret (those, and `*auth*`, `cookie`, `*credential*`, `*signature*`) is masked, and its value is a secret the
// run's scrubber replaces wherever it would be written or printed (a `--set` of it in run.json's argv too).
import { redactUrlCredentials, urlSecrets } from '../util/index.js';
import type { Workload } from './schema.js';

export const REDACTED = '[redacted]';
const SECRET_KEY = /api[_-]?key|token|passw(or)?d|secret/i;
/** Header names whose values are credentials: wider than for workload keys (a header is sent, not configured). */
const SECRET_HEADER = /api[_-]?key|token|passw(or)?d|secret|auth|cookie|credential|signature/i;
// `api_key_env` and friends name an environment variable; the name is useful in run.json and is not the secret.
const ENV_NAME_KEY = /_env$/i;

function redact(value: unknown, inHeaders = false): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const secret = typeof child === 'string' && (inHeaders ? SECRET_HEADER : SECRET_KEY).test(key) && !ENV_NAME_KEY.test(key);
    // defineProperty keeps a `__proto__` key (possible under free-form tool parameters) an ordinary key.
    Object.defineProperty(out, key, { value: secret ? REDACTED : redact(child, key === 'headers'), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A deep copy of `workload` with secret-looking string values replaced by `[redacted]` and URL credentials
 * by `***`; the input is untouched. */
export function redactWorkload(workload: Workload): unknown {
  return redact(workload);
}

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

/**
 * The values a run of `workload` must scrub from everything it writes and prints: the API key (the value of
 * `target.api_key_env`), the values of `target.headers` whose name looks secret, and the credentials of every
 * URL in the workload (target, `via`, bypass, monitor targets…), with the Basic tokens made of them.
 */
export function workloadSecrets(workload: Workload, env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  const name = workload.target.api_key_env;
  const key = name === null ? undefined : env[name];
  if (key !== undefined && key !== '') out.push(key);
  for (const [header, value] of Object.entries(workload.target.headers)) if (SECRET_HEADER.test(header) && value !== '') out.push(value);
  for (const text of strings(workload, [])) if (text.includes('://') && text.includes('@')) out.push(...urlSecrets(text));
  return out;
}
