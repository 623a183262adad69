// Rounding figures for records and summaries, writing them with a fixed number of decimals, and the one "is this
// a JSON object" test.

/** `v` rounded to 3 decimals (µs precision for ms figures). */
export function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** `v` rounded to 1 decimal. */
export function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

/** One formatter per number of decimals: `toLocaleString` with options makes a new Intl.NumberFormat at every
 * call (about 90 µs each before it is compiled: a run's report.html, a few hundred numbers, paid ~20 ms). */
const FORMATS = new Map<number, Intl.NumberFormat>();

/** `v` in en-US with exactly `digits` decimals and thousands separators (`1,234.50`): what
 * `v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })` gives. */
export function fixedDigits(v: number, digits: number): string {
  let format = FORMATS.get(digits);
  if (format === undefined) {
    format = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
    FORMATS.set(digits, format);
  }
  return format.format(v);
}

/** A plain JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
