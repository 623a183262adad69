// One quoting for every value roundload puts into a command line: fuzzed through bash (and dash for what a
// script run by `sh` holds), each value must come back as one word, unchanged, and nothing may run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Rng, shellCommand, shellQuote } from '../../src/util/index.js';
import { payloads } from '../helpers/hostile-run.js';
import { tempDir } from '../helpers/tmp.js';

const HOSTILE = [
  '',
  ' ',
  "it's",
  '"',
  '\\',
  '$(touch x)',
  '`touch x`',
  '; touch x',
  '&& touch x',
  '| tee x',
  '> x',
  '< x',
  '*',
  '?',
  '[ab]',
  '~',
  '~root',
  '{a,b}',
  '!!',
  '#x',
  '-rf',
  'a\nb',
  'a\rb',
  'tab\there',
  '\u001b]0;title\u0007',
  '\u001b[2J',
  '\u001b]52;c;dG91Y2ggeA==\u0007',
  'x\u2028touch x',
  'x\u2029y',
  '\u202eevil',
  '\u0085',
  '\u007f',
  'é ü 漢字 🎉',
  "$'\\x41'",
  'http://h/v$(touch$IFS/tmp/x)',
  '${IFS}',
  'a=b',
];

/** Random strings over a pool heavy in characters a shell reads specially (NUL aside: no argument can hold it). */
function random(count: number): string[] {
  const rng = Rng.from('shell-quote fuzz');
  const pool = [...'$`\'"\\;&|<>(){}[]*?~!#=%^ \t\n\r-_./:@,+', '\u001b', '\u0007', '\u007f', '\u0085', '\u2028', '\u202e', 'a', 'Z', '0', 'é', '🎉'];
  return Array.from({ length: count }, () => Array.from({ length: rng.below(12) }, () => rng.pick(pool)).join(''));
}

/** The words `shell` gets for `printf '%s\0' <each value quoted>`, run in an empty folder; and what it left there. */
function roundTrip(shell: string, values: string[], cwd: string): { words: string[]; created: string[] } {
  const script = `printf '%s\\0' ${values.map(shellQuote).join(' ')}`;
  const r = spawnSync(shell, ['-c', script], { cwd, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, LC_ALL: 'C.UTF-8', SHLVL: '1' } });
  assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
  return { words: r.stdout.split('\0').slice(0, -1), created: readdirSync(cwd) };
}

describe('shellQuote', () => {
  it("plain values stay bare; others are single-quoted, a quote inside as '\\''; one with a control character is $'…' with escapes and stays one printable line", () => {
    assert.equal(shellQuote('results/run-1'), 'results/run-1');
    assert.equal(shellQuote('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000/v1');
    assert.equal(shellQuote(''), "''");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(shellQuote('$(touch x)'), "'$(touch x)'");
    assert.equal(shellQuote("a\n'b"), "$'a\\x0a\\'b'");
    assert.equal(shellQuote('\u0085'), "$'\\u0085'");
    assert.equal(shellQuote('x\u2028y'), "'x\u2028y'");
    assert.equal(shellCommand('roundload', 'report', 'my run'), "roundload report 'my run'");
    for (const value of [...HOSTILE, ...random(300)]) assert.doesNotMatch(shellQuote(value), /\p{Cc}/u, JSON.stringify(value));
  });

  it('fuzz: bash reads every quoted value back as one word, unchanged, and runs nothing (hostile values, the hostile-run payloads, 2,000 random strings)', (t) => {
    const cwd = tempDir(t);
    const values = [...HOSTILE, ...payloads(join(cwd, 'pwned')), ...random(2000)];
    const { words, created } = roundTrip('bash', values, cwd);
    assert.deepEqual(created, [], 'nothing was created');
    assert.equal(words.length, values.length);
    values.forEach((value, i) => assert.equal(words[i], value, `value ${i}: ${JSON.stringify(value)}`));
  });

  it('fuzz: dash (sh here) reads every quoted value without a control character back unchanged, and runs nothing', (t) => {
    const cwd = tempDir(t);
    const values = [...HOSTILE, ...payloads(join(cwd, 'pwned')), ...random(2000)].filter((v) => !/\p{Cc}/u.test(v));
    const { words, created } = roundTrip('sh', values, cwd);
    assert.deepEqual(created, [], 'nothing was created');
    assert.deepEqual(words, values);
  });
});
