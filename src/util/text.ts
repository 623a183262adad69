// Echoing what a user typed back in a message: never more than a line's worth of it.

/** Longest echo of a user's value in a message; past it the value is cut and says how long it was. */
export const MAX_ECHO_CHARS = 200;

/** `text` cut to `max` characters, with `…` and its full length appended when cut. */
export function clip(text: string, max = MAX_ECHO_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** `text` with its line breaks (`\r \n \u2028 \u2029`) and the other control characters as spaces: what a comment
 * line of a generated script, or one line of the terminal, may hold of recorded text. */
export function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, ' ');
}
