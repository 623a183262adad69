// Which series a scrape keeps: the configured gauges and counters, matched with or without a server family's
// prefix (`sglang:`, `vllm:`, `llamacpp:`; a counter also with or without `_total`), every label kept. Also
// the names the verdicts and the progress line treat specially (flow counters, ratio gauges, key gauges),
// all from the families' table (types/server-families.ts).
import { baseName, HANDOFF_GAUGES, KEY_GAUGES, REQUEST_COUNTERS, TOKEN_COUNTERS, type GaugeSample } from '../types/index.js';
import type { ExpositionSample } from './exposition.js';

/** A counter of failures, not of work (never proof of flow). */
export function isFailureCounter(base: string): boolean {
  return /(fail|error|abort|retract|timeout|reject|preempt|evict)/.test(base);
}

/** Lower is better: a token counter (in TOKEN_COUNTERS order), then any other (a counter of your own), then
 * a request counter. */
export function flowRank(base: string): number {
  const at = (list: readonly string[]): number => {
    const i = list.indexOf(base);
    return i >= 0 ? i : list.indexOf(base.endsWith('_total') ? base.slice(0, -'_total'.length) : `${base}_total`);
  };
  const token = at(TOKEN_COUNTERS);
  if (token >= 0) return token / 100;
  const request = at(REQUEST_COUNTERS);
  return request >= 0 ? 2 + request / 100 : 1;
}

/** Ratio and rate gauges: they hold still under steady load as well as when stuck, so they are never pinned. */
export function isRatioGauge(name: string): boolean {
  return /(_rate|_ratio|_perc|_percent|_usage|usage_ratio|throughput|_per_second|_seconds|_per_decode|balancedness|utilization)$/.test(baseName(name));
}

/** Whether a gauge (with or without its family prefix) is one of SGLang PD's hand-off queues: a request
 * passes through it in a KV transfer's time. */
export function isHandoffQueue(name: string): boolean {
  return HANDOFF_GAUGES.has(baseName(name));
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
