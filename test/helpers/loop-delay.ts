// A timing margin measured, not guessed: how late this process's event loop ran while a test's requests were in
// flight. A client timestamp is taken when its socket read is handled, a fixture server's when its timer fires,
// so either can be off by up to one loop delay; comparisons of two such intervals allow twice that, plus a
// floor for loopback and parsing.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** What a single read or timer can be late by on an idle loopback besides loop delay (delivery, parsing). */
const FLOOR_MS = 2;

export class LoopDelay {
  readonly #h: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });

  constructor() {
    this.#h.enable();
  }

  /** The largest delay seen so far, in ms (the sampling resolution left out, as Node 20 includes it). */
  get maxMs(): number {
    return Math.max(0, this.#h.max / 1e6 - 1);
  }

  /** The margin for comparing two intervals, each between two timestamps that can be a loop delay late. */
  marginMs(): number {
    return FLOOR_MS + 2 * this.maxMs;
  }

  stop(): void {
    this.#h.disable();
  }
}
