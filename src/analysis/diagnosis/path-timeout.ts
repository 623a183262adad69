// Path timeouts: failed requests cut at one duration. A proxy's read timeout answers 504 (or 502), or closes
// the connection, the same time after the last byte it got from the engine, whatever the engine was doing;
// an idle timeout shorter than the think time breaks reused connections after the same idle gap. A cluster
// like that names the actionable fact — the path cuts requests at N s — and the settings that do it.
import type { PathKind, PathTimeout } from '../../types/index.js';
import type { Episode } from './episodes.js';
import { CUT_CLASSES, type ErrorSpan } from './inputs.js';
import { plural } from './text.js';
import { DECISIVE, STRONG, vote, type Signal } from './votes.js';

/** A cluster needs this many failures, and this share of those judged. */
const MIN_COUNT = 3;
const MIN_SHARE = 0.6;
/** Two failures were cut by one timeout when their times differ by at most this much, or this share. */
const TOLERANCE_MS = 150;
const TOLERANCE_SHARE = 0.05;
/** Cuts shorter than this are refusals and instant error pages, not timeouts. */
const MIN_CUT_MS = 1000;
/** A reused connection that failed this soon after the send, before any response byte, was closed while idle. */
const IDLE_FAILURE_MS = 1000;

/** HTTP statuses a timing-out proxy answers with itself. */
const CUT_STATUSES: ReadonlySet<number> = new Set([502, 504]);

type Kind = PathTimeout['kind'];

/** One failure as a cut: which kind, and the time it measures (silence before the cut, or the idle gap). */
interface Cut {
  error: ErrorSpan;
  kind: Kind;
  ms: number;
  label: string;
}

/** A failure as a cut, or null when it is not one (another class, or nothing to time it by). */
function cutOf(e: ErrorSpan): Cut | null {
  const elapsed = e.to_ms - e.from_ms;
  if (e.http_status !== null && e.http_status >= 400) {
    if (!CUT_STATUSES.has(e.http_status)) return null;
    return { error: e, kind: 'headers', ms: e.headers_ms ?? elapsed, label: String(e.http_status) };
  }
  if (!CUT_CLASSES.has(e.class)) return null;
  const headers = e.headers_ms ?? null;
  if (headers === null) {
    const reused = (e.nth ?? 0) >= 2 && e.idle_ms !== undefined && e.idle_ms !== null;
    if (reused && elapsed <= IDLE_FAILURE_MS) return { error: e, kind: 'idle', ms: e.idle_ms!, label: e.class };
    return { error: e, kind: 'headers', ms: elapsed, label: e.class };
  }
  // After the headers: the silence since the last byte (unknown in files written before it was recorded).
  if (e.last_byte_ms === undefined || e.last_byte_ms === null) return null;
  return { error: e, kind: 'read', ms: elapsed - e.last_byte_ms, label: e.class };
}

function tolerance(ms: number): number {
  return Math.max(TOLERANCE_MS, TOLERANCE_SHARE * ms);
}

/** The largest group of cuts within the tolerance of one of them (ties: the tighter group). */
function largestGroup(cuts: readonly Cut[]): Cut[] {
  const sorted = [...cuts].sort((a, b) => a.ms - b.ms);
  let best: Cut[] = [];
  let lo = 0;
  let hi = 0;
  // Both bounds only grow with the centre (the tolerance grows slower than the values): two pointers.
  for (const centre of sorted) {
    const tol = tolerance(centre.ms);
    while (sorted[lo]!.ms < centre.ms - tol) lo += 1;
    hi = Math.max(hi, lo);
    while (hi + 1 < sorted.length && sorted[hi + 1]!.ms <= centre.ms + tol) hi += 1;
    const group = sorted.slice(lo, hi + 1);
    if (group.length > best.length || (group.length === best.length && centreOf(group).spread < centreOf(best).spread)) best = group;
  }
  return best;
}

/** The middle of a group's range, and half its width: `2.0 ± 0.02 s`. */
function centreOf(group: readonly Cut[]): { centre: number; spread: number } {
  const ms = group.map((c) => c.ms);
  const lo = Math.min(...ms);
  const hi = Math.max(...ms);
  return { centre: (lo + hi) / 2, spread: (hi - lo) / 2 };
}

/** The usual settings that cut so, by kind; on a direct path, the engine's own. */
function settingsFor(kind: Kind, by: PathTimeout['by']): string[] {
  if (by === 'engine') {
    return kind === 'idle'
      ? ["the engine's keep-alive timeout (uvicorn's --timeout-keep-alive, 5 s by default) shorter than the think time: set agents.keep_alive_timeout_ms below it"]
      : ["the engine's own request timeout (its server's or framework's), not a proxy: there is none on this path"];
  }
  if (kind === 'idle') {
    return [
      'nginx keepalive_timeout',
      'HAProxy timeout http-keep-alive / timeout client',
      "an idle timeout shorter than the think time (a load balancer's idle timeout): set agents.keep_alive_timeout_ms below it, or raise it",
    ];
  }
  return ['nginx proxy_read_timeout / proxy_send_timeout', 'HAProxy timeout server (timeout client on the client side)', "a load balancer's request or idle timeout"];
}

export interface FoundTimeout {
  timeout: PathTimeout;
  /** The failures in the cluster. */
  members: ReadonlySet<ErrorSpan>;
}

/**
 * Failures cut at one duration, or null: at least MIN_COUNT of them, MIN_SHARE of `of` (the failures judged),
 * at MIN_CUT_MS or more. Silences before a cut (before the headers or after some bytes: nginx's
 * proxy_read_timeout bounds both) cluster together; idle gaps of reused connections apart.
 */
export function findPathTimeout(errors: readonly ErrorSpan[], of: number, path: PathKind | null): FoundTimeout | null {
  const cuts = errors.map(cutOf).filter((c): c is Cut => c !== null && c.ms >= MIN_CUT_MS);
  const groups = [largestGroup(cuts.filter((c) => c.kind !== 'idle')), largestGroup(cuts.filter((c) => c.kind === 'idle'))];
  const group = groups.sort((a, b) => b.length - a.length)[0] ?? [];
  if (group.length < MIN_COUNT || group.length < MIN_SHARE * of) return null;
  const kinds = new Map<Kind, number>();
  const statuses: Record<string, number> = {};
  for (const c of group) {
    kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
    statuses[c.label] = (statuses[c.label] ?? 0) + 1;
  }
  const kind = [...kinds.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const by = path === 'direct' ? 'engine' : 'path';
  const { centre, spread } = centreOf(group);
  const timeout: PathTimeout = {
    seconds: Math.round(centre) / 1000,
    spread_s: Math.round(spread) / 1000,
    count: group.length,
    of,
    kind,
    statuses,
    by,
    settings: settingsFor(kind, by),
  };
  return { timeout, members: new Set(group.map((c) => c.error)) };
}

/** `504 from the proxy 5, connection_reset 4`. */
function whatCut(t: PathTimeout): string {
  const from = t.by === 'path' ? 'the proxy' : 'the engine';
  const parts = Object.entries(t.statuses)
    .sort(([, a], [, b]) => b - a)
    .map(([label, n]) => `${/^\d+$/.test(label) ? `${label} from ${from}` : label}${Object.keys(t.statuses).length > 1 ? ` ${n}` : ''}`);
  return parts.join(', ');
}

const SINCE: Record<Kind, string> = {
  headers: 'after the send, before any response header',
  read: 'after the last byte',
  idle: 'of idle time on a reused connection',
};

/**
 * The finding as a sentence: `the path cuts requests at 2.0 s (9 of 9 failures: 504 from the proxy at 2.0 ±
 * 0.02 s after the send, before any response header): nginx proxy_read_timeout …`.
 */
export function describePathTimeout(t: PathTimeout): string {
  const who = t.by === 'path' ? 'the path' : 'the engine itself';
  const figures = `${t.count} of ${plural(t.of, 'failure')}: ${whatCut(t)} at ${t.seconds.toFixed(1)} ± ${t.spread_s.toFixed(2)} s ${SINCE[t.kind]}`;
  const settings = t.by === 'path' ? `; the usual settings: ${t.settings.join('; ')}` : `: ${t.settings.join('; ')}`;
  if (t.kind === 'idle') return `${who} closes keep-alive connections idle for ${t.seconds.toFixed(1)} s or less (${figures})${settings}`;
  return `${who} cuts requests at ${t.seconds.toFixed(1)} s (${figures})${settings}`;
}

/**
 * What a cut says about an episode of errors: its own failures cut at one duration, or, when too few of them
 * to tell, mostly members of the run's cut (one failure every few seconds makes episodes of one). On a path
 * through a proxy or hop it is the path's timeout: a decisive vote for `proxy` that makes the engine's
 * slowness a contributing fact (weighCut); an idle cut, a strong one. On a direct path it is the engine's own
 * timeout: stated, no vote.
 */
export function pathTimeoutSignal(ep: Episode, path: PathKind | null, run: FoundTimeout | null): { signal: Signal; timeout: PathTimeout | null } {
  const none = { signal: { votes: [], facts: [] }, timeout: null };
  if (ep.errors.length === 0) return none;
  const inRun = run === null ? 0 : ep.errors.filter((e) => run.members.has(e)).length;
  const found = findPathTimeout(ep.errors, ep.errors.length, path) ?? (inRun > 0 && inRun >= MIN_SHARE * ep.errors.length ? run : null);
  if (found === null) return none;
  const t = found.timeout;
  const text = describePathTimeout(t);
  if (t.by === 'engine') return { signal: { votes: [], facts: [text] }, timeout: t };
  const v = t.kind === 'idle' ? vote(STRONG, text, ['proxy']) : { ...vote(DECISIVE, text, ['proxy']), cuts: true as const };
  return { signal: { votes: [v], facts: [] }, timeout: t };
}
