// Snapshots waiting to be pushed, oldest first, bounded in samples: past the bound the oldest snapshots are
// dropped and counted (a receiver down for hours costs the oldest data, never the run's memory).
import type { Snapshot } from './series.js';

export class SnapshotQueue {
  readonly #maxSamples: number;
  #snapshots: Snapshot[] = [];
  #samples = 0;

  /** @param maxSamples samples kept at most; the newest snapshot is kept whatever its size. */
  constructor(maxSamples: number) {
    this.#maxSamples = maxSamples;
  }

  get samples(): number {
    return this.#samples;
  }

  get empty(): boolean {
    return this.#snapshots.length === 0;
  }

  /** The time of the newest snapshot queued; undefined when empty. */
  get newestMs(): number | undefined {
    return this.#snapshots.at(-1)?.timestampMs;
  }

  /** Appends a snapshot; returns the samples dropped to stay within the bound. */
  add(snapshot: Snapshot): number {
    this.#snapshots.push(snapshot);
    this.#samples += snapshot.values.length;
    return this.#trim();
  }

  /** Puts a batch taken by `take` back in front (its push is to be tried again); returns the samples dropped
   * to stay within the bound (the batch's own first, as the oldest). */
  putBack(batch: readonly Snapshot[]): number {
    this.#snapshots = [...batch, ...this.#snapshots];
    this.#samples += count(batch);
    return this.#trim();
  }

  /** Takes the oldest snapshots out, as many as fit in `maxSamples` (at least one). */
  take(maxSamples: number): Snapshot[] {
    let n = 0;
    let samples = 0;
    while (n < this.#snapshots.length && (n === 0 || samples + this.#snapshots[n]!.values.length <= maxSamples)) {
      samples += this.#snapshots[n]!.values.length;
      n += 1;
    }
    const batch = this.#snapshots.slice(0, n);
    this.#snapshots = this.#snapshots.slice(n);
    this.#samples -= samples;
    return batch;
  }

  /** Drops the snapshots taken before `cutoffMs`; returns their samples. */
  dropOlderThan(cutoffMs: number): number {
    let n = 0;
    while (n < this.#snapshots.length && this.#snapshots[n]!.timestampMs < cutoffMs) n += 1;
    return this.#dropFirst(n);
  }

  #trim(): number {
    let n = 0;
    let samples = this.#samples;
    while (samples > this.#maxSamples && n < this.#snapshots.length - 1) {
      samples -= this.#snapshots[n]!.values.length;
      n += 1;
    }
    return this.#dropFirst(n);
  }

  #dropFirst(n: number): number {
    const dropped = count(this.#snapshots.slice(0, n));
    this.#snapshots = this.#snapshots.slice(n);
    this.#samples -= dropped;
    return dropped;
  }
}

function count(snapshots: readonly Snapshot[]): number {
  return snapshots.reduce((n, s) => n + s.values.length, 0);
}
