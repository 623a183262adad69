// A PD hand-off queue holding the failed request while work flows (issue 33's fault matrix: a request left in
// the prefill's bootstrap queue, alone or under load, was `unknown`): held through the episode, seldom held
// outside the trouble. Both constants of the quiet baseline on each side of their boundary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ScrapePoint } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import { activity, canaries, client, flow, hang, inside, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 20_000;
const HELD = { from: 10_000, to: 11_000 };
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** Prefill scraped every 200 ms: its hand-off queue holds one request through HELD, and outside it holds
 * one in `busyOutside` scrapes (the first ones). */
function prefill(busyOutside: number): ScrapePoint[] {
  let outside = 0;
  return scrapes(
    'prefill',
    RUN_MS,
    200,
    [],
    () => 0,
    3,
    (ms) => {
      if (inside(ms, [HELD])) return 1;
      outside += 1;
      return outside <= busyOutside ? 1 : 0;
    },
  ).map((s) => ({ ...s, side: 'prefill' as const }));
}

/** One agent request hung for the second HELD, everything else fine: canaries, flow, other requests. */
function oneHeld(points: ScrapePoint[]): DiagnosisInput {
  return {
    path: 'proxy',
    hangs: [hang(HELD.from, HELD.to, 'first_token')],
    canaries: [...canaries('direct', RUN_MS, 250, () => 'ok'), ...canaries('proxied', RUN_MS, 250, () => 'ok')],
    scrapes: points,
    flows: [flow('prefill', RUN_MS, 200, [])],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, [])),
  };
}

test('a hand-off queue held through the hung request and seldom otherwise is engine, naming where it is held', () => {
  const d = diagnose(oneHeld(prefill(0)));
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(
    text(d),
    /the PD hand-off queues held a request through the episode \(prefill \(≥ 1 in \d+ of \d+ scrapes, up to 1\)\) where outside the trouble they seldom held one \(scrapes with one: prefill 0 of \d+\)/,
  );
  assert.deepEqual(d.held_in, ["prefill's hand-off queues (bootstrap, KV transfer)"]);
});

test('HANDOFF_QUIET_SHARE: held in 20% of the scrapes outside still counts as quiet, in more it is the load', () => {
  const outside = prefill(0).filter((s) => !inside(s.run_ms, [HELD])).length;
  const atShare = Math.floor(0.2 * outside);
  assert.match(text(diagnose(oneHeld(prefill(atShare)))), /seldom held one \(scrapes with one: prefill \d+ of/);
  assert.doesNotMatch(text(diagnose(oneHeld(prefill(atShare + 1)))), /seldom held one/);
});

test('HANDOFF_QUIET_SCRAPES: 5 answered scrapes outside make a baseline, 4 do not', () => {
  const within = prefill(0).filter((s) => inside(s.run_ms, [HELD]));
  // Clear of the episode's window (its canary window reaches past the hang's end).
  const outside = prefill(0).filter((s) => s.run_ms >= HELD.to + 400);
  assert.match(text(diagnose(oneHeld([...within, ...outside.slice(0, 5)]))), /seldom held one/);
  assert.doesNotMatch(text(diagnose(oneHeld([...within, ...outside.slice(0, 4)]))), /seldom held one/);
});
