// How many of the client's requests were in flight at each scrape, and how many of those were hung: what the
// client knows of its own traffic, to hold against what the deployment's gauges say it holds (held-signal.ts).
// Counted as the run goes, in bounded memory: one pair of counts per scrape time, each request adding itself to
// the scrapes its life spans when its record arrives (at its end, so every scrape that started before it is
// known, but for one still under way then: a request ending while a scrape reads is the scrape's to miss).

import { partitionPoint } from '../../util/index.js';

/** The client's requests in flight at one scrape time: all of them, and the hung ones (from when they got stuck). */
export interface InFlightPoint {
  run_ms: number;
  all: number;
  hung: number;
}

/** Scrape times kept (one per scrape, deduplicated): as many as the diagnosis keeps scrapes. */
const MAX_TIMES = 200_000;

/** The index of the first item of `items` (sorted by `at`) at or after `ms`. */
export function firstAtOrAfter<T>(items: readonly T[], ms: number, at: (x: T) => number): number {
  return partitionPoint(items, (x) => at(x) < ms);
}

const itself = (x: number): number => x;

export class InFlightCounter {
  readonly #times: number[] = [];
  readonly #all: number[] = [];
  readonly #hung: number[] = [];

  /** A scrape started at `runMs`: a time to count at. Scrapes arrive nearly in order (a slower target's a
   * little late), so the insertion is near the end. */
  addScrape(runMs: number): void {
    if (this.#times.length >= MAX_TIMES) return;
    const i = firstAtOrAfter(this.#times, runMs, itself);
    if (this.#times[i] === runMs) return;
    this.#times.splice(i, 0, runMs);
    this.#all.splice(i, 0, 0);
    this.#hung.splice(i, 0, 0);
  }

  /** A request in flight over (fromMs, toMs), hung from `hungFromMs` on (null: it did not hang). */
  addRequest(fromMs: number, toMs: number, hungFromMs: number | null): void {
    for (let i = firstAtOrAfter(this.#times, fromMs, itself); i < this.#times.length && this.#times[i]! < toMs; i += 1) {
      if (this.#times[i] === fromMs) continue;
      this.#all[i] = this.#all[i]! + 1;
      if (hungFromMs !== null && this.#times[i]! > hungFromMs) this.#hung[i] = this.#hung[i]! + 1;
    }
  }

  points(): InFlightPoint[] {
    return this.#times.map((run_ms, i) => ({ run_ms, all: this.#all[i]!, hung: this.#hung[i]! }));
  }
}
