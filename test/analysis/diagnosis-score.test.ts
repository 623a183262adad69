// The fault matrix's calibration scores (bench/diagnosis-score.ts): calls binned by confidence, the bins that
// drift, and the temperature fitted with each family held out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wilson } from '../../src/analysis/index.js';
import { drifted, leaveOneFamilyOut, reliability, type ScoredRun } from '../../bench/diagnosis-score.js';

const run = (family: string, right: boolean, confidence: number | null, verdict = 'proxy', scores?: Record<string, number>): ScoredRun => ({
  family,
  right,
  verdict,
  confidence,
  ...(scores === undefined ? {} : { scores }),
});

test("calls are binned by confidence (unknown and none left out); a bin of 5 or more whose mean confidence is over 10 points outside its hit rate's 95% interval drifts", () => {
  const runs = [...Array.from({ length: 10 }, (_, i) => run('a', i < 6, 0.65)), ...Array.from({ length: 5 }, () => run('b', true, 0.95)), run('c', false, 0, 'unknown'), run('c', true, null, 'none')];
  const bins = reliability(runs);
  const at = (from: number) => bins.find((b) => b.from === from)!;
  assert.deepEqual([at(0.6).count, at(0.6).right], [10, 6]);
  assert.deepEqual([at(0.9).count, at(0.9).right], [5, 5]);
  assert.equal(at(0).count, 0);
  // 6 of 10 at 0.65: inside 0.31-0.83; 5 of 5 at 0.95: inside 0.57-1.
  assert.deepEqual(drifted(bins), []);
  // Over-confident: 12 of 40 right at 0.65 (0.18-0.45): 20 points above.
  const bold = reliability(Array.from({ length: 40 }, (_, i) => run('a', i < 12, 0.65)));
  assert.deepEqual(
    drifted(bold).map((b) => b.from),
    [0.6],
  );
  // 16 of 40 (0.26-0.56): 9 points above, within.
  assert.deepEqual(drifted(reliability(Array.from({ length: 40 }, (_, i) => run('a', i < 16, 0.65)))), []);
  // Under-confident: 16 of 16 right at 0.62 (0.81-1): 19 points below. 5 of 5 at 0.62 (0.57-1): within.
  assert.deepEqual(
    drifted(reliability(Array.from({ length: 16 }, () => run('a', true, 0.62)))).map((b) => b.from),
    [0.6],
  );
  assert.deepEqual(drifted(reliability(Array.from({ length: 5 }, () => run('a', true, 0.62)))), []);
  // Fewer than 5 calls: never judged.
  assert.deepEqual(drifted(reliability(Array.from({ length: 4 }, () => run('a', false, 0.95)))), []);
});

test('the Wilson interval: 16 of 16 is 0.81 or more; 0 of 5 at most 0.43', () => {
  assert.equal(wilson(16, 16).low.toFixed(2), '0.81');
  assert.equal(wilson(16, 16).high, 1);
  assert.equal(wilson(0, 5).high.toFixed(2), '0.43');
});

test('leave one family out: each family is scored at the temperature fitted on the others', () => {
  // Family "calm": right calls at 3 bits over the rest. Family "bold": wrong half the time at 6 bits.
  const calm = Array.from({ length: 20 }, () => run('calm', true, 0.62, 'proxy', { proxy: 3 }));
  const bold = Array.from({ length: 10 }, (_, i) => run('bold', i % 2 === 0, 0.95, 'proxy', { proxy: 6 }));
  const { families } = leaveOneFamilyOut([...calm, ...bold]);
  const boldScore = families.find((f) => f.family === 'bold')!;
  const calmScore = families.find((f) => f.family === 'calm')!;
  // Without "bold", only right calls: the fit sharpens (the largest temperature); "bold" alone softens it.
  assert.equal(boldScore.heldOutTemperature, 2);
  assert.ok(calmScore.heldOutTemperature < 1, JSON.stringify(families));
  // Held out, "calm" is scored at bold's soft temperature: worse than in-sample.
  assert.ok(calmScore.brierHeldOut! > calmScore.brierInSample! + 0.1, JSON.stringify(calmScore));
});
