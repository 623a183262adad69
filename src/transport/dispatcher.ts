// Agents get a "lane" (their own keep-alive connection, or a shared pool) and never branch on the path:
// which dispatcher makes it (direct, TLS, CONNECT proxy) is decided once, here, by paths.ts.
import type { Dispatcher } from 'undici';
import { boundedGet, type GetResult } from './get.js';
import { connectFactory, directFactory, type DispatcherFactory, type TlsOptions } from './paths.js';
import type { PathKind } from '../types/index.js';

export type { TlsOptions } from './paths.js';

export interface TransportOptions {
  /** Base URL requests go to (the engine, the router, or the hop in front of them). */
  url: string;
  path: PathKind;
  /** TLS settings for an https `url` (inside the tunnel when there is a CONNECT proxy). */
  tls: TlsOptions;
  /** An HTTP CONNECT proxy to tunnel through. @default null */
  connectProxy?: string | null;
  connection: 'per-agent' | 'pool';
  agents: number;
  poolConnections: number | null;
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
  /** undici's own deadlines, kept only as a backstop behind the watchdog's precise timers. */
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Keep an idle socket for `keepAliveTimeoutMs` whatever the server's `Keep-Alive: timeout=N` hint says (undici
   * would close it 2 s before the hint): `probe-path` measures when the server closes, not when undici gives up.
   * @default false */
  ignoreKeepAliveHint?: boolean;
}

/** The dispatcher one agent sends through. */
export interface Lane {
  readonly dispatcher: Dispatcher;
  /** Drops this lane's sockets and starts afresh (after a hang stuck before a socket was had). */
  reset(): void;
  /** A request sent on `through` (the lane's dispatcher then) failed with `error`: the poison guard. */
  failed(error: Error, through: Dispatcher): void;
}

/**
 * undici 7 leaves a Client unable to connect again after a certificate-name mismatch
 * (ERR_TLS_CERT_ALTNAME_INVALID fails the queued request but counts it as still running), so the next
 * request would wait forever for a socket. The lane starts afresh instead, and every request of a
 * mismatched target is recorded as the `tls` error it is, not as a connect hang. Checked on the error path
 * only (`Lane.failed`, called by the sender), so no handler of its own sits between undici and every chunk.
 */
function poisons(error: Error): boolean {
  return (error as { code?: unknown }).code === 'ERR_TLS_CERT_ALTNAME_INVALID';
}

export class Transport {
  readonly options: TransportOptions;
  readonly origin: string;
  readonly basePath: string;
  readonly #factory: DispatcherFactory;
  readonly #lanes: Lane[] = [];
  #shared: Dispatcher | null = null;
  #probe: Dispatcher | null = null;
  readonly #made = new Set<Dispatcher>();

  constructor(options: TransportOptions) {
    this.options = options;
    const url = new URL(options.url);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    const common = {
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      ignoreKeepAliveHint: options.ignoreKeepAliveHint ?? false,
    };
    const proxy = options.connectProxy ?? null;
    this.#factory = proxy === null ? directFactory(url, options.tls, common) : connectFactory(url, new URL(proxy), options.tls, common);
  }

  #client(): Dispatcher {
    const c = this.#factory.single();
    this.#made.add(c);
    return c;
  }

  #pool(): Dispatcher {
    if (this.#shared === null) {
      this.#shared = this.#factory.pool(this.options.poolConnections ?? this.options.agents);
      this.#made.add(this.#shared);
    }
    return this.#shared;
  }

  /** The lane of agent `index` (created on first use). */
  lane(index: number): Lane {
    const existing = this.#lanes[index];
    if (existing !== undefined) return existing;
    const pooled = this.options.connection === 'pool';
    let dispatcher: Dispatcher = pooled ? this.#pool() : this.#client();
    const reset = (): void => {
      if (pooled) return; // a shared pool is not one agent's to drop
      const old = dispatcher;
      this.#made.delete(old);
      old.destroy().catch(() => {});
      dispatcher = this.#client();
    };
    const lane: Lane = {
      get dispatcher() {
        return dispatcher;
      },
      reset,
      failed(error, through) {
        // Only the client that was poisoned is replaced, never a fresh one made since.
        if (!pooled && poisons(error)) {
          queueMicrotask(() => {
            if (dispatcher === through) reset();
          });
        }
      },
    };
    this.#lanes[index] = lane;
    return lane;
  }

  /** The probe connection (health checks, the preflight): one keep-alive connection of its own. */
  #probeDispatcher(): Dispatcher {
    if (this.#probe === null) {
      this.#probe = this.#factory.single({ keepAliveTimeoutMs: 1000 });
      this.#made.add(this.#probe);
    }
    return this.#probe;
  }

  /** The poison guard of the probe connection: a poisoned client never closes gracefully either, so it is
   * dropped now, not at the end of the run. */
  #probeFailed(error: Error, through: Dispatcher): void {
    if (!poisons(error)) return;
    queueMicrotask(() => {
      if (this.#probe !== through) return;
      this.#made.delete(through);
      through.destroy().catch(() => {});
      this.#probe = null;
    });
  }

  /** A lane on the probe connection, for a one-off request (the preflight): no agent's lane, so the agents'
   * sockets still start fresh; `get` reuses the same connection (one tunnel through a CONNECT proxy). */
  probeLane(): Lane {
    return { dispatcher: this.#probeDispatcher(), reset: () => {}, failed: (error, through) => this.#probeFailed(error, through) };
  }

  /** A bounded GET on the target with the path's TLS settings, on the probe connection (health checks); with
   * `json`, a POST of it (the tokenize probe). */
  async get(path: string, options: { timeoutMs: number; headers?: Record<string, string>; json?: string }): Promise<GetResult> {
    const dispatcher = this.#probeDispatcher();
    try {
      return await boundedGet(`${this.origin}${this.basePath}${path}`, { ...options, dispatcher });
    } catch (error) {
      if (error instanceof Error) this.#probeFailed(error, dispatcher);
      throw error;
    }
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
