// Outside text on one line of the terminal: echoing what a user typed back in a message (never more than a line's
// worth of it), and what a server, a run folder or a trace sent (never a control the terminal would act on, never
// a line break that starts a line of its own). docs/results.md, "What is safe to hand over".

/** Longest echo of a user's value in a message; past it the value is cut and says how long it was. */
export const MAX_ECHO_CHARS = 200;

/** `text` on one line ({@link oneLine}), cut to `max` characters, with `…` and its full length appended when cut. */
export function clip(text: string, max = MAX_ECHO_CHARS): string {
  const flat = oneLine(text);
  return flat.length <= max ? flat : `${flat.slice(0, max)}… (${flat.length.toLocaleString('en-US')} characters)`;
}

/** Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what follows
 * them on screen, so a line can read otherwise than it is (CVE-2021-42574, "Trojan Source"). */
const BIDI = '\u202a-\u202e\u2066-\u2069';
const ONE_LINE = new RegExp(`[\\p{Cc}\\u2028\\u2029${BIDI}]`, 'gu');

/** `text` with its line breaks (`\r \n \u2028 \u2029`), the other control characters and the bidirectional
 * controls as spaces: what a comment line of a generated script, or one line of the terminal, may hold of
 * recorded text. */
export function oneLine(text: string): string {
  return text.replace(ONE_LINE, ' ');
}

/**
 * A deep copy of `value` with every string (object keys too) through {@link oneLine}: what a terminal formatter
 * takes first, so no field of a summary, an event or a row, today's or one added later, can print a control or
 * start a line. Numbers, booleans and null are kept; so are arrays and plain objects' shapes; any other object
 * (a Map, a class instance) is kept as it is.
 */
export function printable<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return oneLine(value);
  if (Array.isArray(value)) return value.map(walk);
  if (value === null || typeof value !== 'object') return value;
  // A Map, a Date, a class instance is kept as it is: only the plain data a formatter reads is copied.
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    // defineProperty keeps a `__proto__` key an ordinary key.
    Object.defineProperty(out, oneLine(key), { value: walk(child), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// What roundload itself writes to a terminal: colour (picocolors: bold, dim, the foreground colours and their
// resets), readline's cursor-to-column and erase-in-line. Blink (5, 6) and conceal (8) are not among them.
// eslint-disable-next-line no-control-regex -- the escape character is what this pattern is about
const OWN_SEQUENCE = /^\x1b\[(?:(?:[0-4]|7|9|2[1-9]|3[0-9]|4[0-9]|9[0-7]|10[0-7])m|\d{1,4}G|[0-2]?K)/;
const CONTROL = new RegExp(`[\\p{Cc}\\u2028\\u2029${BIDI}]`, 'gu');
/** A control character other than tab, line feed and carriage return (or a bidirectional one). */
const ANY_BUT_LINES = new RegExp(`[^\\P{Cc}\\t\\n\\r]|[\\u2028\\u2029${BIDI}]`, 'u');

/**
 * Everything the process writes to stdout and stderr, last (util/secrets.ts guardTerminal): every control
 * character but tab, line feed and carriage return, every bidirectional control, and every escape sequence but {@link OWN_SEQUENCE}, becomes a
 * space. The formatters already print outside text through {@link printable} or {@link oneLine}; this makes a
 * path that forgot it unable to set a window title, write the clipboard (OSC 52) or clear the screen.
 */
export function terminalSafe(text: string): string {
  if (!ANY_BUT_LINES.test(text)) return text;
  return text.replace(CONTROL, (c, at: number) => {
    if (c === '\t' || c === '\n' || c === '\r') return c;
    if (c === '\x1b' && OWN_SEQUENCE.test(text.slice(at, at + 8))) return c;
    return ' ';
  });
}
