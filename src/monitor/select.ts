// Which series a scrape keeps: the configured gauges and counters, matched with or without the `sglang:`
// prefix (and a counter with or without `_total`), every label kept. Also the names the verdict and the
// progress line treat specially (flow counters, key gauges).
import type { GaugeSample } from '../types/index.js';
import type { ExpositionSample } from './exposition.js';

/**
 * The counters that prove work flowed, best first: a target's flow is judged by the first of these it exposes.
 * Tokens generated move only on real work; `num_requests_total` also counts aborted requests, so it comes last.
 */
export const FLOW_COUNTERS = ['generation_tokens_total', 'prompt_tokens_total', 'num_requests_total'] as const;

/** Gauges the live terminal line shows, with their short names. */
export const KEY_GAUGES: readonly (readonly [string, string])[] = [
  ['num_running_reqs', 'running'],
  ['num_queue_reqs', 'queue'],
  ['num_prefill_inflight_queue_reqs', 'inflight'],
  ['num_prefill_infight_queue_reqs', 'inflight'],
  ['num_prefill_bootstrap_queue_reqs', 'bootstrap'],
  ['num_prefill_prealloc_queue_reqs', 'bootstrap'],
  ['num_decode_transfer_queue_reqs', 'transfer'],
];

const PREFIX = 'sglang:';

/** A name without the `sglang:` prefix. */
export function baseName(name: string): string {
  return name.startsWith(PREFIX) ? name.slice(PREFIX.length) : name;
}

/** Matches exposed sample names against configured names. */
export class SeriesSelector {
  readonly #gauges: ReadonlySet<string>;
  readonly #counters: ReadonlySet<string>;
  readonly #cache = new Map<string, 'gauge' | 'counter' | null>();

  constructor(gauges: readonly string[], counters: readonly string[]) {
    this.#gauges = new Set(gauges.map(baseName));
    const c = new Set<string>();
    for (const name of counters.map(baseName)) {
      c.add(name);
      // Prometheus clients add `_total` to counters; accept the name written either way.
      c.add(name.endsWith('_total') ? name.slice(0, -'_total'.length) : `${name}_total`);
    }
    this.#counters = c;
  }

  /** What an exposed sample name was selected as, or null. */
  kind(name: string): 'gauge' | 'counter' | null {
    const cached = this.#cache.get(name);
    if (cached !== undefined) return cached;
    const base = baseName(name);
    const kind = this.#gauges.has(base) ? 'gauge' : this.#counters.has(base) ? 'counter' : null;
    if (this.#cache.size < 10_000) this.#cache.set(name, kind);
    return kind;
  }

  readonly keep = (name: string): boolean => this.kind(name) !== null;

  /** The selected samples of a parsed exposition, as written to gauges.jsonl. */
  select(samples: readonly ExpositionSample[]): GaugeSample[] {
    const out: GaugeSample[] = [];
    for (const s of samples) {
      const kind = this.kind(s.name);
      if (kind === null) continue;
      out.push({ name: s.name, labels: s.labels, value: s.value, type: sampleType(s, kind) });
    }
    return out;
  }
}

function sampleType(s: ExpositionSample, selectedAs: 'gauge' | 'counter'): 'gauge' | 'counter' {
  if (s.type === 'counter') return 'counter';
  if (s.type === 'gauge') return 'gauge';
  if ((s.type === 'histogram' || s.type === 'summary') && /_(count|sum|bucket)$/.test(s.name)) return 'counter';
  return selectedAs;
}

/** Whether a recorded sample is a counter (its type when written, else by name). */
export function isCounter(sample: GaugeSample): boolean {
  if (sample.type !== undefined) return sample.type === 'counter';
  return sample.name.endsWith('_total');
}

/** The key gauges of one scrape, summed over label sets (tp/dp ranks), for the live line. */
export function keyGaugeValues(samples: readonly GaugeSample[]): [string, number][] {
  const sums = new Map<string, number>();
  for (const s of samples) {
    const base = baseName(s.name);
    const short = KEY_GAUGES.find(([name]) => name === base)?.[1];
    if (short === undefined || Number.isNaN(s.value)) continue;
    sums.set(short, (sums.get(short) ?? 0) + s.value);
  }
  return [...sums];
}
