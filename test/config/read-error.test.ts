import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAbFile, loadEngineSettings, loadWorkload } from '../../src/config/index.js';
import { UsageError, WorkloadError } from '../../src/errors.js';

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'roundload-read-error-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('every config file that cannot be read says why in the same words: the OS reason and its code', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(loadWorkload(dir), (e: unknown) => e instanceof UsageError && e.message === `cannot read workload file ${dir}: it is a folder, a file was expected (EISDIR)`);
  const missing = join(dir, 'engine.yaml');
  await assert.rejects(loadEngineSettings(missing), (e: unknown) => e instanceof UsageError && e.message === `cannot read engine settings file ${missing}: no such file or folder (ENOENT)`);
});

test('an ab file whose base workload is missing says the reason once, located at its workload key', async (t) => {
  const dir = tempDir(t);
  const ab = join(dir, 'ab.yaml');
  writeFileSync(ab, 'workload: base.yaml\narms: [{name: A}, {name: B}]\n');
  await assert.rejects(loadAbFile(ab), (e: unknown) => {
    assert.ok(e instanceof WorkloadError);
    assert.equal(e.issues[0]?.where, `${ab}:1:11`);
    assert.equal(e.issues[0]?.message, `cannot read the workload file ${join(dir, 'base.yaml')}: no such file or folder (ENOENT)`);
    return true;
  });
});
