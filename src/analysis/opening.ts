// What opening sockets cost the client: TCP connect and TLS time of the requests that opened one, time spent
// waiting for a socket or for the client's own loop, and the requests sent in a start-up rush (many sockets
// opening at once), whose TTFT carries the client's own start-up. Beside the TTFT, never taken out of it.
import type { RequestRecord } from '../types/index.js';

/** A request that opened its socket while at least this many were opening is a start-up request. */
export const STARTUP_OPENING = 8;

export interface OpeningFigures {
  /** Requests that opened their socket (connection `nth` 1) with connect time measured. */
  sockets: number;
  connect_ms_mean: number | null;
  connect_ms_max: number | null;
  /** Over TLS sockets only; null when none. */
  tls_ms_mean: number | null;
  tls_ms_max: number | null;
  /** Send to headers out, less connect and TLS, over all requests. */
  queued_ms_mean: number | null;
  queued_ms_max: number | null;
  /** Requests that opened their socket while STARTUP_OPENING or more were opening at once. */
  startup_requests: number;
  /** Their own time before the request went out (queued + connect + TLS): part of their TTFT. */
  startup_send_delay_ms_mean: number | null;
  startup_send_delay_ms_max: number | null;
}

class Stat {
  n = 0;
  sum = 0;
  max = -Infinity;

  add(v: number): void {
    this.n += 1;
    this.sum += v;
    this.max = Math.max(this.max, v);
  }

  mean(): number | null {
    return this.n === 0 ? null : Math.round((this.sum / this.n) * 10) / 10;
  }

  top(): number | null {
    return this.n === 0 ? null : Math.round(this.max * 10) / 10;
  }
}

export class OpeningStats {
  readonly #connect = new Stat();
  readonly #tls = new Stat();
  readonly #queued = new Stat();
  readonly #startup = new Stat();

  add(r: RequestRecord): void {
    const c = r.connection;
    if (c === null) return;
    if (typeof c.queued_ms === 'number') this.#queued.add(c.queued_ms);
    if (c.nth !== 1 || typeof c.connect_ms !== 'number') return;
    this.#connect.add(c.connect_ms);
    if (typeof c.tls_ms === 'number') this.#tls.add(c.tls_ms);
    if ((c.opening ?? 0) >= STARTUP_OPENING) this.#startup.add((c.queued_ms ?? 0) + c.connect_ms + (c.tls_ms ?? 0));
  }

  build(): OpeningFigures {
    return {
      sockets: this.#connect.n,
      connect_ms_mean: this.#connect.mean(),
      connect_ms_max: this.#connect.top(),
      tls_ms_mean: this.#tls.mean(),
      tls_ms_max: this.#tls.top(),
      queued_ms_mean: this.#queued.mean(),
      queued_ms_max: this.#queued.top(),
      startup_requests: this.#startup.n,
      startup_send_delay_ms_mean: this.#startup.mean(),
      startup_send_delay_ms_max: this.#startup.top(),
    };
  }
}
