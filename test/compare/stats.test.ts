import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom, tQuantile, mean, sampleSd } from '../../src/compare/stats.js';
import { Bins, pooledQuantile } from '../../src/compare/bins.js';

/** The exact p-quantile of values, interpolating between order statistics (what the bins approximate). */
function quantile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  const at = p * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

test('the PRNG is deterministic for a seed and differs between seeds', () => {
  const a = new SeededRandom(5);
  const b = new SeededRandom(5);
  const c = new SeededRandom(6);
  const xs = Array.from({ length: 5 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.next()),
  );
  assert.notDeepEqual(
    xs,
    Array.from({ length: 5 }, () => c.next()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const ints = Array.from({ length: 1000 }, () => a.below(4));
  assert.deepEqual([...new Set(ints)].sort(), [0, 1, 2, 3]);
});

test('the mean and the sample standard deviation (n − 1) of a few values', () => {
  assert.equal(mean([1, 2, 3, 6]), 3);
  assert.ok(Number.isNaN(mean([])));
  assert.ok(Math.abs(sampleSd([1, 2, 3, 6], 3) - Math.sqrt(14 / 3)) < 1e-12);
});

/** P(T ≤ x) for Student's t with `df` degrees of freedom, by Simpson's rule over its density: an independent
 * check of a quantile at a df no table lists. `lgamma(df/2)` and `lgamma((df+1)/2)` are given. */
function tCdf(x: number, df: number, gammaHalfDf: number, gammaHalfDfPlusHalf: number): number {
  const c = gammaHalfDfPlusHalf / (Math.sqrt(df * Math.PI) * gammaHalfDf);
  // u = atan(t) spreads the heavy tail over a finite range: ∫0^x f(t) dt = ∫0^atan(x) f(tan u) sec² u du.
  const g = (u: number): number => (c * (1 + Math.tan(u) ** 2 / df) ** (-(df + 1) / 2)) / Math.cos(u) ** 2;
  const n = 20_000;
  const h = Math.atan(x) / n;
  let sum = g(0) + g(Math.atan(x));
  for (let i = 1; i < n; i += 1) sum += (i % 2 === 1 ? 4 : 2) * g(i * h);
  return 0.5 + (sum * h) / 3;
}

test('t quantiles are exact at df 1, 1.5, 2, 5 and 30 (fractional df no longer falls back to df 2)', () => {
  // Published values (qt(0.975, df)).
  const table: [number, number][] = [
    [1, 12.706204736174707],
    [2, 4.302652729749464],
    [5, 2.570581835636314],
    [30, 2.042272456301238],
  ];
  for (const [df, value] of table) assert.ok(Math.abs(tQuantile(0.975, df) / value - 1) < 1e-9, `df ${df}: ${tQuantile(0.975, df)} vs ${value}`);
  // df 1.5 (what 5 to 11 steady windows give): 6.0167, where the old code returned the df-2 value 4.303.
  const q = tQuantile(0.975, 1.5);
  assert.ok(Math.abs(q - 6.0167) < 1e-4, String(q));
  // Γ(0.75) and Γ(1.25).
  assert.ok(Math.abs(tCdf(q, 1.5, 1.2254167024651776, 0.9064024770554771) - 0.975) < 1e-6);
  assert.ok(Math.abs(tQuantile(0.025, 1.5) + q) < 1e-9, 'symmetric');
  assert.ok(tQuantile(0.975, 1.2) > tQuantile(0.975, 1.5) && tQuantile(0.975, 1.5) > tQuantile(0.975, 1.9), 'falls as df grows');
});

test('binned pooled percentiles are within 0.25% of the exact ones, and a window drawn twice counts twice', () => {
  const rng = new SeededRandom(3);
  const values = Array.from({ length: 5000 }, () => 10 + 1000 * rng.next() ** 3);
  const a = new Bins();
  const b = new Bins();
  values.forEach((v, i) => (i % 2 === 0 ? a : b).add(v));
  for (const p of [0.5, 0.9, 0.99]) {
    const exact = quantile(values, p);
    assert.ok(Math.abs(pooledQuantile([a, b], p) / exact - 1) < 0.0026, `p${p * 100}`);
  }
  const low = new Bins();
  low.add(1);
  const high = new Bins();
  high.add(100);
  assert.ok(Math.abs(pooledQuantile([low, low, high], 0.5) - 1) < 0.01, 'two copies of the low window outweigh one high');
  assert.ok(Number.isNaN(pooledQuantile([], 0.5)));
});
