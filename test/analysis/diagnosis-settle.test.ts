// An episode left unknown says why — the evidence split between two verdicts, or too little for any — and the
// one measurement that would settle it, chosen by the two verdicts it must tell apart and what the run lacked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput } from '../../src/analysis/index.js';
import { Context } from '../../src/analysis/diagnosis/context.js';
import { settleUnknown } from '../../src/analysis/diagnosis/settle.js';
import type { CanaryComparison } from '../../src/types/index.js';
import { aliveEngine, canaries, hang, scrapes } from './diagnosis-fixtures.js';

const RUN_MS = 60_000;
const bare = (extra: Partial<DiagnosisInput> = {}): Context => new Context({ hangs: [hang(20_000, 21_000)], canaries: [], gauges: [], ...extra });
const leg = (slots: number) => ({ slots, failed: 0, not_sent: 0, failed_rate_low: 0, failed_rate_high: 0.5 });
const comparison = (direct: number, proxied: number): CanaryComparison => ({
  from_ms: 0,
  to_ms: 4000,
  direct: leg(direct),
  proxied: leg(proxied),
  p_proxied_worse: 1,
  p_direct_worse: 1,
  excluded_client_late: 0,
});

test('proxy against engine with no canaries: canaries on both legs, often enough for the episode', () => {
  const said = settleUnknown({ proxy: 2, engine: 2 }, null, bare(), 4000);
  assert.match(said, /^unknown: split between proxy \(2 bits\) and engine \(2 bits\)/);
  assert.match(said, /target\.bypass.*monitor\.canary_interval_s 1 or less/);
});

test('proxy against engine with canaries too sparse: a shorter interval, naming how many the thinner leg held', () => {
  const ctx = bare({ canaries: canaries('direct', RUN_MS, 5000, () => 'ok') });
  const said = settleUnknown({ engine_overloaded: 3, proxy: 2 }, comparison(1, 1), ctx, 3000);
  assert.match(said, /canaries more often \(monitor\.canary_interval_s 0\.7 or less: the episode held 1 on its thinner leg, 4 are needed/);
  // With canaries enough on both legs, the engine's own account: scraped, a probe of its logs; not, its /metrics.
  const enough = settleUnknown({ engine_overloaded: 3, proxy: 2 }, comparison(8, 8), ctx, 3000);
  assert.match(enough, /the engine scraped \(monitor\.targets\)/);
  const scraped = bare({ canaries: canaries('direct', RUN_MS, 250, () => 'ok'), scrapes: scrapes('decode', RUN_MS, 200, []) });
  assert.match(settleUnknown({ engine_overloaded: 3, proxy: 2 }, comparison(8, 8), scraped, 3000), /monitor\.probes/);
});

test('engine stopped against engine slow: whether work flowed (scrapes), then its logs', () => {
  assert.match(settleUnknown({ engine: 2, engine_overloaded: 2 }, null, bare(), 4000), /the engine scraped \(monitor\.targets\): whether work kept flowing/);
  const scraped = bare({ scrapes: scrapes('decode', RUN_MS, 200, []) });
  assert.match(settleUnknown({ engine: 2, engine_overloaded: 2 }, null, scraped, 4000), /monitor\.probes/);
});

test("the client against anything: the same run with the client's delay taken away", () => {
  assert.match(settleUnknown({ client: 2, proxy: 2 }, comparison(8, 8), bare(), 4000), /fewer agents per process/);
});

test('one verdict short of a call: its bits, and what tells it from the next best', () => {
  const said = settleUnknown({ proxy: 1, engine: -2 }, null, bare(), 4000);
  assert.match(said, /^unknown: proxy 1 bit, short of a verdict; what would settle it: canaries on both legs/);
});

test('nothing spoke for any verdict: what the run lacked', () => {
  assert.match(settleUnknown({ engine: -3, network: 0 }, null, bare(), 4000), /^unknown: nothing spoke for any verdict in its own right; what would settle it: canaries on both legs/);
  const measured = bare({ canaries: canaries('direct', RUN_MS, 100, () => 'ok'), scrapes: scrapes('decode', RUN_MS, 200, []) });
  assert.match(settleUnknown({ engine: -3, network: 0 }, comparison(20, 20), measured, 4000), /a longer run: more failures of the same kind/);
});

test('diagnose: an unknown episode carries the sentence right after what happened, and the run says it second', () => {
  // One stream stalled mid-way behind a proxy while the engine flows and both canary legs pass: nothing places it.
  const input = aliveEngine(RUN_MS, { hangs: [hang(20_000, 21_000, 'mid_stream')] });
  const d = diagnose(input);
  assert.equal(d.verdict, 'unknown');
  assert.match(
    d.episodes![0]!.facts[1]!,
    /^unknown: engine_overloaded 2 bits, short of a verdict; what would settle it: canaries more often \(monitor.canary_interval_s 0.2 or less: the episode held 2 on its thinner leg/,
  );
  assert.match(d.evidence[1]!, /^unknown: /);
  // A called episode carries no such sentence.
  const called = diagnose({ ...input, hangs: [hang(20_000, 21_500, 'connect'), hang(20_500, 22_000, 'connect')] });
  assert.equal(called.verdict, 'network');
  assert.ok(called.episodes!.every((e) => e.facts.every((f) => !f.startsWith('unknown:'))));
});
