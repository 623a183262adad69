// Sentence helpers shared by the diagnosis signals: times, counts, shares.

/** `12.3 s`. */
export function s1(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** `3 ms`, `250 ms`, `1.2 s`. */
export function dur(ms: number): string {
  return ms >= 1000 ? s1(ms) : `${Math.round(ms)} ms`;
}

/** `40%`. */
export function pct(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** `p < 0.0001`, `p = 0.0003`, `p = 0.04`: a p-value as people read it. */
export function pValue(p: number): string {
  if (p < 0.0001) return 'p < 0.0001';
  return `p = ${p < 0.01 ? p.toPrecision(1) : p.toFixed(2)}`;
}

/** How often each key occurs, most frequent first. */
export function counted<T>(items: readonly T[], key: (t: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const it of items) {
    const k = key(it);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort(([, a], [, b]) => b - a);
}

/** `3 hung at headers, 1 failed with connection_reset`. */
export function tally<T>(items: readonly T[], label: (t: T) => string): string {
  return counted(items, label)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
