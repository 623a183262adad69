// Every constant that decides a verdict, tested on both sides of its boundary through the inputs: canary
// legs (the Fisher test's p-values, the clean and failing rates, the fewest slots), path timeouts (count,
// share, tolerance, shortest cut, idle failure, the statuses), the engine signal (down, slow, flowing, still,
// streaming, TTFT rise, the held request's match), the share of hangs at connect, the vote weights, the least
// score that names a verdict and the confidence's softmax. Moving any of them fails a test here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findPathTimeout, type CanaryPoint, type DiagnosisInput, type ErrorSpan, type HangSpan, type ScrapePoint } from '../../src/analysis/index.js';
import { canarySignal } from '../../src/analysis/diagnosis/canary-signal.js';
import { Context, type Window } from '../../src/analysis/diagnosis/context.js';
import { engineSignal } from '../../src/analysis/diagnosis/engine-signal.js';
import type { Episode } from '../../src/analysis/diagnosis/episodes.js';
import { engineHealth } from '../../src/analysis/diagnosis/engine-health.js';
import { failureSignal } from '../../src/analysis/diagnosis/failure-signal.js';
import { pathTimeoutSignal } from '../../src/analysis/diagnosis/path-timeout.js';
import { score } from '../../src/analysis/diagnosis/judge.js';
import { CANDIDATES, vote, type Signal, type Vote } from '../../src/analysis/diagnosis/votes.js';
import type { GaugeVerdict } from '../../src/types/index.js';
import { activity, error, hang, pinnedGauge, scrapes } from './diagnosis-fixtures.js';

const W: Window = { from_ms: 0, to_ms: 10_000 };

function ctxOf(input: Partial<DiagnosisInput>, troubled: Window[] = [W]): Context {
  const ctx = new Context({ path: 'proxy', hangs: [], canaries: [], gauges: [], ...input });
  ctx.troubled = troubled;
  return ctx;
}

/** One canary leg of `slots` slots spread over W, the first `failed` of them hung. */
function leg(name: 'direct' | 'proxied', slots: number, failed: number): CanaryPoint[] {
  return Array.from({ length: slots }, (_, i) => ({
    run_ms: 100 + i * Math.floor(9000 / slots),
    leg: name,
    path: name === 'direct' ? ('direct' as const) : ('proxy' as const),
    status: i < failed ? ('hang' as const) : ('ok' as const),
    error_class: null,
    hang_phase: i < failed ? ('headers' as const) : null,
    latency_ms: 20,
    http_status: i < failed ? null : 200,
    answered_by: null,
    not_sent: false,
  }));
}

/** The canary signal over W for direct `d` of `dn` failed and proxied `p` of `pn`. */
function legs(dn: number, d: number, pn: number, p: number): Signal {
  return canarySignal(W, ctxOf({ canaries: [...leg('direct', dn, d), ...leg('proxied', pn, p)] })).signal;
}

const only = (s: Signal): Vote => {
  assert.equal(s.votes.length, 1, JSON.stringify(s));
  return s.votes[0]!;
};

test('canaries: 3 slots a leg are compared, 2 are too few (MIN_SLOTS)', () => {
  assert.match(only(legs(3, 0, 3, 0)).text, /both legs answered every canary/);
  const two = legs(2, 0, 2, 0);
  assert.equal(two.votes.length, 0);
  assert.match(two.facts.join('\n'), /too few canaries over the episode to compare the legs \(2 direct, 2 proxied; at least 3 each\)/);
});

test('canaries: proxied 4 of 15 against direct 0 of 15 (p = 0.0498) differ, 4 of 16 (p = 0.0506) only hint (SIGNIFICANT_P)', () => {
  const differ = only(legs(15, 0, 15, 4));
  assert.deepEqual([differ.weight, differ.for, differ.against], [2, ['proxy'], ['engine', 'engine_overloaded']]);
  const hint = only(legs(16, 0, 16, 4));
  assert.deepEqual([hint.weight, hint.for, hint.against], [1, ['proxy'], []]);
  assert.match(hint.text, /too few to be sure/);
  // The same test the other way: direct 4 of 15 against none proxied is the direct route; 4 of 16, no difference.
  assert.match(legs(15, 4, 15, 0).facts.join('\n'), /direct canaries failed more than proxied ones/);
  assert.match(legs(16, 4, 16, 0).facts.join('\n'), /the legs do not differ/);
});

test('canaries: p = 0.0098 settles it (strong), p = 0.0101 is a clear sign (SETTLING_P)', () => {
  assert.equal(only(legs(19, 0, 19, 6)).weight, 3);
  assert.equal(only(legs(20, 0, 20, 6)).weight, 2);
});

test('canaries: only the proxied leg failing at p = 0.295 is a hint, at p = 0.308 nothing (HINT_P)', () => {
  assert.match(only(legs(6, 0, 13, 3)).text, /only proxied canaries failed .*too few to be sure/);
  const none = legs(6, 0, 8, 2);
  assert.equal(none.votes.length, 0);
  assert.match(none.facts.join('\n'), /the legs do not differ .*too few failures to tell/);
});

test('canaries: a proxied leg far worse clears the engine when the direct one failed 10%, not 10.5% (DIRECT_CLEAN_RATE)', () => {
  assert.deepEqual(only(legs(20, 2, 20, 20)).against, ['engine', 'engine_overloaded']);
  const notClean = only(legs(19, 2, 19, 19));
  assert.deepEqual([notClean.for, notClean.against], [['proxy'], []]);
  assert.match(notClean.text, /failed too, but far less/);
});

test('canaries: both legs failing alike settle it for the engine at a 30% rate, only hint at 28.6% (FAILING_RATE)', () => {
  const settles = only(legs(15, 4, 15, 5));
  assert.deepEqual([settles.weight, settles.for, settles.against], [3, ['engine', 'engine_overloaded'], ['proxy']]);
  const hint = only(legs(14, 4, 14, 4));
  assert.deepEqual([hint.weight, hint.against], [1, []]);
  // Straight to the engine, the same rate decides whether the engine did not answer small requests.
  const direct = (d: number, n: number): Signal => canarySignal(W, ctxOf({ path: 'direct', canaries: [...leg('direct', n, d), ...leg('proxied', n, 0)] })).signal;
  assert.match(only(direct(6, 10)).text, /canaries straight to the engine failed in 6 of 20/);
  assert.equal(direct(5, 9).votes.length, 0, '5 of 18 is 27.8%');
});

// ── path timeouts ─────────────────────────────────────────────────────────────────────────────────────

/** A proxy's 502/504 page `ms` after the send. */
const cut = (i: number, ms: number, status = 504): ErrorSpan => error(i * 20_000, 'http_5xx', { to_ms: i * 20_000 + ms, http_status: status, answered_by: 'page', headers_ms: ms, last_byte_ms: ms });
const cuts = (ms: readonly number[], status = 504): ErrorSpan[] => ms.map((m, i) => cut(i, m, status));

test('path timeout: 3 failures at one duration are a cut, 2 are not (MIN_COUNT)', () => {
  assert.equal(findPathTimeout(cuts([2000, 2000, 2000]), 3, 'proxy')?.timeout.count, 3);
  assert.equal(findPathTimeout(cuts([2000, 2000]), 2, 'proxy'), null);
});

test('path timeout: 3 of 5 failures (60%) at one duration are a cut, 3 of 6 are not (MIN_SHARE)', () => {
  const three = cuts([2000, 2000, 2000]);
  assert.equal(findPathTimeout(three, 5, 'proxy')?.timeout.of, 5);
  assert.equal(findPathTimeout(three, 6, 'proxy'), null);
  assert.equal(findPathTimeout(cuts([2000, 2000, 2000, 2000]), 7, 'proxy'), null, '4 of 7 (57%)');
});

test('path timeout: near 2 s, cuts 150 ms apart are one, 160 ms apart are not (TOLERANCE_MS)', () => {
  assert.equal(findPathTimeout(cuts([2000, 2000, 2150]), 3, 'proxy')?.timeout.count, 3);
  assert.equal(findPathTimeout(cuts([2000, 2000, 2165]), 3, 'proxy'), null);
});

test('path timeout: near 10 s, cuts 4.9% apart are one, 5.6% apart are not (TOLERANCE_SHARE)', () => {
  assert.equal(findPathTimeout(cuts([10_000, 10_000, 10_490]), 3, 'proxy')?.timeout.count, 3);
  assert.equal(findPathTimeout(cuts([10_000, 10_000, 10_560]), 3, 'proxy'), null);
});

test('path timeout: cuts at 1.0 s are a timeout, at 0.95 s instant pages (MIN_CUT_MS)', () => {
  assert.equal(findPathTimeout(cuts([1000, 1000, 1000]), 3, 'proxy')?.timeout.seconds, 1);
  assert.equal(findPathTimeout(cuts([950, 950, 950]), 3, 'proxy'), null);
});

test('path timeout: 502 pages at one duration are a cut like 504s, 503 pages are not (CUT_STATUSES)', () => {
  assert.deepEqual(findPathTimeout(cuts([2000, 2000, 2000], 502), 3, 'proxy')?.timeout.statuses, { '502': 3 });
  assert.equal(findPathTimeout(cuts([2000, 2000, 2000], 503), 3, 'proxy'), null);
});

test('path timeout: a reused connection failing 1.0 s after the send was closed idle, 1.05 s after is a cut before the headers (IDLE_FAILURE_MS)', () => {
  const failing = (elapsed: number): ErrorSpan[] =>
    [0, 1, 2].map((i) => error(i * 20_000, 'keepalive_race', { to_ms: i * 20_000 + elapsed, nth: 3, idle_ms: 4000, headers_ms: null, last_byte_ms: null }));
  assert.equal(findPathTimeout(failing(1000), 3, 'proxy')?.timeout.kind, 'idle');
  assert.equal(findPathTimeout(failing(1050), 3, 'proxy')?.timeout.kind, 'headers');
});

// ── the engine signal ─────────────────────────────────────────────────────────────────────────────────

const ep = (hangs: HangSpan[] = [hang(1000, 9000)], w: Window = W): Episode => ({ kind: 'hangs', from_ms: w.from_ms, to_ms: w.to_ms, hangs, errors: [] });
const texts = (s: Signal): string => s.votes.map((v) => v.text).join('\n');

test('engine: /metrics silent for half the episode is the engine down, for 45% only a fact (DOWN_SHARE)', () => {
  const silentFor = (ms: number): Signal => engineSignal(ep(), W, ctxOf({ scrapes: scrapes('engine', 20_000, 250, [{ from: 0, to: ms }]) }, [W]));
  assert.match(texts(silentFor(5000)), /engine's \/metrics did not answer for 5\.0 s of the 10\.0 s episode/);
  const partly = silentFor(4500);
  assert.doesNotMatch(texts(partly), /did not answer/);
  assert.match(partly.facts.join('\n'), /did not answer for 4\.5 s of the 10\.0 s episode \(18 of \d+ scrapes failed\)/);
});

/** Scrapes every 250 ms over 20 s taking `outsideMs` outside W and `insideMs` within it. */
function timedScrapes(outsideMs: number, insideMs: number): ScrapePoint[] {
  return scrapes('engine', 20_000, 250, []).map((s) => ({ ...s, duration_ms: s.run_ms <= W.to_ms ? insideMs : outsideMs }));
}
const slow = (outsideMs: number, insideMs: number): boolean =>
  /answered \/metrics slowly/.test(texts(engineSignal(ep(), W, ctxOf({ scrapes: timedScrapes(outsideMs, insideMs) }, [{ from_ms: 0, to_ms: W.to_ms - 1 }]))));

test('engine: scrapes 5× their usual time are slow, 4.8× are not (SLOW_SCRAPE_FACTOR)', () => {
  assert.equal(slow(100, 500), true);
  assert.equal(slow(100, 480), false);
});

test('engine: scrapes 200 ms over their usual time are slow, 185 ms over are not (SLOW_SCRAPE_MS)', () => {
  assert.equal(slow(10, 210), true);
  assert.equal(slow(10, 195), false);
});

/** A flow counter moving inside the given 500 ms slices of a window of `spanMs` (40 slices at 20 s). */
function flowIn(slices: readonly number[], spanMs: number, streaming: [number, number][] = []): Signal {
  const w = { from_ms: 0, to_ms: spanMs };
  const moved = slices.flatMap((i) => [i * 500 + 100, i * 500 + 200]);
  const input: Partial<DiagnosisInput> = {
    scrapes: scrapes('engine', spanMs, 250, []),
    flows: [{ target: 'engine', counter: 'generation_tokens_total', moved }],
    activity: activity({ streaming: streaming.map(([from, to]) => ({ from, to })), inFlight: [{ from: 0, to: spanMs }] }),
  };
  return engineSignal(ep([hang(1000, spanMs - 1000)], w), w, ctxOf(input, [w]));
}
const range = (n: number, step = 2): number[] => Array.from({ length: n }, (_, i) => i * step);

test('engine: work in 20 of 40 slices is flowing, in 19 of 40 not (FLOWING_SHARE)', () => {
  assert.match(texts(flowIn(range(20), 20_000)), /work kept flowing through the episode \(in 20 of 40 slices/);
  const less = flowIn(range(19), 20_000);
  assert.doesNotMatch(texts(less), /work kept flowing/);
  assert.match(less.facts.join('\n'), /work flowed in 19 of 40 slices/);
});

test('engine: work in 8 of 40 slices is nothing flowing, in 8 of 38 (21%) not (STILL_SHARE)', () => {
  assert.match(texts(flowIn(range(8), 20_000)), /nothing flowed through most of the episode \(work in only 8 of 40 slices/);
  const more = flowIn(range(8), 19_000);
  assert.doesNotMatch(texts(more), /nothing flowed/);
  assert.match(more.facts.join('\n'), /work flowed in 8 of 38 slices/);
});

test('engine: tokens streaming 30% of a slice make it flow, 28% do not (STREAMING_SLICE_SHARE)', () => {
  const streamed = (ms: number): [number, number][] => range(20).map((i) => [i * 500 + 100, i * 500 + 100 + ms]);
  assert.match(texts(flowIn([], 20_000, streamed(150))), /work kept flowing .*in 20 of 40 slices/);
  assert.doesNotMatch(texts(flowIn([], 20_000, streamed(140))), /work kept flowing/);
});

/** TTFT `beforeMs` for requests sent before the episode (at 2-4 s), `nowMs` for those sent in it (at 10-12 s). */
function ttft(beforeMs: number, nowMs: number): boolean {
  const w = { from_ms: 10_000, to_ms: 20_000 };
  const a = activity({
    ttft: [
      [2000, beforeMs],
      [3000, beforeMs],
      [4000, beforeMs],
      [10_500, nowMs],
      [11_500, nowMs],
    ],
  });
  return /TTFT rising/.test(texts(engineSignal(ep([hang(12_000, 18_000)], w), w, ctxOf({ activity: a }, [w]))));
}

test('engine: TTFT twice its earlier mean is rising, 1.9× is not (TTFT_RISE_FACTOR)', () => {
  assert.equal(ttft(1000, 2000), true);
  assert.equal(ttft(1000, 1900), false);
});

test('engine: TTFT 300 ms over its earlier mean is rising, 280 ms over is not (TTFT_RISE_MS)', () => {
  assert.equal(ttft(100, 400), true);
  assert.equal(ttft(100, 380), false);
});

test('engine: a floor step matches a failed request sent 100 ms from it, not one 105 ms from it (SAME_REQUEST_MS)', () => {
  const gauge: GaugeVerdict = {
    ...pinnedGauge(5_000, 60_000),
    verdict: 'pinned_under_load',
    floor: { level: 1, from_ms: 5_000, to_ms: null, held_s: 55, returns: 3, above_samples: 10, requests: [{ start_ms: 4_800, end_ms: 4_850, status: 'hang', phase: 'first_token' }] },
  };
  const held = (sentMs: number): boolean => engineSignal(ep([hang(sentMs, 9_000)]), W, ctxOf({ gauges: [gauge] })).votes.some((v) => v.holds !== undefined);
  assert.equal(held(4_900), true);
  assert.equal(held(4_905), false);
});

// ── the failures' own evidence ───────────────────────────────────────────────────────────────────────

test('failures: 3 of 5 hangs at connect (60%) point at the network, 4 of 7 (57%) do not (CONNECT_SHARE)', () => {
  const hangs = (connect: number, n: number): Episode => ep(Array.from({ length: n }, (_, i) => hang(1000 + i * 100, 3000 + i * 100, i < connect ? 'connect' : 'headers')));
  assert.match(texts(failureSignal(hangs(3, 5), 'proxy', { seen: 'unseen' })), /3 of 5 hung requests never got a connection/);
  assert.equal(failureSignal(hangs(4, 7), 'proxy', { seen: 'unseen' }).votes.length, 0);
});

test("failures: a proxy's 502 page counts for the engine when it is seen failing, for the proxy when seen healthy (strong only when settled), for nobody when unseen", () => {
  const pages: Episode = { kind: 'errors', from_ms: 0, to_ms: 1000, hangs: [], errors: [0, 1, 2].map((i) => error(i * 100, 'http_5xx', { http_status: 502, answered_by: 'page' })) };
  const page = (health: Parameters<typeof failureSignal>[2]): Vote[] => failureSignal(pages, 'proxy', health).votes;
  assert.deepEqual(
    page({ seen: 'failing', by: 'x' }).map((v) => [v.weight, v.for, v.against]),
    [[3, ['engine'], ['proxy']]],
  );
  assert.deepEqual(
    page({ seen: 'healthy', settled: true, by: 'x' }).map((v) => [v.weight, v.for, v.against]),
    [[3, ['proxy'], []]],
  );
  assert.deepEqual(
    page({ seen: 'healthy', settled: false, by: 'x' }).map((v) => [v.weight, v.for]),
    [[1, ['proxy']]],
  );
  assert.deepEqual(page({ seen: 'unseen' }), []);
});

// ── weights, the least score, the prior ──────────────────────────────────────────────────────────────

const v = (weight: number, forV: Vote['for'], against: Vote['against'] = []): Vote => vote(weight, 'x', forV, against);

test('scoring: one strong vote alone (3 bits) names its verdict at 2³ / (2³ + 5) = 0.62 over the six verdicts; one medium alone names none', () => {
  assert.equal(CANDIDATES.length, 6);
  assert.deepEqual(score([v(3, ['proxy'])], CANDIDATES), { verdict: 'proxy', confidence: 0.62, scores: { proxy: 3 } });
  assert.equal(score([v(2, ['proxy'])], CANDIDATES).verdict, 'unknown');
  assert.deepEqual(score([v(2, ['proxy']), v(1, ['proxy'])], CANDIDATES), { verdict: 'proxy', confidence: 0.62, scores: { proxy: 3 } });
});

test('scoring: the confidence is the softmax of the summed bits over the verdicts considered (a rival keeps its share, fewer verdicts fewer shares)', () => {
  // proxy 3 bits, engine 1, four others 0: 8 / (8 + 2 + 4).
  assert.equal(score([v(3, ['proxy']), v(1, ['engine'])], CANDIDATES).confidence, 0.57);
  // A vote against the rival takes its share: 8 / (8 + 0.5 + 4).
  assert.equal(score([v(3, ['proxy']), v(1, [], ['engine'])], CANDIDATES).confidence, 0.64);
  // Four verdicts considered (a direct path to this machine): 8 / (8 + 3).
  const direct = CANDIDATES.filter((c) => c !== 'proxy' && c !== 'network');
  assert.equal(score([v(3, ['engine'])], direct).confidence, 0.73);
  // Two strong signs: 64 / 69.
  assert.equal(score([v(3, ['engine']), v(3, ['engine'])], CANDIDATES).confidence, 0.93);
});
test('scoring: a verdict with no sign of its own keeps at most its prior — the bits that clear the engine rank it, never raise its share', () => {
  // proxy 3 of its own + 2 by elimination, network 2 by elimination alone (capped at 0), engine −2:
  // 32 / (32 + 1 + 0.25 + 3) = 0.88 (uncapped, network's 4 would make it 0.82).
  const alive = vote(2, 'the engine was alive', ['proxy', 'network'], ['engine'], ['proxy', 'network']);
  const scored = score([v(3, ['proxy']), alive], CANDIDATES);
  assert.deepEqual(scored, { verdict: 'proxy', confidence: 0.88, scores: { proxy: 5, network: 0, engine: -2 } });
  // A sign of its own lifts the cap: network's connect failures make its bits count.
  const atConnect = score([v(3, ['proxy']), alive, v(1, ['network'])], CANDIDATES);
  assert.equal(atConnect.scores.network, 3);
  // Below 0 the score is its own: a verdict spoken against keeps what was said against it.
  assert.equal(score([v(3, ['proxy']), v(2, [], ['network'])], CANDIDATES).scores.network, -2);
});

test('scoring: a verdict needs a score of 2 (MIN_SCORE): 3 for and 1 against names it, 3 for and 2 against does not', () => {
  assert.equal(score([v(3, ['engine']), v(1, [], ['engine'])], CANDIDATES).verdict, 'engine');
  assert.equal(score([v(3, ['engine']), v(2, [], ['engine'])], CANDIDATES).verdict, 'unknown');
});

/** The vote weights, each as a signal casts it: a hint, a clear sign, a settling comparison, the client measuring itself. */
test('scoring: the weights keep their scale (WEAK 1, MEDIUM 2, STRONG 3, DECISIVE 4), read from the votes the signals cast', () => {
  const weights = {
    weak: only(legs(16, 0, 16, 4)).weight,
    medium: only(legs(15, 0, 15, 4)).weight,
    strong: only(legs(19, 0, 19, 6)).weight,
    decisive: engineSignal(
      ep([hang(4_800, 9_000)]),
      W,
      ctxOf({
        gauges: [
          {
            ...pinnedGauge(5_000, 60_000),
            verdict: 'pinned_under_load',
            floor: { level: 1, from_ms: 5_000, to_ms: null, held_s: 55, returns: 3, above_samples: 10, requests: [{ start_ms: 4_800, end_ms: 9_000, status: 'hang', phase: 'first_token' }] },
          },
        ],
      }),
    ).votes[0]?.weight,
  };
  assert.deepEqual(weights, { weak: 1, medium: 2, strong: 3, decisive: 4 });
  // A cut through a proxy is decisive, an idle cut strong.
  const errors: Episode = { kind: 'errors', from_ms: 0, to_ms: 60_000, hangs: [], errors: cuts([2000, 2000, 2000]) };
  assert.equal(pathTimeoutSignal(errors, 'proxy', null).signal.votes[0]?.weight, 4);
  const idle = [0, 1, 2].map((i) => error(i * 20_000, 'keepalive_race', { to_ms: i * 20_000 + 3, nth: 3, idle_ms: 4000, headers_ms: null, last_byte_ms: null }));
  assert.equal(pathTimeoutSignal({ ...errors, errors: idle }, 'proxy', null).signal.votes[0]?.weight, 3);
});

test('engine health: a clear sign (weight 2) for the engine makes it seen failing, a hint (weight 1) does not; a clear sign against it settles it healthy, a hint does not', () => {
  assert.equal(engineHealth([v(2, ['engine'], ['engine_overloaded'])]).seen, 'failing');
  assert.equal(engineHealth([v(1, ['engine_overloaded', 'engine'])]).seen, 'unseen');
  assert.deepEqual(engineHealth([v(2, [], ['engine'])]), { seen: 'healthy', settled: true, by: 'x' });
  assert.deepEqual(engineHealth([v(1, ['proxy'], ['engine'])]), { seen: 'healthy', settled: false, by: 'x' });
  // Seen failing wins over seen answering: a frozen scheduler can still answer /metrics.
  assert.equal(engineHealth([v(1, ['proxy'], ['engine']), v(3, ['engine'])]).seen, 'failing');
});
