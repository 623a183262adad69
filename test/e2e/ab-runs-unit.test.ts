// Runs are the unit of every comparison, on real runs of the embedded engine (issue 31): two runs a side that
// disagree are never called better; three arms (the baseline, the same again, a decode 12.8% faster) call the
// same arm neither better nor worse and the faster one better near +12.8%; an arm answering 4% of requests
// with a 500 is worse on errors+hangs, in points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAbFile, parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { runAb } from '../../src/compare/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';

// Decode-bound and CPU-light (as test/compare/known-delta.test.ts): the decode figure is the server's, not the
// loaded machine's.
const DECODE_BOUND = `
name: runs-unit
window_s: 0.5
agents: {count: 32, rounds: 1000, think_time_ms: 0, start_stagger_ms: 1000}
sweep: {agents: [32], warmup_s: 1, phase_duration: 5s}
conversation: {tools: none, system_prompt_tokens: 100, first_user_tokens: 50, user_turn_tokens: 20, max_tokens: 100}
engine: {prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 100, decode_step_ms_per_running: 0, output_tokens_min: 15, output_tokens_max: 30, topology: single, reasoning: off}
`;

type CompareJson = { comparisons: { method: string; phases: { rows: { figure: string; verdict: string; delta: number | null; text: string }[] }[] }[] };

test('two runs a side that disagree (B at +10% and +2%) get no verdict from `roundload compare`: inconclusive, how many more runs, never better', async (t) => {
  const dir = tempDir(t);
  const run = (speedup: number, name: string) => executeRun({ workload: parseWorkload(DECODE_BOUND, 'runs-unit.yaml', { set: [`engine.decode_speedup=${speedup}`] }), out: join(dir, name) });
  // Each pair at once: A1 with B1, then A2 with B2 (alternated by start, so the runs pair).
  await Promise.all([run(1, 'a1'), run(1.1, 'b1')]);
  await Promise.all([run(1, 'a2'), run(1.02, 'b2')]);
  const out = join(dir, 'compare.html');
  const r = await runCli(['compare', `${join(dir, 'a1')},${join(dir, 'a2')}`, `${join(dir, 'b1')},${join(dir, 'b2')}`, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /runs as the unit .*2 runs of A, 2 of B/);
  const json = JSON.parse(readFileSync(join(dir, 'compare.json'), 'utf8')) as CompareJson;
  const decode = json.comparisons[0]!.phases[0]!.rows.find((x) => x.figure === 'decode_tokens_per_s')!;
  t.diagnostic(`${json.comparisons[0]!.method}: ${decode.text}`);
  assert.equal(decode.verdict, 'inconclusive', decode.text);
  assert.match(decode.text, /at least 3 (pairs|runs per arm) to tell/);
  assert.match(r.stdout, /^decode tok\/s .* inconclusive \(~1 more\)$/m);
  for (const row of json.comparisons[0]!.phases[0]!.rows) assert.ok(row.verdict !== 'better' && row.verdict !== 'worse', `${row.figure}: ${row.text}`);
});

test('three arms by the stopping rule: the same arm again is never better or worse, a decode 12.8% faster is better within 2.5 points', async (t) => {
  const dir = tempDir(t);
  const workload = DECODE_BOUND.trim().replace(/^/gm, '  ');
  const plan = await parseAbFile(
    `workload:\n${workload}\nuntil: {min_effect_pct: 3, max_pairs: 6, figures: [decode]}\narms:\n  - name: base\n  - name: same\n  - name: ctas512\n    set: [engine.decode_speedup=1.128]\n`,
    join(dir, 'ab.yaml'),
  );
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  const decode = (arm: string) => result.comparisons.find((c) => c.b.name === arm)!.phases[0]!.rows.find((r) => r.figure === 'decode_tokens_per_s')!;
  const same = decode('same');
  const fast = decode('ctas512');
  t.diagnostic(`same: ${same.text}; ctas512: ${fast.text}; ${result.ended}`);
  assert.ok(same.verdict !== 'better' && same.verdict !== 'worse', same.text);
  assert.equal(fast.verdict, 'better', lines.join('\n'));
  assert.ok(Math.abs(fast.delta! - 12.8) <= 2.5, fast.text);
  assert.ok(result.comparisons.every((c) => c.rule.alpha === 0.025));
});

test('an arm answering 4% of its requests with a 500 is worse on errors+hangs, judged in points against a 1-point margin', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(
    `workload:
  window_s: 0.5
  duration: 3s
  agents: {count: 8, rounds: 1000, think_time_ms: 0}
  conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 8}
  engine: {topology: single, decode_step_ms: 2, output_tokens_min: 4, output_tokens_max: 8}
until: {max_pairs: 6, figures: [errors]}
arms:
  - name: A
  - name: B
    set: ['engine.faults=[{kind: http_error, status: 500, ratio: 0.04}]']
`,
    join(dir, 'ab.yaml'),
  );
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  const errors = result.comparisons[0]!.phases[0]!.rows.find((r) => r.figure === 'error_rate')!;
  t.diagnostic(`${errors.text}; B's runs ${errors.values.b.join(', ')} %`);
  assert.equal(errors.verdict, 'worse', lines.join('\n'));
  assert.ok(errors.delta! > 2 && errors.delta! < 6, `${errors.delta} points`);
  assert.match(errors.text, /past ±1 and clear of ±0\.5/);
});
