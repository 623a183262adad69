// The calls across runs (issue 31: runs are the unit of every comparison), by simulation on the code the CLI
// runs (callFigure, alternatedPairs): each run is one value — level × (1 + a run offset) × (1 + the mean of
// its AR(1) windows) × (1 + a slow drift over run order) — and the arms' runs alternate in pairs (A B, B A …,
// paired), in no pair order, or one arm after the other (A A … B B …, Welch's). A/A errors, a third arm's
// alpha split, power, rates in points, and the two-runs-a-side case. Seeded: the same rates each time;
// every rate is printed (t.diagnostic).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { alternatedPairs, callFigure, type ArmValues, type Call, type Rule, type Verdict } from '../../src/compare/across-runs.js';
import { SeededRandom } from '../../src/compare/stats.js';
import { compareArms } from '../../src/compare/index.js';
import { run } from './helpers.js';

/** A steady synthetic run started at `startedAt`. */
function helperRun(name: string, startedAt: string) {
  return run(
    name,
    Array.from({ length: 8 }, () => 1000),
    { startedAt },
  );
}

/** Steady windows per run, their spread (share of the level) and the drift per run slot (+0.2%). */
const WINDOWS = 10;
const WINDOW_CV = 0.02;
const DRIFT_PER_RUN = 0.002;
const LEVEL = 100;

const DECODE = { kind: 'relative', betterWhen: 'higher' } as const;
const ERRORS = { kind: 'absolute', betterWhen: 'lower' } as const;

const FIXED: Rule = { minEffectPct: 3, minEffectPoints: 1, alpha: 0.05, looks: { kind: 'fixed' } };
/** An ab file's `until:` by default: ±3%, up to 10 pairs, looked at after every pair, the last look final. */
const SEQUENTIAL: Rule = { ...FIXED, looks: { kind: 'sequential', maxPairs: 10, final: true } };

interface World {
  /** SD of a run's own offset (restart, placement), as a share of the level. */
  spread: number;
  /** Lag-1 autocorrelation of a run's windows. */
  rho: number;
  /** Drift per run slot, as a share of the level. */
  drift: number;
  /** SD of a window around its run's level, as a share of it. @default WINDOW_CV */
  windowCv?: number;
}

function gauss(rng: SeededRandom): number {
  const u = Math.max(1e-12, rng.next());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/** One run's value in run slot `slot` (0: first run of the A/B). */
function runValue(rng: SeededRandom, level: number, slot: number, w: World): number {
  const offset = w.spread * gauss(rng);
  let e = gauss(rng);
  let sum = 0;
  for (let k = 0; k < WINDOWS; k += 1) {
    sum += e;
    e = w.rho * e + Math.sqrt(1 - w.rho * w.rho) * gauss(rng);
  }
  return level * (1 + offset) * (1 + ((w.windowCv ?? WINDOW_CV) * sum) / WINDOWS) * (1 + w.drift * slot);
}

const T0 = Date.UTC(2026, 0, 1);
function startedAt(slot: number): { startedAt: string } {
  return { startedAt: new Date(T0 + slot * 600_000).toISOString() };
}

/** How the runs of the two arms were started: in pairs (A B, B A …), one arm after the other, or shuffled. */
type Order = 'alternated' | 'blocked' | 'shuffled';

/** The run slots of two arms of `n` runs each in `order`. */
function slots(rng: SeededRandom, n: number, order: Order): { a: number[]; b: number[] } {
  const all = Array.from({ length: 2 * n }, (_, i) => i);
  if (order === 'shuffled') {
    for (let i = all.length - 1; i > 0; i -= 1) {
      const j = rng.below(i + 1);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return { a: all.slice(0, n), b: all.slice(n) };
  }
  if (order === 'blocked') return { a: all.slice(0, n), b: all.slice(n) };
  const aFirst = (p: number) => p % 2 === 0;
  return { a: Array.from({ length: n }, (_, p) => 2 * p + (aFirst(p) ? 0 : 1)), b: Array.from({ length: n }, (_, p) => 2 * p + (aFirst(p) ? 1 : 0)) };
}

/** Two arms' runs as `compare` sees them: values, and the pairs inferred from the runs' starts. */
function armValues(rng: SeededRandom, n: number, order: Order, effect: number, w: World): ArmValues {
  const at = slots(rng, n, order);
  return {
    a: at.a.map((s) => runValue(rng, LEVEL, s, w)),
    b: at.b.map((s) => runValue(rng, LEVEL * (1 + effect), s, w)),
    pairs: alternatedPairs(at.a.map(startedAt), at.b.map(startedAt)),
  };
}

type Tally = Record<Verdict, number> & { n: number };

function tally(): Tally {
  return { better: 0, worse: 0, equivalent: 0, undecided: 0, inconclusive: 0, 'insufficient data': 0, n: 0 };
}

function add(t: Tally, c: Call): void {
  t[c.verdict] += 1;
  t.n += 1;
}

function share(count: number, t: Tally): string {
  return `${((100 * count) / t.n).toFixed(1)}%`;
}

function shown(t: Tally): string {
  return `better ${share(t.better, t)}, worse ${share(t.worse, t)}, equivalent ${share(t.equivalent, t)}, inconclusive ${share(t.inconclusive, t)}, insufficient ${share(t['insufficient data'], t)}`;
}

/** A sequential figure's calls keep the first decided one: every later look repeats it. */
function assertKept(calls: readonly Call[]): void {
  const first = calls.findIndex((c) => c.verdict === 'better' || c.verdict === 'worse' || c.verdict === 'equivalent');
  if (first === -1) return;
  for (const c of calls.slice(first)) assert.equal(c, calls[first]);
}

/** The call after up to 10 alternated pairs of a sequential A/B (its last look), and the pairs it took. */
function sequentialAb(rng: SeededRandom, effect: number, w: World, rule: Rule): { call: Call; pairs: number } {
  const values = armValues(rng, 10, 'alternated', effect, w);
  const { method, calls } = callFigure(values, DECODE, rule);
  assert.equal(method, 'paired');
  assert.equal(calls.length, 10, 'one call per look');
  assertKept(calls);
  const call = calls.at(-1)!;
  return { call, pairs: calls.indexOf(call) + 1 };
}

/**
 * A/A with one fixed look at each of 1,000 simulated comparisons per condition — run spread 1, 3 and 5%, each
 * of `drifts`, windows' lag-1 autocorrelation 0 and 0.8, 2, 3, 5 and 10 runs per arm — in `order`. Prints
 * every condition's rates; returns the conditions past 5% better/worse (and those at 2 runs per arm with any),
 * and the methods the calls used.
 */
function fixedLookGrid(t: TestContext, order: Order, drifts: readonly number[], seed: number): { failed: string[]; methods: string[] } {
  const SIMULATIONS = 1000;
  const failed: string[] = [];
  const methods = new Set<string>();
  let worst = { rate: -1, at: '' };
  let k = 0;
  for (const spread of [0.01, 0.03, 0.05])
    for (const drift of drifts)
      for (const rho of [0, 0.8])
        for (const n of [2, 3, 5, 10]) {
          const rng = new SeededRandom(seed + (k += 1));
          const r = tally();
          for (let i = 0; i < SIMULATIONS; i += 1) {
            const { method, calls } = callFigure(armValues(rng, n, order, 0, { spread, rho, drift }), DECODE, FIXED);
            methods.add(method);
            assert.equal(calls.length, 1, 'a fixed look is one call');
            add(r, calls[0]!);
          }
          const at = `${order}, spread ${spread * 100}%, drift ${drift * 100}%/run, rho ${rho}, ${n} runs per arm`;
          t.diagnostic(`${at}: ${shown(r)}`);
          const wrong = (r.better + r.worse) / SIMULATIONS;
          if (wrong > worst.rate) worst = { rate: wrong, at };
          if (wrong > 0.05 || (n === 2 && wrong > 0)) failed.push(`${at}: ${shown(r)}`);
        }
  t.diagnostic(`worst A/A better/worse (${[...methods].join(', ')}): ${(worst.rate * 100).toFixed(1)}% at ${worst.at}`);
  return { failed, methods: [...methods].sort() };
}

test('A/A with a fixed look on alternated runs (paired) is better or worse in at most 5% of 1,000 comparisons at 3-10 runs per arm, run spread 1-5%, drifting or not, windows autocorrelated or not; never at 2 runs per arm', (t) => {
  assert.deepEqual(fixedLookGrid(t, 'alternated', [0, DRIFT_PER_RUN], 100), { failed: [], methods: ['paired'] });
});

test("A/A with a fixed look on runs in no pair order (Welch's, or paired when a shuffle happens to alternate) on a drifting server is better or worse in at most 5% of 1,000 comparisons; never at 2 runs per arm", (t) => {
  assert.deepEqual(fixedLookGrid(t, 'shuffled', [DRIFT_PER_RUN], 200), { failed: [], methods: ['paired', 'welch'] });
});

test('A/A with a fixed look on one arm run after the other (A A … B B …, Welch) on a steady server is better or worse in at most 5% of 1,000 comparisons; never at 2 runs per arm', (t) => {
  assert.deepEqual(fixedLookGrid(t, 'blocked', [0], 300), { failed: [], methods: ['welch'] });
});

test("runs of one arm all before the other's cannot cancel drift (blocked Welch at 0.2% a run: better in 5.4% at 10 runs per arm): compare says so in a note, alternated runs get none", () => {
  const runs = (arm: string, start: number) => Array.from({ length: 3 }, (_, i) => helperRun(`${arm}${i}`, new Date(Date.UTC(2026, 11, 5, 10, start + i)).toISOString()));
  const blocked = compareArms({ name: 'A', runs: runs('a', 0) }, { name: 'B', runs: runs('b', 10) });
  assert.equal(blocked.method, 'welch');
  assert.ok(
    blocked.phases[0]!.notes.some((n) => /every run of A started before every run of B: drift between them counts as a difference/.test(n)),
    blocked.phases[0]!.notes.join(' | '),
  );
  const interleaved = compareArms({ name: 'A', runs: runs('a', 0) }, { name: 'B', runs: runs('b', 1) });
  assert.ok(!interleaved.phases[0]!.notes.some((n) => /started before every run/.test(n)));
});

test('A/A in a sequential A/B (±3%, up to 10 pairs, looked at after every pair) is better or worse in at most 5% of 1,000 sequences at a run spread of 1-5%; a call once made is kept', (t) => {
  const SIMULATIONS = 1000;
  for (const [k, spread] of [0.01, 0.03, 0.05].entries()) {
    const rng = new SeededRandom(500 + k);
    const r = tally();
    let pairs = 0;
    for (let i = 0; i < SIMULATIONS; i += 1) {
      const s = sequentialAb(rng, 0, { spread, rho: 0.8, drift: DRIFT_PER_RUN }, SEQUENTIAL);
      add(r, s.call);
      pairs += s.pairs;
    }
    t.diagnostic(`A/A sequential, spread ${spread * 100}%: ${shown(r)}, mean pairs ${(pairs / SIMULATIONS).toFixed(1)}`);
    assert.ok(r.better + r.worse <= 0.05 * SIMULATIONS, shown(r));
  }
});

test('A/A/A: two arms against one baseline, alpha split 0.025 each, is better or worse on either arm in at most 5% of 1,000 sequential A/Bs', (t) => {
  const SIMULATIONS = 1000;
  const rule: Rule = { ...SEQUENTIAL, alpha: 0.05 / 2 };
  for (const [k, spread] of [0.01, 0.03, 0.05].entries()) {
    const rng = new SeededRandom(600 + k);
    const w: World = { spread, rho: 0.8, drift: DRIFT_PER_RUN };
    let family = 0;
    const each = [tally(), tally()];
    for (let i = 0; i < SIMULATIONS; i += 1) {
      // abOrder: round r runs the arms rotated by r (A B C, B C A, C A B, …); the arms pair by round.
      const runs: number[][] = [[], [], []];
      for (let r = 0; r < 10; r += 1) for (let p = 0; p < 3; p += 1) runs[(r + p) % 3]!.push(runValue(rng, LEVEL, 3 * r + p, w));
      const pairs = Array.from({ length: 10 }, (_, r) => [r, r] as const);
      let wrong = false;
      for (const arm of [1, 2]) {
        const { calls } = callFigure({ a: runs[0]!, b: runs[arm]!, pairs }, DECODE, rule);
        assertKept(calls);
        const call = calls.at(-1)!;
        add(each[arm - 1]!, call);
        if (call.verdict === 'better' || call.verdict === 'worse') wrong = true;
      }
      if (wrong) family += 1;
    }
    t.diagnostic(`A/A/A sequential, spread ${spread * 100}%: either arm better/worse ${((100 * family) / SIMULATIONS).toFixed(1)}%; B: ${shown(each[0]!)}; C: ${shown(each[1]!)}`);
    assert.ok(family <= 0.05 * SIMULATIONS, `${family} of ${SIMULATIONS}`);
  }
});

/** The tally of `simulations` sequential A/Bs with a true `effect`, and the mean pairs to a better call. */
function sequentialRates(simulations: number, effect: number, w: World, seed: number): { r: Tally; pairsToBetter: number } {
  const rng = new SeededRandom(seed);
  const r = tally();
  let pairs = 0;
  for (let i = 0; i < simulations; i += 1) {
    const s = sequentialAb(rng, effect, w, SEQUENTIAL);
    add(r, s.call);
    if (s.call.verdict === 'better') pairs += s.pairs;
  }
  return { r, pairsToBetter: pairs / Math.max(1, r.better) };
}

test('a true +5.7% at a 2% run spread (windows 1% around it, lag-1 0.8, drifting) is found better in 80% or more of 2,000 sequential A/Bs within 10 pairs, never worse', (t) => {
  const { r, pairsToBetter } = sequentialRates(2000, 0.057, { spread: 0.02, rho: 0.8, drift: DRIFT_PER_RUN, windowCv: 0.01 }, 700);
  t.diagnostic(`+5.7%, spread 2%, windows 1%: ${shown(r)}, mean pairs to better ${pairsToBetter.toFixed(1)}`);
  assert.ok(r.better >= 0.8 * r.n, shown(r));
  assert.equal(r.worse, 0);
  // Noisier windows add to the run spread the pairs see (2% windows at lag-1 0.8: about 1.5% more per run).
  const noisier = sequentialRates(1000, 0.057, { spread: 0.02, rho: 0.8, drift: DRIFT_PER_RUN }, 701);
  t.diagnostic(`+5.7%, spread 2%, windows 2%: ${shown(noisier.r)}, mean pairs to better ${noisier.pairsToBetter.toFixed(1)}`);
  assert.equal(noisier.r.worse, 0);
});

test('a true +1% against a 3% margin is called better or worse in at most 2% of 1,000 sequential A/Bs at a 2% run spread (a call needs an estimate past 3% clear of 1.5%)', (t) => {
  const called = [0.01, 0.02].map((windowCv, k) => {
    const { r } = sequentialRates(1000, 0.01, { spread: 0.02, rho: 0.8, drift: DRIFT_PER_RUN, windowCv }, 710 + k);
    t.diagnostic(`+1%, margin 3%, spread 2%, windows ${windowCv * 100}%: ${shown(r)}`);
    return r;
  });
  for (const r of called) assert.ok(r.better + r.worse <= 20, shown(r));
});

test('an error rate is compared in points: +4 points in B over 4 pairs with small noise is worse (estimate about +4, not %); 0 against 0 is equivalent', (t) => {
  const rng = new SeededRandom(800);
  const r = tally();
  const estimates: number[] = [];
  const pairs = Array.from({ length: 4 }, (_, k) => [k, k] as const);
  for (let i = 0; i < 1000; i += 1) {
    const a = Array.from({ length: 4 }, () => Math.max(0, 2 + 0.3 * gauss(rng)));
    const b = Array.from({ length: 4 }, () => Math.max(0, 6 + 0.3 * gauss(rng)));
    for (const [values, rule] of [
      [{ a, b, pairs }, FIXED],
      [{ a, b, pairs: null }, FIXED],
      [
        { a, b, pairs },
        { ...SEQUENTIAL, looks: { kind: 'sequential', maxPairs: 10, final: false } },
      ],
    ] as const) {
      const call = callFigure(values, ERRORS, rule).calls.at(-1)!;
      add(r, call);
      estimates.push(call.estimate!);
    }
  }
  t.diagnostic(`+4 points over 4 pairs (paired, Welch, sequential at its 4th look): ${shown(r)}; estimates ${Math.min(...estimates).toFixed(2)} … ${Math.max(...estimates).toFixed(2)}`);
  assert.equal(r.worse, r.n, shown(r));
  assert.ok(
    estimates.every((e) => e > 3 && e < 5),
    'B − A in points',
  );
  const zeros = [0, 0, 0, 0];
  for (const p of [pairs, null]) {
    const call = callFigure({ a: zeros, b: zeros, pairs: p }, ERRORS, FIXED).calls.at(-1)!;
    assert.equal(call.verdict, 'equivalent', call.text);
    assert.equal(call.estimate, 0);
  }
});

test('the issue case: two runs of A at one speed against two of B at +10% and +2% is never called better, paired or Welch', () => {
  const starts = { paired: { a: [0, 3], b: [1, 2] }, welch: { a: [0, 1], b: [2, 3] } };
  for (const [method, at] of Object.entries(starts)) {
    const pairs = alternatedPairs(at.a.map(startedAt), at.b.map(startedAt));
    const { method: used, calls } = callFigure({ a: [100, 100], b: [110, 102], pairs }, DECODE, FIXED);
    assert.equal(used, method);
    assert.equal(calls.length, 1);
    const call = calls[0]!;
    assert.ok(call.verdict === 'insufficient data' || call.verdict === 'inconclusive', `${method}: ${call.verdict}: ${call.text}`);
    assert.match(call.text, /at least 3 (pairs|runs per arm) to tell/);
    assert.ok(Math.abs(call.estimate! - 6) < 1e-9, `${method}: +6% seen, ${call.estimate}`);
  }
});

test('one run per arm is insufficient data, saying that 3 runs per arm (or 3 alternated pairs) would give a verdict', () => {
  const welch = callFigure({ a: [100], b: [120], pairs: null }, DECODE, FIXED);
  assert.equal(welch.method, 'welch');
  assert.equal(welch.calls[0]!.verdict, 'insufficient data');
  assert.match(welch.calls[0]!.text, /at least 3 runs per arm/);
  const paired = callFigure({ a: [100], b: [120], pairs: [[0, 0]] }, DECODE, FIXED);
  assert.equal(paired.method, 'paired');
  assert.equal(paired.calls[0]!.verdict, 'insufficient data');
  assert.match(paired.calls[0]!.text, /at least 3 alternated pairs/);
  for (const c of [welch.calls[0]!, paired.calls[0]!]) assert.equal(c.low, null);
});

test('runs pair when their starts alternate two by two (A B, B A); one arm twice in a row, unequal counts or a missing start give none', () => {
  const runs = (slotsOf: number[]) => slotsOf.map(startedAt);
  assert.deepEqual(alternatedPairs(runs([0, 3]), runs([1, 2])), [
    [0, 0],
    [1, 1],
  ]);
  // Given out of start order, the runs still pair by when they started.
  assert.deepEqual(alternatedPairs(runs([3, 0]), runs([2, 1])), [
    [1, 1],
    [0, 0],
  ]);
  assert.equal(alternatedPairs(runs([0, 1]), runs([2, 3])), null, 'A A B B');
  assert.equal(alternatedPairs(runs([0, 3, 4]), runs([1, 2])), null, 'unequal counts');
  assert.equal(alternatedPairs([{ startedAt: null }, ...runs([3])], runs([1, 2])), null, 'a start not recorded');
});

test('a relative interval never reaches below −100% (B of a positive figure is not below 0), paired or Welch, and the call is unchanged', () => {
  // One arm's p99 wildly spread: the t interval around the mean difference would run far below −100%.
  const a = [100, 110, 95];
  const b = [10, 400, 12];
  for (const pairs of [
    null,
    [
      [0, 0],
      [1, 1],
      [2, 2],
    ] as [number, number][],
  ]) {
    const call = callFigure({ a, b, pairs }, DECODE, FIXED).calls.at(-1)!;
    assert.equal(call.verdict, 'inconclusive', `${pairs === null ? 'welch' : 'paired'}: ${call.text}`);
    assert.equal(call.low, -100, `${pairs === null ? 'welch' : 'paired'}: clipped at −100: ${call.text}`);
    assert.ok(call.high! > 100);
    assert.match(call.text, /\[-100\.0, \+\d/);
  }
});
