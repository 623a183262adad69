// A run on the embedded engine records its engine's run speed (engine.run_spread_pct) in run.json and says it in
// the start notice, so a run that was slow because its engine started slow can be told apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { drawRunSpeed } from '../../src/engine/run-speed.js';
import { executeRun } from '../../src/run/index.js';
import { tempDir } from '../helpers/tmp.js';

const workload = (engine: string) =>
  parseWorkload(
    [
      'name: run-speed',
      'agents: {count: 1, rounds: 2, think_time_ms: 0}',
      'monitor: {enabled: false, canary_interval_s: 0}',
      'conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 8}',
      `engine: {topology: single, ${engine}}`,
    ].join('\n'),
    'run-speed.yaml',
  );

test("run.json's embedded_engine.run_speed and the start notice give the engine's drawn factor and seed", async (t) => {
  const dir = tempDir(t);
  const lines: string[] = [];
  const result = await executeRun({ workload: workload('run_spread_pct: 3, run_spread_seed: 9'), out: join(dir, 'spread'), preflight: false, log: (l) => lines.push(l) });
  assert.equal(result.status, 'completed');
  const { factor } = drawRunSpeed(3, 9);
  const manifest = JSON.parse(readFileSync(join(dir, 'spread', 'run.json'), 'utf8')) as { embedded_engine: { run_speed: unknown } };
  assert.deepEqual(manifest.embedded_engine.run_speed, { factor, spread_pct: 3, seed: 9 });
  assert.ok(
    lines.some((l) => l.startsWith('embedded engine on ') && l.endsWith(`; run speed ×${factor.toFixed(4)} (engine.run_spread_pct 3, run_spread_seed 9)`)),
    lines.join('\n'),
  );

  lines.length = 0;
  await executeRun({ workload: workload('run_spread_pct: 0'), out: join(dir, 'plain'), preflight: false, log: (l) => lines.push(l) });
  const plain = JSON.parse(readFileSync(join(dir, 'plain', 'run.json'), 'utf8')) as { embedded_engine: { run_speed: unknown } };
  assert.deepEqual(plain.embedded_engine.run_speed, { factor: 1, spread_pct: 0, seed: null });
  assert.ok(!lines.some((l) => l.includes('run speed')), lines.join('\n'));
});
