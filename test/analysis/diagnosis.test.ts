import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type CanaryPoint, type HangSpan, type SaturatedWindow } from '../../src/analysis/index.js';
import type { GaugeVerdict } from '../../src/types/index.js';

const hang = (start_ms: number, end_ms = start_ms + 1000, path: HangSpan['path'] = 'hop', nth: number | null = 2): HangSpan => ({ start_ms, end_ms, phase: 'headers', path, nth });
const ok = (run_ms: number, leg: CanaryPoint['leg']): CanaryPoint => ({ run_ms, leg, path: leg === 'direct' ? 'direct' : 'hop', status: 'ok', error_class: null, hang_phase: null });
const hung = (run_ms: number, leg: CanaryPoint['leg']): CanaryPoint => ({ ...ok(run_ms, leg), status: 'hang', hang_phase: 'headers' });
const failed = (run_ms: number, leg: CanaryPoint['leg']): CanaryPoint => ({ ...ok(run_ms, leg), status: 'error', error_class: 'connection_reset' });
const gauge = (verdict: GaugeVerdict['verdict']): GaugeVerdict => ({
  target: 'engine',
  name: 'sglang:num_prefill_inflight_queue_reqs',
  labels: {},
  verdict,
  samples: 90,
  window_s: 90,
  longest_nonzero_s: 60,
  dips: 0,
  last_value: 1,
  needed_s: null,
  evidence: [],
});
const busy = (start_ms: number, end_ms: number): SaturatedWindow => ({ start_ms, end_ms, loop_delay_p99_ms: 180, loop_utilization: 0.97 });
const every = (fromMs: number, toMs: number, stepMs: number, make: (ms: number) => CanaryPoint): CanaryPoint[] => {
  const out: CanaryPoint[] = [];
  for (let ms = fromMs; ms <= toMs; ms += stepMs) out.push(make(ms));
  return out;
};

test('no hangs: verdict none, no evidence', () => {
  assert.deepEqual(diagnose({ hangs: [], canaries: every(0, 10_000, 1000, (ms) => hung(ms, 'proxied')), gauges: [gauge('pinned')], saturated: [busy(0, 1000)] }), { verdict: 'none', evidence: [] });
});

test('proxied requests hang while direct canaries succeed and proxied ones fail: proxy, with counts and times', () => {
  const d = diagnose({
    hangs: [hang(4000), hang(6000), hang(8000)],
    canaries: [...every(0, 12_000, 1000, (ms) => ok(ms, 'direct')), ...every(0, 12_000, 1000, (ms) => (ms >= 4000 ? hung(ms, 'proxied') : ok(ms, 'proxied')))],
    gauges: [gauge('rotating')],
    saturated: [],
  });
  assert.equal(d.verdict, 'proxy');
  const text = d.evidence.join('\n');
  assert.match(text, /3 requests hung between 4\.0 s and 9\.0 s/);
  assert.match(text, /by path: hop 3/);
  assert.match(text, /direct canaries .*: 13 of 13 ok/);
  assert.match(text, /proxied canaries .*: 4 of 13 ok, 9 hung at headers/);
  assert.match(text, /no engine gauge was pinned \(1 series judged: rotating 1\)/);
});

test('one direct canary failing among many does not clear the proxy: the direct path still counts as healthy', () => {
  const direct = every(0, 10_000, 1000, (ms) => (ms === 5000 ? failed(ms, 'direct') : ok(ms, 'direct')));
  const d = diagnose({ hangs: [hang(5000)], canaries: [...direct, hung(5000, 'proxied'), hung(6000, 'proxied')], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'proxy');
});

test('direct canaries fail too: engine', () => {
  const d = diagnose({ hangs: [hang(2000), hang(3000)], canaries: [...every(0, 6000, 1000, (ms) => hung(ms, 'direct')), ...every(0, 6000, 1000, (ms) => hung(ms, 'proxied'))], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'engine');
  assert.match(d.evidence.join('\n'), /7 of 7 direct canaries failed: requests that never touch the proxy fail too/);
});

test('a pinned engine gauge: engine, naming the gauge, even without canaries', () => {
  const d = diagnose({ hangs: [hang(2000)], canaries: [], gauges: [gauge('pinned'), gauge('idle')], saturated: [] });
  assert.equal(d.verdict, 'engine');
  assert.match(d.evidence.join('\n'), /sglang:num_prefill_inflight_queue_reqs on engine is pinned at 1 .*60\.0 s/);
});

test('a saturated client overlapping most hangs: client, before anything else', () => {
  const d = diagnose({
    hangs: [hang(1000, 1500), hang(1200, 1800), hang(9000, 9500)],
    canaries: every(0, 10_000, 1000, (ms) => hung(ms, 'direct')),
    gauges: [gauge('pinned')],
    saturated: [busy(800, 2000)],
  });
  assert.equal(d.verdict, 'client');
  assert.match(d.evidence.join('\n'), /2 of 3 hangs overlap the client's 1 saturated sample windows \(event-loop delay p99 up to 180 ms, utilisation up to 97%\)/);
});

test('saturated windows far from the hangs are noted but do not make the call', () => {
  const d = diagnose({ hangs: [hang(20_000)], canaries: [ok(20_000, 'direct'), hung(20_000, 'proxied')], gauges: [], saturated: [busy(0, 1000)] });
  assert.equal(d.verdict, 'proxy');
  assert.match(d.evidence.join('\n'), /saturated in 1 sample windows, overlapping only 0 of 1 hangs: not the explanation/);
});

test('no canaries and no pinned gauge: unknown, saying how to get the evidence', () => {
  const d = diagnose({ hangs: [hang(1000)], canaries: [], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'unknown');
  assert.match(d.evidence.join('\n'), /set target\.bypass/);
});

test('both canary paths healthy: unknown, pointing at what is special about the agents\' requests', () => {
  const d = diagnose({ hangs: [hang(3000), hang(4000, 5000, 'hop', 1)], canaries: [...every(0, 8000, 1000, (ms) => ok(ms, 'direct')), ...every(0, 8000, 1000, (ms) => ok(ms, 'proxied'))], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'unknown');
  assert.match(d.evidence.join('\n'), /both canary paths stayed healthy.*1 of 2 hangs came on reused ones/);
});

test('only canaries far from the hangs: the whole run\'s canaries are used, and the evidence says so', () => {
  const d = diagnose({ hangs: [hang(60_000)], canaries: [ok(1000, 'direct'), hung(1000, 'proxied')], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'proxy');
  assert.match(d.evidence.join('\n'), /over the whole run \(none ran near the hangs\)/);
});

test('half the direct canaries failing neither clears nor blames the engine: unknown', () => {
  const direct = [ok(1000, 'direct'), ok(2000, 'direct'), ok(3000, 'direct'), hung(4000, 'direct'), hung(5000, 'direct')];
  const d = diagnose({ hangs: [hang(3000)], canaries: [...direct, hung(3000, 'proxied')], gauges: [], saturated: [] });
  assert.equal(d.verdict, 'unknown');
});
