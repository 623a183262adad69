// What a long run keeps of its hangs (or of its errors) in bounded memory: a uniform sample across the whole
// run (reservoir sampling, seeded so the same stream keeps the same sample), the first and last failures of
// every stretch (an episode as it streams in), and each stretch's exact tally.
import { mergeTally, newTally, type EpisodeKind, type EpisodeTally } from './episodes.js';

export interface KeepLimits {
  /** Failures sampled uniformly across the run. */
  sample: number;
  /** Failures kept at each end of every stretch: its first `edge` and its last `edge`. */
  edge: number;
  /** Stretches kept apart; past it, the two closest in time merge (their counts stay exact). */
  stretches: number;
  /** A failure further than this from the open stretch opens a new one (no longer than the judge's gap). */
  gapMs: number;
  /** The sample's random seed. */
  seed: number;
}

interface Span {
  from_ms: number;
  to_ms: number;
}

interface Stretch<T> {
  tally: EpisodeTally;
  first: T[];
  /** The latest `edge` failures after the first ones, a ring: the oldest at `lastAt`. */
  last: T[];
  lastAt: number;
}

/** A stretch's latest failures, oldest first. */
function latest<T>(s: Stretch<T>): T[] {
  return [...s.last.slice(s.lastAt), ...s.last.slice(0, s.lastAt)];
}

/** mulberry32: a small seeded generator, uniform in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform sample of at most `size` of the items added (reservoir sampling, Vitter's algorithm R), seeded so
 * the same stream keeps the same sample. */
export class Reservoir<T> {
  readonly items: T[] = [];
  readonly #size: number;
  readonly #random: () => number;
  #seen = 0;

  constructor(size: number, seed: number) {
    this.#size = size;
    this.#random = seeded(seed);
  }

  add(x: T): void {
    this.#seen += 1;
    if (this.items.length < this.#size) {
      this.items.push(x);
      return;
    }
    const j = Math.floor(this.#random() * this.#seen);
    if (j < this.#size) this.items[j] = x;
  }
}

export class FailureKeeper<T extends Span> {
  readonly #kind: EpisodeKind;
  readonly #limits: KeepLimits;
  readonly #count: (t: EpisodeTally, s: T) => void;
  readonly #sample: Reservoir<T>;
  readonly #stretches: Stretch<T>[] = [];
  /** The stretch new failures join while they come within the gap (the latest opened, or what it merged into). */
  #open: Stretch<T> | null = null;
  #seen = 0;
  #merged = 0;

  constructor(kind: EpisodeKind, limits: KeepLimits, count: (t: EpisodeTally, s: T) => void) {
    this.#kind = kind;
    this.#limits = limits;
    this.#count = count;
    this.#sample = new Reservoir<T>(limits.sample, limits.seed);
  }

  add(s: T): void {
    this.#seen += 1;
    this.#sample.add(s);
    const stretch = this.#stretchFor(s);
    this.#count(stretch.tally, s);
    const edge = this.#limits.edge;
    if (stretch.first.length < edge) stretch.first.push(s);
    else if (stretch.last.length < edge) stretch.last.push(s);
    else if (edge > 0) {
      stretch.last[stretch.lastAt] = s;
      stretch.lastAt = (stretch.lastAt + 1) % edge;
    }
  }

  /** Failures seen, each once. */
  get total(): number {
    return this.#seen;
  }

  /** Stretches merged into a neighbour past the most kept apart. */
  get merged(): number {
    return this.#merged;
  }

  tallies(): EpisodeTally[] {
    return this.#stretches.map((s) => s.tally);
  }

  /** The failures kept (the sample and every stretch's ends), each once, by start. */
  kept(): T[] {
    const out = new Set(this.#sample.items);
    for (const s of this.#stretches) {
      for (const x of s.first) out.add(x);
      for (const x of s.last) out.add(x);
    }
    return [...out].sort((a, b) => a.from_ms - b.from_ms);
  }

  /** The open stretch when the failure comes within the gap of it, else a new one. */
  #stretchFor(s: T): Stretch<T> {
    // The new stretch is counted among the rest before any merge, so a late one far from the others stays apart.
    const open = this.#open;
    const gap = this.#limits.gapMs;
    if (open !== null && s.from_ms <= open.tally.to_ms + gap && s.to_ms >= open.tally.from_ms - gap) return open;
    const next: Stretch<T> = { tally: newTally(this.#kind, s), first: [], last: [], lastAt: 0 };
    this.#stretches.push(next);
    this.#open = next;
    if (this.#stretches.length > this.#limits.stretches) this.#mergeClosest();
    return this.#open;
  }

  /** The two stretches closest in time become one: the earlier one's first failures, the latest of the rest. */
  #mergeClosest(): void {
    const all = this.#stretches.sort((a, b) => a.tally.from_ms - b.tally.from_ms);
    if (all.length < 2) return;
    let at = 0;
    for (let i = 1; i + 1 < all.length; i += 1) {
      if (all[i + 1]!.tally.from_ms - all[i]!.tally.to_ms < all[at + 1]!.tally.from_ms - all[at]!.tally.to_ms) at = i;
    }
    const a = all[at]!;
    const b = all[at + 1]!;
    a.last = [...latest(a), ...b.first, ...latest(b)].slice(-this.#limits.edge);
    a.lastAt = 0;
    mergeTally(a.tally, b.tally);
    all.splice(at + 1, 1);
    if (this.#open === b) this.#open = a;
    this.#merged += 1;
  }
}
