// Keep-alive connections dropped while idle: the episode's failed requests went out on connections reused
// after a long idle gap (an agent's think time), while requests reused after as long a gap did not succeed
// and the rest did. A proxy's or load balancer's idle timeout shorter than the think time, closing
// connections silently (the request written into a dead socket waits for headers) or with a reset.
import type { Context } from './context.js';
import type { Episode } from './episodes.js';
import { RESET_CLASSES, type IdleReuse } from './inputs.js';
import { dur, pct } from './text.js';
import { STRONG, vote, type Signal } from './votes.js';

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
    while (this.#counts.length <= i) this.#counts.push(0);
    this.#counts[i] = this.#counts[i]! + 1;
    this.ok += 1;
  }

  okAtLeast(ms: number): number {
    let n = 0;
    for (let i = bucketOf(ms); i < this.#counts.length; i += 1) n += this.#counts[i]!;
    return n;
  }
}

function bucketOf(ms: number): number {
  return Math.max(0, Math.floor(Math.log(1 + Math.max(0, ms)) / BUCKET_RATIO));
}

/** The episode's failures, and the idle gap (ms) of each that went out on a reused connection and died as a
 * dead socket does: a hang waiting for headers, or a reset. */
function deadReuses(ep: Episode): { failures: number; idles: number[] } {
  const idles: number[] = [];
  let failures = 0;
  for (const h of ep.hangs) {
    failures += 1;
    if (h.phase === 'headers' && (h.nth ?? 0) >= 2 && h.idle_ms !== undefined && h.idle_ms !== null) idles.push(h.idle_ms);
  }
  for (const e of ep.errors) {
    failures += 1;
    if (RESET_CLASSES.has(e.class) && (e.nth ?? 0) >= 2 && e.idle_ms !== undefined && e.idle_ms !== null) idles.push(e.idle_ms);
  }
  return { failures, idles: idles.sort((a, b) => a - b) };
}

export function idleSignal(ep: Episode, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  const reuse = ctx.idleReuse;
  const { failures, idles } = deadReuses(ep);
  if (reuse === null || idles.length < IDLE_MIN_FAILURES || idles.length < IDLE_REUSED_SHARE * failures) return signal;
  // Nearly every failed reuse sat idle at least this long (the lowest tenth left out: a stray short one).
  const gap = idles[Math.floor(idles.length / 10)]!;
  const okLong = reuse.okAtLeast(gap);
  if (okLong > IDLE_OK_SHARE * (okLong + idles.length)) {
    signal.facts.push(
      `${idles.length} of ${failures} failed requests went out on connections reused after ≥ ${dur(gap)} idle, yet ${okLong} requests reused after as long a gap succeeded: idle connections were not what failed`,
    );
    return signal;
  }
  const shorter = reuse.ok - okLong;
  // Nothing succeeded on a new or briefly idle connection either: not a matter of idle connections.
  if (shorter + reuse.fresh === 0) return signal;
  const proxied = ctx.path !== null && ctx.path !== 'direct';
  const who = proxied ? 'the proxy (or a load balancer or NAT before it)' : 'the server (or a middlebox on the way)';
  // No reused connection succeeded at any gap: nothing shows a timeout; the connection was closed after its
  // answer, however soon the next request came (keep-alive off, or a close after every streamed answer).
  const story =
    shorter > 0
      ? `${who} dropped connections left idle that long — an idle timeout shorter than the agents' think time`
      : `${who} closed each connection after its answer (keep-alive off, or a close after every streamed answer): no reused connection succeeded at any idle gap, the shortest failed one idle only ${dur(idles[0]!)} — not an idle timeout`;
  signal.votes.push(
    vote(
      STRONG,
      `${idles.length} of ${failures} failed requests (${pct(idles.length / failures)}) went out on keep-alive connections reused after ≥ ${dur(gap)} idle, and ${okLong === 0 ? 'none' : `only ${okLong}`} of the requests reused after as long a gap succeeded, while ${[shorter > 0 ? `${shorter} reused after a shorter gap` : '', reuse.fresh > 0 ? `${reuse.fresh} on new connections` : ''].filter((x) => x !== '').join(' and ')} did: ${story}`,
      proxied ? ['proxy'] : ['engine'],
      proxied ? ['engine', 'engine_overloaded'] : ['engine_overloaded'],
    ),
  );
  return signal;
}
