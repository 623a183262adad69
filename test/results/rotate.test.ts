import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { RotatingJsonlWriter, jsonlParts, readJsonlFile } from '../../src/results/index.js';
import { tempDir } from '../helpers/tmp.js';

async function readAll(path: string): Promise<unknown[]> {
  const out: unknown[] = [];
  await readJsonlFile(
    path,
    (_v): _v is unknown => true,
    (v) => out.push(v),
  );
  return out;
}

test('a JSONL file past max bytes rotates into numbered gzipped parts, and readJsonlFile reads every line in order', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'requests.jsonl');
  const w = new RotatingJsonlWriter(path, { maxBytes: 1000, compress: true });
  for (let i = 0; i < 500; i += 1) w.write({ i, pad: 'x'.repeat(40) });
  w.close();
  assert.equal(await w.settle(10_000), 0, 'every compression finished');
  assert.ok(w.parts >= 20, `${w.parts} parts`);
  const files = readdirSync(dir).sort();
  assert.ok(files.includes('requests.1.jsonl.gz') && files.includes('requests.jsonl'), files.join(' '));
  assert.ok(!files.some((f) => /\.\d+\.jsonl$/.test(f) || f.includes('.tmp-')), `no plain parts or temporaries left: ${files.join(' ')}`);
  const parts = jsonlParts(path);
  assert.equal(parts.length, w.parts + 1);
  assert.ok(parts[1]!.endsWith('requests.2.jsonl.gz') && parts.at(-1) === path, 'numeric order (2 before 10), live file last');
  const values = (await readAll(path)) as { i: number }[];
  assert.deepEqual(
    values.map((v) => v.i),
    Array.from({ length: 500 }, (_, i) => i),
  );
});

test('without compression parts stay plain; with max bytes null nothing rotates', async (t) => {
  const dir = tempDir(t);
  const plain = new RotatingJsonlWriter(join(dir, 'events.jsonl'), { maxBytes: 200, compress: false });
  for (let i = 0; i < 20; i += 1) plain.write({ kind: 'x', i });
  plain.close();
  assert.ok(existsSync(join(dir, 'events.1.jsonl')));
  assert.equal((await readAll(join(dir, 'events.jsonl'))).length, 20);
  const never = new RotatingJsonlWriter(join(dir, 'gauges.jsonl'), { maxBytes: null, compress: true });
  for (let i = 0; i < 200; i += 1) never.write({ i });
  never.close();
  assert.deepEqual(jsonlParts(join(dir, 'gauges.jsonl')), [join(dir, 'gauges.jsonl')]);
});

test('a part caught between its gzip and the removal of its plain file is read once', async (t) => {
  const dir = tempDir(t);
  const line = (i: number) => `${JSON.stringify({ i })}\n`;
  writeFileSync(join(dir, 'requests.1.jsonl'), line(1));
  writeFileSync(join(dir, 'requests.1.jsonl.gz'), gzipSync(line(1)));
  writeFileSync(join(dir, 'requests.2.jsonl.gz'), gzipSync(line(2)));
  writeFileSync(join(dir, 'requests.3.jsonl.gz.tmp-123'), 'half a gzip');
  writeFileSync(join(dir, 'requests.jsonl'), `${line(3)}{"i": 4, "torn`);
  const values: unknown[] = [];
  const result = await readJsonlFile(
    join(dir, 'requests.jsonl'),
    (_v): _v is unknown => true,
    (v) => values.push(v),
  );
  assert.deepEqual(values, [{ i: 1 }, { i: 2 }, { i: 3 }]);
  assert.deepEqual(
    result.skipped.map((s) => s.reason),
    ['truncated'],
    'the torn last line is reported',
  );
});

test('a writer reopening a folder that has parts continues their numbering', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'requests.jsonl');
  const first = new RotatingJsonlWriter(path, { maxBytes: 100, compress: false });
  for (let i = 0; i < 10; i += 1) first.write({ i, pad: 'y'.repeat(30) });
  first.close();
  const before = first.parts;
  const second = new RotatingJsonlWriter(path, { maxBytes: 100, compress: false });
  for (let i = 10; i < 20; i += 1) second.write({ i, pad: 'y'.repeat(30) });
  second.close();
  assert.ok(second.parts > before);
  const values = (await readAll(path)) as { i: number }[];
  assert.deepEqual(
    values.map((v) => v.i),
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test('a part listed as plain whose gzip finished before it was opened is read from its .gz', async (t) => {
  const dir = tempDir(t);
  const { openPart } = await import('../../src/results/rotate.js');
  writeFileSync(join(dir, 'requests.1.jsonl.gz'), gzipSync(`${JSON.stringify({ i: 1 })}\n`));
  // The listing said requests.1.jsonl; by the time it is opened only the .gz is left.
  const opened = openPart(join(dir, 'requests.1.jsonl'));
  assert.equal(opened.gz, true);
  assert.ok(opened.file.endsWith('requests.1.jsonl.gz'));
  opened.raw.destroy();
});
