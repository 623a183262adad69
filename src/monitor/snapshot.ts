// The latest scrape of every target, kept so a hang record can carry what the gauges said just before it.
import type { GaugeSample, GaugeSnapshot, HangEvent, ScrapeEvent } from '../types/index.js';

export class LatestGauges {
  readonly #ok = new Map<string, { runMs: number; samples: GaugeSample[] }>();
  readonly #lastError = new Map<string, string | null>();

  add(e: ScrapeEvent): void {
    if (e.ok) this.#ok.set(e.target, { runMs: e.run_ms, samples: e.samples });
    this.#lastError.set(e.target, e.ok ? null : e.error);
  }

  get size(): number {
    return this.#lastError.size;
  }

  /** One entry per target scraped so far, as of `atRunMs`. */
  snapshot(atRunMs: number): GaugeSnapshot[] {
    return [...this.#lastError.keys()].map((target) => {
      const ok = this.#ok.get(target);
      return {
        target,
        run_ms: ok?.runMs ?? null,
        age_ms: ok === undefined ? null : Math.max(0, Math.round(atRunMs - ok.runMs)),
        last_error: this.#lastError.get(target) ?? null,
        samples: ok?.samples ?? [],
      };
    });
  }

  /** The hang event with `gauges` filled in (unchanged when nothing was scraped yet). */
  enrich(e: HangEvent): HangEvent {
    return this.size === 0 ? e : { ...e, gauges: this.snapshot(e.run_ms) };
  }
}
