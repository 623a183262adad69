// Canary latency as evidence: a leg's answered canaries against the other leg and against its own time
// before the episode. A proxied leg many times slower than the direct one while the agents hang at headers is
// the proxy; the direct leg slowed many times over is the engine, slow for every request, even when a proxied
// canary timed out by chance. Few canaries credit little.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type CanaryPoint, type DiagnosisInput } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import { canarySignal } from '../../src/analysis/diagnosis/canary-signal.js';
import { Context } from '../../src/analysis/diagnosis/context.js';
import { aliveEngine, canaries, hang, inside, type Span } from './diagnosis-fixtures.js';

const RUN_MS = 40_000;
const EPISODE: Span = { from: 10_000, to: 30_000 };
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** Canaries every `stepMs` on a leg, all answered, taking `during` ms inside the episode and `usual` ms outside it
 * (a few percent of jitter, as measured ones have). */
function timedLeg(leg: CanaryPoint['leg'], usual: number, during: number, stepMs = 1000): CanaryPoint[] {
  return canaries(leg, RUN_MS, stepMs, () => 'ok').map((c, i) => ({ ...c, latency_ms: (inside(c.run_ms, [EPISODE]) ? during : usual) * (1 + 0.05 * (i % 3)) }));
}

/** Agents' requests hung at headers through the episode, every 500 ms. */
function hangsAtHeaders(): ReturnType<typeof hang>[] {
  const out = [];
  for (let ms = EPISODE.from; ms + 1500 <= EPISODE.to; ms += 500) out.push(hang(ms, ms + 1500));
  return out;
}

/** The engine alive throughout (scrapes answer, work flows), the agents' requests hung at headers. */
const alive = (extra: Partial<DiagnosisInput>): DiagnosisInput => aliveEngine(RUN_MS, { hangs: hangsAtHeaders(), ...extra });

test('a proxied leg answering every canary 17× slower than the direct one while the agents hang at headers is the proxy', () => {
  const d = diagnose(alive({ canaries: [...timedLeg('direct', 20, 20), ...timedLeg('proxied', 22, 350)] }));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.ok((d.confidence ?? 0) >= 0.6, `confidence ${d.confidence}`);
  assert.match(
    text(d),
    /proxied canaries took 3\d\d ms over the episode, direct ones 2\d ms; before the episode 2\d ms and 2\d ms \(the proxied leg 1\d\.\d× slower than its usual margin; Welch t on log latency, 3\.0 ± \d+\.\d bits\)/,
  );
  assert.doesNotMatch(text(d), /both legs answered every canary over the episode \(\d+ direct, \d+ proxied\): the proxy and the engine passed small requests/);
});

test('the direct leg slowed from 25 ms to 1.6 s is the engine, slow for everyone, though a proxied canary timed out and the engine kept answering', () => {
  const proxied = timedLeg('proxied', 27, 1650).map((c) => (c.run_ms === 20_000 ? { ...c, status: 'hang' as const, hang_phase: 'headers' as const, latency_ms: 2000, http_status: null } : c));
  const d = diagnose(alive({ canaries: [...timedLeg('direct', 25, 1600), ...proxied] }));
  assert.ok(d.verdict === 'engine' || d.verdict === 'engine_overloaded', text(d));
  assert.match(text(d), /direct canaries \(skipping the proxy\) took 1\.\d s over the episode against 2\d ms before it/);
});

test('two slow canaries a leg are too few to weigh; three are measured, and credit less than twenty', () => {
  const ctxOf = (n: number): Context => {
    const direct = Array.from({ length: 2 * n }, (_, i): CanaryPoint => ({ ...timedLeg('direct', 20, 20)[0]!, run_ms: i < n ? 1000 + i * 1000 : 12_000 + (i - n) * 1000, latency_ms: 20 + i }));
    const proxied = direct.map((c) => ({ ...c, leg: 'proxied' as const, path: 'proxy' as const, latency_ms: c.run_ms >= 12_000 ? 120 + c.latency_ms : c.latency_ms }));
    const ctx = new Context({ path: 'proxy', hangs: [], canaries: [...direct, ...proxied], gauges: [] });
    ctx.troubled = [{ from_ms: 11_500, to_ms: 12_000 + n * 1000 }];
    return ctx;
  };
  const bitsFor = (n: number): number => {
    const ctx = ctxOf(n);
    const v = canarySignal(ctx.troubled[0]!, ctx).signal.votes.find((x) => /proxied canaries took/.test(x.text));
    return v?.weight ?? 0;
  };
  assert.equal(bitsFor(2), 0);
  const three = bitsFor(3);
  const twenty = bitsFor(20);
  assert.ok(three > 0 && three < twenty, `3: ${three}, 20: ${twenty}`);
});

test('legs slowed alike by a factor under 2 are not weighed (SLOWED_FACTOR): jitter is not a fault', () => {
  const d = diagnose(alive({ canaries: [...timedLeg('direct', 20, 20), ...timedLeg('proxied', 20, 36)] }));
  assert.doesNotMatch(text(d), /proxied canaries took/);
  assert.notEqual(d.verdict, 'proxy', text(d));
});

test('MIN_LOG_SD 0.25: three identical canaries a leg, the proxied 3.15× the direct are weighed, 3.0× are not (the spread floor sets the interval)', () => {
  const bits = (ratio: number): number => {
    const base = timedLeg('direct', 20, 20)[0]!;
    const direct = [0, 1, 2].map((i): CanaryPoint => ({ ...base, run_ms: 12_000 + i * 1000, latency_ms: 20 }));
    const proxied = direct.map((c) => ({ ...c, leg: 'proxied' as const, path: 'proxy' as const, latency_ms: 20 * ratio }));
    const ctx = new Context({ path: 'proxy', hangs: [], canaries: [...direct, ...proxied], gauges: [] });
    ctx.troubled = [{ from_ms: 11_500, to_ms: 15_000 }];
    return canarySignal(ctx.troubled[0]!, ctx).signal.votes.find((v) => /proxied canaries took/.test(v.text))?.weight ?? 0;
  };
  assert.ok(bits(3.15) > 0);
  assert.equal(bits(3.0), 0);
});
