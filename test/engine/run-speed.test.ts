// engine.run_spread_pct: each start of the embedded engine draws one speed factor, f = 1 + pct/100 · z (z standard
// normal, clamped to ±3, f at least 0.5), that divides its decode step and prefill times for its whole life; 0 is
// exactly 1; the factor and its seed are logged where the engine says how it starts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engineSchema } from '../../src/config/index.js';
import { engineStartLine } from '../../src/engine/index.js';
import { decodeStepMs, prefillBatchMs } from '../../src/engine/latency.js';
import { drawRunSpeed, runSpeedText } from '../../src/engine/run-speed.js';
import { engine, streamChat, USER, type StreamResult } from './helpers.js';

/** `count` factors drawn from seeds 0, 1, 2 …: a fixed stream, so the figures below never change. */
function factors(spreadPct: number, count: number): number[] {
  return Array.from({ length: count }, (_, seed) => drawRunSpeed(spreadPct, seed).factor);
}

function meanSd(xs: readonly number[]): { mean: number; sd: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, sd: Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)) };
}

describe('the run speed draw', () => {
  it('over 10 000 seeds, a 3% spread has mean 1 and standard deviation 0.03, within sampling error', (t) => {
    const { mean, sd } = meanSd(factors(3, 10_000));
    t.diagnostic(`mean ${mean.toFixed(5)}, sd ${sd.toFixed(5)}`);
    // Standard errors: 0.03/√10000 = 0.0003 for the mean, 0.03/√20000 ≈ 0.0002 for the sd; bounds at about 5 of them.
    assert.ok(Math.abs(mean - 1) < 0.0015, `mean ${mean}`);
    assert.ok(Math.abs(sd - 0.03) < 0.001, `sd ${sd}`);
    const within1Sd = factors(3, 10_000).filter((f) => Math.abs(f - 1) <= 0.03).length / 10_000;
    assert.ok(Math.abs(within1Sd - 0.6827) < 0.02, `share within one sd: ${within1Sd} (normal: 0.683)`);
  });

  it('z is clamped to ±3 and the factor floored at 0.5, however wide the spread', () => {
    const wide = factors(50, 10_000);
    assert.equal(Math.min(...wide), 0.5, 'z below -1 happens (16%): the floor holds them');
    assert.ok(Math.max(...wide) <= 2.5, `max ${Math.max(...wide)}`);
    const narrow = factors(1, 100_000);
    assert.ok(Math.min(...narrow) >= 0.97 && Math.max(...narrow) <= 1.03, `1%: ${Math.min(...narrow)} … ${Math.max(...narrow)}`);
  });

  it('a spread of 0 is exactly 1 and draws no seed', () => {
    assert.deepEqual(drawRunSpeed(0, null), { factor: 1, spreadPct: 0, seed: null });
    assert.deepEqual(drawRunSpeed(0, 12), { factor: 1, spreadPct: 0, seed: null });
    assert.equal(engineSchema.parse({}).run_spread_pct, 0, 'off by default');
    assert.equal(engineSchema.parse({}).run_spread_seed, null);
  });

  it('a given seed draws the same factor again; without one, each start draws a fresh seed', () => {
    assert.deepEqual(drawRunSpeed(3, 1234), drawRunSpeed(3, 1234));
    const fresh = Array.from({ length: 5 }, () => drawRunSpeed(3, null));
    assert.equal(new Set(fresh.map((s) => s.seed)).size, 5, JSON.stringify(fresh));
    for (const s of fresh) assert.deepEqual(drawRunSpeed(3, s.seed), s, 'the recorded seed reproduces the factor');
  });
});

describe('the latency model at a run speed', () => {
  const settings = engineSchema.parse({ decode_step_ms: 8, decode_step_ms_per_running: 0.5, decode_speedup: 2, prefill_ms_per_1k_tokens: 15 });

  it('the decode step is divided by the factor, after decode_speedup', () => {
    assert.equal(decodeStepMs(settings, 4, 1), 5);
    assert.equal(decodeStepMs(settings, 4, 1.25), 4);
    assert.equal(decodeStepMs(settings, 4, 0.8), 6.25);
  });

  it('a prefill batch is divided by the factor', () => {
    assert.equal(prefillBatchMs(settings, 2000, 1), 30);
    assert.equal(prefillBatchMs(settings, 2000, 1.5), 20);
    assert.equal(prefillBatchMs(settings, 0, 0.5), 0);
  });
});

/** Mean gap between token events of one stream, from its first token to its last (as scheduler.test.ts). */
function meanGapMs(r: StreamResult): number {
  const firstToken = r.comments[0]?.beforeEvent ?? 1;
  const times = r.arrivalsMs.slice(firstToken, r.arrivalsMs.length - 3);
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined || times.length < 2) throw new Error('too few tokens to time');
  return (last - first) / (times.length - 1);
}

describe('an engine start with a spread', () => {
  it('draws its factor once, logs it with its seed in every server log and the start line', async (t) => {
    const e = await engine({ run_spread_pct: 3, run_spread_seed: 42 }, t);
    assert.deepEqual(e.runSpeed, drawRunSpeed(3, 42));
    const text = runSpeedText(e.runSpeed);
    assert.match(text, /^run speed ×\d\.\d{4} \(engine\.run_spread_pct 3, run_spread_seed 42\)$/);
    for (const name of ['prefill', 'decode'] as const)
      assert.ok(
        e.logLines(name).some((l) => l.endsWith(text)),
        `${name}: ${e.logLines(name).join('\n')}`,
      );
    assert.ok(engineStartLine(e).endsWith(`; ${text}`), engineStartLine(e));
    const plain = await engine({ topology: 'single' }, t);
    assert.equal(plain.runSpeed.factor, 1);
    assert.ok(!plain.logLines('engine').some((l) => l.includes('run speed')), 'no spread, no line');
    assert.ok(!engineStartLine(plain).includes('run speed'));
  });

  it('two starts with different draws decode at different speeds: the slower one has longer token gaps', async (t) => {
    // Seeds of a 40% spread whose factors are far apart (found from the fixed stream), so the difference is far
    // beyond what a loaded machine adds to a gap.
    const seeds = Array.from({ length: 200 }, (_, seed) => drawRunSpeed(40, seed));
    const slow = seeds.find((s) => s.factor > 0.65 && s.factor < 0.8)!;
    const fast = seeds.find((s) => s.factor > 1.25 && s.factor < 1.4)!;
    const base = { topology: 'single' as const, decode_step_ms: 20, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, output_tokens_min: 20, output_tokens_max: 20, run_spread_pct: 40 };
    // A late timer only lengthens gaps: the least of three streams is each start's own step.
    const least = async (url: string): Promise<number> => {
      const gaps: number[] = [];
      for (let i = 0; i < 3; i += 1) gaps.push(meanGapMs(await streamChat(url, { messages: [USER(`spread ${i}`)] })));
      return Math.min(...gaps);
    };
    const slowGap = await least((await engine({ ...base, run_spread_seed: slow.seed }, t)).url);
    const fastGap = await least((await engine({ ...base, run_spread_seed: fast.seed }, t)).url);
    t.diagnostic(
      `step 20 ms: ×${slow.factor.toFixed(3)} → ${slowGap.toFixed(2)} ms (model ${(20 / slow.factor).toFixed(2)}), ×${fast.factor.toFixed(3)} → ${fastGap.toFixed(2)} ms (model ${(20 / fast.factor).toFixed(2)})`,
    );
    // A timer never fires early (about 1.5 ms for a late first token over 19 gaps).
    assert.ok(slowGap >= 20 / slow.factor - 1.5, `slow start: ${slowGap.toFixed(2)} ms`);
    assert.ok(fastGap >= 20 / fast.factor - 1.5, `fast start: ${fastGap.toFixed(2)} ms`);
    assert.ok(fastGap < slowGap * 0.8, `${fastGap.toFixed(2)} < 0.8 × ${slowGap.toFixed(2)}`);
  });
});
