// The HTTP headers of every chat request a run sends (agents, canaries, the preflight and its model list):
// roundload's User-Agent, the workload's `target.headers` (which may replace it), and the API key read from
// the environment variable `target.api_key_env` names. Resolved once, at the start of a run.
import type { Workload } from '../config/index.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';

/** What every request says it is, unless `target.headers` says otherwise. */
export const USER_AGENT = `roundload/${VERSION}`;

/**
 * The headers for `target`, names in lower case (so a `User-Agent` in the workload replaces roundload's own).
 * @throws UsageError when `api_key_env` names a variable that is not set.
 */
export function requestHeaders(target: Pick<Workload['target'], 'api_key_env' | 'headers'>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [name, value] of Object.entries(target.headers)) out[name.toLowerCase()] = value;
  const name = target.api_key_env;
  if (name === null) return out;
  const key = env[name];
  if (key === undefined || key === '') throw new UsageError(`target.api_key_env names ${name}, but that environment variable is not set`);
  out.authorization = `Bearer ${key}`;
  return out;
}
