// The idle check's search with a fake server that closes connections idle longer than a set time, and a fake
// clock that advances by the gaps tried (rounds run their gaps at once, so a round costs its longest gap).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bracket, doublingGaps, measureIdle, pointsBetween, type GapOutcome } from '../../src/probe-path/idle.js';

function fakeServer(closesAfterMs: number | null): { tryGap: (gapMs: number) => Promise<GapOutcome>; nowMs: () => number; onProgress: () => void; rounds: number[][] } {
  let now = 0;
  let round: number[] = [];
  const rounds: number[][] = [];
  return {
    rounds,
    nowMs: () => now,
    onProgress: () => {
      round = [];
      rounds.push(round);
    },
    tryGap: async (gapMs) => {
      round.push(gapMs);
      // The round's clock moves on by its longest gap once all its gaps are in.
      await Promise.resolve();
      now = Math.max(now, rounds.slice(0, -1).reduce((a, r) => a + Math.max(...r), 0) + Math.max(...round));
      return closesAfterMs !== null && gapMs >= closesAfterMs ? 'closed' : 'kept';
    },
  };
}

test('doubling gaps stop at the limit, which is tried itself', () => {
  assert.deepEqual(doublingGaps(5000), [1000, 2000, 4000, 5000]);
  assert.deepEqual(doublingGaps(75_000), [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 75_000]);
  assert.deepEqual(doublingGaps(2000), [1000, 2000]);
});

test('points between two gaps are evenly spaced, at most 7, never closer than the precision', () => {
  assert.deepEqual(pointsBetween(2000, 4000, 500), [2500, 3000, 3500]);
  assert.equal(pointsBetween(32_000, 64_000, 500).length, 7);
  assert.deepEqual(pointsBetween(2000, 2600, 500), [2300]);
});

test('the bracket is the longest kept gap below the shortest closed one', () => {
  const b = bracket([
    { gapMs: 1000, outcome: 'kept' },
    { gapMs: 4000, outcome: 'closed' },
    { gapMs: 2000, outcome: 'kept' },
    { gapMs: 5000, outcome: 'kept' }, // a lucky reuse above a close does not widen the bracket
  ]);
  assert.deepEqual(b, { keptMs: 2000, closedMs: 4000 });
  assert.deepEqual(bracket([{ gapMs: 1000, outcome: 'closed' }]), { keptMs: 0, closedMs: 1000 });
});

test('a server closing idle connections at 3 s is found within 0.5 s in two rounds', async () => {
  const fake = fakeServer(3000);
  const r = await measureIdle({ maxIdleMs: 5000 }, fake);
  assert.equal(r.kind, 'closes');
  assert.ok(r.closedMs !== null && r.closedMs - r.keptMs <= 500, JSON.stringify(r));
  assert.ok(r.keptMs < 3000 && r.closedMs >= 3000);
  assert.equal(r.estimateMs, 2750);
  assert.deepEqual(fake.rounds, [
    [1000, 2000, 4000, 5000],
    [2500, 3000, 3500],
  ]);
  assert.ok(r.elapsedMs <= 10_000, `${r.elapsedMs} ms`);
});

test('a server that keeps connections past the limit is reported kept after one round', async () => {
  const fake = fakeServer(null);
  const r = await measureIdle({ maxIdleMs: 5000 }, fake);
  assert.equal(r.kind, 'kept');
  assert.equal(r.closedMs, null);
  assert.equal(r.estimateMs, null);
  assert.equal(fake.rounds.length, 1);
});

test('the search stops before passing twice the limit, with the bracket it has', async () => {
  const fake = fakeServer(70_000);
  const r = await measureIdle({ maxIdleMs: 75_000 }, fake);
  assert.equal(r.kind, 'closes');
  assert.ok(r.elapsedMs <= 150_000, `${r.elapsedMs} ms`);
  assert.ok(r.keptMs < 70_000 && r.closedMs !== null && r.closedMs >= 70_000, JSON.stringify({ kept: r.keptMs, closed: r.closedMs }));
});
