// The run's series over time, for remote write: snapshots of the registry taken every interval while the run
// goes and once at its end, kept as one list of samples per series. Bounded: past `maxSnapshots` every other
// snapshot is dropped and the interval doubles, so an 8-hour soak pushes as much as a 1-hour run.
import type { TimeSeries } from './protobuf.js';

/** What `Registry.getMetricsAsJSON()` returns, as far as it is read here. */
export interface MetricFamily {
  name: string;
  values: readonly { value: number; labels: Readonly<Record<string, string | number | undefined>>; metricName?: string }[];
}

export interface SeriesRecorderOptions {
  /** Labels every pushed series carries besides its own (`job`, `instance`). */
  extraLabels: Readonly<Record<string, string>>;
  /** Time between snapshots at first. @default 10000 */
  intervalMs?: number;
  /** Snapshots kept at most. @default 360 */
  maxSnapshots?: number;
}

export class SeriesRecorder {
  readonly #extra: Readonly<Record<string, string>>;
  readonly #max: number;
  #intervalMs: number;
  #times: number[] = [];
  readonly #series = new Map<string, TimeSeries>();

  constructor(o: SeriesRecorderOptions) {
    this.#extra = o.extraLabels;
    this.#intervalMs = o.intervalMs ?? 10_000;
    this.#max = Math.max(2, o.maxSnapshots ?? 360);
  }

  /** Whether a snapshot at `nowMs` is due (the interval has passed since the last one). */
  due(nowMs: number): boolean {
    const last = this.#times.at(-1);
    return last === undefined || nowMs - last >= this.#intervalMs;
  }

  /** Records every series' value at `timestampMs` (ms since the epoch); a snapshot no later than the last
   * one is left out (remote write needs each series' samples in time order). */
  add(families: readonly MetricFamily[], timestampMs: number): void {
    const last = this.#times.at(-1);
    if (last !== undefined && timestampMs <= last) return;
    this.#times.push(timestampMs);
    for (const family of families) {
      for (const v of family.values) {
        const labels: Record<string, string> = { ...this.#extra, __name__: v.metricName ?? family.name };
        // An empty label is no label to Prometheus (a request that ended ok has no class).
        for (const [k, value] of Object.entries(v.labels)) if (value !== undefined && value !== '') labels[k] = String(value);
        const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        let series = this.#series.get(key);
        if (series === undefined) {
          series = { labels, samples: [] };
          this.#series.set(key, series);
        }
        series.samples.push({ value: v.value, timestampMs });
      }
    }
    if (this.#times.length > this.#max) this.#thin();
  }

  /** Every series with its samples in time order. */
  series(): TimeSeries[] {
    return [...this.#series.values()];
  }

  /** Keeps every other snapshot (the last one always) and doubles the interval. */
  #thin(): void {
    const last = this.#times.length - 1;
    const kept = new Set(this.#times.filter((_, i) => i % 2 === last % 2));
    this.#times = this.#times.filter((t) => kept.has(t));
    for (const s of this.#series.values()) s.samples = s.samples.filter((x) => kept.has(x.timestampMs));
    this.#intervalMs *= 2;
  }
}
