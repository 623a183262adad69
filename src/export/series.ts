// The run's series as remote write sends them: each snapshot of the registry becomes one value per series at
// one time, its series named once (labels interned) so a queue of snapshots costs a number per sample; a
// batch of snapshots is turned back into series with their samples in time order.
import type { TimeSeries } from './protobuf.js';

/** What `Registry.getMetricsAsJSON()` returns, as far as it is read here. */
export interface MetricFamily {
  name: string;
  values: readonly { value: number; labels: Readonly<Record<string, string | number | undefined>>; metricName?: string }[];
}

/** Every series' value at one time. */
export interface Snapshot {
  /** ms since the epoch. */
  readonly timestampMs: number;
  /** Series ids (of the index that took it), one per value. */
  readonly ids: readonly number[];
  readonly values: readonly number[];
}

export class SeriesIndex {
  readonly #extra: Readonly<Record<string, string>>;
  readonly #ids = new Map<string, number>();
  readonly #labels: Readonly<Record<string, string>>[] = [];

  /** @param extraLabels labels every series carries besides its own (`job`, `instance`). */
  constructor(extraLabels: Readonly<Record<string, string>>) {
    this.#extra = extraLabels;
  }

  /** Series seen so far. */
  get size(): number {
    return this.#labels.length;
  }

  /** Every series' value at `timestampMs`. */
  snapshot(families: readonly MetricFamily[], timestampMs: number): Snapshot {
    const ids: number[] = [];
    const values: number[] = [];
    for (const family of families) {
      for (const v of family.values) {
        ids.push(this.#idOf(v.metricName ?? family.name, v.labels));
        values.push(v.value);
      }
    }
    return { timestampMs, ids, values };
  }

  /** The series of `snapshots` (taken in time order), each with its samples in that order. */
  series(snapshots: readonly Snapshot[]): TimeSeries[] {
    const byId = new Map<number, TimeSeries>();
    for (const s of snapshots) {
      for (let i = 0; i < s.ids.length; i += 1) {
        const id = s.ids[i]!;
        let series = byId.get(id);
        if (series === undefined) {
          series = { labels: this.#labels[id]!, samples: [] };
          byId.set(id, series);
        }
        series.samples.push({ value: s.values[i]!, timestampMs: s.timestampMs });
      }
    }
    return [...byId.values()];
  }

  #idOf(name: string, own: Readonly<Record<string, string | number | undefined>>): number {
    const labels: Record<string, string> = { ...this.#extra, __name__: name };
    // An empty label is no label to Prometheus (a request that ended ok has no class).
    for (const [k, value] of Object.entries(own)) if (value !== undefined && value !== '') labels[k] = String(value);
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#labels.length;
      this.#labels.push(labels);
      this.#ids.set(key, id);
    }
    return id;
  }
}
