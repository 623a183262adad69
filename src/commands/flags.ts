// The command line's value parsers, one per kind of value: every flag of every command reads its text through
// these, so a bad value is reported the same way everywhere: `<flag> must be <what>, got "<text>"` (exit 2).
// Light on purpose (no schema, no I/O): the commander table and each command import it at start-up.
import { UsageError } from '../errors.js';
import { clip, isLoopbackHost, parseDurationMs } from '../util/index.js';

const got = (text: string): string => `got ${clip(JSON.stringify(text))}`;

/** A whole number from `min` to `max`: `--agents 8`. */
export function wholeNumber(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a whole number ${range}, ${got(text)}`);
  }
  return n;
}

/** A TCP port, 0 (any free one) to 65535: `--metrics-port 9100`. */
export function port(flag: string, text: string): number {
  const n = /^\s*\d{1,5}\s*$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 65_535)) throw new UsageError(`${flag} must be a port number from 0 to 65535 (0 picks a free one), ${got(text)}`);
  return n;
}

/** A number in (`above`, `atMost`], or [`atLeast`, `atMost`] when `atLeast` is given. */
export function number(flag: string, text: string, range: { above?: number; atLeast?: number; atMost?: number }): number {
  const n = text.trim() === '' ? NaN : Number(text);
  const low = range.atLeast ?? range.above ?? -Infinity;
  const high = range.atMost ?? Infinity;
  const lowOk = range.atLeast !== undefined ? n >= low : range.above !== undefined ? n > low : true;
  if (!Number.isFinite(n) || !lowOk || n > high) {
    const lowText = range.atLeast !== undefined ? `at least ${low}` : range.above !== undefined ? `above ${low}` : '';
    const highText = high === Infinity ? '' : `at most ${high}`;
    throw new UsageError(
      `${flag} must be a number${[lowText, highText]
        .filter((t) => t !== '')
        .map((t) => ` ${t}`)
        .join(' and')}, ${got(text)}`,
    );
  }
  return n;
}

/** A duration (`30s`, `5m`, `1h30m`; a bare number is seconds) of at least `minMs` (1: longer than 0), in ms;
 * `hint` follows the bound in the message (`use --quiet for no progress`). */
export function duration(flag: string, text: string, minMs = 0, hint = ''): number {
  let ms: number;
  try {
    ms = parseDurationMs(text);
  } catch (error) {
    throw new UsageError(`${flag} must be a duration like 500ms, 30s, 5m, 8h or 1h30m (a bare number is seconds), ${got(text)}`, { cause: error });
  }
  if (ms < minMs) throw new UsageError(`${flag} must be ${minMs <= 1 ? 'longer than 0' : `at least ${minMs / 1000} s`}${hint === '' ? '' : ` (${hint})`}, ${got(text)}`);
  return ms;
}

/** An http:// or https:// URL. */
export function httpUrl(flag: string, text: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(text.trim());
  } catch {
    // not a URL: the message below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(`${flag} must be an http:// or https:// URL, ${got(text)}`);
  return url;
}

/** One of `choices`: `--topology pd`. */
export function oneOf<const C extends string>(flag: string, text: string, choices: readonly C[]): C {
  const found = choices.find((c) => c === text.trim());
  if (found === undefined) throw new UsageError(`${flag} must be ${choices.length === 1 ? `"${choices[0]}"` : `one of ${choices.join(', ')}`}, ${got(text)}`);
  return found;
}

/**
 * `--listen` on `host`: loopback, or beyond it only when `expose` (`--listen-expose`) says so, as `--dashboard-expose`
 * does: what listens there has no authentication. `what` says who would reach what through it.
 * @throws UsageError for a host beyond loopback without `expose`.
 */
export function listenHost(listen: string, host: string, expose: boolean | undefined, what: string): void {
  if (isLoopbackHost(host) || expose === true) return;
  throw new UsageError(`--listen ${listen} would listen on ${host}, beyond this machine: ${what}. Pass --listen-expose as well to allow it, or listen on 127.0.0.1`);
}
