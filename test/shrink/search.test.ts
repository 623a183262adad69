// The shrink's search with a fake runner and a fake clock: what it keeps, what it refuses, when it stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload, type Workload } from '../../src/config/index.js';
import { answerLine, shrinkWorkload, type ShrinkOptions, type TryRequest, type TryResult, type VariantRunner } from '../../src/shrink/index.js';

const BASE = parseWorkload(
  `name: stall7
target: {via: {kind: hop, faults: [{kind: stall, after_requests: 6}]}}
agents: {count: 4, rounds: 12, think_time_ms: 100}
`,
  'stall7.yaml',
);

/** A try that hangs from round `hangAt` (null: passes). */
function outcome(hangAt: number | null, durationMs = 1000): TryResult {
  return {
    figures: { hangs: hangAt === null ? 0 : 1, errorsByClass: {}, hangRounds: hangAt === null ? [] : [hangAt], errorRounds: [] },
    durationMs,
    dir: null,
    status: 'completed',
  };
}

/** The hop's stall on every 7th request: any agent count, 7 rounds or more, through the hop. */
const stallAt7 = (w: Workload): number | null => (w.agents.count >= 1 && w.agents.rounds >= 7 && w.target.via?.kind === 'hop' ? 7 : null);

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function options(runner: VariantRunner, clock: { now: () => number }, more: Partial<ShrinkOptions> = {}): ShrinkOptions {
  return { base: BASE, failure: { kind: 'hang' }, k: 3, maxTimeMs: 600_000, tryLimitMs: 60_000, runner, clock: clock.now, log: () => undefined, ...more };
}

/** A runner judging each try with `verdict`, taking `tryMs` of fake time, and remembering every request. */
function fakeRunner(clock: ReturnType<typeof fakeClock>, verdict: (r: TryRequest) => number | null, tryMs = 1000): { runner: VariantRunner; requests: TryRequest[] } {
  const requests: TryRequest[] = [];
  const runner: VariantRunner = (r) => {
    requests.push(r);
    clock.advance(tryMs);
    return Promise.resolve(outcome(verdict(r), tryMs));
  };
  return { runner, requests };
}

test('a failure at round 7 through the hop shrinks to 1 agent × 7 rounds, think 0, and keeps the hop', async () => {
  const clock = fakeClock();
  const { runner, requests } = fakeRunner(clock, (r) => stallAt7(r.workload));
  const lines: string[] = [];
  const result = await shrinkWorkload(options(runner, clock, { log: (l) => lines.push(l) }));
  assert.equal(result.originalFails, true);
  assert.equal(result.stoppedEarly, false);
  const best = result.best!.shape;
  assert.deepEqual({ agents: best.agents, rounds: best.rounds, think: best.thinkTimeMs, direct: best.direct }, { agents: 1, rounds: 7, think: 0, direct: false });
  assert.ok(best.contextDivisor >= 2, 'the context does not matter to this failure, so it was divided');
  assert.equal(result.pathNeeded, true, 'direct passes: the hop is needed');
  assert.ok(!requests.some((r) => r.workload.agents.rounds < 7), 'a failure at round 7 needs 7 rounds: fewer were never run');
  assert.equal(result.variants.find((v) => v.step === 'path')?.tries.length, 1, 'the direct variant stopped at its first pass');
  assert.equal(result.variants.filter((v) => v.step === 'connection').length, 0, 'one agent has one connection already');
  assert.ok(lines.includes('shrink: agents 4 → 2: fails 3/3 (3.0 s)'), lines.join('\n'));
  assert.ok(lines.includes('shrink: path via hop → direct: passes at try 1/3: kept via hop (1.0 s)'), lines.join('\n'));
  assert.match(answerLine(BASE, result, 'shrunk.yaml', 3), /^smallest failing: 1 agent × 7 rounds, context ÷\d+, think 0, via hop \(direct passes: the hop is needed\) — shrunk\.yaml$/);
});

test('rounds are found by binary search when the earliest failing round is not enough', async () => {
  const clock = fakeClock();
  // Fails from round 3 on, but only when the run has at least 9 rounds (a failure that needs a long run).
  const { runner } = fakeRunner(clock, (r) => (r.workload.agents.rounds >= 9 ? 3 : null));
  const result = await shrinkWorkload(options(runner, clock));
  assert.equal(result.best!.shape.rounds, 9);
  const tried = result.variants.filter((v) => v.step === 'rounds').map((v) => v.settings.rounds);
  assert.deepEqual(tried, [3, 8, 10, 9], 'the earliest failing round first, then halving the rest');
});

test('a flaky variant (fails 2 of 3) is not kept; the shrink goes on from the last one that failed 3 of 3', async () => {
  const clock = fakeClock();
  // Two agents fail twice, then pass; one agent never fails.
  const { runner } = fakeRunner(clock, (r) => {
    if (r.workload.agents.count === 2) return r.attempt <= 2 ? 7 : null;
    return r.workload.agents.count >= 3 ? stallAt7(r.workload) : null;
  });
  const lines: string[] = [];
  const result = await shrinkWorkload(options(runner, clock, { log: (l) => lines.push(l) }));
  const halved = result.variants.find((v) => v.label === 'agents 4 → 2')!;
  assert.equal(halved.verdict, 'passes');
  assert.equal(halved.kept, false);
  assert.deepEqual(
    halved.tries.map((t) => t.fails),
    [true, true, false],
  );
  assert.equal(result.best!.shape.agents, 4);
  assert.equal(result.best!.shape.rounds, 7, 'the next steps start from 4 agents');
  assert.ok(lines.includes('shrink: agents 4 → 2: passes at try 3/3: kept 4 (3.0 s)'), lines.join('\n'));
  assert.ok(
    result.variants.some((v) => v.step === 'connection' && v.settings.connection === 'pool'),
    'four agents: one shared connection is tried',
  );
});

test('max-time is respected: no try starts once the time is up, each is limited to what is left, and the smallest failing so far is the answer', async () => {
  const clock = fakeClock();
  const { runner, requests } = fakeRunner(clock, (r) => stallAt7(r.workload), 10_000);
  const result = await shrinkWorkload(options(runner, clock, { maxTimeMs: 75_000 }));
  assert.equal(result.stoppedEarly, true);
  // Original 3 tries (30 s), agents 4 → 2 (60 s), then 4 → 1 gets one try at 60 s and none at 70 s… 70 < 75: a second.
  assert.equal(requests.length, 8);
  assert.ok(requests.every((r) => r.timeLimitMs <= 75_000 - 0));
  assert.equal(requests.at(-1)!.timeLimitMs, 5_000, 'the last try may take only the 5 s left');
  const last = result.variants.at(-1)!;
  assert.equal(last.verdict, 'cut');
  assert.equal(last.kept, false);
  assert.equal(result.best!.shape.agents, 2, 'the smallest that failed 3 of 3 before the time ran out');
  assert.match(answerLine(BASE, result, 'shrunk.yaml', 3), /^smallest failing: 2 agents × 12 rounds, full context, think 100 ms, via hop \(direct not tried\) \(stopped early: the smallest so far\)/);
});

test('an original that no longer fails stops at its first passing try: nothing to shrink', async () => {
  const clock = fakeClock();
  const { runner, requests } = fakeRunner(clock, (r) => (r.attempt === 1 ? 7 : null));
  const result = await shrinkWorkload(options(runner, clock));
  assert.equal(result.originalFails, false);
  assert.equal(result.best, null);
  assert.equal(requests.length, 2);
  assert.equal(answerLine(BASE, result, 'shrunk.yaml', 3), 'nothing to shrink: the original workload passed at try 2/3 (it no longer fails 3 of 3)');
});

test('a failure that stays direct drops the path: the hop is not needed', async () => {
  const clock = fakeClock();
  const { runner } = fakeRunner(clock, (r) => (r.workload.agents.rounds >= 5 ? 5 : null));
  const result = await shrinkWorkload(options(runner, clock, { k: 2 }));
  assert.equal(result.pathNeeded, false);
  assert.equal(result.best!.shape.direct, true);
  assert.match(answerLine(BASE, result, 'shrunk.yaml', 2), /1 agent × 5 rounds, .*direct \(it fails without the hop too: the hop is not needed\)/);
});

test('the smallest context is tried first; when it passes the context is halved while it still fails', async () => {
  const clock = fakeClock();
  // Fails only with a system prompt of 300 tokens or more (the default is 1200).
  const { runner } = fakeRunner(clock, (r) => (r.workload.conversation.system_prompt_tokens >= 300 ? 2 : null));
  const result = await shrinkWorkload(options(runner, clock, { k: 1 }));
  const tried = result.variants.filter((v) => v.step === 'context').map((v) => [v.label, v.verdict]);
  assert.deepEqual(tried, [
    ['context ÷1 → ÷1024', 'passes'],
    ['context ÷1 → ÷2', 'fails'],
    ['context ÷2 → ÷4', 'fails'],
    ['context ÷4 → ÷8', 'passes'],
  ]);
  assert.equal(result.best!.shape.contextDivisor, 4);
});
