// The trend on nights that drift (issue 34): simulated histories of 12 nights whose noise wanders as AR(1)
// noise does (lag-1 correlation ρ 0, 0.3, 0.6). A/A: a change point in at most 2% of histories per figure
// under the default drift (0.6) — where the exchangeable-nights test (drift 0) flags 4-14%; the power a 10% step
// keeps is measured and printed; a step on the newest night is shown as not confirmed and confirmed by the
// next; change points and that line name the run by its labels and results folder.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { buildTrend, changePoints, formatTrend, metricOf } from '../../src/trend/index.js';
import type { PhasePoint } from '../../src/history/index.js';
import { Rng } from '../../src/util/index.js';
import { nights } from '../helpers/nights.js';

const HISTORIES = 1000;
const NIGHTS = 12;

/** Share of `count` histories in which `hit` holds. */
function rate(count: number, seed: number, make: (rng: Rng) => number[], hit: (x: number[]) => boolean): number {
  const rng = new Rng(seed);
  let hits = 0;
  for (let k = 0; k < count; k += 1) if (hit(make(rng))) hits += 1;
  return hits / count;
}

const pct = (r: number): string => `${(100 * r).toFixed(1)}%`;

test('A/A nights drifting at ρ 0, 0.3 and 0.6 get a change point in at most 2% of 1,000 histories under the default drift; the exchangeable-nights test (drift 0) is measured beside it', (t: TestContext) => {
  for (const rho of [0, 0.3, 0.6]) {
    const quiet = rate(
      HISTORIES,
      11 + rho * 10,
      (rng) => nights(rng, NIGHTS, rho, 0.02),
      (x) => changePoints(x, { drift: 0.6 }).length > 0,
    );
    const exchangeable = rate(
      HISTORIES / 2,
      21 + rho * 10,
      (rng) => nights(rng, NIGHTS, rho, 0.02),
      (x) => changePoints(x, { drift: 0 }).length > 0,
    );
    t.diagnostic(`ρ ${rho}: default (drift 0.6) ${pct(quiet)}, drift 0 ${pct(exchangeable)}`);
    assert.ok(quiet <= 0.02, `ρ ${rho}: ${pct(quiet)}`);
    if (rho === 0.6) assert.ok(exchangeable > 0.04, `the exchangeable test is fooled by a wander: ${pct(exchangeable)}`);
  }
});

test('a 10% step at night 8 is still found: at 2% noise in at least half of 1,000 histories at every ρ; the power at 3% and 4% is printed', (t: TestContext) => {
  const found = (x: number[]) => changePoints(x, { drift: 0.6 }).some((c) => Math.abs(c.index - 7) <= 1 && (c.change ?? 0) > 0);
  for (const rho of [0, 0.3, 0.6]) {
    const at = (noise: number, n: number) => rate(n, 31 + noise * 100 + rho * 10, (rng) => nights(rng, NIGHTS, rho, noise, 0.1, 7), found);
    const two = at(0.02, HISTORIES);
    t.diagnostic(`ρ ${rho}: 10% step found at 2% noise ${pct(two)}, 3% ${pct(at(0.03, 300))}, 4% ${pct(at(0.04, 300))}`);
    assert.ok(two >= 0.5, `ρ ${rho}: ${pct(two)}`);
  }
});

/** History points of one figure (ITL p50), a night each from 2026-12-01, labelled with a commit and a folder. */
function points(values: readonly number[]): PhasePoint[] {
  return values.map((v, i) => {
    const night = String(i + 1).padStart(2, '0');
    return {
      run: {
        runId: `id${night}`,
        name: 'nightly',
        startedAt: `2026-12-${night}T02:00:00.000Z`,
        dir: `results/nightly-${night}`,
        labels: { commit: `c${night}`, pool: 'gpu-a' },
        cells: { status: 'completed' },
      },
      figures: { itl_p50_ms: v },
    };
  });
}

const itl = [metricOf('itl_p50')!];

test('a regression on the newest night alone is shown as suspected (never for --fail-on); the next night at the new level confirms it as a change point', () => {
  const wobble = [0.4, -1.1, 0.9, -0.3, 1.4, -0.8, 0.2, -1.5, 0.7, 1.1, -0.5];
  const level = wobble.map((w) => 6 * (1 + w / 100));
  const one = buildTrend('main', points([...level, 6.9]), itl);
  const f = one.figures[0]!;
  assert.equal(f.changes.length, 0);
  assert.equal(f.suspected?.kind, 'regression');
  assert.equal(one.regressions.length, 0, '--fail-on regression does not act on one night');
  const text = formatTrend(one, 'h.db');
  assert.match(
    text,
    /run 12 \(2026-12-12, commit=c12 pool=gpu-a, results\/nightly-12\): \+14\.9% regression suspected on the newest night alone, (?:p=0\.0\d\d|p<0\.001): the next night confirms or drops it/,
  );
  assert.match(text, /^suspected \(the next night confirms or drops it; --fail-on does not act on it\):$/m);
  const two = buildTrend('main', points([...level, 6.9, 6.92]), itl, { nameBy: ['commit'] });
  assert.equal(two.figures[0]!.changes.length, 1, 'confirmed: a change point of two nights');
  assert.equal(two.figures[0]!.changes[0]!.index, 11);
  assert.equal(two.figures[0]!.changes[0]!.test, 'newest-nights');
  assert.equal(two.regressions.length, 1);
  assert.match(
    formatTrend(two, 'h.db'),
    /REGRESSION in the newest 5 runs:\n {2}itl_p50: run 12 \(2026-12-12, commit=c12, results\/nightly-12\): \+1\d\.\d% regression, (?:p=0\.0\d\d|p<0\.001), confirmed by its second night/,
  );
  // Dropped: the night after is back on the level.
  const back = buildTrend('main', points([...level, 6.9, 6.01]), itl);
  assert.deepEqual([back.figures[0]!.changes.length, back.figures[0]!.suspected], [0, null]);
});

test('A/A: a regression is suspected on the newest night in at most 2% of 1,000 histories (plus two standard errors) at ρ 0, 0.3 and 0.6; a 15% jump on it at 2% noise is suspected in most', (t: TestContext) => {
  const suspected = (x: number[]) => buildTrend('main', points(x), itl).figures[0]!.suspected?.kind === 'regression';
  const bound = 0.02 + 2 * Math.sqrt((0.02 * 0.98) / HISTORIES);
  for (const rho of [0, 0.3, 0.6]) {
    const aa = rate(HISTORIES, 41 + rho * 10, (rng) => nights(rng, NIGHTS, rho, 0.02), suspected);
    const jump = rate(300, 51 + rho * 10, (rng) => nights(rng, NIGHTS, rho, 0.02, 0.15, NIGHTS - 1), suspected);
    t.diagnostic(`ρ ${rho}: A/A newest night suspected a regression ${pct(aa)}; a 15% jump on it suspected ${pct(jump)}`);
    assert.ok(aa <= bound, `ρ ${rho}: ${pct(aa)}`);
    assert.ok(jump >= 0.8, `ρ ${rho}: ${pct(jump)}`);
  }
});
