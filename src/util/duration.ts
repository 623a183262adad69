// The one duration parser (convention 6, docs/development.md): `500ms`, `30s`, `5m`, `8h`, `1h30m`, `2d`; a bare
// number is seconds. In util/ so the command line reads durations without loading the workload schema.
// Throws a plain Error on junk so each caller can wrap it in its own error class (UsageError, WorkloadError).
import { clip } from './text.js';

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
// Units must appear largest first, each at most once, so `30s5m` or `1h1h` are rejected as likely typos.
const UNIT_ORDER: readonly Unit[] = ['d', 'h', 'm', 's', 'ms'];
// `ms` before `m` and `s` so the alternation never splits `ms` into `m` + `s`.
const PART = /(\d+(?:\.\d+)?)\s*(ms|d|h|m|s)\s*/y;
const BARE_NUMBER = /^\d+(?:\.\d+)?$/;
const HINT = 'use a number of seconds or a duration like 500ms, 30s, 5m, 8h, 1h30m, 2d';

/** Parses a duration into milliseconds (rounded to a whole millisecond). A bare number means seconds. */
export function parseDurationMs(text: string | number): number {
  if (typeof text === 'number') {
    if (!Number.isFinite(text) || text < 0) throw new Error(`invalid duration ${String(text)}: must be a non-negative number of seconds`);
    return Math.round(text * 1000);
  }
  const source = text.trim();
  if (source === '') throw new Error(`invalid duration "": ${HINT}`);
  if (BARE_NUMBER.test(source)) return Math.round(Number(source) * 1000);

  let totalMs = 0;
  let lastUnitIndex = -1;
  PART.lastIndex = 0;
  while (PART.lastIndex < source.length) {
    const at = PART.lastIndex;
    const match = PART.exec(source);
    if (match === null || match.index !== at) throw new Error(`invalid duration ${clip(JSON.stringify(text))}: ${HINT}`);
    const unit = match[2] as Unit;
    const unitIndex = UNIT_ORDER.indexOf(unit);
    if (unitIndex <= lastUnitIndex) throw new Error(`invalid duration ${clip(JSON.stringify(text))}: units must go from largest to smallest, each once (e.g. 1h30m)`);
    lastUnitIndex = unitIndex;
    totalMs += Number(match[1]) * UNIT_MS[unit];
  }
  return Math.round(totalMs);
}
