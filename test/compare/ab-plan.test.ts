// `roundload ab FILE --plan`: how many pairs the stopping rule needs at the spread seen. A tight spread
// settles at the first look allowed (3 pairs); a wide one says to raise max_pairs to what would do; the
// plan reads an earlier A/B's folder and runs from the command line (a pilot, or that folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planAb } from '../../src/compare/ab-plan.js';
import { readAbPairs } from '../../src/compare/ab-folder.js';
import type { RunData } from '../../src/compare/index.js';
import { tempDir } from '../helpers/tmp.js';
import { cliArgs } from '../helpers/root.js';
import { run } from './helpers.js';

/** A run of phase c96 at `tokS` decode tok/s in every window (its latencies alike in every run). */
function summary(tokS: number): RunData {
  return run(
    'r',
    Array.from({ length: 10 }, () => tokS),
    { phase: 'c96' },
  );
}

const rule = { minEffectPct: 3, minEffectPoints: 1, maxPairs: 10, waitFor: ['decode', 'errors'] as const };

test('a tight spread settles in 3 pairs, at the pair time seen', () => {
  const pairs = [100, 100.4, 99.7].map((b) => ({ a: summary(100), b: summary(b) }));
  const plan = planAb(pairs, 60, { ...rule, waitFor: [...rule.waitFor] });
  const decode = plan.figures.find((f) => f.name === 'c96 decode tok/s')!;
  assert.equal(decode.pairs, 3);
  assert.ok(decode.sd! > 0.3 && decode.sd! < 0.4, String(decode.sd));
  assert.equal(decode.equivalent_after, 3);
  assert.equal(decode.effect_after, 3);
  assert.equal(plan.pairs_needed, 3);
  assert.equal(plan.seconds_needed, 180);
  assert.match(plan.text.join('\n'), /c96 decode tok\/s +spread ±0\.35% per pair \(seen \+0\.03%\): no difference → equivalent after 3 pairs; ±6% → better\/worse after 3/);
  assert.match(plan.text.join('\n'), /every figure waited for settles within about 3 pairs ≈ 3\.0 min/);
  assert.match(plan.text.join('\n'), /the spread rests on 3 pairs: it is a rough guide/);
});

test('a wide spread: max_pairs too few, and the max_pairs that would do; figures not waited for are said so', () => {
  const pairs = [104, 97, 102.5, 96].map((b) => ({ a: summary(100), b: summary(b) }));
  const plan = planAb(pairs, 60, { ...rule, waitFor: [...rule.waitFor] });
  const decode = plan.figures.find((f) => f.name === 'c96 decode tok/s')!;
  assert.equal(decode.equivalent_after, null);
  assert.ok(decode.max_pairs_needed! > 10 && decode.max_pairs_needed! <= 100, String(decode.max_pairs_needed));
  assert.equal(plan.pairs_needed, null);
  const text = plan.text.join('\n');
  assert.match(text, new RegExp(`not settled within 10 pairs: raise max_pairs to ${decode.max_pairs_needed} or lengthen the phases`));
  assert.match(text, /c96 ttft p50 .*\(not waited for\)/);
  assert.match(text, /some figure waited for is not settled within max_pairs/);
  // One pair gives no spread at all.
  assert.match(planAb(pairs.slice(0, 1), 60, { ...rule, waitFor: [...rule.waitFor] }).text.join('\n'), /no spread yet: a plan needs 2 pairs/);
});

test('a p99 the pilot runs have too few requests for says how long a phase must be for it: 100 requests a run at 10 a second, 500 needed → 50 s', () => {
  const pairs = [100, 100.4, 99.7].map((b) => ({ a: summary(100), b: summary(b) }));
  const plan = planAb(pairs, 60, { ...rule, waitFor: [...rule.waitFor] });
  assert.deepEqual(
    plan.phase_needs.map((n) => n.figure),
    ['c96 ttft p99', 'c96 ttfc p99', 'c96 tpot p99', 'c96 e2e p99'],
    'the p99s; every p50 (10 requests) is there',
  );
  assert.deepEqual(plan.phase_needs[0]!.need, { requests: 500, had: [100, 100], phaseS: 10, neededS: 50 });
  assert.match(
    plan.text.join('\n'),
    /^c96: ttft p99, ttfc p99, tpot p99, e2e p99 need 500 requests in a run's steady windows \(these runs had 100\): a phase of ≥ 50 s \(sweep\.phase_duration; this one ran 10 s, warm-up and drain included\); until then they read insufficient data$/m,
  );
});

const WORKLOAD = `workload:
  window_s: 0.5
  duration: 2s
  agents: {count: 2, rounds: 50, think_time_ms: 0}
  conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 24}
  engine: {topology: single, decode_step_ms: 4, output_tokens_min: 16, output_tokens_max: 24}
until: {min_effect_pct: 10, max_pairs: 6, figures: [decode]}
arms:
  - name: A
  - name: B
    set: [engine.decode_speedup=1.05]
`;

/** Bounded generously: the pilot is four runs, and beside the stress run's busy loops one took over 60 s. */
function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, cliArgs(...args), { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('roundload ab --plan: a pilot of 2 pairs, then the plan from its folder; with repeats (no rule to plan): exit 2', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'ab.yaml');
  writeFileSync(file, WORKLOAD);
  const pilot = cli(['ab', file, '--plan', '--out', join(dir, 'pilot')]);
  assert.equal(pilot.status, 0, pilot.stderr);
  assert.match(pilot.stderr, /ab: 2 arms, 2 pairs, order A B B A/);
  assert.match(pilot.stdout, /^roundload ab --plan · .*ab\.yaml · from .*pilot\nplan from 2 pairs of \d+ s each · min_effect ±10% \(±1 pt for rates\), max_pairs 6\n/);
  assert.match(pilot.stdout, /main decode tok\/s +spread ±\d+\.\d\d% per pair/);
  const read = await readAbPairs(join(dir, 'pilot'));
  assert.equal(read.pairs.length, 2);
  assert.ok(read.pairSeconds! > 3 && read.pairSeconds! < 30, String(read.pairSeconds));
  const again = cli(['ab', file, '--plan', join(dir, 'pilot')]);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.stderr, '', 'reading a folder runs nothing');
  assert.match(again.stdout, /plan from 2 pairs of \d+ s each/);
  writeFileSync(file, WORKLOAD.replace(/^until:.*\n/m, 'repeats: 3\n'));
  const none = cli(['ab', file, '--plan']);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /--plan plans the stopping rule, and this file fixes the pairs \(repeats: 3\): drop repeats to plan/);
});
