// Outside text on the terminal (util/text.ts): one line without controls for what a formatter prints
// (printable, oneLine, clip), and the last guard on every byte the CLI writes (terminalSafe), which keeps
// roundload's own colours and line redraws and nothing else a terminal would act on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { clip, oneLine, printable } from '../../src/util/index.js';
import { terminalSafe } from '../../src/util/text.js';
import { assertTerminalClean, FORGED, hostileText } from '../helpers/hostile-text.js';
import { sourceModule } from '../helpers/root.js';

test('printable copies plain data with every string and key on one line, numbers and shapes kept, other objects as they are', () => {
  const map = new Map([['a\nb', 'c\nd']]);
  const input = { 'key\x1b]0;t\x07': ['a\nb', 1, null, true, { deep: 'x\r\ny' }], map, n: 2.5 };
  const out = printable(input);
  assert.deepEqual(out, { 'key ]0;t ': ['a b', 1, null, true, { deep: 'x  y' }], map, n: 2.5 });
  assert.equal(out.map, map, 'a Map is kept as it is');
  assert.equal(input['key\x1b]0;t\x07'][0], 'a\nb', 'the input is not changed');
  const proto = printable(JSON.parse('{"__proto__": {"polluted": "yes"}}') as Record<string, unknown>);
  assert.deepEqual(Object.keys(proto), ['__proto__'], 'a __proto__ key stays an ordinary key');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('oneLine and clip leave no control and no line break; clip cuts what is left', () => {
  assertTerminalClean(oneLine(hostileText('x')), 'oneLine');
  assertTerminalClean(clip(hostileText('x')), 'clip');
  assert.equal(clip('a\nb'), 'a b');
  assert.match(clip(`${'y'.repeat(300)}\n`), /^y{200}… \(301 characters\)$/);
});

test("terminalSafe keeps roundload's colours, cursor-to-column and erase-in-line, and turns every other control into a space", () => {
  const own = '\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m \x1b[2m·\x1b[22m \x1b[36m[0:01]\x1b[39m\x1b[1G\x1b[2K\x1b[0K\tok\r\n';
  assert.equal(terminalSafe(own), own);
  assert.equal(terminalSafe('plain text\n'), 'plain text\n');
  const hostile = terminalSafe(hostileText('x'));
  // Line breaks are kept here (they are the formatters' business); every control the terminal acts on is gone.
  assertTerminalClean(hostile.replace(new RegExp(`[\\r\\n]+(?=${FORGED})`, 'g'), ' '), 'terminalSafe');
  assert.doesNotMatch(hostile, /\x1b\]|\x1b\[2J|\x1b\[5;8m|\x07|[\x80-\x9f]/);
  assert.equal(terminalSafe('\x1b[8mhidden\x1b[0m'), ' [8mhidden\x1b[0m', 'conceal is not one of ours');
});

test('the CLI guards what it writes: a control in text that no formatter flattened does not reach the terminal', () => {
  // The guard as cli.ts installs it, then a write that bypasses every formatter.
  const util = sourceModule(new URL('../../src/util/index.ts', import.meta.url));
  const script = `import(${JSON.stringify(util)}).then((u) => { u.guardTerminal(); process.stdout.write(${JSON.stringify(`\x1b[33mours\x1b[39m ${hostileText('raw')}\n`)}); process.stderr.write(Buffer.from('\\x1b]52;c;eA==\\x07 err\\n')); });`;
  const r = spawnSync(process.execPath, [...(util.endsWith('.ts') ? ['--import', 'tsx'] : []), '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.startsWith('\x1b[33mours\x1b[39m raw'), JSON.stringify(r.stdout.slice(0, 40)));
  assert.doesNotMatch(r.stdout, /\x1b\]|\x1b\[2J|\x07|[\x80-\x9f]/);
  assert.equal(r.stderr, ' ]52;c;eA==  err\n');
});

test('bidirectional overrides and isolates (Trojan Source) become spaces on one line and on the terminal; right-to-left text itself is kept', () => {
  const reordering = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
  for (const c of reordering) {
    assert.equal(oneLine(`a${c}b`), 'a b', `U+${c.codePointAt(0)!.toString(16)}`);
    assert.equal(terminalSafe(`a${c}b\n`), 'a b\n', `U+${c.codePointAt(0)!.toString(16)}`);
  }
  const hebrew = 'שלום עולם';
  assert.equal(oneLine(hebrew), hebrew);
  assert.equal(terminalSafe(hebrew), hebrew);
});
