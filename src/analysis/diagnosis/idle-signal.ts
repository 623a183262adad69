// Keep-alive connections dropped while idle: the episode's failed requests went out on connections reused
// after a long idle gap (an agent's think time), while requests reused after as long a gap did not succeed
// and the rest did. A proxy's or load balancer's idle timeout shorter than the think time, closing
// connections silently (the request written into a dead socket waits for headers) or with a reset. An idle
// timeout acts on each connection at its own time; failures whose gaps all span one moment in which the
// engine was seen failing are that moment's (a restart's pause), not a timeout.
import type { Context, Window } from './context.js';
import type { Episode } from './episodes.js';
import { explainedByLateness } from './client-signal.js';
import { RESET_CLASSES, type HangSpan, type IdleReuse } from './inputs.js';
import { SETTLING_P, SIGNIFICANT_P } from './canary-signal.js';
import { fisherGreater } from './stats.js';
import { dur, pct, pValue, s1 } from './text.js';
import { MEDIUM, STRONG, vote, type Signal } from './votes.js';

/** Fewer failures than this say nothing of a pattern. */
const IDLE_MIN_FAILURES = 3;
/** Share of the episode's failures that must have gone out on connections reused after an idle gap. */
const IDLE_REUSED_SHARE = 0.8;
/** At most this share of the requests reused after as long an idle gap may have succeeded. */
const IDLE_OK_SHARE = 0.1;

/** Buckets 10% wide: a night of requests in a few hundred counters. */
const BUCKET_RATIO = Math.log(1.1);

/** IdleReuse counted as a run's records stream by. */
export class IdleTally implements IdleReuse {
  readonly #counts: number[] = [];
  /** The longest gap seen in each bucket. */
  readonly #longest: number[] = [];
  ok = 0;
  fresh = 0;

  /** An ok request: `nth` on its connection, after `idleMs` idle (null: first use). */
  add(nth: number | null, idleMs: number | null): void {
    if (nth === null) return;
    if (nth <= 1 || idleMs === null) {
      this.fresh += nth <= 1 ? 1 : 0;
      return;
    }
    const i = bucketOf(idleMs);
    while (this.#counts.length <= i) {
      this.#counts.push(0);
      this.#longest.push(0);
    }
    this.#counts[i] = this.#counts[i]! + 1;
    this.#longest[i] = Math.max(this.#longest[i]!, idleMs);
    this.ok += 1;
  }

  okAtLeast(ms: number): number {
    let n = 0;
    for (let i = bucketOf(ms); i < this.#counts.length; i += 1) n += this.#counts[i]!;
    return n;
  }

  longestBelow(ms: number): number | null {
    for (let i = Math.min(bucketOf(ms), this.#counts.length) - 1; i >= 0; i -= 1) if (this.#counts[i]! > 0) return this.#longest[i]!;
    return null;
  }
}

function bucketOf(ms: number): number {
  return Math.max(0, Math.floor(Math.log(1 + Math.max(0, ms)) / BUCKET_RATIO));
}

/** A failed request that went out on a reused connection and died as a dead socket does: a hang waiting for
 * headers, or a reset. Its connection sat idle from `sentMs - idleMs` to `sentMs`. */
interface DeadReuse {
  sentMs: number;
  idleMs: number;
}

/** The episode's failures, and those that died on a reused connection as a dead socket does, by idle gap; the
 * hangs the client's own lateness explains are neither (an answer may have waited unread in its socket, and the
 * late loop itself left the connection idle that long), only counted in `excused`. */
function deadReuses(ep: Episode, late: ReadonlySet<HangSpan>): { failures: number; dead: DeadReuse[]; excused: number } {
  const dead: DeadReuse[] = [];
  let failures = 0;
  let excused = 0;
  for (const h of ep.hangs) {
    if (late.has(h)) {
      excused += 1;
      continue;
    }
    failures += 1;
    if (h.phase === 'headers' && (h.nth ?? 0) >= 2 && h.idle_ms !== undefined && h.idle_ms !== null) dead.push({ sentMs: h.from_ms, idleMs: h.idle_ms });
  }
  for (const e of ep.errors) {
    failures += 1;
    if (RESET_CLASSES.has(e.class) && (e.nth ?? 0) >= 2 && e.idle_ms !== undefined && e.idle_ms !== null) dead.push({ sentMs: e.from_ms, idleMs: e.idle_ms });
  }
  return { failures, dead: dead.sort((a, b) => a.idleMs - b.idleMs), excused };
}

/**
 * The fewest moments such that every dead reuse's idle gap holds one of them (the earliest-ending gap's end,
 * then the next gap that starts after it, …). An idle timeout fails each connection when its own gap passes
 * the limit, so its failures recur across the run; one moment inside every gap is what a single pause of the
 * whole deployment leaves (every connection idle across it), and explains the failures as well as their gaps.
 */
function gapMoments(dead: readonly DeadReuse[]): number[] {
  const moments: number[] = [];
  for (const d of [...dead].sort((a, b) => a.sentMs - b.sentMs)) {
    const last = moments[moments.length - 1];
    if (last === undefined || d.sentMs - d.idleMs > last) moments.push(d.sentMs);
  }
  return moments;
}

/** The moment every dead reuse's idle gap holds, as the span they all share; null when they need more than one. */
function sharedSpan(dead: readonly DeadReuse[]): Window | null {
  const moments = gapMoments(dead);
  return moments.length === 1 ? { from_ms: Math.max(...dead.map((d) => d.sentMs - d.idleMs)), to_ms: moments[0]! } : null;
}

/**
 * What the probes that never cross the proxy saw of the engine failing over `w`: direct canaries that failed,
 * scrapes it did not answer, and the failed requests it answered with its own error. Empty when it was seen
 * answering throughout (or not watched).
 */
function engineSeenFailing(ep: Episode, ctx: Context, w: Window): string[] {
  const out: string[] = [];
  const canaries = ctx.canariesIn(w).filter((c) => c.leg === 'direct' && c.status !== 'ok' && !c.not_sent).length;
  if (canaries > 0) out.push(`${canaries} direct canar${canaries === 1 ? 'y' : 'ies'} failed`);
  const scrapes = ctx.targets.flatMap((t) => ctx.scrapesIn(t, w).filter((p) => !p.ok)).length;
  if (scrapes > 0) out.push(`${scrapes} scrape${scrapes === 1 ? '' : 's'} of its /metrics failed`);
  const own = ep.errors.filter((e) => e.answered_by === 'server_json').length;
  if (own > 0) out.push(`it answered ${own} request${own === 1 ? '' : 's'} with its own error`);
  return out;
}

export function idleSignal(ep: Episode, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  const reuse = ctx.idleReuse;
  const { failures, dead, excused } = deadReuses(ep, new Set(explainedByLateness(ep, ctx)));
  if (reuse === null || dead.length < IDLE_MIN_FAILURES || dead.length < IDLE_REUSED_SHARE * failures) {
    if (reuse !== null && excused > 0 && dead.length + excused >= IDLE_MIN_FAILURES) {
      signal.facts.push(
        `idle connections not judged: the client's own delay explains ${excused} of the ${ep.hangs.length} hangs, which leaves ${dead.length} failed reuse${dead.length === 1 ? '' : 's'} to read a timeout from`,
      );
    }
    return signal;
  }
  const idles = dead.map((d) => d.idleMs);
  // Nearly every failed reuse sat idle at least this long (the lowest tenth left out: a stray short one).
  const gap = idles[Math.floor(idles.length / 10)]!;
  const shown = `${idles.length} of ${failures} failed requests went out on connections reused after ≥ ${dur(gap)} idle`;
  const pause = onePause(ep, ctx, dead);
  if (pause !== null) {
    signal.facts.push(`${shown}, but ${pause}`);
    return signal;
  }
  const proxied = ctx.path !== null && ctx.path !== 'direct';
  const who = proxied ? 'the proxy (or a load balancer or NAT before it)' : 'the server (or a middlebox on the way)';
  const blamed = { for: proxied ? (['proxy'] as const) : (['engine'] as const), against: proxied ? (['engine', 'engine_overloaded'] as const) : (['engine_overloaded'] as const) };
  const okLong = reuse.okAtLeast(gap);
  if (okLong > IDLE_OK_SHARE * (okLong + idles.length)) {
    const closed = closedAfterAnswer(ep, reuse, dead, who);
    if (closed === null) {
      signal.facts.push(`${shown}, yet ${okLong} requests reused after as long a gap succeeded: idle connections were not what failed`);
    } else {
      signal.votes.push(vote(closed.weight, `${closed.text}; ${okLong} requests reused after ≥ ${dur(gap)} idle succeeded: not an idle timeout`, blamed.for, blamed.against));
    }
    return signal;
  }
  const shorter = reuse.ok - okLong;
  // Nothing succeeded on a new or briefly idle connection either: not a matter of idle connections.
  if (shorter + reuse.fresh === 0) return signal;
  const survived = reuse.longestBelow(gap);
  // No reused connection succeeded at any gap: nothing shows a timeout; the connection was closed after its
  // answer, however soon the next request came (keep-alive off, or a close after every streamed answer).
  const story =
    shorter > 0 && survived !== null
      ? `${who} dropped connections left idle that long — an idle timeout between ${dur(survived)} (the longest idle a reused connection survived) and ${dur(gap)}, shorter than the gaps the agents left between their requests`
      : `${who} closed each connection after its answer (keep-alive off, or a close after every streamed answer): no reused connection succeeded at any idle gap, so the next request on a reused connection failed whatever the gap, the shortest failed one idle only ${dur(idles[0]!)} — not an idle timeout`;
  const moments = gapMoments(dead);
  // One wave: an event at that moment (the proxy restarted or reloaded, dropping the connections it held)
  // fits as well as a timeout, which would fail connections again across the run.
  const shared = sharedSpan(dead);
  const once =
    shared === null
      ? ''
      : `; every one of those gaps spans one moment (${s1(shared.from_ms)}–${s1(shared.to_ms)}), so ${who} dropping every connection it held then (a restart or reload) fits as well: an idle timeout would fail connections again, at their own times`;
  signal.votes.push(
    vote(
      STRONG,
      `${idles.length} of ${failures} failed requests (${pct(idles.length / failures)}) went out on keep-alive connections reused after ≥ ${dur(gap)} idle${moments.length > 1 ? ` (their gaps at ${moments.length} different moments)` : ''}, and ${okLong === 0 ? 'none' : `only ${okLong}`} of the requests reused after as long a gap succeeded, while ${[shorter > 0 ? `${shorter} reused after a shorter gap` : '', reuse.fresh > 0 ? `${reuse.fresh} on new connections` : ''].filter((x) => x !== '').join(' and ')} did: ${story}${once}`,
      blamed.for,
      blamed.against,
    ),
  );
  return signal;
}

/**
 * Why the failed reuses' gaps are a pause, not a timeout: every gap spans one moment (see gapMoments) and the
 * engine was seen failing from then to the episode's end. Null when not.
 */
function onePause(ep: Episode, ctx: Context, dead: readonly DeadReuse[]): string | null {
  const shared = sharedSpan(dead);
  if (shared === null) return null;
  const seen = engineSeenFailing(ep, ctx, { from_ms: shared.from_ms, to_ms: Math.max(shared.to_ms, ep.to_ms) });
  if (seen.length === 0) return null;
  return `every one of those gaps spans one moment (${s1(shared.from_ms)}–${s1(shared.to_ms)}) and the engine was seen failing from then to the episode's end (${seen.join(', ')}): one pause of the whole deployment left every connection idle that long at once — an idle timeout would fail connections at their own times, across the run — so the gaps say nothing of the path`;
}

/**
 * Reuse itself failing, whatever the gap: the requests sent on reused connections failed far more often than
 * those that opened their connection (one-sided Fisher exact test, as the canary comparison: p < 0.01 settles,
 * p < 0.05 is a clear sign). The connection does not survive its answer: closed after it while the client was
 * left to reuse it. Null when reuse does not separate them.
 */
function closedAfterAnswer(ep: Episode, reuse: IdleReuse, dead: readonly DeadReuse[], who: string): { weight: number; text: string } | null {
  const freshFailed = [...ep.hangs, ...ep.errors].filter((f) => f.nth === 1).length;
  const reused = dead.length + reuse.ok;
  const fresh = freshFailed + reuse.fresh;
  const p = fisherGreater(dead.length, reused, freshFailed, fresh);
  if (p >= SIGNIFICANT_P) return null;
  const idles = dead.map((d) => d.idleMs);
  return {
    weight: p < SETTLING_P ? STRONG : MEDIUM,
    text: `${dead.length} of ${reused} requests sent on reused keep-alive connections failed as a dead socket does (idle from ${dur(idles[0]!)} to ${dur(idles[idles.length - 1]!)} before them), against ${freshFailed} of ${fresh} on new connections (${pValue(p)} that reuse fails more): ${who} closed connections after their answers (keep-alive off, or a close after every streamed answer) while the client was left to reuse them — the next request on a reused connection failed whatever the gap`,
  };
}
