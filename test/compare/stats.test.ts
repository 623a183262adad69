import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SeededRandom,
  quantile,
  weightedQuantile,
  bootstrapDelta,
  verdictOf,
  blockLength,
  chooseBlockLength,
  lag1Autocorrelation,
  blockCorrection,
  tQuantile,
  normalQuantile,
  mean,
} from '../../src/compare/stats.js';
import { Bins, pooledQuantile } from '../../src/compare/bins.js';
import { compareArms } from '../../src/compare/index.js';
import { ar1, run } from './helpers.js';

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

test('quantiles interpolate; weighted quantiles follow the weights', () => {
  assert.equal(quantile([3, 1, 2], 0.5), 2);
  assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
  assert.ok(Number.isNaN(quantile([], 0.5)));
  assert.equal(weightedQuantile([10, 20], [1, 9], 0.5), 20);
  assert.equal(weightedQuantile([10, 20], [9, 1], 0.5), 10);
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
  assert.ok(Math.abs(normalQuantile(0.975) - 1.95996) < 1e-4);
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

test('the block length grows like n^(1/3) and with autocorrelation, never past n/2', () => {
  assert.equal(blockLength(8), 2);
  assert.equal(blockLength(27), 3);
  assert.equal(chooseBlockLength(27, 0), 3);
  assert.equal(chooseBlockLength(40, 0.8), 11);
  assert.equal(chooseBlockLength(10, 0.9), 5);
  assert.equal(blockCorrection(3, 0), 1);
  assert.ok(blockCorrection(2, 0.6) > blockCorrection(8, 0.6), 'longer blocks miss less correlation');
});

test('lag-1 autocorrelation is near the simulated one and 0 for white noise', () => {
  const rng = new SeededRandom(11);
  const series = Array.from({ length: 20 }, () => ar1(rng, 50, 1000, 0.03, 0.5));
  assert.ok(Math.abs(lag1Autocorrelation(series) - 0.5) < 0.1, String(lag1Autocorrelation(series)));
  const white = Array.from({ length: 20 }, () => ar1(rng, 50, 1000, 0.03, 0));
  assert.ok(lag1Autocorrelation(white) < 0.1);
});

test('verdicts: an interval above zero is better for throughput and worse for latency; one across zero is no difference', () => {
  assert.equal(verdictOf({ low: 1, high: 3 }, 'higher'), 'better');
  assert.equal(verdictOf({ low: 1, high: 3 }, 'lower'), 'worse');
  assert.equal(verdictOf({ low: -3, high: -1 }, 'lower'), 'better');
  assert.equal(verdictOf({ low: -1, high: 1 }, 'higher'), 'no significant difference');
  assert.equal(verdictOf({ low: NaN, high: 1 }, 'higher'), 'insufficient data');
});

test('an interval holding zero but too wide to mean anything is insufficient data, not no difference', () => {
  // The case seen: itl p99 −61% … +1476%.
  assert.equal(verdictOf({ low: -61, high: 1476 }, 'lower', 'relative'), 'insufficient data');
  assert.equal(verdictOf({ low: -50.5, high: 50 }, 'lower', 'relative'), 'insufficient data');
  assert.equal(verdictOf({ low: -45, high: 45 }, 'lower', 'relative'), 'no significant difference');
  // A rate in percentage points: ±5 pt is the most that still says "alike".
  assert.equal(verdictOf({ low: -6, high: 6 }, 'lower', 'absolute'), 'insufficient data');
  assert.equal(verdictOf({ low: -1, high: 2 }, 'lower', 'absolute'), 'no significant difference');
  // Wide but clear of zero: the direction is known.
  assert.equal(verdictOf({ low: 5, high: 400 }, 'lower', 'relative'), 'worse');
});

test('a comparison of a handful of noisy windows says insufficient data, with a note, instead of no difference', () => {
  const rng = new SeededRandom(5);
  // Five steady windows a side with 60% noise: the interval spans far more than ±50%.
  const a = [run('a', ar1(rng, 5, 1000, 0.6, 0))];
  const b = [run('b', ar1(rng, 5, 1000, 0.6, 0))];
  const phase = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b }, { resamples: 500 }).phases[0]!;
  const row = phase.rows.find((r) => r.figure === 'decode_tokens_per_s')!;
  assert.ok(row.low !== null && row.high !== null && row.low <= 0 && row.high >= 0 && row.high - row.low > 100, `${row.low} … ${row.high}`);
  assert.equal(row.verdict, 'insufficient data');
  assert.ok(
    phase.notes.some((n) => n.includes('decode tok/s') && n.includes('insufficient data')),
    phase.notes.join('\n'),
  );
});

test('the same seed gives the same interval; blocks never cross from one run to another', () => {
  const rng = new SeededRandom(1);
  const a = [ar1(rng, 20, 1000, 0.02, 0.3)];
  const b = [ar1(rng, 20, 1100, 0.02, 0.3)];
  const one = bootstrapDelta(a, b, mean, 'relative', { seed: 9, seriesValue: (v) => v });
  assert.deepEqual(bootstrapDelta(a, b, mean, 'relative', { seed: 9, seriesValue: (v) => v }), one);
  // Two runs of one arm at constant levels 1 and 3: a block drawn inside one run is all 1s or all 3s, so with
  // blocks as long as a run every resampled mean is 1, 2 or 3 (never 1.5 or 2.5).
  const seen = new Set<number>();
  bootstrapDelta(
    [
      [1, 1, 1, 1],
      [3, 3, 3, 3],
    ],
    [[1, 1, 1, 1]],
    (ws) => {
      const m = mean(ws);
      seen.add(m);
      return m;
    },
    'relative',
    { blockLength: 4, resamples: 200 },
  );
  assert.ok(
    [...seen].every((m) => [1, 2, 3].includes(m)),
    [...seen].join(','),
  );
});

test('A/A: two arms of identical engines (simulated windows, realistic noise) show no significant throughput difference in at least 19 of 20 seeds', () => {
  let noDifference = 0;
  for (let seed = 1; seed <= 20; seed += 1) {
    const rng = new SeededRandom(seed);
    // 2% window-to-window noise with lag-1 autocorrelation 0.3: what 1 s windows of a busy server look like.
    const a = [run('a1', ar1(rng, 12, 4000, 0.02, 0.3)), run('a2', ar1(rng, 12, 4000, 0.02, 0.3))];
    const b = [run('b1', ar1(rng, 12, 4000, 0.02, 0.3)), run('b2', ar1(rng, 12, 4000, 0.02, 0.3))];
    const c = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b }, { seed, resamples: 1000 });
    const row = c.phases[0]!.rows.find((r) => r.figure === 'decode_tokens_per_s')!;
    if (row.verdict === 'no significant difference') noDifference += 1;
  }
  assert.ok(noDifference >= 19, `${noDifference} of 20`);
});

test('A/A coverage over 200 seeds stays near 95% (a check on the interval, not only on 20 cases)', () => {
  let covered = 0;
  for (let seed = 1; seed <= 200; seed += 1) {
    const rng = new SeededRandom(1000 + seed);
    const est = bootstrapDelta([ar1(rng, 16, 1000, 0.03, 0.3)], [ar1(rng, 16, 1000, 0.03, 0.3)], mean, 'relative', { seed, resamples: 500, seriesValue: (v) => v });
    if (est.low <= 0 && est.high >= 0) covered += 1;
  }
  assert.ok(covered >= 180 && covered <= 200, `${covered} of 200`);
});

test('a 12.8% faster arm (simulated) is found better, its estimate within 3 points and its interval excluding 0', () => {
  const rng = new SeededRandom(42);
  const a = [run('a', ar1(rng, 20, 4000, 0.02, 0.3))];
  const b = [run('b', ar1(rng, 20, 4000 * 1.128, 0.02, 0.3))];
  const row = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b }).phases[0]!.rows[0]!;
  assert.equal(row.verdict, 'better');
  assert.ok(Math.abs(row.delta! - 12.8) < 3, String(row.delta));
  assert.ok(row.low! > 0 && row.low! < 12.8 && row.high! > 12.8, `${row.low} … ${row.high}`);
});
