// The one way a value goes into a command line roundload prints or writes (a suggested `roundload report DIR`,
// README.txt's `node repro.mjs --target URL`, the scripts' own assignments): quoted so that pasting or running
// the line passes the value as one word, whatever it holds, and runs none of it.

/** Characters no POSIX shell gives a meaning to anywhere in a word: a value made only of them goes bare. */
const BARE = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** Characters a line must not carry raw (a line break would end the command, an escape sequence would act on
 * the terminal): written as escapes inside `$'…'`. */
const UNPRINTABLE = /\p{Cc}/u;
const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'gu');

/**
 * `value` as one shell word: bare when it is made of plain characters only (`results/run-1`), else in single
 * quotes (a `'` inside becomes `'\''`), the form every POSIX shell reads. A value holding a control character
 * (C0, DEL, C1) is written `$'…'` with escapes instead (`\xHH` below 0x80, `\uHHHH` above: bash writes `\x85` as
 * that one byte, not as U+0085 in UTF-8), so the line stays one line: bash, zsh and ksh read it; dash reads it
 * as `$` and the escapes as text (a wrong value, never code), so what a script run by `sh` holds has its controls
 * taken out before (util/text.ts's oneLine) or is refused (repro's oneLineOnly).
 */
export function shellQuote(value: string): string {
  if (BARE.test(value)) return value;
  if (!UNPRINTABLE.test(value)) return `'${value.replace(/'/g, `'\\''`)}'`;
  const escaped = value
    .replace(/[\\']/g, (c) => `\\${c}`)
    .replace(UNPRINTABLE_ALL, (c) => {
      const code = c.codePointAt(0)!;
      return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
  return `$'${escaped}'`;
}

/** A command line: `words` each through {@link shellQuote}, joined by spaces (`roundload report 'my run'`). */
export function shellCommand(...words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
