import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload } from '../../src/config/index.js';
import { Rng } from '../../src/util/index.js';
import { FakeClock } from '../../src/watchdog/index.js';
import { ArrivalScheduler, arrivalTimes, levelAt, loadSchedule, stageIndexAt, type ArrivalStart, type LoadSchedule } from '../../src/run/arrival.js';

function schedule(yaml: string): LoadSchedule {
  const s = loadSchedule(parseWorkload(yaml, 'w.yaml'));
  assert.ok(s !== null);
  return s;
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

/** Coefficient of variation: standard deviation over mean. */
function cv(values: number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  return Math.sqrt(variance) / mean;
}

const countIn = (times: number[], fromMs: number, toMs: number): number => times.filter((t) => t >= fromMs && t < toMs).length;

test('a Poisson arrival process has exponential gaps: coefficient of variation near 1, mean gap 1/rate', () => {
  const s = schedule('agents: {arrival: {rate_per_s: 20, distribution: poisson}}\nduration: 10m\n');
  for (const seed of [1, 2, 3]) {
    const times = [...arrivalTimes(s, { distribution: 'poisson', rng: Rng.from('arrivals', seed) })];
    // 12 000 expected: a count off by more than 5 standard deviations (≈ 550) would be a broken process.
    assert.ok(Math.abs(times.length - 12_000) < 550, `${times.length} arrivals in 10 min at 20/s`);
    const g = gaps(times);
    assert.ok(Math.abs(cv(g) - 1) < 0.05, `cv ${cv(g)}`);
    const meanGap = g.reduce((a, b) => a + b, 0) / g.length;
    assert.ok(Math.abs(meanGap - 50) < 2.5, `mean gap ${meanGap} ms`);
    assert.ok(
      times.every((t, i) => t >= 0 && t < 600_000 && (i === 0 || t >= times[i - 1]!)),
      'increasing, inside the schedule',
    );
  }
});

test('constant arrivals are evenly spaced: coefficient of variation near 0, exactly rate × length of them', () => {
  const s = schedule('agents: {arrival: {rate_per_s: 4, distribution: constant}}\nduration: 15s\n');
  const times = [...arrivalTimes(s, { distribution: 'constant', rng: Rng.from('x') })];
  assert.equal(times.length, 60);
  assert.equal(times[0], 0);
  assert.ok(cv(gaps(times)) < 1e-9, `cv ${cv(gaps(times))}`);
  assert.ok(Math.abs(times[59]! - 14_750) < 1e-6);
});

test('step stages: each stage is a phase with its own rate, and the arrivals change rate exactly at the boundary', () => {
  const s = schedule('agents:\n  arrival: {distribution: constant, max_active: 8}\n  stages: [{duration: 10s, rate_per_s: 1}, {duration: 5s, rate_per_s: 0}, {duration: 10s, rate_per_s: 5}]\n');
  assert.equal(s.kind, 'arrival');
  assert.deepEqual(
    s.stages.map((x) => [x.name, x.startMs, x.endMs, x.from, x.to]),
    [
      ['s1-r1', 0, 10_000, 1, 1],
      ['s2-r0', 10_000, 15_000, 0, 0],
      ['s3-r5', 15_000, 25_000, 5, 5],
    ],
  );
  assert.equal(s.lengthMs, 25_000);
  assert.equal(stageIndexAt(s, 9_999.9), 0);
  assert.equal(stageIndexAt(s, 10_000), 1);
  assert.equal(stageIndexAt(s, 15_000), 2);
  const times = [...arrivalTimes(s, { distribution: 'constant', rng: Rng.from('x') })];
  assert.equal(countIn(times, 0, 10_000), 10);
  assert.equal(countIn(times, 10_000, 15_000), 0, 'a stage at rate 0 is a pause');
  assert.equal(countIn(times, 15_000, 25_000), 50);
  assert.equal(times.length, 60);
  const poisson = [...arrivalTimes(s, { distribution: 'poisson', rng: Rng.from('p', 1) })];
  assert.equal(countIn(poisson, 10_000, 15_000), 0, 'no Poisson arrival in the pause either');
  assert.ok(poisson.every((t) => t < 25_000));
});

test("a linear ramp moves the rate from the previous stage's (0 before the first) to its own, reached at its end", () => {
  const s = schedule('agents:\n  ramp: linear\n  stages: [{duration: 10s, rate_per_s: 2}, {duration: 10s, rate_per_s: 8}, {duration: 10s, rate_per_s: 8}]\n');
  assert.deepEqual(
    s.stages.map((x) => [x.from, x.to]),
    [
      [0, 2],
      [2, 8],
      [8, 8],
    ],
  );
  assert.equal(levelAt(s, 0), 0);
  assert.equal(levelAt(s, 5_000), 1);
  assert.equal(levelAt(s, 15_000), 5);
  assert.equal(levelAt(s, 25_000), 8);
  assert.equal(levelAt(s, 30_000), 0, 'nothing after the end');
  const times = [...arrivalTimes(s, { distribution: 'constant', rng: Rng.from('x') })];
  // Expected arrivals: 10 (0→2 over 10 s), 50 (2→8), 80 (8).
  assert.equal(countIn(times, 0, 10_000), 10);
  assert.equal(countIn(times, 10_000, 20_000), 50);
  assert.equal(countIn(times, 20_000, 30_000), 80);
  // Under a ramp up the gaps shrink: the first half of stage 2 (rate 2→5) has fewer than the second (5→8).
  assert.ok(countIn(times, 10_000, 15_000) < countIn(times, 15_000, 20_000));
  // A ramp down is the mirror image.
  const down = schedule('agents:\n  ramp: linear\n  stages: [{duration: 10s, rate_per_s: 8}, {duration: 10s, rate_per_s: 2}]\n');
  const d = [...arrivalTimes(down, { distribution: 'constant', rng: Rng.from('x') })];
  assert.equal(countIn(d, 10_000, 20_000), 50);
  assert.ok(countIn(d, 10_000, 15_000) > countIn(d, 15_000, 20_000));
});

test('stages of agent counts make a closed-loop schedule, step or linear', () => {
  const s = schedule('agents:\n  stages: [{duration: 1m, count: 4}, {duration: 2m, count: 16}]\n');
  assert.equal(s.kind, 'agents');
  assert.deepEqual(
    s.stages.map((x) => x.name),
    ['s1-c4', 's2-c16'],
  );
  assert.equal(levelAt(s, 59_999), 4);
  assert.equal(levelAt(s, 60_000), 16);
  const linear = schedule('agents:\n  ramp: linear\n  stages: [{duration: 1m, count: 4}, {duration: 2m, count: 16}]\n');
  assert.equal(levelAt(linear, 30_000), 2);
  assert.equal(levelAt(linear, 120_000), 10);
  assert.equal(loadSchedule(parseWorkload('agents: {count: 3}\nduration: 1m\n', 'w.yaml')), null, 'a plain closed-loop run has no schedule');
});

test('shards split the arrivals: each takes 1/N, seeded apart, and under constant they interleave into the one sequence', () => {
  const s = schedule('agents: {arrival: {rate_per_s: 10}}\nduration: 2m\n');
  const whole = [...arrivalTimes(s, { distribution: 'constant', rng: Rng.from('x') })];
  const parts = [0, 1, 2].map((index) => [...arrivalTimes(s, { distribution: 'constant', rng: Rng.from('x'), shard: { index, count: 3 } })]);
  assert.deepEqual(
    parts.flat().sort((a, b) => a - b),
    whole,
  );
  assert.equal(parts[1]![0], 100, 'shard 1 of 3 starts with the second arrival');
  const poisson = [0, 1, 2, 3].map((index) => [...arrivalTimes(s, { distribution: 'poisson', rng: Rng.from('arrivals', 1, index, 4), shard: { index, count: 4 } })]);
  for (const p of poisson) {
    assert.ok(Math.abs(p.length - 300) < 90, `${p.length} arrivals in a quarter share of 1200`);
    assert.ok(Math.abs(cv(gaps(p)) - 1) < 0.15, `each shard is Poisson: cv ${cv(gaps(p))}`);
  }
  assert.notDeepEqual(poisson[0]!.slice(0, 5), poisson[1]!.slice(0, 5), 'different seeds, different times');
  const merged = poisson.flat().sort((a, b) => a - b);
  assert.ok(Math.abs(merged.length - 1200) < 175);
  assert.ok(Math.abs(cv(gaps(merged)) - 1) < 0.1, `together a Poisson process of the whole rate: cv ${cv(gaps(merged))}`);
});

/** Runs a scheduler on fake time: every conversation lasts `conversationMs`, or what `lengthOf` says. */
function fakeRun(times: number[], maxActive: number, conversationMs: number | ((a: ArrivalStart) => number), runMs: number): { starts: ArrivalStart[]; left: number[]; scheduler: ArrivalScheduler } {
  const clock = new FakeClock();
  clock.advance(1000);
  const starts: ArrivalStart[] = [];
  const scheduler: ArrivalScheduler = new ArrivalScheduler({
    times: times[Symbol.iterator](),
    maxActive,
    clock,
    originMs: clock.now(),
    start: (a) => {
      starts.push(a);
      clock.setTimer(() => scheduler.release(a.slot), typeof conversationMs === 'number' ? conversationMs : conversationMs(a));
    },
  });
  scheduler.begin();
  clock.advance(runMs);
  const left = scheduler.stop();
  return { starts, left, scheduler };
}

test('the scheduler starts each arrival at its time when a slot is free: start lag 0 on time', () => {
  const times = Array.from({ length: 50 }, (_, i) => i * 100);
  const { starts, left, scheduler } = fakeRun(times, 8, 250, 10_000);
  assert.equal(starts.length, 50);
  assert.deepEqual(left, []);
  assert.ok(starts.every((a) => a.lagMs === 0 && !a.delayed));
  assert.deepEqual(
    starts.map((a) => a.scheduledMs),
    times,
  );
  assert.deepEqual(
    starts.map((a) => a.seq),
    times.map((_, i) => i),
  );
  assert.ok(Math.max(...starts.map((a) => a.slot)) <= 2, 'three conversations overlap at most: slots are reused');
  assert.deepEqual(scheduler.tally, { scheduled: 50, started: 50, delayed: 0, waiting: 0, active: 0 });
});

test('max_active: an arrival finding every slot taken is counted delayed and starts when one frees, first come first served', () => {
  // One arrival every 100 ms, each conversation 350 ms, 2 slots: 4 would overlap.
  const times = Array.from({ length: 10 }, (_, i) => i * 100);
  const { starts, left, scheduler } = fakeRun(times, 2, 350, 60_000);
  assert.equal(starts.length, 10, 'every arrival started in the end: none dropped');
  assert.deepEqual(left, []);
  assert.deepEqual(
    starts.map((a) => a.scheduledMs),
    times,
    'in arrival order',
  );
  assert.deepEqual(
    starts.slice(0, 2).map((a) => [a.lagMs, a.delayed]),
    [
      [0, false],
      [0, false],
    ],
  );
  // Slots free at 350, 450, then every 350 ms after the start they were given to.
  assert.deepEqual(
    starts.map((a) => a.startedMs),
    [0, 100, 350, 450, 700, 800, 1050, 1150, 1400, 1500],
  );
  assert.deepEqual(
    starts.map((a) => a.lagMs),
    [0, 0, 150, 150, 300, 300, 450, 450, 600, 600],
    'the lag grows with the backlog',
  );
  assert.equal(starts.filter((a) => a.delayed).length, 8);
  assert.deepEqual(scheduler.tally, { scheduled: 10, started: 10, delayed: 8, waiting: 0, active: 0 });
  assert.ok(starts.every((a) => a.slot === 0 || a.slot === 1));
});

test('stopping hands back the arrivals still waiting for a slot: counted as not started, never silently dropped', () => {
  const times = Array.from({ length: 20 }, (_, i) => i * 100);
  const { starts, left, scheduler } = fakeRun(times, 1, 1000, 1950);
  // Started at 0 and 1000 (the 2nd arrival); due by 1950: 20 arrivals; 2 started, 18 waiting.
  assert.equal(starts.length, 2);
  assert.equal(left.length, 18);
  assert.deepEqual(left.slice(0, 3), [200, 300, 400], 'the waiting ones, oldest first');
  const t = scheduler.tally;
  assert.equal(t.scheduled, 20);
  assert.equal(t.started + left.length, t.scheduled);
  assert.equal(t.delayed, 19);
});

test('a slow server makes start lag grow while the arrival rate holds (open loop), where a closed loop would slow down', () => {
  // 5 arrivals/s for 20 s; conversations get slower as the run goes on (the server degrades): 1 s, then 4 s.
  const s = schedule('agents: {arrival: {rate_per_s: 5, distribution: poisson, max_active: 8}}\nduration: 20s\n');
  const times = [...arrivalTimes(s, { distribution: 'poisson', rng: Rng.from('slow', 1) })];
  const { starts, left, scheduler } = fakeRun(times, 8, (a) => (a.startedMs < 8_000 ? 1000 : 4000), 20_000);
  const t = scheduler.tally;
  assert.equal(t.scheduled, times.length, 'every scheduled arrival came due at its time: the arrival rate did not fall');
  assert.ok(Math.abs(times.length - 100) < 35);
  assert.equal(t.started + left.length, t.scheduled);
  const lagEarly = Math.max(...starts.filter((a) => a.scheduledMs < 6_000).map((a) => a.lagMs));
  const lagLate = Math.max(0, ...starts.filter((a) => a.scheduledMs >= 14_000).map((a) => a.lagMs), ...left.map((ms) => 20_000 - ms));
  assert.ok(lagEarly < 1000, `early on conversations start about on time (lag ≤ ${lagEarly} ms)`);
  assert.ok(lagLate > 3000, `late in the run arrivals wait seconds for a slot (${lagLate} ms)`);
  assert.ok(t.delayed > 20, `${t.delayed} delayed`);
});

test('a late timer (a busy event loop) starts every arrival already due at once, each with its own lag', () => {
  const clock = new FakeClock();
  const starts: ArrivalStart[] = [];
  const scheduler = new ArrivalScheduler({ times: [0, 10, 20, 30, 500][Symbol.iterator](), maxActive: 10, clock, originMs: 0, start: (a) => starts.push(a) });
  clock.advance(35); // the loop was blocked: the clock moved without timers firing in between
  scheduler.begin();
  assert.deepEqual(
    starts.map((a) => a.lagMs),
    [35, 25, 15, 5],
  );
  assert.equal(scheduler.exhausted, false);
  clock.advance(1000);
  assert.equal(starts.length, 5);
  assert.equal(starts[4]!.lagMs, 0);
  assert.equal(scheduler.exhausted, true);
});

test('a pause longer than one Node timer (24.8 days) is waited a day at a time, never a wrapped 1 ms timer', () => {
  const clock = new FakeClock();
  const delays: number[] = [];
  const setTimer = clock.setTimer.bind(clock);
  clock.setTimer = (fn, ms) => {
    delays.push(ms);
    return setTimer(fn, ms);
  };
  const starts: ArrivalStart[] = [];
  const day = 86_400_000;
  const scheduler = new ArrivalScheduler({ times: [0, 40 * day][Symbol.iterator](), maxActive: 2, clock, originMs: 0, start: (a) => starts.push(a) });
  scheduler.begin();
  clock.advance(41 * day);
  assert.equal(starts.length, 2);
  assert.equal(starts[1]!.lagMs, 0);
  assert.ok(
    delays.every((ms) => ms <= day),
    `timers of at most a day: ${delays.length} of them`,
  );
  assert.ok(delays.length >= 40);
});
