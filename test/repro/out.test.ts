// Where `roundload repro` writes: a new or empty folder only, as `run` and `merge` do — a second reproducer
// would overwrite the first's scripts and mix its bodies with the first's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../src/errors.js';
import { writeRepro } from '../../src/repro/index.js';
import { folder } from '../helpers/hostile-run.js';
import { tempDir } from '../helpers/tmp.js';

test('repro refuses an --out folder that holds anything (exit 2, nothing written) and writes into a missing or empty one', async (t) => {
  const dir = folder(join(tempDir(t), 'run'), 'plain');
  const used = join(tempDir(t), 'used');
  mkdirSync(used);
  writeFileSync(join(used, 'repro.sh'), 'mine\n');
  await assert.rejects(writeRepro(dir, { out: used }), (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.equal(error.exitCode, 2);
    assert.match(error.message, /is not empty \(repro\.sh\)/);
    return true;
  });
  assert.deepEqual(readdirSync(used), ['repro.sh'], 'nothing was written');
  assert.equal(readFileSync(join(used, 'repro.sh'), 'utf8'), 'mine\n');
  const empty = join(tempDir(t), 'empty');
  mkdirSync(empty);
  assert.ok(existsSync(join((await writeRepro(dir, { out: empty })).out, 'repro.sh')));
  // The default folder, <run>/repro: once written, a second reproducer goes elsewhere.
  await writeRepro(dir);
  await assert.rejects(writeRepro(dir), UsageError);
});
