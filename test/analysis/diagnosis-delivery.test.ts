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
