// Does the deployment hold the hung requests at all? At every scrape the client knows how many of its requests
// were in flight and how many of them were hung; the deployment's gauges (HELD_GAUGES: running, waiting,
// hand-off) say how many it holds. Each hung request the engine holds is in both counts; one stuck in front of
// it (a proxy that read it and never forwarded it, or holds its answer) is in the client's count only. So the
// client's excess over the gauges, regressed on its hung requests in flight, climbs by one per hung request
// when none of them is in the engine and stays flat when all are: the slope is the share of hung requests the
// engine does not hold, measured with its standard error (docs/diagnosis.md, "Requests the engine does not hold").
import { HELD_GAUGES } from '../../types/index.js';
import type { Context, Window } from './context.js';
import { explainedByLateness } from './client-signal.js';
import type { Episode } from './episodes.js';
import type { ScrapePoint } from './inputs.js';
import { firstAtOrAfter } from './in-flight.js';
import { bitsText, creditedBits, creditedSe, tQuantile } from './stats.js';
import { FLOWING_SHARE, STREAMING_SLICE_SHARE } from './engine-signal.js';
import { median, pct, plural } from './text.js';
import { STRONG, vote, WEAK, type Signal } from './votes.js';

/** Significance of the one-sided test on the slope, each way. */
const HELD_ALPHA = 0.05;
/** The slope's two hypotheses: 1 (no hung request in the engine) and 0 (every one of them there); the test is
 * which side of their middle it lies on. */
const HALF = 0.5;
/** The least spread of a round's excess: a count read by the client and one read by a gauge a moment apart
 * differ by a request now and then (one ending, one arriving), however alike the rounds came out. */
const MIN_RESIDUAL_SD = 0.5;
/** Fewer independent rounds than this (after the rounds' correlation) are no measurement. */
const MIN_ROUNDS = 4;

/** One scrape round of the deployment: the client's requests in flight beyond what its gauges held, and its
 * hung requests in flight then. */
interface Round {
  run_ms: number;
  excess: number;
  hung: number;
  /** The client's other requests in flight (not hung): part of each one's life passes outside the gauges too. */
  others: number;
  held: number;
  inEpisode: boolean;
}

/** The held count of a server nearest `ms` (within half a scrape gap) among its scrapes (in time order), null
 * when none was read then. */
function heldNear(scrapes: readonly ScrapePoint[], ms: number, halfGapMs: number): number | null {
  const i = firstAtOrAfter(scrapes, ms, (s) => s.run_ms);
  const near = [scrapes[i - 1], scrapes[i]].filter((s): s is ScrapePoint => s !== undefined && Math.abs(s.run_ms - ms) <= halfGapMs);
  const best = near.sort((a, b) => Math.abs(a.run_ms - ms) - Math.abs(b.run_ms - ms))[0];
  return best?.held ?? null;
}

/** The servers that report a held count, by role: prefill and decode apart (a PD request is in both for part of
 * its life), every other server (a single one, a router) as one role — left out beside a decode, which holds
 * every request of a PD deployment, where a router counts each request once per worker it sent it to. */
function roles(ctx: Context, reporting: readonly string[]): Map<string, string[]> {
  const pd = reporting.some((t) => ctx.sideOf(t) === 'decode');
  const out = new Map<string, string[]>();
  for (const t of reporting) {
    const role = ctx.sideOf(t) ?? 'server';
    if (pd && role === 'server') continue;
    out.set(role, [...(out.get(role) ?? []), t]);
  }
  return out;
}

/** Share of the window's slices (of half a second at least) with work flowing: a client request completed,
 * tokens streamed, or a server's answering counter moved. */
function flowingShare(w: Window, ctx: Context): number {
  const a = ctx.activity;
  const flows = ctx.answering(ctx.flows, (f) => f.target);
  const sliceMs = Math.max(500, (w.to_ms - w.from_ms) / 40);
  let slices = 0;
  let flowing = 0;
  for (let from = w.from_ms; from < w.to_ms; from += sliceMs) {
    const slice = { from_ms: from, to_ms: Math.min(w.to_ms, from + sliceMs) };
    if (ctx.clientLate(slice.from_ms, slice.to_ms)) continue;
    slices += 1;
    const done = (a?.completionsIn(slice.from_ms, slice.to_ms) ?? 0) > 0 || (a?.streamingShare(slice.from_ms, slice.to_ms) ?? 0) >= STREAMING_SLICE_SHARE;
    if (done || flows.some((f) => ctx.flowMoved(f, slice))) flowing += 1;
  }
  return slices === 0 ? 0 : flowing / slices;
}

/** The moments the engine did not answer: its scrapes failed, or a direct canary found nothing listening or was
 * reset. A request it held before such a moment may be gone after it (a restarted engine forgets what it held). */
function unanswered(ctx: Context, reporting: readonly string[]): number[] {
  const scrapes = ctx.scrapes.filter((s) => !s.ok && reporting.includes(s.target)).map((s) => s.run_ms);
  const canaries = ctx.canaries.filter((c) => c.leg === 'direct' && (c.error_class === 'connection_refused' || c.error_class === 'connection_reset')).map((c) => c.run_ms);
  return [...scrapes, ...canaries].sort((a, b) => a - b);
}

/** The rounds of the episode and of the run outside every trouble (the excess's baseline), the client on time;
 * and how many of the episode's were left out for following a moment the engine did not answer. */
function roundsOf(ep: Episode, w: Window, ctx: Context, reporting: readonly string[]): { rounds: Round[]; afterDown: number } {
  const byRole = [...roles(ctx, reporting).values()];
  const scrapes = new Map(reporting.map((t) => [t, ctx.scrapes.filter((s) => s.target === t && s.ok && s.held !== undefined && s.held !== null)]));
  const reference = reporting[0]!;
  const own = scrapes.get(reference)!;
  const halfGap = (median(own.slice(1).map((s, i) => s.run_ms - own[i]!.run_ms)) ?? 0) / 2;
  const inFlight = new Map((ctx.inFlight ?? []).map((p) => [p.run_ms, p]));
  // Canaries in time order (the context sorts them), and the longest one's life: those in flight at a round
  // started within it before.
  const canaries = ctx.canaries.filter((c) => !c.not_sent);
  const longest = canaries.reduce((m, c) => Math.max(m, c.latency_ms), 0);
  // Hangs the client's own delay explains: in no one's hands but its own (an answer unread in its socket).
  const late = explainedByLateness(ep, ctx);
  // A hung request in flight at a round was sent at most the longest hang's life before it.
  const life = ep.hangs.reduce((m, h) => Math.max(m, h.to_ms - h.from_ms), 0);
  const down = unanswered(ctx, reporting);
  const rounds: Round[] = [];
  let afterDown = 0;
  for (const s of own) {
    const t = s.run_ms;
    const inEpisode = t >= w.from_ms && t <= w.to_ms;
    if (!inEpisode && ctx.troubled.some((x) => t >= x.from_ms && t <= x.to_ms)) continue;
    if (ctx.clientLate(t, t + s.duration_ms)) continue;
    const next = firstAtOrAfter(down, t, (d) => d);
    const lastDown = down[next] === t ? t : down[next - 1];
    if (inEpisode && lastDown !== undefined && lastDown >= t - life) {
      afterDown += 1;
      continue;
    }
    const p = inFlight.get(t);
    if (p === undefined) continue;
    // The deployment's count: each role's servers summed, the largest role (a PD request is in the decode from
    // its prealloc on, and in the prefill until its KV is sent). A server not read then: no round.
    const perRole = byRole.map((targets) => targets.map((x) => heldNear(scrapes.get(x)!, t, halfGap)));
    if (perRole.some((vals) => vals.some((v) => v === null))) continue;
    const held = Math.max(...perRole.map((vals) => vals.reduce((sum: number, v) => sum + v!, 0)));
    const flying = canaries
      .slice(
        firstAtOrAfter(canaries, t - longest, (c) => c.run_ms),
        firstAtOrAfter(canaries, t, (c) => c.run_ms),
      )
      .filter((c) => t < c.run_ms + c.latency_ms);
    const mine = inEpisode ? late.filter((h) => h.from_ms < t && t < h.to_ms).length : 0;
    const all = p.all + flying.length - mine;
    const hung = inEpisode ? p.hung + flying.filter((c) => c.status === 'hang').length - mine : 0;
    rounds.push({ run_ms: t, excess: all - held, hung: Math.max(0, hung), others: all - Math.max(0, hung), held, inEpisode });
  }
  return { rounds, afterDown };
}

/** The fit of the excess on the hung count: its slope, its standard error widened for the rounds' correlation
 * (lag-1, as an AR(1) series: one request held over several rounds is one observation), the independent rounds
 * that leaves, and the share of the other requests' time in flight outside the gauges (null: not separable). */
interface Fit {
  slope: number;
  se: number;
  rounds: number;
  transit: number | null;
}

/**
 * Least squares of the excess on the hung count and, when it varies apart from them, the client's other requests
 * in flight: a request's way to the engine and its answer's way back pass outside the gauges (the path's latency,
 * a router, the stream back), so the excess also grows with the requests in flight — in a closed loop, fewer as
 * more hang, which a fit on the hung count alone would read as hung requests held (on a loaded host, a fifth of
 * a short request's life was transit, and the slope read 0.73 instead of 1). Null when the hung count did not vary.
 */
function fitOf(rounds: readonly Round[]): Fit | null {
  const n = rounds.length;
  if (n < MIN_ROUNDS) return null;
  const mean = (read: (r: Round) => number): number => rounds.reduce((a, r) => a + read(r), 0) / n;
  const mh = mean((r) => r.hung);
  const mo = mean((r) => r.others);
  const my = mean((r) => r.excess);
  let shh = 0;
  let soo = 0;
  let sho = 0;
  let shy = 0;
  let soy = 0;
  for (const r of rounds) {
    const h = r.hung - mh;
    const o = r.others - mo;
    const y = r.excess - my;
    shh += h * h;
    soo += o * o;
    sho += h * o;
    shy += h * y;
    soy += o * y;
  }
  if (shh === 0) return null;
  // The other requests as a second regressor only when they vary apart from the hung ones (not collinear).
  const det = shh * soo - sho * sho;
  const two = soo > 0 && det > 1e-9 * shh * soo && n > MIN_ROUNDS;
  const slope = two ? (soo * shy - sho * soy) / det : shy / shh;
  const transit = two ? (shh * soy - sho * shy) / det : null;
  const res = rounds.map((r) => r.excess - my - slope * (r.hung - mh) - (transit ?? 0) * (r.others - mo));
  const rss = res.reduce((a, e) => a + e * e, 0);
  const lag = res.slice(1).reduce((a, e, i) => a + e * res[i]!, 0);
  const rho = rss === 0 ? 0 : Math.max(0, lag / rss);
  const effective = rho >= 1 ? 0 : (n * (1 - rho)) / (1 + rho);
  if (effective < MIN_ROUNDS) return null;
  const sd = Math.max(MIN_RESIDUAL_SD, Math.sqrt(rss / (n - (two ? 3 : 2))));
  // The slope's variance: s² times the hung count's diagonal term of (X'X)⁻¹.
  const variance = (sd * sd * (two ? soo / det : 1 / shh) * n) / effective;
  return { slope, se: Math.sqrt(variance), rounds: effective, transit };
}

const NAMES = [...HELD_GAUGES].slice(0, 4).join(', ');

export function heldSignal(ep: Episode, w: Window, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  if (ep.hangs.length === 0 || ctx.inFlight === null || ctx.targets.length === 0) return signal;
  const reporting = ctx.targets.filter((t) => ctx.scrapes.some((s) => s.target === t && s.ok && s.held !== undefined && s.held !== null));
  if (reporting.length === 0) {
    signal.facts.push(`whether the engine holds the hung requests: not reported (no scraped server exposes a gauge of the requests it holds: ${NAMES}…)`);
    return signal;
  }
  if (reporting.some((t) => ctx.sideOf(t) === 'prefill') && !reporting.some((t) => ctx.sideOf(t) === 'decode')) {
    signal.facts.push(`whether the engine holds the hung requests: not judged (a prefill's gauges are read without its decode's, which holds every request from its prealloc on)`);
    return signal;
  }
  const { rounds, afterDown } = roundsOf(ep, w, ctx, reporting);
  const episode = rounds.filter((r) => r.inEpisode);
  const withHung = episode.filter((r) => r.hung >= 1);
  const leftOut = afterDown === 0 ? '' : `; ${plural(afterDown, 'round')} left out, within a hung request's life of a moment the engine did not answer (a restarted engine forgets what it held)`;
  if (withHung.length < 2) {
    if (afterDown > 0) signal.facts.push(`whether the engine holds the hung requests: not judged${leftOut}`);
    return signal;
  }
  const fit = fitOf(rounds);
  const meanHung = withHung.reduce((a, r) => a + r.hung, 0) / withHung.length;
  const meanHeld = withHung.reduce((a, r) => a + r.held, 0) / withHung.length;
  const counted = `over ${episode.length} scrape rounds of the episode (and ${rounds.length - episode.length} outside the trouble), the client had hung requests in flight at ${withHung.length} (${meanHung.toFixed(1)} on average) while the deployment's gauges held ${meanHeld.toFixed(1)} requests${leftOut}`;
  if (fit === null) {
    signal.facts.push(`whether the engine holds the hung requests: ${counted}; too few independent rounds to measure it`);
    return signal;
  }
  const tCrit = tQuantile(1 - HELD_ALPHA, fit.rounds - 2);
  const share = 1 - explainedByLateness(ep, ctx).length / ep.hangs.length;
  const transit = fit.transit === null ? '' : `; its other requests in flight ${fit.transit.toFixed(2)} each, their time on the way`;
  const measured = `each hung request in flight added ${fit.slope.toFixed(2)} ± ${fit.se.toFixed(2)} to the client's requests beyond what the gauges held (1: none of them in the engine, 0: all of them; ${fit.rounds.toFixed(0)} independent rounds${transit})`;
  const discount = share < 1 ? `, weighed ${share.toFixed(2)} of it: the client's own delay explains the rest of the hangs` : '';
  const missing = creditedBits((fit.slope - HALF) / fit.se, tCrit, STRONG);
  const flowing = flowingShare(w, ctx);
  // The most the deployment ever held: at it, more may wait in front of its gauges (an accept backlog, a server
  // short of HTTP threads) — a full engine, not a path that kept the requests from it. Judged over the rounds
  // with hung requests in flight: a path holding them keeps the engine below its most then.
  const ceiling = rounds.reduce((m, r) => Math.max(m, r.held), -Infinity);
  const full = withHung.filter((r) => r.held >= ceiling).length;
  if (missing > 0 && flowing < FLOWING_SHARE) {
    signal.facts.push(
      `whether the engine holds the hung requests: ${counted}; ${measured}: not weighed, as work flowed in only ${pct(flowing)} of the episode (an engine stuck before its gauges count a request — a wedged tokenizer — holds requests they do not show)`,
    );
  } else if (missing > 0 && full * 2 >= withHung.length) {
    signal.facts.push(
      `whether the engine holds the hung requests: ${counted}; ${measured}: not weighed, as the deployment held as many as it ever did (${Number(ceiling.toFixed(1))}) in ${full} of the ${withHung.length} rounds with hung requests in flight: a full engine may keep more waiting in front of its gauges`,
    );
  } else if (missing > 0) {
    const bits = missing * share;
    const se = creditedSe((fit.slope - HALF) / fit.se, tCrit, STRONG) * share;
    const text = `the engine does not hold the hung requests: ${counted}; ${measured}, while work flowed (${pct(flowing)} of the episode): they were stuck in front of it, or their answers after it (${bitsText(bits, se)}${discount})`;
    if (ctx.path !== 'direct') signal.votes.push({ ...vote(bits, `${text} — on the path`, ['proxy'], ['engine', 'engine_overloaded']), se });
    else if (ctx.loopback === true)
      signal.facts.push(`${text} — straight to this machine, nothing lies between: the engine's own front (its HTTP server, its tokenizer) before its gauges, or the client`);
    else signal.votes.push({ ...vote(bits, `${text} — between the client and the engine, with no proxy: the network`, ['network'], ['engine_overloaded']), se });
    return signal;
  }
  const held = creditedBits((HALF - fit.slope) / fit.se, tCrit, WEAK) * share;
  if (held > 0) {
    const se = creditedSe((HALF - fit.slope) / fit.se, tCrit, WEAK) * share;
    signal.votes.push({ ...vote(held, `the engine holds the hung requests: ${counted}; ${measured} (${bitsText(held, se)}${discount})`, ['engine', 'engine_overloaded']), se });
  } else if (missing === 0) {
    signal.facts.push(`whether the engine holds the hung requests: ${counted}; ${measured}: too uncertain to say`);
  }
  return signal;
}
