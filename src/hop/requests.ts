// A request arriving at the hop: counted on its connection, observed by the tap the caller gives it, judged
// by the faults (let through, taken, or delayed), then forwarded; delays are timers the hop cancels on close.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HopConnections } from './connections.js';
import type { HopFaults } from './fault-set.js';
import type { Forwarder } from './forward.js';
import { guardTap, type ExchangeStart, type ExchangeTap } from './tap.js';

export interface HopRequestsOptions {
  connections: HopConnections;
  faults: HopFaults;
  forwarder: Forwarder;
  /** Called as each request arrives; the observer it returns sees the exchange through (null: not observed). */
  tap?: ((start: ExchangeStart) => ExchangeTap | null) | undefined;
  /** The hop is closing. */
  isClosed: () => boolean;
}

export class HopRequests {
  readonly #options: HopRequestsOptions;
  #count = 0;
  readonly #delays = new Set<NodeJS.Timeout>();

  constructor(options: HopRequestsOptions) {
    this.#options = options;
  }

  /** Requests arrived so far. */
  get count(): number {
    return this.#count;
  }

  /** The server's request listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const { connections, faults, forwarder, isClosed } = this.#options;
    const { conn, nth, idleMs, atMs } = connections.arrive(req.socket);
    this.#count += 1;
    const tap = guardTap(this.#options.tap?.({ connection: conn.id, nth, idleMs, atMs, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }) ?? null);
    if (tap.observed) req.on('data', (chunk: Buffer) => tap.requestData(chunk));
    res.once('close', () => {
      const idle = connections.depart(conn);
      tap.end(isClosed() ? { kind: 'closed' } : { kind: 'client_gone' });
      if (idle) {
        faults.idle(conn);
        connections.mirrorUpstreamClose(conn);
      }
    });
    const exchange = { req, res, conn, nth, tap };
    const verdict = faults.verdict({ conn, nth, seq: this.#count, req, tap });
    if (verdict.action === 'taken') return;
    if (verdict.action === 'forward') {
      forwarder.forward(exchange);
      return;
    }
    const timer = setTimeout(() => {
      this.#delays.delete(timer);
      forwarder.forward(exchange);
    }, verdict.delayMs);
    this.#delays.add(timer);
    res.once('close', () => {
      clearTimeout(timer);
      this.#delays.delete(timer);
    });
  };

  /** The hop is closing: delayed requests are never forwarded. */
  cancelDelays(): void {
    for (const t of this.#delays) clearTimeout(t);
    this.#delays.clear();
  }
}
