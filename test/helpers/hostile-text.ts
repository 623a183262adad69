// Text that a hostile server, run folder or trace could send to a terminal, and the check that what roundload
// printed of it holds no control the terminal would act on and no line of the server's making.
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';

/** What a line forged by outside text starts with, once a line break of it is printed raw. */
export const FORGED = 'FORGED-LINE';

/** Text carrying every kind of control a terminal acts on, then line breaks that start a forged line. */
export function hostileText(tag: string): string {
  return [
    `${tag}\x1b]0;PWNED-TITLE\x07`, // OSC 0: the window title
    '\x1b]52;c;cHduZWQ=\x07', // OSC 52: a clipboard write
    '\x1b[2J\x1b[H', // clear the screen, cursor home
    '\x1b[5;8m\x1b[31m', // blink, conceal; a colour
    '\x9b2J\x9d0;C1-TITLE\x9c', // the same as C1 controls
    '\x1bP+q\x1b\\', // DCS: a terminal query
    '\x07\x08\x7f\x00',
    `\r${FORGED} carriage\n${FORGED} newline\r\n${FORGED} crlf\u2028${FORGED} ls\u2029${FORGED} ps\x0b${FORGED} vt\x0c${FORGED} ff\x85${FORGED} nel`,
  ].join('');
}

// roundload's own sequences: colour, cursor to a column, erase in line (util/text.ts, terminalSafe).
const OWN = /\x1b\[(?:\d{1,3}m|\d{1,4}G|[0-2]?K)/g;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]/u;

/**
 * Fails unless `printed` (what a terminal got, or a formatter's text) holds no control but tab, line breaks and
 * roundload's own sequences, no colour the hostile text asked for, and no line that starts with {@link FORGED}.
 * `hostile` true: the printed text must carry the hostile text (so the check saw it at all).
 */
export function assertTerminalClean(printed: string, what: string, hostile = true): void {
  const rest = printed.replace(OWN, '');
  const bad = CONTROL.exec(rest);
  assert.equal(
    bad,
    null,
    `${what}: control U+${bad?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} printed at …${JSON.stringify(rest.slice(Math.max(0, (bad?.index ?? 0) - 60), (bad?.index ?? 0) + 20))}`,
  );
  assert.doesNotMatch(printed, /\x1b\[5;8m/, `${what}: the blink and conceal the hostile text asked for`);
  for (const line of printed.split(/\r\n|\r|\n/)) {
    assert.ok(!stripVTControlCharacters(line).trimStart().startsWith(FORGED), `${what}: a forged line: ${JSON.stringify(line.slice(0, 120))}`);
  }
  if (hostile) assert.ok(printed.includes(FORGED) || printed.includes('PWNED'), `${what}: the hostile text was not printed at all: ${JSON.stringify(printed.slice(0, 300))}`);
}

/** Every string leaf of `value` and every key of its objects, each with a path, for the fuzz tests: `mutate`
 * gives a copy of `value` with that one string (or key) set to what `set` makes of it. */
export function stringSites(value: unknown): { path: string; mutate: (set: (old: string) => string) => unknown }[] {
  const out: { path: string; mutate: (set: (old: string) => string) => unknown }[] = [];
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (typeof node === 'string') out.push({ path: path.join('.'), mutate: (set) => replaceAt(value, path, (old) => set(old as string)) });
    else if (Array.isArray(node)) node.forEach((child, i) => visit(child, [...path, i]));
    else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        out.push({ path: [...path, `{${key}}`].join('.'), mutate: (set) => renameAt(value, path, key, set(key)) });
        visit(child, [...path, key]);
      }
    }
  };
  visit(value, []);
  return out;
}

function replaceAt(root: unknown, path: readonly (string | number)[], set: (old: unknown) => unknown): unknown {
  if (path.length === 0) return set(root);
  const [head, ...rest] = path;
  if (Array.isArray(root)) return (root as unknown[]).map((child, i) => (i === head ? replaceAt(child, rest, set) : child));
  const node = root as Record<string, unknown>;
  return { ...node, [head!]: replaceAt(node[head!], rest, set) };
}

function renameAt(root: unknown, path: readonly (string | number)[], key: string, renamed: string): unknown {
  return replaceAt(root, path, (node) => Object.fromEntries(Object.entries(node as Record<string, unknown>).map(([k, v]) => [k === key ? renamed : k, v])));
}
