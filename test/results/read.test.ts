import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describeSkipped, isKindLine, readJsonlFile, readManifest, isRequestRecord } from '../../src/results/index.js';
import { NotARunError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { record, writeFolder } from '../report/fixtures.js';

const isAny = (_v: unknown): _v is unknown => true;

async function readAll(path: string): Promise<{ values: unknown[]; report: Awaited<ReturnType<typeof readJsonlFile>> }> {
  const values: unknown[] = [];
  const report = await readJsonlFile(path, isAny, (v) => values.push(v));
  return { values, report };
}

test('a torn last line (no newline, not JSON) is skipped as truncated and named with its line number', async (t) => {
  const path = join(tempDir(t), 'requests.jsonl');
  writeFileSync(path, '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4,"b":"half');
  const { values, report } = await readAll(path);
  assert.equal(values.length, 3);
  assert.equal(report.records, 3);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.reason]),
    [[4, 'truncated']],
  );
  assert.deepEqual(describeSkipped(report), ['requests.jsonl: last line truncated (line 4), skipped']);
});

test('a bad line in the middle is invalid_json (not truncated), and a complete last line without its newline counts', async (t) => {
  const path = join(tempDir(t), 'events.jsonl');
  writeFileSync(path, '{"kind":"a"}\nnot json\n\n{"kind":"b"}');
  const { values, report } = await readAll(path);
  assert.deepEqual(values, [{ kind: 'a' }, { kind: 'b' }]);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.reason]),
    [[2, 'invalid_json']],
  );
  assert.match(describeSkipped(report)[0]!, /line 2 is not valid JSON/);
});

test('an unparseable last line of a file that does end in a newline is invalid_json, not truncated', async (t) => {
  const path = join(tempDir(t), 'x.jsonl');
  writeFileSync(path, '{"kind":"a"}\n{"kind":\n');
  const { report } = await readAll(path);
  assert.deepEqual(
    report.skipped.map((s) => s.reason),
    ['invalid_json'],
  );
});

test('lines that parse but are not records of the file are skipped as not_a_record', async (t) => {
  const path = join(tempDir(t), 'requests.jsonl');
  writeFileSync(path, `${JSON.stringify(record())}\n{"kind":"x"}\n[1,2]\n`);
  const seen: unknown[] = [];
  const report = await readJsonlFile(path, isRequestRecord, (r) => seen.push(r));
  assert.equal(seen.length, 1);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.reason]),
    [
      [2, 'not_a_record'],
      [3, 'not_a_record'],
    ],
  );
});

test('a missing file reads as absent with no records', async (t) => {
  const { report } = await readAll(join(tempDir(t), 'gauges.jsonl'));
  assert.deepEqual(report, { file: 'gauges.jsonl', exists: false, records: 0, skipped: [] });
});

test('rotated parts (plain and gzipped) are read oldest first, then the live file', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'events.1.jsonl.gz'), gzipSync('{"kind":"a","n":1}\n{"kind":"a","n":2}\n'));
  writeFileSync(join(dir, 'events.2.jsonl'), '{"kind":"a","n":3}\n');
  writeFileSync(join(dir, 'events.jsonl'), '{"kind":"a","n":4}\n{"kind":"a","n":');
  const ns: unknown[] = [];
  const report = await readJsonlFile(join(dir, 'events.jsonl'), isKindLine, (e) => ns.push(e.n));
  assert.deepEqual(ns, [1, 2, 3, 4]);
  assert.deepEqual(
    report.skipped.map((s) => [s.file, s.line, s.reason]),
    [['events.jsonl', 2, 'truncated']],
  );
});

test('a corrupt gzipped part is reported unreadable and the other parts are still read', async (t) => {
  const dir = tempDir(t);
  const gz = gzipSync('{"kind":"a","n":1}\n'.repeat(50));
  writeFileSync(join(dir, 'events.1.jsonl.gz'), gz.subarray(0, gz.length - 12));
  writeFileSync(join(dir, 'events.jsonl'), '{"kind":"a","n":2}\n');
  const ns: unknown[] = [];
  const report = await readJsonlFile(join(dir, 'events.jsonl'), isKindLine, (e) => ns.push(e.n));
  assert.equal(ns.at(-1), 2);
  assert.ok(
    report.skipped.some((s) => s.file === 'events.1.jsonl.gz' && s.reason === 'unreadable'),
    JSON.stringify(report.skipped),
  );
});

test('readManifest: a missing folder, a file, a folder without run.json and a broken run.json are NotARunErrors (exit 2)', (t) => {
  const dir = tempDir(t);
  const cases: [string, RegExp][] = [
    [join(dir, 'nope'), /no such folder/],
    [join(dir, 'file.txt'), /is a file, not a results folder/],
    [join(dir, 'empty'), /not a roundload results folder: it has no run\.json/],
    [join(dir, 'broken'), /run\.json is not valid JSON/],
    [join(dir, 'other'), /not a roundload manifest/],
  ];
  writeFileSync(join(dir, 'file.txt'), 'x');
  mkdirSync(join(dir, 'empty'));
  mkdirSync(join(dir, 'broken'));
  writeFileSync(join(dir, 'broken', 'run.json'), '{"name":');
  mkdirSync(join(dir, 'other'));
  writeFileSync(join(dir, 'other', 'run.json'), '{"hello":1}');
  for (const [path, message] of cases) {
    assert.throws(
      () => readManifest(path),
      (e: unknown) => e instanceof NotARunError && e.exitCode === 2 && message.test(e.message),
      path,
    );
  }
});

test('readManifest reads what a run wrote, labels and target included', (t) => {
  const dir = writeFolder(join(tempDir(t), 'run'), { status: 'completed' });
  const m = readManifest(dir);
  assert.equal(m.name, 'fixture');
  assert.equal(m.status, 'completed');
  assert.deepEqual(m.labels, { arm: 'a' });
  assert.equal(m.target.url, 'http://127.0.0.1:1');
  assert.equal(m.target.embedded, true);
});
