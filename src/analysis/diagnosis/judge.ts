// The diagnosis: failures grouped into episodes, each weighed on every signal (canary comparison, the
// engine's scrapes, flow and gauges, the failures' own phase and error bodies, the client's own delay), the
// verdict with the best score (evidence for minus against) unless too little speaks for it, and the run's
// overall call from its episodes. Pure: points in, a Diagnosis out.
import type { Diagnosis, DiagnosisEpisode, DiagnosisVerdict, PathTimeout } from '../../types/index.js';
import { canarySignal } from './canary-signal.js';
import { clientSignal } from './client-signal.js';
import { Context, type DiagnosisInput, type Window } from './context.js';
import { CUT_CLASSES, type ErrorSpan } from './inputs.js';
import { deliverySignal } from './delivery-signal.js';
import { engineHealth } from './engine-health.js';
import { engineLogSignal } from './engine-log.js';
import { engineSignal } from './engine-signal.js';
import { episodeFacts, episodeSize, episodesOf, keptText, type Episode } from './episodes.js';
import { failureSignal } from './failure-signal.js';
import { heldSignal } from './held-signal.js';
import { idleSignal } from './idle-signal.js';
import { findPathTimeout, pathTimeoutSignal, type FoundTimeout } from './path-timeout.js';
import { requestSignal } from './request-signal.js';
import { settleUnknown } from './settle.js';
import { plural, s1 } from './text.js';
import { CANDIDATES, MEDIUM, STRONG, weighAlive, weighCut, type Candidate, type Vote } from './votes.js';

/** Failures closer than this (or two canary intervals) join one episode. */
export const MERGE_GAP_MS = 3000;
/** Episodes listed in full; the smallest beyond these are counted. */
export const MAX_EPISODES = 20;
/** A verdict needs at least this score, in bits (one clear sign, or two hints: the evidence 4 times likelier
 * for it than against), else `unknown`. */
const MIN_SCORE = MEDIUM;

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** An episode's evidence is read over its own span (at least MIN_SPAN_MS), so the time around it does not
 * dilute what happened in it; canaries, which are few, over the span widened by part of a canary interval.
 * A short span is widened backwards: errors stop when the trouble ends, and what led to them came before.
 * Unless every failure is a connection closed at once under its request — within CUT_AT_ONCE_MS of its
 * last byte, or of its send when none came: that marks the moment the trouble struck (an engine killed under
 * HAProxy, a hop cutting), before which all was well, so such a span is widened forwards, into what the cut
 * left behind: an engine gone, or one still answering. */
const MIN_SPAN_MS = 1000;
/** A connection closed this soon after its request's last sign of life (its last byte, else its send) was
 * cut while all went on; a path's timeout cuts after a silence of its seconds. */
const CUT_AT_ONCE_MS = 500;

function cutAtOnce(e: ErrorSpan): boolean {
  // Records written before last_byte_ms (undefined) do not say when the last sign of life was.
  if (!CUT_CLASSES.has(e.class) || e.last_byte_ms === undefined) return false;
  return e.to_ms - (e.from_ms + (e.last_byte_ms ?? 0)) <= CUT_AT_ONCE_MS;
}

export function spanOf(ep: Episode): Window {
  const short = Math.max(0, MIN_SPAN_MS - (ep.to_ms - ep.from_ms));
  const struck = ep.kind === 'errors' && ep.errors.length > 0 && ep.errors.every(cutAtOnce);
  return struck ? { from_ms: ep.from_ms, to_ms: ep.to_ms + short } : { from_ms: Math.max(0, ep.from_ms - short), to_ms: ep.to_ms };
}

function canaryWindowOf(ep: Episode, span: Window, ctx: Context): Window {
  const interval = ctx.canaryIntervalMs ?? 1000;
  const pad = ep.kind === 'errors' ? Math.min(interval, 2000) : Math.min(interval / 2, 1000);
  return { from_ms: Math.max(0, span.from_ms - pad), to_ms: span.to_ms + pad };
}

interface Scored {
  verdict: Candidate | 'unknown';
  confidence: number;
  scores: Partial<Record<Candidate, number>>;
}

/** The best-scoring verdict among `allowed`, its confidence, and every score. */
export function score(votes: readonly Vote[], allowed: readonly Candidate[]): Scored {
  const forW = new Map<Candidate, number>();
  const againstW = new Map<Candidate, number>();
  for (const v of votes) {
    for (const c of v.for) forW.set(c, (forW.get(c) ?? 0) + v.weight);
    for (const c of v.against) againstW.set(c, (againstW.get(c) ?? 0) + v.weight);
  }
  // A verdict stands only on a vote that speaks for it in its own right, not merely against the others.
  const own = (c: Candidate): boolean => votes.some((v) => v.for.includes(c) && !v.byElimination.includes(c));
  // Without a sign of its own a verdict keeps at most its prior (0 bits): what clears the engine ("it was
  // alive") ranks the verdicts that would explain the failures, but a fault that shows no sign of its own where
  // it would (a network fault, no connection failing) is no likelier for it.
  const scores: Partial<Record<Candidate, number>> = {};
  for (const c of allowed) {
    if (!forW.has(c) && !againstW.has(c)) continue;
    const bits = round2((forW.get(c) ?? 0) - (againstW.get(c) ?? 0));
    scores[c] = own(c) ? bits : Math.min(0, bits);
  }
  const ranked = allowed.filter((c) => forW.has(c) && own(c)).sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0));
  const best = ranked[0];
  if (best === undefined) return { verdict: 'unknown', confidence: 0, scores };
  const top = scores[best] ?? 0;
  const second = ranked[1] === undefined ? -Infinity : (scores[ranked[1]] ?? 0);
  // One hint is not a verdict: two signs, or one that settles it.
  const support = votes.filter((v) => v.for.includes(best));
  const enough = support.length >= 2 || support.some((v) => v.weight >= STRONG);
  if (top < MIN_SCORE || top === second || !enough) return { verdict: 'unknown', confidence: 0, scores };
  // The posterior of a uniform prior over the verdicts considered: each one's summed log-likelihood ratio
  // (bits), softmaxed. One sign alone never makes certainty: the rivals it says nothing about keep their share.
  // The scores are the summed bits, so the confidence can be checked by hand from them.
  const mass = allowed.reduce((sum, c) => sum + 2 ** ((scores[c] ?? 0) - top), 0);
  const confidence = 1 / mass;
  return { verdict: best, confidence: round2(Math.max(0, Math.min(1, confidence))), scores };
}

function judge(ep: Episode, ctx: Context, runCut: FoundTimeout | null): DiagnosisEpisode {
  const w = spanOf(ep);
  const { signal: canaries, comparison } = canarySignal(canaryWindowOf(ep, w, ctx), ctx);
  const engine = engineSignal(ep, w, ctx);
  const held = engine.votes.some((v) => v.holds !== undefined);
  const cut = pathTimeoutSignal(ep, ctx.path, runCut);
  const log = engineLogSignal(ep, ctx, held);
  // A proxy's own error page is read against what the canaries, scrapes and log saw of the engine.
  const health = engineHealth([canaries, engine, log].flatMap((s) => s.votes));
  const signals = [failureSignal(ep, ctx.path, health), idleSignal(ep, ctx), deliverySignal(ep, w, ctx), requestSignal(ep, ctx), cut.signal, clientSignal(ep, ctx), canaries, engine, log];
  // Whether the engine holds the hung requests at all: the client's own requests in flight against its gauges.
  signals.push(heldSignal(ep, w, ctx));
  const weighed = weighCut(weighAlive(signals.flatMap((s) => s.votes)));
  // The engine's slowness behind a path that cut the requests: stated with the facts, not weighed.
  const contributing = weighed.filter((v) => v.contributing === true).map((v) => `contributing, not weighed (the path's timeout made the failures): ${v.text}`);
  const votes = weighed.filter((v) => v.contributing !== true);
  // No proxy on the agents' path: nothing to blame there; straight to this machine: no network either.
  const allowed = CANDIDATES.filter((c) => (c !== 'proxy' || ctx.path !== 'direct') && (c !== 'network' || ctx.path !== 'direct' || ctx.loopback !== true));
  const scored = score(votes, allowed);
  const evidenceFor: string[] = [];
  const evidenceAgainst: string[] = [];
  for (const v of votes) {
    if (scored.verdict !== 'unknown' && v.for.includes(scored.verdict)) evidenceFor.push(v.text);
    else evidenceAgainst.push(v.for.length === 0 ? v.text : `${v.text} [points to ${v.for.join(' or ')}]`);
  }
  // The engine's fault behind a path that cut the requests: what the agents saw was the path's clock.
  if (scored.verdict === 'engine' && cut.timeout?.by === 'path' && cut.timeout.kind !== 'idle') {
    evidenceFor.push(`what the agents saw was the path's timeout firing at ${cut.timeout.seconds.toFixed(1)} s on an engine that did not answer: the cut is the symptom, the engine the fault`);
  }
  const requests = episodeSize(ep);
  const facts = [...episodeFacts(ep), ...contributing, ...signals.flatMap((s) => s.facts)];
  // Unknown: why, and the one measurement that would settle it, right after what happened.
  if (scored.verdict === 'unknown') facts.splice(1, 0, settleUnknown(scored.scores, comparison, ctx, w.to_ms - w.from_ms));
  return {
    kind: ep.kind,
    start_ms: Math.round(ep.from_ms),
    end_ms: Math.round(ep.to_ms),
    requests,
    verdict: scored.verdict,
    confidence: scored.confidence,
    evidence_for: evidenceFor,
    evidence_against: evidenceAgainst,
    facts,
    scores: scored.scores,
    canaries: comparison,
    ...heldIn(scored.verdict, votes),
    ...(cut.timeout === null ? {} : { path_timeout: cut.timeout }),
  };
}

/** Where the engine holds the episode's failed requests, when the call is the engine's and a gauge says where. */
function heldIn(verdict: Candidate | 'unknown', votes: readonly Vote[]): { held_in?: string[] } {
  const where = [...new Set(votes.flatMap((v) => (v.holds === undefined ? [] : [v.holds])))];
  return verdict === 'engine' && where.length > 0 ? { held_in: where } : {};
}

/** The cut of the episode with the most failures in one, when the run's failures as a whole made none. */
function largestCut(episodes: readonly DiagnosisEpisode[]): PathTimeout | null {
  const cuts = episodes.flatMap((e) => (e.path_timeout === undefined ? [] : [e.path_timeout]));
  return cuts.sort((a, b) => b.count - a.count)[0] ?? null;
}

/** `hangs 4.1–9.0 s: engine (confidence 0.82, 8 requests)`. */
function episodeLine(e: DiagnosisEpisode): string {
  return `${e.kind} ${(e.start_ms / 1000).toFixed(1)}–${s1(e.end_ms)}: ${e.verdict}${e.verdict === 'unknown' ? '' : ` (confidence ${e.confidence.toFixed(2)})`}, ${plural(e.requests, 'request')}`;
}

/**
 * The run's call: the verdict holding the most trouble — episode time (a second at least each) weighed by
 * confidence — not the most requests: behind a proxy answering errors at once, a second of 503s holds more
 * requests than the freeze that caused them. Unknown when no episode has a verdict.
 */
function overall(episodes: readonly DiagnosisEpisode[]): { verdict: DiagnosisVerdict; confidence: number } {
  const weight = new Map<Candidate, number>();
  let total = 0;
  for (const e of episodes) {
    const spanMs = Math.max(MIN_SPAN_MS, e.end_ms - e.start_ms);
    total += spanMs;
    if (e.verdict !== 'unknown') weight.set(e.verdict, (weight.get(e.verdict) ?? 0) + spanMs * e.confidence);
  }
  const best = [...weight.entries()].sort((a, b) => b[1] - a[1])[0];
  if (best === undefined || total === 0) return { verdict: 'unknown', confidence: 0 };
  return { verdict: best[0], confidence: round2(best[1] / total) };
}

/** The verdict on a run's hangs and errors (verdict `none` when nothing failed). */
export function diagnose(input: DiagnosisInput): Diagnosis {
  const errors = input.errors ?? [];
  const b = input.buffering;
  const buffering = b === null || b === undefined || (b.judged === 0 && (b.excluded_client_late ?? 0) === 0) ? {} : { buffering: b };
  if (input.hangs.length === 0 && errors.length === 0) return { verdict: 'none', confidence: null, evidence: [], episodes: [], ...buffering };
  const ctx = new Context(input);
  const gap = Math.max(MERGE_GAP_MS, 2 * (ctx.canaryIntervalMs ?? 0));
  const raw = episodesOf(input.hangs, errors, gap, input.kept?.tallies);
  ctx.troubled = raw.map((ep) => canaryWindowOf(ep, spanOf(ep), ctx));
  // The largest episodes are judged in full; a night of scattered errors is counted, not listed.
  const kept = [...raw].sort((a, b) => episodeSize(b) - episodeSize(a)).slice(0, MAX_EPISODES);
  const keptSet = new Set(kept);
  // The run's failures cut at one duration, whichever episodes they fell in.
  const runCut = findPathTimeout(errors, errors.length, ctx.path);
  const episodes = raw.filter((ep) => keptSet.has(ep)).map((ep) => judge(ep, ctx, runCut));
  const dropped = raw.length - episodes.length;
  const call = overall(episodes);
  const evidence: string[] = [];
  const sampled = keptText(input.hangs.length + errors.length, input.kept);
  if (sampled !== null) evidence.push(sampled);
  if (episodes.length > 1 || dropped > 0)
    evidence.push(`${episodes.length + dropped} episodes${dropped > 0 ? ` (the ${episodes.length} largest judged)` : ''}: ${episodes.map(episodeLine).join('; ')}`);
  // The main episode's story: the longest one with the run's verdict.
  const main = [...episodes].filter((e) => e.verdict === call.verdict || call.verdict === 'unknown').sort((a, b) => b.end_ms - b.start_ms - (a.end_ms - a.start_ms))[0];
  if (main !== undefined) {
    const lead = main.verdict === 'unknown' ? 2 : 1;
    evidence.push(...main.facts.slice(0, lead), ...main.evidence_for, ...main.evidence_against.map((x) => `against: ${x}`), ...main.facts.slice(lead));
  }
  const held = [...new Set(episodes.filter((e) => e.verdict === call.verdict).flatMap((e) => e.held_in ?? []))];
  const pathTimeout = runCut?.timeout ?? largestCut(episodes);
  return {
    verdict: call.verdict,
    confidence: call.confidence,
    evidence,
    episodes,
    ...(held.length > 0 ? { held_in: held } : {}),
    ...(pathTimeout === null ? {} : { path_timeout: pathTimeout }),
    ...(dropped > 0 ? { episodes_omitted: dropped } : {}),
    ...buffering,
  };
}
