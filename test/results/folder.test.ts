import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRunFolder, writeJsonAtomic } from '../../src/results/index.js';
import { ResultsError, UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

test("createRunFolder takes a missing or empty --out (a volume's lost+found and hidden files do not count) and refuses a used one", (t) => {
  const root = tempDir(t);
  assert.equal(createRunFolder({ out: join(root, 'new', 'deep'), name: 'x' }), join(root, 'new', 'deep'));
  const volume = join(root, 'volume');
  mkdirSync(join(volume, 'lost+found'), { recursive: true });
  writeFileSync(join(volume, '.gitkeep'), '');
  assert.equal(createRunFolder({ out: volume, name: 'x' }), volume);
  writeFileSync(join(volume, 'notes.txt'), 'mine');
  assert.throws(
    () => createRunFolder({ out: volume, name: 'x' }),
    (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /is not empty \(notes\.txt\)/.test(e.message),
  );
});

test('createRunFolder: --out naming a file, or under a file, is a ResultsError (exit 4) with the path and reason', (t) => {
  const root = tempDir(t);
  const file = join(root, 'f');
  writeFileSync(file, '');
  assert.throws(
    () => createRunFolder({ out: file, name: 'x' }),
    (e: unknown) => e instanceof ResultsError && e.exitCode === 4 && e.path === file && /it is a file, not a folder/.test(e.message),
  );
  assert.throws(
    () => createRunFolder({ out: join(file, 'run'), name: 'x' }),
    (e: unknown) => e instanceof ResultsError && e.osCode === 'ENOTDIR' && e.message.startsWith(`cannot use the results folder ${join(file, 'run')}: a part of the path is a file`),
  );
});

test('writeJsonAtomic into a folder that is gone is a ResultsError naming the file, and leaves no temporary file', (t) => {
  const root = tempDir(t);
  assert.throws(
    () => writeJsonAtomic(join(root, 'gone', 'run.json'), {}),
    (e: unknown) => e instanceof ResultsError && e.osCode === 'ENOENT' && e.path === join(root, 'gone', 'run.json'),
  );
  assert.deepEqual(readdirSync(root), []);
});
