// Every flag the CLI's help prints is documented in docs/cli.md, in its command's row: the help of the program
// and of every command and subcommand (found by walking the `Commands:` lists of the help pages themselves), each
// option's long name. A flag added without its documentation fails here, naming the command and the flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/root.js';
import { runCli } from '../helpers/tmp.js';

/** The lines of a help page's section (`Options:`, `Commands:`) whose entries start at the usual two spaces. */
function section(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || !line.startsWith(' ')) break;
    // A wrapped description is indented further than an entry: only entries start at exactly two spaces.
    if (/^ {2}\S/.test(line)) out.push(line);
  }
  return out;
}

/** `--target`, `--no-preflight`, `--version` (the long name of each option; `--help` is commander's own). */
function longFlags(help: string): string[] {
  return section(help, 'Options')
    .map((line) => /^ {2}(?:-[A-Za-z], )?(--[A-Za-z0-9][\w-]*)/.exec(line)?.[1])
    .filter((f): f is string => f !== undefined && f !== '--help');
}

/** `run`, `trace` … (the names in a help page's `Commands:` list; `help` is commander's own). */
function subcommands(help: string): string[] {
  return section(help, 'Commands')
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((c): c is string => c !== undefined && c !== 'help');
}

interface HelpPage {
  /** `''` for the program, `history show` for a subcommand. */
  path: string;
  flags: string[];
}

/** The help of the program and of every command below it, breadth first. */
async function helpPages(): Promise<HelpPage[]> {
  const pages: HelpPage[] = [];
  let level: string[][] = [[]];
  for (let depth = 0; level.length > 0 && depth < 4; depth += 1) {
    const helps = await Promise.all(
      level.map(async (path) => {
        const res = await runCli([...path, '--help'], { timeoutMs: 30_000 });
        assert.equal(res.code, 0, `roundload ${path.join(' ')} --help: exit ${res.code}\n${res.stderr}`);
        return res.stdout;
      }),
    );
    const next: string[][] = [];
    helps.forEach((help, i) => {
      const path = level[i]!;
      pages.push({ path: path.join(' '), flags: longFlags(help) });
      for (const name of subcommands(help)) next.push([...path, name]);
    });
    level = next;
  }
  return pages;
}

/** docs/cli.md's command table rows: each row's first cell (the synopsis) and the whole row. */
function commandRows(doc: string): { synopsis: string; row: string }[] {
  return doc
    .split('\n')
    .filter((line) => line.startsWith('| `roundload '))
    .map((row) => ({ synopsis: row.slice(0, row.indexOf(' | ', 2)), row }));
}

const mentions = (text: string, flag: string): boolean => new RegExp(`${flag}(?![\\w-])`).test(text);

test('every flag that the help of every command prints is in docs/cli.md, in the row of its command', async () => {
  const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
  const rows = commandRows(doc);
  const pages = await helpPages();
  // The walk reached the commands and their subcommands (a help format change would find none and pass by
  // checking nothing).
  const paths = pages.map((p) => p.path);
  for (const expected of ['', 'run', 'engine', 'ab', 'trend', 'history show', 'trace import']) assert.ok(paths.includes(expected), `no help page for "${expected}" among ${paths.join(', ')}`);
  assert.ok(pages.find((p) => p.path === 'run')!.flags.includes('--no-preflight'));

  const missing: string[] = [];
  for (const page of pages) {
    if (page.path === '') {
      // The program's own options (`--debug`, `--version`): anywhere on the page.
      for (const flag of page.flags) if (!mentions(doc, flag)) missing.push(`roundload ${flag}`);
      continue;
    }
    const own = rows.filter((r) => r.synopsis.includes(`\`roundload ${page.path}`) || r.synopsis.includes(`\`${page.path} `) || r.synopsis.includes(`\`${page.path}\``));
    // A command with subcommands has no options of its own to document, only its subcommands' rows.
    if (own.length === 0 && page.flags.length === 0) continue;
    if (own.length === 0) {
      missing.push(`roundload ${page.path}: no row in the command table`);
      continue;
    }
    for (const flag of page.flags) if (!own.some((r) => mentions(r.row, flag))) missing.push(`roundload ${page.path} ${flag}`);
  }
  assert.deepEqual(missing, [], `flags the help prints that docs/cli.md does not document in their command's row:\n  ${missing.join('\n  ')}`);
});
