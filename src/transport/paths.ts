// One dispatcher factory per network path. `direct` reaches the target's origin itself (http, or https with
// the path's TLS: that also covers the built-in hop and a TLS reverse proxy, which are origins too); `connect`
// tunnels through an HTTP CONNECT proxy. The agents get a dispatcher and never learn which.
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { Client, Pool, ProxyAgent } from './undici.js';
import { UsageError } from '../errors.js';
import { timedConnector } from './timing.js';

export interface TlsOptions {
  /** PEM file of a CA to trust in addition to Node's roots. */
  caFile: string | null;
  insecure: boolean;
  servername: string | null;
}

/** Settings every dispatcher of a transport shares (undici's own deadlines are only a backstop). */
export interface CommonOptions {
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** See TransportOptions.ignoreKeepAliveHint. @default false */
  ignoreKeepAliveHint?: boolean;
}

export interface DispatcherFactory {
  /** One keep-alive connection of its own (an agent's lane, a health-check probe). */
  single(overrides?: { keepAliveTimeoutMs?: number }): Dispatcher;
  /** A pool of at most `connections` connections shared by several agents. */
  pool(connections: number): Dispatcher;
}

/** Node TLS options for `origin` from the workload's TLS settings; `{}` for plain http. */
export function tlsConnectOptions(tls: TlsOptions, origin: URL): Record<string, unknown> {
  if (origin.protocol !== 'https:') return {};
  const options: Record<string, unknown> = { rejectUnauthorized: !tls.insecure };
  if (tls.caFile !== null) {
    try {
      // Trust Node's roots and the given CA, like curl --cacert plus the system store.
      options.ca = readFileSync(tls.caFile, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read target.tls.ca file ${tls.caFile}`, { cause });
    }
  }
  if (tls.servername !== null) options.servername = tls.servername;
  return options;
}

/** undici's timers are coarse (about 0.5 s): this much later than our own deadline, theirs never wins. */
const CONNECT_BACKSTOP_MS = 2000;

function base(common: CommonOptions, keepAliveTimeoutMs = common.keepAliveTimeoutMs) {
  const keepAliveMaxTimeout = Math.max(keepAliveTimeoutMs, 600_000);
  return {
    keepAliveTimeout: keepAliveTimeoutMs,
    keepAliveMaxTimeout,
    // undici keeps a socket min(hint − threshold, max): a threshold of −max makes it keep the socket for
    // `keepAliveMaxTimeout`, whatever the hint, so only the server's own close ends it.
    ...(common.ignoreKeepAliveHint === true ? { keepAliveTimeoutThreshold: -keepAliveMaxTimeout } : {}),
    headersTimeout: common.headersTimeoutMs,
    bodyTimeout: common.bodyTimeoutMs,
    // POST streams do not pipeline; one request per socket at a time.
    pipelining: 1,
  };
}

/** Straight to the origin: a Client per lane, a Pool when shared. */
export function directFactory(origin: URL, tls: TlsOptions, common: CommonOptions): DispatcherFactory {
  // Timed: every record says what opening its socket cost (connect_ms, tls_ms).
  const connect = timedConnector({ ...tlsConnectOptions(tls, origin), timeout: common.connectTimeoutMs });
  return {
    single: (o) => new Client(origin.origin, { ...base(common, o?.keepAliveTimeoutMs), connect }),
    pool: (connections) => new Pool(origin.origin, { ...base(common), connect, connections }),
  };
}

/**
 * Through an HTTP CONNECT proxy (undici's ProxyAgent): TLS to the target runs inside the tunnel. ProxyAgent
 * ignores `connectTimeout` (undici 7), so the deadline goes into both TLS settings, and the client that talks
 * to the proxy gets a headers deadline: without it a proxy that stalls the CONNECT holds the request for
 * 300 s and ignores aborts.
 */
export function connectFactory(origin: URL, proxyUrl: URL, tls: TlsOptions, common: CommonOptions): DispatcherFactory {
  const requestTls = { ...tlsConnectOptions(tls, origin), timeout: common.connectTimeoutMs };
  // An https proxy is verified against Node's roots plus the same CA file (a test hop's CA, say).
  const proxyTls = { ...tlsConnectOptions({ caFile: tls.caFile, insecure: tls.insecure, servername: null }, proxyUrl), timeout: common.connectTimeoutMs };
  const make = (connections: number, keepAliveTimeoutMs?: number): Dispatcher => {
    const agent = new ProxyAgent({
      uri: proxyUrl.href,
      ...base(common, keepAliveTimeoutMs),
      connections,
      requestTls,
      proxyTls,
      // A backstop behind the watchdog's connect deadline (which must win, to record a connect hang), so a
      // stalled CONNECT frees its socket soon after.
      clientFactory: (url, opts) => new Pool(url, { ...opts, headersTimeout: common.connectTimeoutMs + CONNECT_BACKSTOP_MS, bodyTimeout: common.connectTimeoutMs + CONNECT_BACKSTOP_MS }),
    });
    // A ProxyAgent serves any origin, so each request must name one; Client and Pool know theirs.
    return agent.compose((dispatch) => (opts, handler) => dispatch({ ...opts, origin: origin.origin }, handler));
  };
  return {
    single: (o) => make(1, o?.keepAliveTimeoutMs),
    pool: (connections) => make(connections),
  };
}
