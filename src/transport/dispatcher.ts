// One dispatcher factory per network path. Agents get a "lane" (their own keep-alive Client, or a shared
// Pool) and never branch on the path: TLS and proxy details live here only.
import { readFileSync } from 'node:fs';
import { Client, Pool, type Dispatcher } from 'undici';
import { boundedGet, type GetResult } from './get.js';
import type { PathKind } from '../types/index.js';
import { UsageError } from '../errors.js';

export interface TlsOptions {
  /** PEM file of a CA to trust in addition to Node's roots. */
  caFile: string | null;
  insecure: boolean;
  servername: string | null;
}

export interface TransportOptions {
  /** Base URL requests go to (the engine, the router, or the hop in front of them). */
  url: string;
  path: PathKind;
  tls: TlsOptions;
  connection: 'per-agent' | 'pool';
  agents: number;
  poolConnections: number | null;
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
  /** undici's own deadlines, kept only as a backstop behind the watchdog's precise timers. */
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/** The dispatcher one agent sends through. */
export interface Lane {
  readonly dispatcher: Dispatcher;
  /** Drops this lane's sockets and starts afresh (after a hang stuck before a socket was had). */
  reset(): void;
}

function tlsConnectOptions(tls: TlsOptions, url: URL): Record<string, unknown> {
  if (url.protocol !== 'https:') return {};
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

export class Transport {
  readonly options: TransportOptions;
  readonly origin: string;
  readonly basePath: string;
  readonly #connect: Record<string, unknown>;
  readonly #lanes: Lane[] = [];
  #shared: Pool | null = null;
  #probe: Client | null = null;
  readonly #made = new Set<Dispatcher>();

  constructor(options: TransportOptions) {
    this.options = options;
    const url = new URL(options.url);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.#connect = { ...tlsConnectOptions(options.tls, url), timeout: options.connectTimeoutMs };
  }

  #common() {
    return {
      connect: this.#connect,
      keepAliveTimeout: this.options.keepAliveTimeoutMs,
      keepAliveMaxTimeout: Math.max(this.options.keepAliveTimeoutMs, 600_000),
      headersTimeout: this.options.headersTimeoutMs,
      bodyTimeout: this.options.bodyTimeoutMs,
      // POST streams do not pipeline; one request per socket at a time.
      pipelining: 1,
    };
  }

  #client(): Client {
    const c = new Client(this.origin, this.#common());
    this.#made.add(c);
    return c;
  }

  #pool(): Pool {
    if (this.#shared === null) {
      this.#shared = new Pool(this.origin, { ...this.#common(), connections: this.options.poolConnections ?? this.options.agents });
      this.#made.add(this.#shared);
    }
    return this.#shared;
  }

  /** The lane of agent `index` (created on first use). */
  lane(index: number): Lane {
    const existing = this.#lanes[index];
    if (existing !== undefined) return existing;
    const transport = this;
    let dispatcher: Dispatcher = this.options.connection === 'pool' ? this.#pool() : this.#client();
    const lane: Lane = {
      get dispatcher() {
        return dispatcher;
      },
      reset() {
        if (transport.options.connection === 'pool') return; // a shared pool is not one agent's to drop
        const old = dispatcher;
        transport.#made.delete(old);
        old.destroy().catch(() => {});
        dispatcher = transport.#client();
      },
    };
    this.#lanes[index] = lane;
    return lane;
  }

  /** A bounded GET on the target with the path's TLS settings, on a connection of its own (health checks). */
  async get(path: string, options: { timeoutMs: number; headers?: Record<string, string> }): Promise<GetResult> {
    if (this.#probe === null) {
      this.#probe = new Client(this.origin, { ...this.#common(), keepAliveTimeout: 1000 });
      this.#made.add(this.#probe);
    }
    return boundedGet(`${this.origin}${this.basePath}${path}`, { ...options, dispatcher: this.#probe });
  }

  /** Closes every socket; bounded: after `graceMs` in-flight requests are destroyed. */
  async close(graceMs = 1000): Promise<void> {
    const all = [...this.#made];
    this.#made.clear();
    await Promise.all(
      all.map(async (d) => {
        let timer: NodeJS.Timeout | undefined;
        const closed = d.close().catch(() => {});
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        });
        await Promise.race([closed, late]);
        clearTimeout(timer);
        await d.destroy().catch(() => {});
      }),
    );
  }
}
