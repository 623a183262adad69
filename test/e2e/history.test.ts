// The history end to end, as a nightly job uses it: real runs on the embedded engine appended with
// `run --history`, a folder made without it imported afterwards, listed, shown, exported, trended; bad
// arguments are one line and exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/tmp.js';

const TINY = ['--agents', '1', '--rounds', '2', '--quiet', '--set', 'agents.think_time_ms=0'];

test('two runs appended with --history and one imported later: ls lists three, show and export read them, trend prints and writes trend.html', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'nightly.db');
  for (const night of ['1', '2']) {
    const res = await runCli(['run', 'workloads/smoke.yaml', ...TINY, '--out', join(dir, `n${night}`), '--history', db, '--label', `night=${night}`]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /history: run [0-9a-f]{12} added to /);
  }
  const plain = await runCli(['run', 'workloads/smoke.yaml', ...TINY, '--out', join(dir, 'n3'), '--label', 'night=3']);
  assert.equal(plain.code, 0, plain.stderr);
  const imported = await runCli(['history', 'import', db, join(dir, 'n3'), join(dir, 'n1')]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, /^added {3}[0-9a-f]{12} {2}.*n3$/m);
  assert.match(imported.stdout, /^already [0-9a-f]{12} {2}.*n1$/m, 'a run appended at its end is not added twice');

  const ls = await runCli(['history', 'ls', db]);
  assert.equal(ls.code, 0, ls.stderr);
  const lines = ls.stdout.trim().split('\n');
  assert.match(lines[0]!, /^run id +started +name +verdict +req +ok\/err\/hang/);
  assert.deepEqual(
    lines.slice(1).map((l) => /night=(\d)/.exec(l)?.[1]),
    ['1', '2', '3'],
  );
  assert.ok(lines.slice(1).every((l) => / smoke +pass +2 +2\/0\/0 /.test(l)));

  const runId = lines[3]!.split(' ')[0]!;
  const show = await runCli(['history', 'show', db, runId.slice(0, 5)]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^labels +\{"night":"3"\}$/m);
  assert.match(show.stdout, /^main +all +2 +2 +0 +0 /m);

  const csv = join(dir, 'h.csv');
  assert.equal((await runCli(['history', 'export', db, '--csv', '--out', csv])).code, 0);
  assert.equal(readFileSync(csv, 'utf8').trim().split('\n').length, 1 + 3 * 3, 'header, then each run: the phase and 2 rounds');

  const html = join(dir, 'trend.html');
  const trend = await runCli(['trend', db, '--metric', 'itl_p50,e2e_p50', '--out', html, '--fail-on', 'regression']);
  assert.equal(trend.code, 0, trend.stderr);
  assert.match(trend.stdout, /^roundload trend · .* · phase main · 3 runs/m);
  assert.match(trend.stdout, /^itl_p50 ms +[\d.]+ +[\d.]+ +[▁-█]{3} +—$/m);
  assert.match(trend.stdout, /no regression starts in the newest 5 runs/);
  assert.match(readFileSync(html, 'utf8'), /uPlot/);
});

test('a history that cannot be written warns and keeps the run: exit 0, summary.json there, the import command named', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'not-a-db.txt');
  writeFileSync(bad, 'just text, not SQLite\n'.repeat(10));
  const out = join(dir, 'r');
  const res = await runCli(['run', 'workloads/smoke.yaml', ...TINY, '--out', out, '--history', bad]);
  assert.equal(res.code, 0, res.stderr);
  assert.ok(existsSync(join(out, 'summary.json')));
  assert.match(res.stderr, /warning: the run was not added to the history .*not-a-db\.txt: .*not a roundload history.*\(add it later: roundload history import /);
});

test('history and trend on a missing file or a text file: one line, exit 2', async (t) => {
  const dir = tempDir(t);
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'hello\n'.repeat(100));
  for (const args of [
    ['history', 'ls', join(dir, 'none.db')],
    ['trend', join(dir, 'none.db')],
    ['history', 'show', text, 'abc'],
  ]) {
    const res = await runCli(args);
    assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /^roundload: /);
  }
});
