// The canary comparison: over the same stretch, how often the canaries around the proxy (straight to the
// engine) failed against those on the agents' path. Both legs sample the same grid, so their failure counts
// are failure rates over the same time; a slot whose canary could not be sent counts as failed time. And how
// long they took: each leg's log latency against the other's and against its own before the episode.
import type { CanaryComparison, CanaryLegFigures } from '../../types/index.js';
import type { Context, Window } from './context.js';
import type { CanaryPoint } from './inputs.js';
import { bitsText, creditedBits, creditedSe, fisherGreater, tQuantile, welch, wilson, type Effect } from './stats.js';
import { dur, median, pValue, s1, tally } from './text.js';
import { aliveVote, MEDIUM, STRONG, WEAK, vote, type Signal } from './votes.js';
import { round3 } from '../../util/index.js';

/** Fewer slots than this on a leg: no comparison (a second of data is no evidence). */
export const MIN_SLOTS = 3;
/** The legs differ when the one-sided Fisher exact test says so at this p-value (either way)… */
export const SIGNIFICANT_P = 0.05;
/** …and settle the question at this one; between the two, a clear sign rather than a settling one. */
export const SETTLING_P = 0.01;
/** Only the proxied leg failed, not significantly: a hint for the proxy up to this p-value (few canaries). */
const HINT_P = 0.3;
/** Direct failure rate up to which the direct leg counts as clean: a proxy fault then clears the engine too. */
const DIRECT_CLEAN_RATE = 0.1;
/** Failure rate (over both legs, or the direct one alone) from which legs failing alike settle it for the engine. */
const FAILING_RATE = 0.3;
/** A leg is slowed when its latency is more than this factor of the reference's at the lower end of the
 * one-sided interval (SIGNIFICANT_P): a fault doubles a small request's time; jitter does not. */
export const SLOWED_FACTOR = 2;
/** The least spread of a leg's log latency: a small request's time varies by a quarter between tries (timer
 * granularity, scheduling on a shared host), however alike the few measured ones came out. */
export const MIN_LOG_SD = 0.25;

function failure(p: CanaryPoint): string {
  if (p.not_sent) return 'not sent (every canary of the leg still out)';
  if (p.status === 'hang') return `hung at ${p.hang_phase ?? 'an unknown phase'}`;
  if (p.http_status !== null && p.http_status >= 400) return `answered HTTP ${p.http_status}${p.answered_by === 'page' ? ' (a page)' : ''}`;
  return `failed with ${p.error_class ?? 'other'}`;
}

function legFigures(points: readonly CanaryPoint[]): CanaryLegFigures {
  const failed = points.filter((p) => p.status !== 'ok').length;
  const w = wilson(failed, points.length);
  return { slots: points.length, failed, not_sent: points.filter((p) => p.not_sent).length, failed_rate_low: round3(w.low), failed_rate_high: round3(w.high) };
}

function legSentence(name: string, points: readonly CanaryPoint[]): string {
  const bad = points.filter((p) => p.status !== 'ok');
  return `${name} ${bad.length} of ${points.length} failed${bad.length === 0 ? '' : ` (${tally(bad, failure)})`}`;
}

/** Whether most of the failures are at the connection stage (nothing answered the TCP/TLS handshake). */
function connectFailures(points: readonly CanaryPoint[]): boolean {
  const bad = points.filter((p) => p.status !== 'ok' && !p.not_sent);
  const connect = bad.filter((p) => p.hang_phase === 'connect' || p.error_class === 'connect_timeout' || p.error_class === 'dns');
  return bad.length > 0 && connect.length * 2 > bad.length;
}

export function canarySignal(w: Window, ctx: Context): { signal: Signal; comparison: CanaryComparison | null } {
  const signal: Signal = { votes: [], facts: [] };
  if (ctx.canaries.length === 0) {
    signal.facts.push('no canaries ran: set target.bypass (a direct URL of the engine) and monitor.canary_interval_s to compare the proxied path with the direct one');
    return { signal, comparison: null };
  }
  const all = ctx.canariesIn(w);
  // A canary whose life fell in a window where the client's own loop was late measures the client.
  const usable = all.filter((c) => !ctx.clientLate(c.run_ms, c.run_ms + Math.max(c.latency_ms, 1)));
  const excluded = all.length - usable.length;
  const direct = usable.filter((c) => c.leg === 'direct');
  const proxied = usable.filter((c) => c.leg === 'proxied');
  const d = legFigures(direct);
  const p = legFigures(proxied);
  const pProxiedWorse = fisherGreater(p.failed, p.slots, d.failed, d.slots);
  const pDirectWorse = fisherGreater(d.failed, d.slots, p.failed, p.slots);
  const comparison: CanaryComparison = {
    from_ms: Math.round(w.from_ms),
    to_ms: Math.round(w.to_ms),
    direct: d,
    proxied: p,
    p_proxied_worse: round3(pProxiedWorse),
    p_direct_worse: round3(pDirectWorse),
    excluded_client_late: excluded,
  };
  const proxiedPath = proxied[0]?.path ?? ctx.path ?? 'proxied';
  const span = `canaries from ${s1(w.from_ms)} to ${s1(w.to_ms)}`;
  signal.facts.push(
    `${span}: ${legSentence('direct (around the proxy, straight to the engine)', direct)}; ${legSentence(`proxied (the agents' path, ${proxiedPath})`, proxied)}${excluded > 0 ? `; ${excluded} left out: sent while the client's own event loop was late` : ''}`,
  );
  // A canary is a request like any other: behind a full engine it waits in the queue too.
  const q = ctx.queueIn(w);
  const waited = usable.filter((c) => c.not_sent || (c.status === 'hang' && (c.hang_phase === 'first_token' || c.hang_phase === 'headers'))).length;
  if (waited > 0 && q.observed >= 2 && q.queued * 2 >= q.observed) {
    signal.facts.push(
      `${waited} canaries waited (hung before their first token, or not sent while earlier ones waited) while the engine's queue held up to ${q.max} requests: canaries queue behind a saturated engine like any request, so their failures measure the queue, not a dead engine (docs/paths.md, "Canaries")`,
    );
  }
  if (d.slots < MIN_SLOTS || p.slots < MIN_SLOTS) {
    signal.facts.push(`too few canaries over the episode to compare the legs (${d.slots} direct, ${p.slots} proxied; at least ${MIN_SLOTS} each)`);
    return { signal, comparison };
  }
  if (ctx.path !== 'direct') latencyVotes(w, ctx, usable, signal);
  if (ctx.path === 'direct') {
    // Both legs go straight to the engine: together they say whether the engine answered small requests.
    const failed = d.failed + p.failed;
    const slots = d.slots + p.slots;
    if (failed >= 2 && failed / slots >= FAILING_RATE) {
      signal.votes.push(
        vote(
          MEDIUM,
          `canaries straight to the engine failed in ${failed} of ${slots} slots over the episode: the engine did not answer small requests either`,
          connectFailures(usable) ? ['engine', 'engine_overloaded', 'network'] : ['engine', 'engine_overloaded'],
        ),
      );
    } else if (failed === 0) {
      signal.votes.push(aliveVote(vote(MEDIUM, `the engine answered all ${slots} canaries over the episode`, [], ['engine'])));
    }
    return { signal, comparison };
  }
  const slowed = new Set(signal.votes.flatMap((v) => v.for));
  compareLegs(d, p, { pProxiedWorse, pDirectWorse, span: s1(w.to_ms - w.from_ms), connect: connectFailures(usable), slowed }, signal);
  return { signal, comparison };
}

/** The log latencies of the answered canaries: failed ones are weighed by the failure comparison, once. */
function timed(points: readonly CanaryPoint[]): number[] {
  return points.filter((c) => c.status === 'ok').map((c) => Math.log(Math.max(1, c.latency_ms)));
}

/** `a` slower than `b` beyond SLOWED_FACTOR: the bits it credits, with the effect and its standard error. */
function slower(a: readonly number[], b: readonly number[], offset: Effect | null): { bits: number; se: number; factor: number } | null {
  if (a.length < MIN_SLOTS || b.length < MIN_SLOTS) return null;
  const e = welch(a, b, MIN_LOG_SD);
  const estimate = e.estimate - (offset?.estimate ?? 0);
  const se = Math.hypot(e.se, offset?.se ?? 0);
  const df = Math.min(e.df, offset?.df ?? Infinity);
  const z = (estimate - Math.log(SLOWED_FACTOR)) / se;
  const crit = tQuantile(1 - SIGNIFICANT_P, df);
  const bits = creditedBits(z, crit, STRONG);
  return { bits, se: creditedSe(z, crit, STRONG), factor: Math.exp(estimate) };
}

/** `25 ms` as the median of a leg's log latencies. */
function medianMs(logs: readonly number[]): string {
  return dur(Math.exp(median(logs) ?? 0));
}

/**
 * Canary latency as a measurement (docs/diagnosis.md, "The model"): the proxied leg slower than the direct
 * one beyond how much slower it was before the episode is the proxy (the engine answered the direct leg as
 * fast as ever: it is cleared); the direct leg slower than itself before the episode is the engine slow for
 * every request, the proxy's or not. Welch's t on log latencies, against a factor of SLOWED_FACTOR; the bits
 * credited shrink with few canaries.
 */
function latencyVotes(w: Window, ctx: Context, usable: readonly CanaryPoint[], signal: Signal): void {
  const before = ctx.canaries.filter(
    (c) =>
      c.run_ms + Math.max(0, c.latency_ms) < w.from_ms &&
      c.status === 'ok' &&
      !ctx.troubled.some((t) => c.run_ms <= t.to_ms && t.from_ms <= c.run_ms + c.latency_ms) &&
      !ctx.clientLate(c.run_ms, c.run_ms + Math.max(c.latency_ms, 1)),
  );
  const dBase = timed(before.filter((c) => c.leg === 'direct'));
  const pBase = timed(before.filter((c) => c.leg === 'proxied'));
  const dNow = timed(usable.filter((c) => c.leg === 'direct'));
  const pNow = timed(usable.filter((c) => c.leg === 'proxied'));
  const direct = slower(dNow, dBase, null);
  const offset = dBase.length >= MIN_SLOTS && pBase.length >= MIN_SLOTS ? welch(pBase, dBase, MIN_LOG_SD) : null;
  const proxied = slower(pNow, dNow, offset);
  const beforeText = offset === null ? '' : `; before the episode ${medianMs(pBase)} and ${medianMs(dBase)}`;
  if (direct !== null && direct.bits > 0) {
    signal.votes.push({
      ...vote(
        direct.bits,
        `direct canaries (skipping the proxy) took ${medianMs(dNow)} over the episode against ${medianMs(dBase)} before it (${direct.factor.toFixed(1)}× on the log-latency mean; Welch t, ${bitsText(direct.bits, direct.se)}): the engine was slow for every request, through the proxy or not`,
        ['engine', 'engine_overloaded'],
        ['proxy'],
      ),
      se: direct.se,
    });
  }
  if (proxied !== null && proxied.bits > 0) {
    // The direct leg not slowed against its own past (or with none to compare): the engine itself was quick.
    const clean = direct === null || direct.bits === 0;
    signal.votes.push({
      ...vote(
        proxied.bits,
        `proxied canaries took ${medianMs(pNow)} over the episode, direct ones ${medianMs(dNow)}${beforeText} (the proxied leg ${proxied.factor.toFixed(1)}× slower than ${offset === null ? 'the direct one, with no canaries before the episode to give its usual margin' : 'its usual margin'}; Welch t on log latency, ${bitsText(proxied.bits, proxied.se)}): the proxy (or its side of the path) slowed small requests${clean ? ` that the engine answered straight in ${medianMs(dNow)}` : ' beyond what the engine did'}`,
        ['proxy'],
        clean ? ['engine', 'engine_overloaded'] : [],
      ),
      se: proxied.se,
    });
  }
}

interface Test {
  pProxiedWorse: number;
  pDirectWorse: number;
  /** The episode's length, as said. */
  span: string;
  /** Most failures were at connecting. */
  connect: boolean;
  /** The verdicts canary latency already pointed to: passing every canary slowly does not clear them. */
  slowed: ReadonlySet<string>;
}

/**
 * One test over every pair of rates: the one-sided Fisher exact test each way decides whether the legs
 * differ. Proxied worse: the proxy, settling at SETTLING_P, and clearing the engine only when the direct leg
 * was clean. Direct worse: something on the direct route only. Alike with failures on both: the engine (or
 * the route both share), settling from FAILING_RATE. Neither failed: both passed small requests. Only the
 * proxied leg failed, too few to differ: a hint. What remains (a failure or two on one leg) is said, unweighed.
 */
function compareLegs(d: CanaryLegFigures, p: CanaryLegFigures, t: Test, signal: Signal): void {
  const counts = `direct ${d.failed} of ${d.slots}, proxied ${p.failed} of ${p.slots}`;
  const fisher = `one-sided Fisher exact test, ${pValue(t.pProxiedWorse)}`;
  if (t.pProxiedWorse < SIGNIFICANT_P) {
    const clean = d.failed / d.slots <= DIRECT_CLEAN_RATE;
    const direct = clean
      ? 'requests that skip the proxy got through, those through it did not'
      : 'requests that skip the proxy failed too, but far less: the proxy (or its side of the path) failed beyond what the engine did';
    signal.votes.push(
      vote(
        t.pProxiedWorse < SETTLING_P ? STRONG : MEDIUM,
        `over the same ${t.span}, proxied canaries failed in ${p.failed} of ${p.slots} slots and direct ones in ${d.failed} of ${d.slots} (${fisher}): ${direct}`,
        ['proxy'],
        clean ? ['engine', 'engine_overloaded'] : [],
      ),
    );
  } else if (t.pDirectWorse < SIGNIFICANT_P) {
    signal.facts.push(
      `direct canaries failed more than proxied ones (${counts} slots; ${pValue(t.pDirectWorse)}): something on the direct route only (the target.bypass URL, a firewall or the network to it), which the agents' requests do not take; through the proxy the engine answered more often`,
    );
  } else if (d.failed > 0 && p.failed > 0) {
    const rate = (d.failed + p.failed) / (d.slots + p.slots);
    const settles = d.failed >= 2 && rate >= FAILING_RATE;
    signal.votes.push(
      vote(
        settles ? STRONG : WEAK,
        `direct canaries failed as often as proxied ones (${counts} slots; ${pValue(t.pProxiedWorse)} that the proxied leg fails more): requests that never touch the proxy failed too, so the fault is at or behind the engine${settles ? '' : ' (rarely: a hint)'}`,
        t.connect ? ['engine', 'engine_overloaded', 'network'] : ['engine', 'engine_overloaded'],
        settles ? ['proxy'] : [],
      ),
    );
  } else if (d.failed === 0 && p.failed === 0 && t.slowed.size > 0) {
    signal.facts.push(`both legs answered every canary over the episode (${d.slots} direct, ${p.slots} proxied), slowly: their latency is weighed, not their answering`);
  } else if (d.failed === 0 && p.failed === 0) {
    signal.votes.push(
      aliveVote(
        vote(
          MEDIUM,
          `both legs answered every canary over the episode (${d.slots} direct, ${p.slots} proxied): the proxy and the engine passed small requests meanwhile, so the trouble is specific to the agents' requests (their size, their long-lived connections)`,
          [],
          ['proxy', 'engine', 'engine_overloaded'],
        ),
      ),
    );
  } else if (d.failed === 0 && p.failed >= 2 && t.pProxiedWorse < HINT_P) {
    // Too few to be sure, but pointing one way: a hint for the proxy, no weight against the engine.
    signal.votes.push(vote(WEAK, `only proxied canaries failed over the same ${t.span}: ${p.failed} of ${p.slots} slots, direct none of ${d.slots} (${fisher}: too few to be sure)`, ['proxy']));
  } else {
    signal.facts.push(`the legs do not differ (${counts} slots; ${pValue(t.pProxiedWorse)} that the proxied leg fails more, ${pValue(t.pDirectWorse)} the other way): too few failures to tell`);
  }
}
