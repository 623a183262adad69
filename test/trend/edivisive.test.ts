// E-divisive means on synthetic nights: a 10% step is found where it starts, A/A noise is not flagged (the
// false-flag rate measured over 200 simulated histories), and the search is deterministic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bestSplit, eDivisive } from '../../src/trend/edivisive.js';
import { changePoints } from '../../src/trend/change-points.js';
import { Rng } from '../../src/util/index.js';

/** A gaussian draw (Box–Muller) from the seeded generator. */
function gaussian(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** `nights` values around `level` with `noise` relative sd; from night `stepAt` (1-based) on, `step` higher. */
function nightly(seed: number, options: { nights?: number; level?: number; noise?: number; stepAt?: number; step?: number } = {}): number[] {
  const rng = new Rng(seed);
  const { nights = 12, level = 100, noise = 0.02, stepAt = Infinity, step = 0 } = options;
  return Array.from({ length: nights }, (_, i) => level * (i + 1 >= stepAt ? 1 + step : 1) * (1 + noise * gaussian(rng)));
}

test('the best split of a clean step is at the step, with a positive statistic', () => {
  const best = bestSplit([1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2], 2);
  assert.equal(best?.tau, 7);
  assert.ok(best.q > 0);
  assert.equal(bestSplit([1, 2, 3], 2), null, 'too short for two sides of 2');
});

test('12 nights with a 10% step at night 8 (±2% noise): one change point, at night 8, +10%, p ≤ 0.01', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const found = changePoints(nightly(seed, { stepAt: 8, step: 0.1 }));
    assert.equal(found.length, 1, `seed ${seed}: ${JSON.stringify(found)}`);
    const night = found[0]!.index + 1;
    assert.ok(night >= 8 && night <= 9, `seed ${seed}: flagged at night ${night}`);
    assert.ok(found[0]!.change! > 0.06 && found[0]!.change! < 0.14, `seed ${seed}: shift ${found[0]!.change}`);
    assert.ok(found[0]!.pValue <= 0.01);
  }
});

test('a 10% drop in throughput is found as well, with a negative shift', () => {
  const found = changePoints(nightly(11, { level: 500, stepAt: 8, step: -0.1 }));
  assert.equal(found.length, 1);
  assert.equal(found[0]!.index, 7);
  assert.ok(found[0]!.change! < -0.06);
});

test('the fixed A/A seeds (12 nights, ±2% gaussian noise) never flag anything', () => {
  for (let seed = 1; seed <= 20; seed += 1) assert.deepEqual(changePoints(nightly(seed)), [], `seed ${seed}`);
});

test('over 200 simulated A/A histories the false-flag rate is at most 5%', () => {
  let flagged = 0;
  for (let seed = 1000; seed < 1200; seed += 1) if (changePoints(nightly(seed), { seed }).length > 0) flagged += 1;
  assert.ok(flagged <= 10, `${flagged} of 200 A/A histories flagged`);
});

test('without the minimum change, the permutation test alone keeps its level: about 1% of A/A histories at p ≤ 0.01', () => {
  let flagged = 0;
  for (let seed = 2000; seed < 2200; seed += 1) if (eDivisive(nightly(seed), { seed }).length > 0) flagged += 1;
  assert.ok(flagged <= 8, `${flagged} of 200`);
});

test('the same series and seed give the same p-values', () => {
  const x = nightly(5, { stepAt: 6, step: 0.05, noise: 0.03 });
  assert.deepEqual(eDivisive(x, { seed: 9 }), eDivisive(x, { seed: 9 }));
});

test('two steps one after the other are both found: +10% at night 7, +10% more at night 13', () => {
  const x = [...nightly(3, { nights: 6 }), ...nightly(4, { nights: 6, level: 110 }), ...nightly(5, { nights: 6, level: 121 })];
  const found = changePoints(x);
  assert.deepEqual(
    found.map((c) => c.index),
    [6, 12],
  );
  assert.ok(found.every((c) => c.change! > 0.06 && c.change! < 0.14));
});
