// Answers made and never delivered: over an episode the engine's answer-token counters grew well past what
// the canaries asked for, while the agents, whose requests hung before a first token, received nothing and
// canaries on both legs got through. The answers were made and held or lost on the path: a proxy buffering
// whole answers past the first-token deadline, or dropping them. The client's own lateness discounts it by
// the share of the hangs it explains (docs/diagnosis.md, "The model"), never vetoes it.
import { CANARY_MAX_TOKENS } from '../../monitor/index.js';
import { explainedByLateness } from './client-signal.js';
import type { Context, Window } from './context.js';
import type { Episode } from './episodes.js';
import { vote, STRONG, type Signal } from './votes.js';

/** Fewer hung requests than this make no pattern. */
const UNDELIVERED_MIN_HANGS = 3;
/** Share of the hangs that waited for headers or a first token (nothing of the answer arrived). */
const UNDELIVERED_EARLY_SHARE = 0.8;
/** Canaries of each leg the window needs, all of them answered. */
const UNDELIVERED_MIN_CANARIES = 2;
/** Tokens beyond the canaries' that must have been made, and at least this share of all those made. */
const UNDELIVERED_MIN_TOKENS = 30;
const UNDELIVERED_SHARE = 0.5;
/** Streaming to the client in less than this share of the window is nothing arriving. */
const NOTHING_STREAMED_SHARE = 0.02;

export function deliverySignal(ep: Episode, w: Window, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  if (ctx.path === null || ctx.path === 'direct' || ctx.activity === null) return signal;
  // A late client reads nothing whatever the path did: the hangs its delay explains are its own, and the
  // rest are weighed, the vote discounted by the share explained.
  const late = new Set(explainedByLateness(ep, ctx));
  const hangs = ep.hangs.filter((h) => !late.has(h));
  const early = hangs.filter((h) => h.phase === 'headers' || h.phase === 'first_token').length;
  if (hangs.length < UNDELIVERED_MIN_HANGS || early < UNDELIVERED_EARLY_SHARE * hangs.length) return signal;
  if (ctx.activity.completionsIn(w.from_ms, w.to_ms) > 0 || ctx.activity.streamingShare(w.from_ms, w.to_ms) >= NOTHING_STREAMED_SHARE) return signal;
  const canaries = ctx.canariesIn(w);
  // A canary whose life met the client's own lateness measures the client (as the canary comparison reads it):
  // the legs are judged on the others, and every canary counts in what the engine was asked for.
  const onTime = canaries.filter((c) => !ctx.clientLate(c.run_ms, c.run_ms + Math.max(c.latency_ms, 1)));
  const legs = (['direct', 'proxied'] as const).map((leg) => onTime.filter((c) => c.leg === leg));
  if (legs.some((l) => l.length < UNDELIVERED_MIN_CANARIES || l.some((c) => c.status !== 'ok'))) return signal;
  const counted = ctx
    .answering(ctx.targets, (t) => t)
    .flatMap((t) => {
      const made = ctx.answeredIn(t, w);
      return made === null ? [] : [{ target: t, made }];
    });
  if (counted.length === 0) return signal;
  const made = counted.reduce((sum, c) => sum + c.made, 0);
  const asked = canaries.length * CANARY_MAX_TOKENS;
  const beyond = made - asked;
  if (beyond < UNDELIVERED_MIN_TOKENS || beyond < UNDELIVERED_SHARE * made) return signal;
  const share = 1 - late.size / ep.hangs.length;
  const discount = late.size === 0 ? '' : ` (the client's own delay explains ${late.size} of ${ep.hangs.length} hangs: weighed ${share.toFixed(2)} of ${STRONG} bits)`;
  signal.votes.push({
    ...vote(
      STRONG * share,
      `the engine made ${made} answer tokens over the episode (${counted.map((c) => `${c.target} ${c.made}`).join(', ')}), ${beyond} beyond the at most ${asked} its ${canaries.length} canaries asked for, while the ${hangs.length} hung agent requests received nothing (${early} before a first token) and canaries got through on both legs: answers were made and never delivered — held on the path (a proxy buffering whole answers past the first-token deadline) or lost there${discount}`,
      ['proxy'],
      ['engine', 'engine_overloaded'],
    ),
    heldOnPath: true,
  });
  return signal;
}
