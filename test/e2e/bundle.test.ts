import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RequestRecord } from '../../src/types/index.js';
import { ROOT } from '../helpers/root.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const BUNDLE = join(ROOT, 'dist/bin/cli.js');

test('the shipped bundle (dist/bin, what the bin and npm start run) starts its engine thread and writer thread and completes a run', async (t) => {
  // Built here, from the sources under test: the bundle's entries find each other by their file names, which
  // only a run through the bundle itself proves (a thread's entry missing from dist/bin fails the run).
  await run(process.execPath, [join(ROOT, 'scripts/bundle.mjs')], { cwd: ROOT, timeout: 120_000 });
  const version = await run(process.execPath, [BUNDLE, '--version'], { cwd: ROOT, timeout: 60_000 });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version.stdout.trim(), pkg.version);

  const dir = tempDir(t);
  const workload = join(dir, 'two.yaml');
  // No target: the embedded engine, in its thread (dist/bin/thread-entry.js); results through the writer thread.
  writeFileSync(workload, 'name: two\nagents: {count: 1, rounds: 2, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 8}\n');
  const out = join(dir, 'run');
  const result = await run(process.execPath, [BUNDLE, 'run', workload, '--quiet', '--out', out], { cwd: ROOT, timeout: 120_000 });
  assert.match(result.stdout + result.stderr, /PASS/);
  for (const f of ['run.json', 'requests.jsonl', 'summary.json', 'report.html', 'junit.xml']) assert.ok(existsSync(join(out, f)), `${f} written`);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.deepEqual(
    records.map((r) => [r.round, r.status]),
    [
      [1, 'ok'],
      [2, 'ok'],
    ],
  );
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /uPlot/, 'the report inlines uPlot, read from node_modules');
});
