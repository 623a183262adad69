// A sequential A/B on the embedded engine (issue 23): `until:` runs pairs until every headline figure is
// decided or max_pairs is reached, judges each after every pair, writes sequential.json and stops early once
// all are decided. A decode twice as fast is `better` on decode tok/s; the figures nobody changed end
// equivalent or inconclusive, never better or worse by chance here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAbFile } from '../../src/config/index.js';
import { runAb } from '../../src/compare/index.js';
import { allDecided, headlineFigures, judgePairs } from '../../src/compare/ab-sequential.js';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';

const WORKLOAD = `workload:
  window_s: 0.5
  duration: 2s
  agents: {count: 2, rounds: 50, think_time_ms: 0}
  conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 24}
  engine: {topology: single, decode_step_ms: 4, output_tokens_min: 16, output_tokens_max: 24}
`;

test('until: pairs run until each headline figure is decided or max_pairs; a decode twice as fast is better on decode tok/s', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(`${WORKLOAD}until: {min_effect_pct: 10, max_pairs: 6}\narms:\n  - name: A\n  - name: B\n    set: [engine.decode_speedup=2]\n`, join(dir, 'ab.yaml'));
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  const figures = result.sequential!;
  const decode = figures.find((f) => f.name === 'main decode tok/s')!;
  const last = decode.calls.at(-1)!;
  assert.equal(last.verdict, 'better', lines.join('\n'));
  assert.ok(last.estimate! > 30, `decode +${last.estimate}%`);
  // Decided at 3 pairs on a quiet machine; room up to 6 for a loaded one (a stress run's first arm-A run at
  // 215 tok/s against 390 for the others left +72% [-21, +166] inconclusive at 4).
  assert.ok(decode.calls.length >= 3 && decode.calls.length <= 6, `${decode.calls.length} pairs`);
  assert.ok(lines.some((l) => /^ab: after 3 pairs:$/.test(l)));
  assert.ok(
    lines.some((l) => /main decode tok\/s +better: \+\d+\.\d \[/.test(l)),
    lines.join('\n'),
  );
  // What nobody changed is never worse here; undecided figures at the limit are inconclusive, with how many more pairs.
  for (const f of figures) assert.notEqual(f.calls.at(-1)!.verdict, 'undecided', f.name);
  const written = JSON.parse(readFileSync(join(result.dir, 'sequential.json'), 'utf8')) as { pairs: number; figures: { name: string; calls: unknown[] }[] };
  assert.equal(written.pairs, decode.calls.length);
  assert.equal(written.figures.length, figures.length);
});

test('an ab file with a stopping rule and three arms is refused, naming until', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(
    parseAbFile(`${WORKLOAD}until: {min_effect_pct: 2}\narms:\n  - name: A\n  - name: B\n  - name: C\n`, join(dir, 'ab.yaml')),
    /until.*a stopping rule compares two arms; this file has 3/s,
  );
});

test('a figure once decided keeps its call; a missing phase figure is left out of the pairs, not counted as 0', () => {
  // The whole phase's tok/s (ramp-up included) says nothing here: decode tok/s is the mean of the steady windows.
  const summary = (tokS: number, ttft: number): Pick<Summary, 'phases' | 'totals' | 'windows'> =>
    ({
      phases: [{ phase: 'main', output_tokens_per_s: 1, ttft: { p50_ms: ttft }, itl: { p50_ms: 5 }, e2e: { p50_ms: 100 } }],
      totals: { requests: 100, errors: 0, hangs: 0 },
      windows: [
        { phase: 'main', output_tokens_per_s: 3, steady: false },
        { phase: 'main', output_tokens_per_s: tokS - 1, steady: true },
        { phase: 'main', output_tokens_per_s: tokS + 1, steady: true },
        { phase: 'other', output_tokens_per_s: 7, steady: true },
      ],
    }) as unknown as Pick<Summary, 'phases' | 'totals' | 'windows'>;
  const specs = headlineFigures(summary(100, 20));
  const pairs = [
    { a: summary(100, 20), b: summary(150, 20) },
    { a: summary(101, 20), b: summary(151, 22) },
    { a: summary(99, 20), b: summary(149, 18) },
    { a: summary(100, 20), b: summary(90, 21) },
  ];
  const calls = judgePairs(specs, pairs, { minEffectPct: 5, maxPairs: 10 }, false);
  const decode = calls.find((f) => f.name === 'main decode tok/s')!;
  assert.equal(decode.calls[2]!.verdict, 'better');
  assert.ok(Math.abs(decode.calls[1]!.estimate! - 49.75) < 0.01, `steady windows (99+101)/2 vs (149+151)/2 then 101 vs 151: +50% and +49.5%, not ${decode.calls[1]!.estimate}`);
  assert.equal(decode.calls[3], decode.calls[2], 'kept as decided at pair 3');
  // until.figures: decode decided is enough when only decode is waited for; ttft (0, +10, −10, +5%) is not decided.
  assert.equal(calls.find((f) => f.name === 'main ttft p50')!.calls.at(-1)!.verdict, 'undecided');
  assert.equal(allDecided(calls, ['decode', 'errors']), true);
  assert.equal(allDecided(calls, ['decode', 'ttft', 'itl', 'e2e', 'errors']), false);
  const none = summary(100, 20);
  (none.phases as unknown as unknown[]).length = 0;
  (none.windows as unknown as unknown[]).length = 0;
  const gaps = judgePairs(specs, [{ a: none, b: none }], { minEffectPct: 5, maxPairs: 10 }, false);
  assert.equal(gaps.find((f) => f.name === 'main ttft p50')!.calls[0]!.pairs, 0);
});

test('decode tok/s is adjusted for tokens per request of the steady windows once enough pairs allow it', () => {
  // B is 5% faster; both arms' answer lengths wander from run to run and tok/s follows them by half.
  const run = (tokS: number, perRequest: number): Pick<Summary, 'phases' | 'totals' | 'windows'> =>
    ({
      phases: [{ phase: 'main', output_tokens_per_s: tokS, ttft: { p50_ms: 20 }, itl: { p50_ms: 5 }, e2e: { p50_ms: 100 } }],
      totals: { requests: 100, errors: 0, hangs: 0 },
      windows: [{ phase: 'main', output_tokens_per_s: tokS, steady: true, ok: 10, output_tokens: 10 * perRequest }],
    }) as unknown as Pick<Summary, 'phases' | 'totals' | 'windows'>;
  const lengths = [
    [100, 104],
    [103, 97],
    [98, 101],
    [101, 99],
    [97, 102],
    [102, 100],
  ];
  const noise = [0.2, -0.3, 0.1, -0.1, 0.3, -0.2];
  const pairs = lengths.map(([la, lb], i) => ({
    a: run(1000 * (1 + (la! - 100) / 200), la!),
    b: run(1050 * (1 + (lb! - 100) / 200) * (1 + noise[i]! / 100), lb!),
  }));
  const specs = headlineFigures(pairs[0]!.a);
  const decode = judgePairs(specs, pairs, { minEffectPct: 1, maxPairs: 10 }, false).find((f) => f.name === 'main decode tok/s')!;
  const adjustedAt = decode.calls.findIndex((c) => c.adjusted !== undefined);
  assert.ok(adjustedAt >= 4, `adjusted from pair ${adjustedAt + 1} (5 pairs at least)`);
  const adjusted = decode.calls[adjustedAt]!;
  assert.equal(adjusted.adjusted!.covariate, 'tokens per request');
  assert.ok(Math.abs(adjusted.adjusted!.theta - 0.5) < 0.1, `slope ${adjusted.adjusted!.theta}`);
  assert.ok(adjusted.adjusted!.se_after < adjusted.adjusted!.se_before / 2, JSON.stringify(adjusted.adjusted));
  assert.ok(Math.abs(adjusted.estimate! - 5) < 0.5, `estimate ${adjusted.estimate}`);
  assert.match(adjusted.text, /, adjusted for tokens per request/);
});
