// A bounded GET for scrapes, health checks and canaries: a deadline of our own races undici's, so a
// blackholed endpoint costs at most `timeoutMs`.
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { Agent } from './undici.js';

export interface GetResult {
  status: number;
  body: string;
  durationMs: number;
}

const shared = new Agent({ keepAliveTimeout: 30_000, pipelining: 1 });

export class GetTimeoutError extends Error {
  readonly code = 'ERR_GET_TIMEOUT';
  constructor(url: string, timeoutMs: number, method = 'GET') {
    super(`${method} ${url} got no complete answer within ${timeoutMs} ms`);
    this.name = 'GetTimeoutError';
  }
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** `url` without its credentials (as text and parsed: null when it does not parse), and the Basic
 * Authorization header they stand for (none when it has none). */
function splitCredentials(url: string): { url: string; parsed: URL | null; authorization: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, parsed: null, authorization: null };
  }
  if (parsed.username === '' && parsed.password === '') return { url, parsed, authorization: null };
  const token = Buffer.from(`${decoded(parsed.username)}:${decoded(parsed.password)}`).toString('base64');
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, parsed, authorization: `Basic ${token}` };
}

export interface BoundedOptions {
  timeoutMs: number;
  maxBytes?: number;
  dispatcher?: Dispatcher;
  headers?: Record<string, string>;
  /** A JSON body to POST instead of a GET (a tokenize probe). */
  json?: string;
}

/** GETs `url` (POSTs `json` when given), reading at most `maxBytes` of body; rejects on timeout or network error. Credentials in the URL
 * (`http://user:pass@host/metrics`) are sent as Basic auth (unless `headers` has an Authorization), never
 * shown in a message. */
export async function boundedGet(target: string, options: BoundedOptions): Promise<GetResult> {
  const { url, parsed, authorization } = splitCredentials(target);
  const method = options.json === undefined ? 'GET' : 'POST';
  const given = options.json === undefined ? (options.headers ?? {}) : { ...options.headers, 'content-type': 'application/json' };
  const headers = authorization === null || Object.keys(given).some((k) => k.toLowerCase() === 'authorization') ? given : { ...given, authorization };
  const started = performance.now();
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new GetTimeoutError(url, options.timeoutMs, method);
      ac.abort(err);
      reject(err);
    }, options.timeoutMs);
  });
  const work = (async () => {
    // Parsed once, above; a URL that does not parse throws its TypeError here, as a rejection of the GET.
    const { origin, pathname, search } = parsed ?? new URL(url);
    const res = await (options.dispatcher ?? shared).request({
      origin,
      path: pathname + search,
      method,
      ...(options.json === undefined ? {} : { body: options.json }),
      signal: ac.signal,
      headersTimeout: options.timeoutMs + 1000,
      bodyTimeout: options.timeoutMs + 1000,
      headers,
    });
    const limit = options.maxBytes ?? 8 * 1024 * 1024;
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      size += b.length;
      if (size > limit) {
        res.body.destroy();
        throw new Error(`${method} ${url}: body larger than ${limit} bytes`);
      }
      parts.push(b);
    }
    return { status: res.statusCode, body: Buffer.concat(parts).toString('utf8'), durationMs: performance.now() - started };
  })();
  work.catch(() => {}); // the deadline may win; never leave a rejection unhandled
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
