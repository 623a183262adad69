// Where the hop forwards to: the upstream URL, checked once; its keep-alive agents (the shared pool, or one
// connection per client connection); and the upstream request made for a client's request.
import http, { type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { UsageError } from '../errors.js';

/** How an https upstream's certificate is checked (ignored for http). */
export interface UpstreamTls {
  /** PEM text of a CA to trust besides Node's roots (null or empty: Node's roots only). */
  ca: string | null;
  insecure: boolean;
  servername: string | null;
}

export class Upstream {
  readonly url: URL;
  /** The shared keep-alive pool (`upstreamPerClient` gives each client connection an agent of its own). */
  readonly pool: http.Agent;
  readonly #basePath: string;
  readonly #tls: UpstreamTls;

  /** @throws UsageError when `raw` is not an http:// or https:// URL. */
  constructor(raw: string, tls: UpstreamTls, poolSize: number) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch (cause) {
      throw new UsageError(`hop upstream "${raw}" is not a URL`, { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`hop upstream must be http:// or https://, got ${raw}`);
    this.url = url;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#tls = tls;
    this.pool = this.agent(poolSize);
  }

  /** A keep-alive agent of at most `maxSockets` connections, the most recently used reused first. */
  agent(maxSockets: number): http.Agent {
    const options = { keepAlive: true, maxSockets, scheduling: 'lifo' as const };
    if (this.url.protocol !== 'https:') return new http.Agent(options);
    const tls = this.#tls;
    return new https.Agent({
      ...options,
      rejectUnauthorized: !tls.insecure,
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.servername ? { servername: tls.servername } : {}),
    });
  }

  /** An upstream request for the client's `method` and `path` (path and query, put under the upstream's own path). */
  request(method: string | undefined, path: string, headers: OutgoingHttpHeaders, agent: http.Agent): http.ClientRequest {
    const url = this.url;
    const request = url.protocol === 'https:' ? https.request : http.request;
    return request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? undefined : Number(url.port),
      method,
      path: `${this.#basePath}${path}`,
      headers,
      agent,
    });
  }
}
