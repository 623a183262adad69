// Answers made and never delivered (issue 33's fault matrix: the hop buffering whole answers past the
// first-token deadline was `unknown`): the engine's answer-token counter grew well past the canaries' share
// while the hung agents received nothing and canaries got through. Each constant on both sides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ScrapePoint } from '../../src/analysis/index.js';
import { Context, type Window } from '../../src/analysis/diagnosis/context.js';
import { deliverySignal } from '../../src/analysis/diagnosis/delivery-signal.js';
import type { Episode } from '../../src/analysis/diagnosis/episodes.js';
import type { Diagnosis, HangPhase } from '../../src/types/index.js';
import { activity, canaries, client, hang, scrapes, type Span } from './diagnosis-fixtures.js';

const RUN_MS = 12_000;
const W: Window = { from_ms: 2000, to_ms: 10_000 };
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** The engine's answer tokens: `perSecond` made each second over the run. */
function engine(perSecond: number, side: ScrapePoint['side'] = null, target = 'engine'): ScrapePoint[] {
  return scrapes(target, RUN_MS, 250, []).map((s) => ({ ...s, side, answered: Math.floor((s.run_ms / 1000) * perSecond) }));
}

/** `n` agent requests hung in W at `phase`; canaries every 500 ms on both legs (`failDirect` of the direct ones hung). */
function input(options: { hangs?: number; phase?: HangPhase; perSecond?: number; failDirect?: boolean; streaming?: Span[]; completions?: number[]; points?: ScrapePoint[] } = {}): DiagnosisInput {
  const n = options.hangs ?? 8;
  return {
    path: 'proxy',
    hangs: Array.from({ length: n }, (_, i) => hang(W.from_ms + i * 500, W.from_ms + i * 500 + 1000, options.phase ?? 'first_token')),
    canaries: [...canaries('direct', RUN_MS, 500, (ms) => (options.failDirect === true && ms > 3000 && ms < 4000 ? 'hang' : 'ok')), ...canaries('proxied', RUN_MS, 500, () => 'ok')],
    scrapes: options.points ?? engine(options.perSecond ?? 40),
    gauges: [],
    client: client(RUN_MS),
    activity: activity({ completions: options.completions ?? [], streaming: options.streaming ?? [], inFlight: [{ from: 0, to: RUN_MS }] }),
  };
}

function votesOf(i: DiagnosisInput): number {
  const ctx = new Context(i);
  const ep: Episode = { kind: 'hangs', from_ms: W.from_ms, to_ms: W.to_ms, hangs: [...i.hangs], errors: [] };
  return deliverySignal(ep, W, ctx).votes.length;
}

test('tokens made and none delivered, canaries fine on both legs: proxy, the answers held on the path', () => {
  const d = diagnose(input());
  assert.equal(d.verdict, 'proxy', text(d));
  assert.match(
    text(d),
    /the engine made \d+ answer tokens over the episode .*beyond the at most \d+ its \d+ canaries asked for, while the 8 hung agent requests received nothing .*answers were made and never delivered/,
  );
});

test('UNDELIVERED_MIN_HANGS: 3 hangs make the pattern, 2 do not', () => {
  assert.equal(votesOf(input({ hangs: 3 })), 1);
  assert.equal(votesOf(input({ hangs: 2 })), 0);
});

test('UNDELIVERED_EARLY_SHARE: hangs mid-stream (tokens arrived) are not answers undelivered', () => {
  assert.equal(votesOf(input({ phase: 'headers' })), 1);
  assert.equal(votesOf(input({ phase: 'mid_stream' })), 0);
});

test('a direct canary failing, an agent completing, or tokens streaming to the client clear the path of the charge', () => {
  assert.equal(votesOf(input({ failDirect: true })), 0);
  assert.equal(votesOf(input({ completions: [5000] })), 0);
  assert.equal(votesOf(input({ streaming: [{ from: 4000, to: 4200 }] })), 0);
  // NOTHING_STREAMED_SHARE: 1% of the window streaming is still nothing.
  assert.equal(votesOf(input({ streaming: [{ from: 4000, to: 4070 }] })), 1);
});

test('UNDELIVERED_MIN_TOKENS and UNDELIVERED_SHARE: tokens the canaries could have asked for are not undelivered answers', () => {
  // Canaries in W: both legs every 500 ms → about 34 of them, at most 68 tokens.
  const ctx = new Context(input());
  const asked = ctx.canariesIn(W).length * 2;
  // Made = perSecond × 8 s over W; at twice the canaries' share and 30 beyond it, a vote; at the canaries' share, none.
  assert.equal(votesOf(input({ perSecond: Math.ceil((2 * asked + 30) / 8) + 1 })), 1);
  assert.equal(votesOf(input({ perSecond: Math.floor(asked / 8) })), 0);
});

test("in PD, the prefill's counters (first tokens only) are not answers made", () => {
  const prefillOnly = [...engine(40, 'prefill', 'prefill'), ...engine(0, 'decode', 'decode')];
  assert.equal(votesOf(input({ points: prefillOnly })), 0);
  const decodeMakes = [...engine(0, 'prefill', 'prefill'), ...engine(40, 'decode', 'decode')];
  assert.equal(votesOf(input({ points: decodeMakes })), 1);
});

test('straight to the engine there is no path to hold answers', () => {
  const i = { ...input(), path: 'direct' as const };
  assert.equal(votesOf(i), 0);
});

// ── the client's lateness discounts what it explains (issue 41, class 3) ──────────────────────────────

/** The delivery vote over W with the client's loop 900 ms late in the 1 s windows that start at `lateAt`. */
function withLate(lateAt: readonly number[]): { weight: number; text: string } | null {
  const i = {
    ...input(),
    client: client(
      RUN_MS,
      lateAt.map((ms) => ({ from: ms, to: ms + 1000 })),
    ),
  };
  const ctx = new Context(i);
  const ep: Episode = { kind: 'hangs', from_ms: W.from_ms, to_ms: W.to_ms, hangs: [...i.hangs], errors: [] };
  const v = deliverySignal(ep, W, ctx).votes[0];
  return v === undefined ? null : { weight: v.weight, text: v.text };
}

test('one late client second beside the episode discounts the undelivered answers by the hangs it explains, it does not void them', () => {
  const none = withLate([]);
  assert.equal(none?.weight, 3);
  // The second late at 1-2 s touches the first hang (2-3 s) only: 1 of 8 explained, 3 × 7/8 bits.
  const one = withLate([1000]);
  assert.ok(one !== null, 'the vote is cast');
  assert.equal(one.weight, 3 * (7 / 8));
  assert.match(one.text, /the client's own delay explains 1 of 8 hangs: weighed 0\.88 of 3 bits/);
  // In the diagnosis too: weighed for the proxy, the lateness named against the client.
  const e = diagnose({ ...input(), client: client(RUN_MS, [{ from: 1000, to: 2000 }]) }).episodes?.[0];
  assert.ok(e !== undefined);
  assert.ok((e.scores.proxy ?? 0) > 1, JSON.stringify(e.scores));
  assert.match([...e.evidence_for, ...e.evidence_against].join('\n'), /answers were made and never delivered .*explains 1 of 8 hangs/);
});

test("a proxied canary that hung while the client's own loop was blocked measures the client: the charge stands on the others (real parts: a 1.2 s busy-wait hung the one canary then out)", () => {
  // The client late in the window 4-5 s; the proxied canary sent at 4 s hung through it.
  const late = client(RUN_MS, [{ from: 4000, to: 5000 }]);
  const proxied = canaries('proxied', RUN_MS, 500, (ms) => (ms === 4000 ? 'hang' : 'ok'));
  const i: DiagnosisInput = { ...input(), client: late, canaries: [...canaries('direct', RUN_MS, 500, () => 'ok'), ...proxied] };
  assert.equal(votesOf(i), 1);
  // On time, the same hung canary is a failure on the path, and the charge waits for the comparison.
  assert.equal(votesOf({ ...i, client: client(RUN_MS) }), 0);
});

test('answers held on the path: the canaries passing (its premise) no longer count against the proxy, counted once', () => {
  const e = diagnose(input()).episodes?.[0];
  assert.ok(e !== undefined);
  // Still against the engine (small requests passed it), no longer against the proxy.
  assert.match(e.evidence_against.join('\n'), /both legs answered every canary .*\(which does not clear the proxy: it held only the agents' answers\)/);
  // The undelivered answers' 3 bits and the answered scrapes' 1, the canaries passing taking nothing from them (2 before).
  assert.equal(e.scores.proxy, 4, JSON.stringify(e.scores));
});

test('a client late through every hang explains them all: nothing is left to weigh for the path', () => {
  assert.equal(withLate([1000, 2000, 3000, 4000, 5000, 6000, 7000]), null);
});

// ── each constant from both sides (issue 42) ─────────────────────────────────────────────────────────

/** Hangs in W: `early` of them waiting for a first token, the rest mid-stream. */
function mixed(n: number, early: number): DiagnosisInput {
  const i = input({ hangs: n });
  return { ...i, hangs: i.hangs.map((h, k) => ({ ...h, phase: k < early ? ('first_token' as const) : ('mid_stream' as const) })) };
}

test('UNDELIVERED_EARLY_SHARE 0.8: 8 of 10 hangs before a first token make the pattern, 10 of 13 (77%) do not', () => {
  assert.equal(votesOf(mixed(10, 8)), 1);
  assert.equal(votesOf(mixed(13, 10)), 0);
});

/** Canaries: `n` on each leg inside W, none around it. */
function fewCanaries(n: number): DiagnosisInput['canaries'] {
  const base = canaries('direct', RUN_MS, 500, () => 'ok')[0]!;
  return Array.from({ length: n }, (_, k) => [
    { ...base, run_ms: 3000 + k * 2000 },
    { ...base, run_ms: 3000 + k * 2000, leg: 'proxied' as const, path: 'proxy' as const },
  ]).flat();
}

/** The engine's answer counter: 0 until 3 s, then `made` for the rest of the run. */
function madeOnce(made: number): ScrapePoint[] {
  return scrapes('engine', RUN_MS, 250, []).map((s) => ({ ...s, answered: s.run_ms < 3000 ? 0 : made }));
}

test('UNDELIVERED_MIN_CANARIES 2: two answered canaries a leg clear the way for the charge, one does not', () => {
  assert.equal(votesOf({ ...input({ points: madeOnce(200) }), canaries: fewCanaries(2) }), 1);
  assert.equal(votesOf({ ...input({ points: madeOnce(200) }), canaries: fewCanaries(1) }), 0);
});

test('UNDELIVERED_MIN_TOKENS 30: 30 tokens beyond what the canaries asked for are answers made, 29 are not', () => {
  // 2 canaries a leg: 4 × 2 = 8 tokens asked.
  assert.equal(votesOf({ ...input({ points: madeOnce(38) }), canaries: fewCanaries(2) }), 1);
  assert.equal(votesOf({ ...input({ points: madeOnce(37) }), canaries: fewCanaries(2) }), 0);
});

test('UNDELIVERED_SHARE 0.5: tokens beyond the canaries half of all made count, a token less does not', () => {
  const asked = new Context(input()).canariesIn(W).length * 2;
  assert.equal(votesOf(input({ points: madeOnce(2 * asked) })), 1);
  assert.equal(votesOf(input({ points: madeOnce(2 * asked - 1) })), 0);
});

test('NOTHING_STREAMED_SHARE 0.02: tokens streaming 159 ms of the 8 s episode is nothing arriving, 160 ms (2%) is something', () => {
  assert.equal(votesOf(input({ streaming: [{ from: 4000, to: 4159 }] })), 1);
  assert.equal(votesOf(input({ streaming: [{ from: 4000, to: 4160 }] })), 0);
});
