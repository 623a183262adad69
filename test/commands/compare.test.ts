import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { loadRun } from '../../src/compare/index.js';
import { NotARunError } from '../../src/errors.js';
import { runCli, tempDir } from '../helpers/tmp.js';

const TINY = `window_s: 0.5
agents: {count: 1, rounds: 2, think_time_ms: 0}
conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 8}
engine: {decode_step_ms: 1, output_tokens_min: 4, output_tokens_max: 8}
`;

test('`roundload compare` refuses runs of different workloads (exit 2) unless --force, and writes compare.html', async (t) => {
  const dir = tempDir(t);
  const w = (count: number) => parseWorkload(TINY, 'tiny.yaml', { agents: count });
  await Promise.all([executeRun({ workload: w(1), out: join(dir, 'a') }), executeRun({ workload: w(2), out: join(dir, 'b') })]);
  const refused = await runCli(['compare', join(dir, 'a'), join(dir, 'b'), '--out', join(dir, 'c.html')]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /runs of different workloads .*agents\.count: 1 vs 2.*--force/);
  assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
  const forced = await runCli(['compare', join(dir, 'a'), join(dir, 'b'), '--force', '--out', join(dir, 'c.html')]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /--force: the workloads differ/);
  assert.match(forced.stdout, /^figure +A +B +delta +95% interval +verdict$/m);
  assert.ok(existsSync(join(dir, 'c.html')) && existsSync(join(dir, 'c.json')));
  writeFileSync(join(dir, 'a', 'summary.json'), '{');
  await assert.rejects(loadRun(join(dir, 'a')), (e: unknown) => e instanceof NotARunError && e.exitCode === 2 && /summary\.json is not valid JSON; rebuild it with `roundload report/.test(e.message));
  await assert.rejects(loadRun(join(dir, 'nope')), /no such results folder/);
});
