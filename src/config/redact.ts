// A copy of the resolved workload safe to write to run.json, and the secret values a run must never write.
// Secrets are decided by allow-list where a workload holds values that are sent: every `target.headers` value
// is a secret unless its header is known to be public or named in `target.public_headers`; every string of
// `extra_body`, at any depth, is one unless its top-level key is in `target.public_extra_body` or it is a known
// request option's setting (PUBLIC_BODY_OPTIONS, src/types/body-options.ts). Elsewhere a workload holds env var
// NAMES, so masking by key is a backstop (`*api_key*`, `*token*`, `*password*`, `*secret*`), and credentials in
// any URL are redacted.
import { isBodySetting } from '../types/index.js';
import { redactUrlCredentials, urlSecrets } from '../util/index.js';
import type { Workload } from './schema.js';

export const REDACTED = '[redacted]';
const SECRET_KEY = /api[_-]?key|token|passw(or)?d|secret/i;
// `api_key_env` and friends name an environment variable; the name is useful in run.json and is not the secret.
const ENV_NAME_KEY = /_env$/i;

/**
 * Headers whose values are written as they are, lower-case. Kept short on purpose: each describes the client or
 * the request, never who sends it, so no deployment puts a credential in one. `Authorization`, `Content-Type`
 * and `Accept` are roundload's own (target.headers may not set them). Anything else (a routing key, a session or
 * tenant id, a vendor's subscription key, an IAP assertion) is masked unless the workload says otherwise in
 * `target.public_headers`: a header nobody listed is a secret nobody thought of.
 */
export const PUBLIC_HEADERS: readonly string[] = ['user-agent', 'accept-encoding', 'accept-language', 'cache-control', 'x-request-id'];

/** Whether header `name`'s value may be written: on {@link PUBLIC_HEADERS} or in `publicHeaders` (any case). */
export function isPublicHeader(name: string, publicHeaders: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return PUBLIC_HEADERS.includes(lower) || publicHeaders.some((p) => p.toLowerCase() === lower);
}

/**
 * A copy of `extra_body` with every secret string replaced by `replace(path)` (path: the keys from the top,
 * array indexes included): every string at any depth, but those under a top-level key in `publicKeys` and the
 * settings of known request options ({@link isBodySetting}: `reasoning_effort: high`,
 * `chat_template_kwargs.enable_thinking`). A name says nothing of a value (`bearer`, `pwd`, `sas`,
 * `metadata.user_private` all hold credentials), so nothing is public by its name alone. Numbers and booleans
 * are kept (sizes, flags; `max_new_tokens: 512` is no secret).
 */
export function maskExtraBody(body: Record<string, unknown>, publicKeys: readonly string[], replace: (path: string[]) => unknown): Record<string, unknown> {
  const walk = (value: unknown, path: string[]): unknown => {
    if (typeof value === 'string') return isBodySetting(path) ? value : replace(path);
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)]));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) define(out, key, walk(child, [...path, key]));
    return out;
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) define(out, key, publicKeys.includes(key) ? value : walk(value, [key]));
  return out;
}

/** The strings {@link maskExtraBody} masks. */
function extraBodySecrets(body: Record<string, unknown>, publicKeys: readonly string[]): string[] {
  const out: string[] = [];
  maskExtraBody(body, publicKeys, (path) => {
    let value: unknown = body;
    for (const key of path) value = (value as Record<string, unknown>)[key];
    if (typeof value === 'string' && value !== '') out.push(value);
    return null;
  });
  return out;
}

// defineProperty keeps a `__proto__` key (possible under free-form fields) an ordinary key.
function define(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** URL credentials redacted everywhere; with `byKey`, strings under secret-looking keys masked too. */
function redact(value: unknown, byKey = true): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, byKey));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const secret = byKey && typeof child === 'string' && SECRET_KEY.test(key) && !ENV_NAME_KEY.test(key);
    define(out, key, secret ? REDACTED : redact(child, byKey));
  }
  return out;
}

/** A deep copy of `workload` with secret values replaced by `[redacted]` (target.headers and extra_body by
 * allow-list, other secret-looking keys by name) and URL credentials by `***`; the input is untouched. */
export function redactWorkload(workload: Workload): unknown {
  const copy = redact(workload) as Record<string, unknown> & { target: Record<string, unknown> };
  const { headers, extra_body, public_headers, public_extra_body } = workload.target;
  const maskedHeaders: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) define(maskedHeaders, name, isPublicHeader(name, public_headers) ? redactUrlCredentials(value) : REDACTED);
  copy.target.headers = maskedHeaders;
  copy.target.extra_body = redact(
    maskExtraBody(extra_body, public_extra_body, () => REDACTED),
    false,
  );
  return copy;
}

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

/**
 * The values a run of `workload` must scrub from everything it writes and prints: the API key (the value of
 * `target.api_key_env`), every `target.headers` value that is not public, every secret string of `extra_body`,
 * and the credentials of every URL in the workload (target, `via`, bypass, monitor targets…), with the Basic
 * tokens made of them.
 */
export function workloadSecrets(workload: Workload, env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  const name = workload.target.api_key_env;
  const key = name === null ? undefined : env[name];
  if (key !== undefined && key !== '') out.push(key);
  const { headers, extra_body, public_headers, public_extra_body } = workload.target;
  for (const [header, value] of Object.entries(headers)) if (!isPublicHeader(header, public_headers) && value !== '') out.push(value);
  out.push(...extraBodySecrets(extra_body, public_extra_body));
  for (const text of strings(workload, [])) if (text.includes('://') && text.includes('@')) out.push(...urlSecrets(text));
  return out;
}
