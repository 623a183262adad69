// What the deployment's own side says over an episode: whether its /metrics answered (a frozen or dead
// process does not), whether work flowed (counters, completions, tokens), pinned gauges, full queues and
// rising TTFT (an overloaded engine makes progress, slowly).
import { baseName } from '../../monitor/index.js';
import type { Context, HeldGauge, Window } from './context.js';
import type { Episode } from './episodes.js';
import { decodeStop, stopText, type DecodeStop } from './decode-stop.js';
import type { ScrapePoint } from './inputs.js';
import { dur, median, pct, s1 } from './text.js';
import { aliveVote, DECISIVE, MEDIUM, STRONG, vote, WEAK, type Signal } from './votes.js';

/** A scrape taking this many times its usual time (and at least SLOW_SCRAPE_MS more) is slow. */
const SLOW_SCRAPE_FACTOR = 5;
const SLOW_SCRAPE_MS = 200;
/** TTFT this many times its earlier mean (and at least TTFT_RISE_MS more) is rising. */
const TTFT_RISE_FACTOR = 2;
const TTFT_RISE_MS = 300;

function scrapeFailure(error: string | null): string {
  const e = error ?? '';
  if (/TIMEOUT|timed? ?out/i.test(e)) return 'timeout';
  if (/ECONNREFUSED/.test(e)) return 'refused';
  if (/ECONNRESET|socket|closed/i.test(e)) return 'reset';
  const http = /HTTP (\d{3})/.exec(e);
  if (http !== null) return `HTTP ${http[1]}`;
  return 'other';
}

function kinds(points: readonly ScrapePoint[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of points) if (!p.ok) m.set(scrapeFailure(p.error), (m.get(scrapeFailure(p.error)) ?? 0) + 1);
  return m;
}

/** Share of the episode a target spent not answering (its failed scrapes, each until the next scrape) from
 * which the engine process itself is down or frozen. Time, not counts: a failed scrape waits out its
 * timeout, so a frozen target is scraped less often than a healthy one. */
const DOWN_SHARE = 0.5;

/** Each scrape of `target` with the time until the next one starts: the time its answer (or silence) stands for. */
function scrapeSlots(ctx: Context, target: string, w: Window): { point: ScrapePoint; from: number; to: number }[] {
  const all = ctx.scrapes.filter((s) => s.target === target);
  const out: { point: ScrapePoint; from: number; to: number }[] = [];
  for (let i = 0; i < all.length; i += 1) {
    const point = all[i]!;
    const next = all[i + 1]?.run_ms ?? point.run_ms + point.duration_ms;
    const from = Math.max(w.from_ms, point.run_ms);
    const to = Math.min(w.to_ms, next);
    if (to > from) out.push({ point, from, to });
  }
  return out;
}

/** The deployment's targets (router, prefill, decode) are one deployment: what several of them say alike is
 * one piece of evidence, not one per target, so each kind of answer is a single vote naming every target. */
function scrapeVotes(w: Window, ctx: Context, signal: Signal, restarts: readonly string[]): void {
  const spanMs = Math.max(1, w.to_ms - w.from_ms);
  const down: string[] = [];
  const gone: string[] = [];
  const slow: string[] = [];
  const up: string[] = [];
  // Targets refused once in the episode at an address that answers outside it: alone too little to call, but
  // the same evidence as a direct canary refused at the engine's address (see refusedTogether).
  const refusedOnce: string[] = [];
  for (const target of ctx.targets) {
    // A scrape made while the client's own loop was late measures the client.
    const slots = scrapeSlots(ctx, target, w).filter((s) => !ctx.clientLate(s.point.run_ms, s.point.run_ms + s.point.duration_ms));
    if (slots.length < 2) continue;
    const outside = ctx.scrapesOutside(target);
    const outsideOk = outside.filter((s) => s.ok);
    // A target that never answered, in the trouble or out of it (a wrong URL, a router's API port), tells
    // nothing about the episode.
    if (outside.length >= 2 && outsideOk.length === 0 && slots.every((s) => !s.point.ok)) {
      const how = [...kinds(slots.map((s) => s.point)).entries()].map(([kind, n]) => `${kind} ${n}`).join(', ');
      signal.facts.push(`${target}'s /metrics never answered, in the episode or outside it (${how}): it says nothing about the trouble; check that monitor target's URL`);
      continue;
    }
    // An HTTP status is an answer: the process behind it was up. Only silence (timeouts, refusals, resets) counts.
    const failed = slots.filter((s) => !s.point.ok && !scrapeFailure(s.point.error).startsWith('HTTP '));
    const answeredWithError = slots.filter((s) => !s.point.ok).length - failed.length;
    if (answeredWithError > 0) signal.facts.push(`${target}'s /metrics answered ${answeredWithError} scrapes of the episode with an HTTP error: its HTTP server was up`);
    const downMs = failed.reduce((sum, s) => sum + (s.to - s.from), 0);
    const before = outside.length === 0 ? '' : `, against ${outsideOk.length} of ${outside.length} answered outside the trouble`;
    if (failed.length >= 2 && downMs >= DOWN_SHARE * spanMs) {
      const k = kinds(failed.map((s) => s.point));
      const how = [...k.entries()].map(([kind, n]) => `${kind} ${n}`).join(', ');
      const refused = (k.get('refused') ?? 0) * 2 > failed.length;
      const meaning = refused ? 'nothing listened at its address: the engine process was down' : 'the engine process itself stopped answering, not only the path to it';
      down.push(`${target}'s /metrics did not answer for ${s1(downMs)} of the ${s1(spanMs)} episode (${failed.length} failed scrapes: ${how})${before}: ${meaning}`);
      continue;
    }
    const refused = kinds(failed.map((s) => s.point)).get('refused') ?? 0;
    if (refused >= 2 && outsideOk.length >= 2) {
      // Refused at an address that answers outside the trouble: nothing listened there for a while — the
      // process was down and back (a restart), which an overloaded engine, still accepting, never is.
      gone.push(`${target}'s /metrics was refused ${refused} times in the episode (${failed.length} of ${slots.length} scrapes failed, ${s1(downMs)} of ${s1(spanMs)})${before}`);
      continue;
    }
    if (refused === 1 && outsideOk.length >= 2) refusedOnce.push(target);
    if (failed.length > 0) {
      signal.facts.push(`${target}'s /metrics did not answer for ${s1(downMs)} of the ${s1(spanMs)} episode (${failed.length} of ${slots.length} scrapes failed)`);
      continue;
    }
    const p50 = median(slots.map((s) => s.point.duration_ms)) ?? 0;
    const base = median(outsideOk.map((s) => s.duration_ms));
    if (base !== null && outsideOk.length >= 2 && p50 >= base * SLOW_SCRAPE_FACTOR && p50 >= base + SLOW_SCRAPE_MS) {
      slow.push(`${target} answered /metrics slowly over the episode (p50 ${dur(p50)} against ${dur(base)} outside it)`);
    } else {
      up.push(`${target} answered all ${slots.length} scrapes of /metrics over the episode (p50 ${dur(p50)}${base === null ? '' : `, ${dur(base)} outside it`})`);
    }
  }
  if (gone.length === 0 && down.length === 0) gone.push(...refusedTogether(w, ctx, refusedOnce));
  if (down.length > 0) signal.votes.push(vote(STRONG, down.join('; '), ['engine'], ['proxy', 'engine_overloaded']));
  if (gone.length > 0)
    signal.votes.push(
      vote(
        STRONG,
        `${gone.join('; ')}: nothing listened at its address for part of the episode — the engine process went down (an overloaded engine still accepts connections)`,
        ['engine'],
        ['engine_overloaded'],
      ),
    );
  // A restart no probe met down (it came back between two scrapes) still shows in its counters.
  if (restarts.length > 0 && down.length + gone.length > 0) signal.facts.push(restarts.join('; '));
  else if (restarts.length > 0)
    signal.votes.push(vote(STRONG, `${restarts.join('; ')}: the engine process restarted in the episode (an overloaded engine keeps its counts)`, ['engine'], ['engine_overloaded']));
  if (slow.length > 0) signal.votes.push(vote(WEAK, `${slow.join('; ')}: busy, yet answering`, ['engine_overloaded', 'engine']));
  if (up.length > 0)
    signal.votes.push(aliveVote(vote(WEAK, `${up.join('; ')}: ${up.length === 1 ? 'its HTTP server was' : 'their HTTP servers were'} up`, ['proxy', 'network'], ['engine'], ['proxy', 'network'])));
}

/**
 * A counter that went back in the episode: the process behind it restarted and counted from 0 again (a
 * Prometheus counter never decreases while its process lives), whether or not a scrape met it down.
 */
function restartsIn(w: Window, ctx: Context): string[] {
  return ctx.flows.flatMap((f) => {
    const r = f.resets ?? [];
    for (let i = 0; i < r.length; i += 2) {
      if (r[i]! <= w.to_ms && r[i + 1]! >= w.from_ms) return [`${f.target}'s ${f.counter} went back between the scrapes at ${s1(r[i]!)} and ${s1(r[i + 1]!)}: its process restarted, counting from 0`];
    }
    return [];
  });
}

/**
 * Refusals at the engine's addresses counted together, whichever probe met them: a scrape of a target refused
 * once (`refusedOnce`) and the direct canaries (straight to the engine) refused in the episode. Twice or more,
 * at addresses that answer outside the trouble, is what two refused scrapes of one target are: nothing listened
 * there for a while — a restart quick enough that each probe met the gap once (a quiet machine starts an
 * engine again in well under a second).
 */
function refusedTogether(w: Window, ctx: Context, refusedOnce: readonly string[]): string[] {
  const direct = ctx.canaries.filter((c) => c.leg === 'direct');
  const inside = ctx.canariesIn(w).filter((c) => c.leg === 'direct' && c.error_class === 'connection_refused').length;
  const answeredOutside = direct.filter((c) => c.status === 'ok' && (c.run_ms + Math.max(0, c.latency_ms) < w.from_ms || c.run_ms > w.to_ms)).length;
  const canaries = answeredOutside >= 2 ? inside : 0;
  if (refusedOnce.length + canaries < 2) return [];
  const parts = [...(refusedOnce.length > 0 ? [`${refusedOnce.join(', ')}'s /metrics once each`] : []), ...(canaries > 0 ? [`${canaries} direct canar${canaries === 1 ? 'y' : 'ies'}`] : [])];
  return [`the engine's addresses refused ${refusedOnce.length + canaries} connections in the episode (${parts.join(', ')}) and answered outside it`];
}

/** Share of the episode's time with work flowing (by slices: a counter moved, a request completed or
 * tokens streamed) from which the engine counts as making progress, and up to which as making none. */
export const FLOWING_SHARE = 0.5;
const STILL_SHARE = 0.2;
/** A slice with tokens arriving this share of it flows. */
export const STREAMING_SLICE_SHARE = 0.3;

function heldText(held: readonly HeldGauge[]): string {
  return held.map((h) => `${h.target} (≥ 1 in ${h.held} of ${h.scrapes} scrapes, up to ${h.max})`).join(', ');
}

/** How work went over an episode: `flowing` (most of it), `still` (hardly any of it, while requests waited),
 * `partly` (between), or `unjudged` (no flow counter nor client activity, or too few slices). */
export type Flow = 'flowing' | 'still' | 'partly' | 'unjudged';

/**
 * Work flowing: counters moving, completions, tokens streaming, judged slice by slice over the episode, so
 * a freeze is not hidden by the requests that completed just before it began. In a PD deployment the
 * decode's counters say whether answers flow; the prefill's move with prompts and first tokens alone, so a
 * prefill still taking requests while the decode stopped is named, not counted as flow.
 */
/** `interruption`: what stopped the engine for a stretch of the episode (a decode's stop, a restart), or null:
 * work around it then does not clear the engine. */
function flowVotes(ep: Episode, w: Window, ctx: Context, signal: Signal, interruption: string | null): Flow {
  const observed = ctx.flows.filter((f) => ctx.scrapesIn(f.target, w).filter((s) => s.ok).length >= 2);
  const observedFlows = ctx.answering(observed, (f) => f.target);
  const prefills = observed.filter((f) => !observedFlows.includes(f));
  const a = ctx.activity;
  if (observedFlows.length === 0 && a === null) return 'unjudged';
  const spanMs = Math.max(1, w.to_ms - w.from_ms);
  const sliceMs = Math.max(500, spanMs / 40);
  let slices = 0;
  let flowing = 0;
  let prefillMoving = 0;
  /** Slices in which each target's counter moved. */
  const movedSlices = new Map<string, number>();
  const movedNames = new Set<string>();
  let completions = 0;
  let late = 0;
  for (let from = w.from_ms; from < w.to_ms; from += sliceMs) {
    const slice = { from_ms: from, to_ms: Math.min(w.to_ms, from + sliceMs) };
    // While the client's own loop was late, what it saw arrive says nothing about the engine.
    if (ctx.clientLate(slice.from_ms, slice.to_ms)) {
      late += 1;
      continue;
    }
    slices += 1;
    let flows = false;
    for (const f of observedFlows) {
      if (ctx.flowMoved(f, slice)) {
        flows = true;
        movedNames.add(`${f.target} ${f.counter}`);
      }
    }
    if (prefills.some((f) => ctx.flowMoved(f, slice))) prefillMoving += 1;
    for (const f of observed) if (ctx.flowMoved(f, slice)) movedSlices.set(f.target, (movedSlices.get(f.target) ?? 0) + 1);
    const done = a?.completionsIn(slice.from_ms, slice.to_ms) ?? 0;
    completions += done;
    if (done > 0 || (a?.streamingShare(slice.from_ms, slice.to_ms) ?? 0) >= STREAMING_SLICE_SHARE) flows = true;
    if (flows) flowing += 1;
  }
  if (slices < 2) {
    if (late > 0) signal.facts.push(`flow not judged: the client's own loop was late through ${late} of ${late + slices} slices of the episode`);
    return 'unjudged';
  }
  const share = flowing / slices;
  const streaming = a?.streamingShare(w.from_ms, w.to_ms) ?? 0;
  const what: string[] = [];
  if (movedNames.size > 0) what.push(`${[...movedNames].join(', ')} moved`);
  if (completions > 0) what.push(`${completions} client request${completions === 1 ? '' : 's'} completed`);
  if (streaming >= 0.05) what.push(`tokens streamed to the client ${pct(streaming)} of the time`);
  const over = `${flowing} of ${slices} slices of ${dur(sliceMs)}${late > 0 ? `, ${late} more left out as the client was late` : ''}`;
  const prefillText =
    prefillMoving === 0 ? '' : `; ${prefills.map((f) => `${f.target} ${f.counter}`).join(', ')} moved in ${prefillMoving} of them: the prefill kept taking requests the decode did not answer`;
  if (share >= FLOWING_SHARE && interruption !== null) {
    // Work around a stop or a restart (before it, after it, the prefill taking requests) does not clear it.
    signal.facts.push(`work flowed in ${over}${what.length === 0 ? '' : ` (${what.join(', ')})`}, around ${interruption}: not weighed as progress${prefillText}`);
    return 'partly';
  }
  if (share >= FLOWING_SHARE) {
    // Progress clears a stuck engine; it is what an overloaded engine does, and fits a proxy or network
    // fault as well. The counters are the engine's own word; the client's completions alone may have gone
    // another way.
    signal.votes.push({
      ...aliveVote(
        vote(
          movedNames.size > 0 ? MEDIUM : WEAK,
          `work kept flowing through the episode (in ${over}: ${what.join(', ')}): the engine was making progress`,
          ['engine_overloaded', 'proxy', 'network'],
          ['engine'],
          ['proxy', 'network'],
        ),
      ),
      busy: true,
    });
    return 'flowing';
  }
  if (share <= STILL_SHARE && ((a?.inFlightShare(w.from_ms, w.to_ms) ?? 0) >= 0.5 || ep.hangs.length > 0)) {
    const flat = observedFlows.filter((f) => !movedNames.has(`${f.target} ${f.counter}`)).map((f) => `${f.target} ${f.counter}`);
    const counters =
      observedFlows.length > 0
        ? flat.length > 0
          ? `${flat.join(', ')} flat`
          : 'the counters barely moved'
        : ctx.flows.length > 0
          ? 'its counters unseen (the scrapes failed)'
          : 'no flow counter scraped';
    signal.votes.push(
      vote(
        MEDIUM,
        `nothing flowed through most of the episode (work in only ${over}): ${counters}, hardly a request completed or a token arrived while requests waited${prefillText}`,
        ['engine'],
        ['engine_overloaded'],
      ),
    );
    // Requests the deployment counted as running the whole time nothing flowed: held, not worked on (an
    // overloaded engine's running requests make tokens), and inside it, not lost on the way. A server whose
    // own counter moved (a prefill still at work) was working on its requests.
    const running = ctx.runningHeldIn(w).filter((h) => (movedSlices.get(h.target) ?? 0) <= STILL_SHARE * slices);
    if (running.length > 0) {
      signal.votes.push(
        vote(MEDIUM, `${heldText(running)} reported requests running through the episode while nothing flowed: the deployment held them and answered none`, ['engine'], ['engine_overloaded']),
      );
    }
    // A request held between prefill and decode the whole time nothing flowed: stuck inside the deployment
    // (a KV transfer that never finishes), not lost on the way to it.
    const held = ctx.handoffHeldIn(w);
    if (held.length > 0) {
      signal.votes.push(
        vote(
          MEDIUM,
          `the PD hand-off queues (bootstrap, KV transfer) held a request through the episode while nothing flowed: ${heldText(held)}: a request stuck between prefill and decode`,
          ['engine'],
          ['proxy', 'network', 'engine_overloaded'],
        ),
      );
    }
    return 'still';
  }
  signal.facts.push(`work flowed in ${over} of the episode${what.length === 0 ? '' : ` (${what.join(', ')})`}${prefillText}`);
  return 'partly';
}

/** Outside the trouble, a hand-off queue holding a request in at most this share of scrapes is quiet: one
 * held through an episode is the failed request, not the load. At least HANDOFF_QUIET_SCRAPES read it. */
const HANDOFF_QUIET_SHARE = 0.2;
const HANDOFF_QUIET_SCRAPES = 5;

/**
 * A PD hand-off queue holding a request through the episode while work went on, where outside the trouble it
 * was nearly always empty: the failed request is held between prefill and decode (a bootstrap or a KV
 * transfer that never completes). With nothing flowing, flowVotes says it.
 */
function handoffVotes(w: Window, ctx: Context, flow: Flow, signal: Signal): void {
  if (flow === 'still') return;
  const quiet: string[] = [];
  const held = ctx.handoffHeldIn(w).filter((h) => {
    const outside = ctx.scrapesOutside(h.target).filter((s) => s.ok && s.handoff !== undefined && s.handoff !== null);
    const busy = outside.filter((s) => (s.handoff ?? 0) >= 1).length;
    if (outside.length < HANDOFF_QUIET_SCRAPES || busy > HANDOFF_QUIET_SHARE * outside.length) return false;
    quiet.push(`${h.target} ${busy} of ${outside.length}`);
    return true;
  });
  if (held.length === 0) return;
  const where = held.map((h) => `${h.target}'s`).join(' and ');
  signal.votes.push({
    ...vote(
      STRONG,
      `the PD hand-off queues held a request through the episode (${heldText(held)}) where outside the trouble they seldom held one (scrapes with one: ${quiet.join(', ')}): the failed request is held between prefill and decode, a bootstrap or KV transfer that does not complete`,
      ['engine'],
      ['proxy', 'network', 'engine_overloaded'],
    ),
    holds: `${where} hand-off queues (bootstrap, KV transfer)`,
  });
}

/** A PD or waiting queue as an operator reads it. */
function queueName(name: string): string {
  const base = baseName(name);
  if (/inflight|infight/.test(base)) return 'inflight queue (KV transfer to decode)';
  if (/bootstrap/.test(base)) return 'bootstrap queue (the prefill/decode handshake)';
  if (/prealloc/.test(base)) return 'prealloc queue (KV memory on decode)';
  if (/transfer/.test(base)) return 'transfer queue (KV arriving on decode)';
  if (/grammar/.test(base)) return 'grammar queue';
  return 'waiting queue';
}

/** Within this of each other, a failed request of the episode and a request the floor step matched are one. */
const SAME_REQUEST_MS = 100;

/** The failed request's own send that matched the floor's request `r` (its send, else the one its life holds). */
function sendOf(r: { start_ms: number; end_ms: number }, starts: readonly number[]): number {
  return starts.find((s) => Math.abs(s - r.start_ms) <= SAME_REQUEST_MS) ?? starts.find((s) => r.start_ms <= s && s <= r.end_ms) ?? r.start_ms;
}

/** The median gap between `target`'s scrapes (any target's when it has none: the monitor scrapes them all on
 * one interval): how late after a change a scrape can first see it. */
function scrapeGapMs(ctx: Context, target: string): number {
  const gap = (at: readonly number[]): number | null => median(at.slice(1).map((t, i) => t - at[i]!));
  const own = ctx.scrapes.filter((s) => s.target === target).map((s) => s.run_ms);
  return gap(own) ?? gap(ctx.targets.length === 0 ? [] : ctx.scrapes.filter((s) => s.target === ctx.targets[0]).map((s) => s.run_ms)) ?? 0;
}

/** When the step came against when the failed request went in: one moment only when seen at most a scrape after
 * the send. A step seen before the send is the load's: the request joined a floor the load already held. */
function stepStory(stepMs: number, sendMs: number, gapMs: number, level: number): string {
  if (stepMs >= sendMs - SAME_REQUEST_MS && stepMs - sendMs <= gapMs + SAME_REQUEST_MS) return `at ${s1(stepMs)}, when the failed request sent at ${s1(sendMs)} went in`;
  if (stepMs < sendMs)
    return `at ${s1(stepMs)}, ${dur(sendMs - stepMs)} before the failed request it matches was sent (${s1(sendMs)}): the load held the queue at ${level} already, and that request kept it there from its send on`;
  return `at ${s1(stepMs)}, ${dur(stepMs - sendMs)} after the failed request it matches was sent (${s1(sendMs)}): it went in at its send, and the step seen then is the floor's first sample, not that moment`;
}

/**
 * A queue gauge whose floor stepped up by one when a request of this episode was sent and stayed up while
 * other work went through it (`pinned_under_load`): the engine's own word that it holds that request. It
 * names the queue and server whether or not other work flowed: a live engine can still hold one request.
 */
function heldRequestVotes(ep: Episode, ctx: Context, signal: Signal): void {
  const starts = [...ep.hangs.map((h) => h.from_ms), ...ep.errors.map((e) => e.from_ms)];
  for (const g of ctx.gauges) {
    const f = g.floor;
    if (g.verdict !== 'pinned_under_load' || f === undefined) continue;
    const matched = f.requests.filter((r) => starts.some((s) => Math.abs(s - r.start_ms) <= SAME_REQUEST_MS || (r.start_ms <= s && s <= r.end_ms)));
    // The match is a coincidence of two times the client took, the request's send and the scrape that saw the
    // step: while its own loop was late between them, its scrapes waited too, and the step is its own delay.
    const readLate = (r: { start_ms: number }): boolean => ctx.clientLate(Math.min(r.start_ms, f.from_ms), Math.max(r.start_ms, f.from_ms));
    const late = matched.find(readLate);
    if (late !== undefined)
      signal.facts.push(
        `${g.target}'s ${g.name} floor step at ${s1(f.from_ms)} not weighed: the client's own loop was late between the failed request's send (${s1(late.start_ms)}) and the scrape that saw the step`,
      );
    const mine = matched.filter((r) => !readLate(r));
    if (mine.length === 0) continue;
    const held = f.to_ms === null ? `and never came down (held ${f.held_s.toFixed(1)} s, to the end of the run)` : `until ${s1(f.to_ms)} (${f.held_s.toFixed(1)} s)`;
    const rotation = f.above_samples > 0 ? `, while other requests went through it above that floor (${f.returns} return${f.returns === 1 ? '' : 's'} to ${f.level})` : '';
    signal.votes.push({
      ...vote(
        DECISIVE,
        `${g.target}'s ${g.name} floor stepped from ${f.level - 1} to ${f.level} ${stepStory(f.from_ms, sendOf(mine[0]!, starts), scrapeGapMs(ctx, g.target), f.level)}, ${held}${rotation}: that request is stuck in the ${g.target}'s ${queueName(g.name)}`,
        ['engine'],
        ['proxy', 'network', 'engine_overloaded'],
      ),
      holds: `${g.target}'s ${queueName(g.name)}`,
    });
  }
}

function gaugeVotes(w: Window, ctx: Context, flow: Flow, signal: Signal, stop: DecodeStop | null): void {
  for (const g of ctx.gauges) {
    if (g.verdict !== 'pinned') continue;
    const from = g.stuck?.from_ms ?? -Infinity;
    const to = g.stuck?.to_ms ?? Infinity;
    if (from > w.to_ms || to < w.from_ms) continue;
    const labels = Object.entries(g.labels)
      .filter(([k]) => k !== 'model_name')
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    const when = g.stuck === undefined ? `for ${g.longest_nonzero_s.toFixed(1)} s` : `from ${s1(g.stuck.from_ms)} to ${s1(g.stuck.to_ms)}`;
    signal.votes.push(
      vote(
        STRONG,
        `engine gauge ${g.name}${labels === '' ? '' : `{${labels}}`} on ${g.target} is pinned at ${Number.isInteger(g.last_value) ? g.last_value : Number(g.last_value.toPrecision(4))} ${when} with nothing flowing: a request is stuck inside the engine`,
        ['engine'],
        ['proxy', 'engine_overloaded'],
      ),
    );
  }
  const q = ctx.queueIn(w);
  if (q.observed < 2 || q.queued * 2 < q.observed) return;
  if (flow === 'still') {
    // A queue in front of an engine that worked none of it off: stopped, or too slow to finish any request
    // (each cut before its answer): no more a sign of overload than of a stop, yet of an engine at work
    // where a path's timeout ended the requests (see weighCut).
    signal.votes.push({
      ...vote(
        WEAK,
        `requests waited in the engine's queue (≥ 1 in ${q.queued} of ${q.observed} scrapes, up to ${q.max}) while nothing flowed: an engine that finished none of them, stopped or too slow`,
        ['engine', 'engine_overloaded'],
      ),
      busy: true,
    });
  } else {
    const text = `requests waited in the engine's queue: its queue gauge was ≥ 1 in ${q.queued} of ${q.observed} scrapes over the episode (up to ${q.max})`;
    // A queue in front of a decode that stopped: the stop made it, whatever the load.
    if (stop === null) signal.votes.push({ ...vote(MEDIUM, text, ['engine_overloaded']), busy: true });
    else signal.facts.push(`${text}: not weighed as overload, ${stop.target} having stopped`);
  }
}

function ttftVotes(ep: Episode, w: Window, ctx: Context, flow: Flow, signal: Signal, stop: DecodeStop | null): void {
  const a = ctx.activity;
  if (a === null) return;
  const now = a.ttft(w.from_ms, w.to_ms);
  const before = a.ttft(0, Math.max(0, ep.from_ms - 1));
  // A decode that stopped explains both: they say nothing of overload then.
  const notWeighed = stop === null ? '' : `not weighed as overload, ${stop.target} having stopped`;
  if (now.count >= 2 && before.count >= 3 && now.meanMs >= before.meanMs * TTFT_RISE_FACTOR && now.meanMs - before.meanMs >= TTFT_RISE_MS) {
    const text = `TTFT rising: a mean of ${dur(now.meanMs)} for the ${now.count} requests sent over the episode that completed, against ${dur(before.meanMs)} before it`;
    // Measured through the whole path: a proxy holding requests raises it too, so only a hint.
    if (stop === null) signal.votes.push(vote(WEAK, text, ['engine_overloaded']));
    else signal.facts.push(`${text}: ${notWeighed}`);
  }
  const firstToken = ep.hangs.filter((h) => h.phase === 'first_token').length;
  // With nothing flowing, a completion or two meanwhile does not make the engine slow rather than stopped.
  if (flow !== 'still' && ep.hangs.length >= 2 && firstToken * 2 > ep.hangs.length && now.count >= 1) {
    const text = `${firstToken} of ${ep.hangs.length} hung requests had their response headers and waited for a first token while ${now.count} others sent meanwhile completed`;
    if (stop === null) signal.votes.push(vote(WEAK, `${text}: a slow engine, not a dead one`, ['engine_overloaded']));
    else signal.facts.push(`${text}: ${notWeighed}`);
  }
}

export function engineSignal(ep: Episode, w: Window, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  if (ctx.targets.length === 0) signal.facts.push('no /metrics was scraped: name the engine (or prefill and decode) in monitor.targets to see whether it answered and whether work flowed');
  // A process that restarted, a decode that stopped for a stretch of the episode: work flowing around either.
  const restarts = restartsIn(w, ctx);
  scrapeVotes(w, ctx, signal, restarts);
  const stopped = decodeStop(w, ctx);
  const interruption = stopped !== null ? `${stopped.target}'s stop` : restarts.length > 0 ? "the engine's restart" : null;
  const flow = flowVotes(ep, w, ctx, signal, interruption);
  // With nothing flowing, flowVotes said the engine stopped already.
  const stop = flow === 'still' ? null : stopped;
  if (stop !== null) {
    signal.votes.push(
      vote(
        STRONG,
        `the decode stopped: ${stopText(stop)}: a decode at its capacity keeps making tokens, so the queue and the slow first tokens came from a stop, not from overload`,
        ['engine'],
        ['engine_overloaded'],
      ),
    );
  }
  gaugeVotes(w, ctx, flow, signal, stop);
  handoffVotes(w, ctx, flow, signal);
  heldRequestVotes(ep, ctx, signal);
  ttftVotes(ep, w, ctx, flow, signal, stop);
  return signal;
}
