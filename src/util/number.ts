// Rounding figures for records and summaries, and the one "is this a JSON object" test.

/** `v` rounded to 3 decimals (µs precision for ms figures). */
export function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** `v` rounded to 1 decimal. */
export function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

/** A plain JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
