// Whether a PD deployment's decode stopped making tokens for a stretch of the episode while it had work: requests
// running or waiting in its own queue (not those still in hand-off, waiting for the prefill's KV), measured
// against its own stretches outside the trouble.
// A decode at its capacity steps its running requests many times a second and admits waiting ones as others
// finish, so its answer-token counters keep moving however loaded it is; one that has some and moves none
// of its counters for longer than it ever did outside the trouble stopped (SGLang's stuck scheduler: requests
// queued, none running, nothing made). A queue and slow first tokens then follow from the stop, and say
// nothing of overload.
import type { Context, Window } from './context.js';
import type { ScrapePoint } from './inputs.js';
import { median, s1 } from './text.js';

/** Intervals of a decode with work, outside the trouble, that must have been read to know how long
 * its counters stand still between moves when it works (they may move only as answers finish). */
const BASELINE_INTERVALS = 10;

export interface DecodeStop {
  target: string;
  /** The longest stretch of the episode with requests to work on and no counter of the target moving. */
  from_ms: number;
  to_ms: number;
  /** Requests it had running or waiting over that stretch, at most. */
  requests: number;
  /** The longest such stretch outside the trouble, and the scrapes' median gap (the stretches' resolution). */
  baseline_ms: number;
  gap_ms: number;
}

/** Requests a decode has to make tokens for: running, or waiting in its own queue. */
const work = (p: ScrapePoint): number => (p.running ?? 0) + (p.queue ?? 0);

interface Stretch {
  from_ms: number;
  to_ms: number;
  requests: number;
}

/** Consecutive answered scrapes of `target` with requests running or waiting at both ends and none of its
 * counters moving between them, joined into stretches; with the count of intervals with work at both ends. */
function stillStretches(ctx: Context, target: string, points: readonly ScrapePoint[]): { stretches: Stretch[]; busy: number } {
  const flows = ctx.flows.filter((f) => f.target === target);
  const stretches: Stretch[] = [];
  let open: Stretch | null = null;
  let busyIntervals = 0;
  for (let i = 1; i < points.length; i += 1) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const busy = work(a) >= 1 && work(b) >= 1;
    if (busy) busyIntervals += 1;
    // Strictly inside the interval: a move ending at a or starting at b belongs to its neighbour.
    const inside = { from_ms: a.run_ms + 1, to_ms: b.run_ms - 1 };
    const still = busy && !ctx.clientLate(a.run_ms, b.run_ms) && !flows.some((f) => ctx.flowMoved(f, inside));
    if (!still) {
      open = null;
      continue;
    }
    if (open === null) {
      open = { from_ms: a.run_ms, to_ms: b.run_ms, requests: Math.max(work(a), work(b)) };
      stretches.push(open);
    } else {
      open.to_ms = b.run_ms;
      open.requests = Math.max(open.requests, work(b));
    }
  }
  return { stretches, busy: busyIntervals };
}

const longest = (xs: readonly Stretch[]): Stretch | null => xs.reduce<Stretch | null>((m, x) => (m === null || x.to_ms - x.from_ms > m.to_ms - m.from_ms ? x : m), null);

/**
 * The decode's stop in the episode: its longest stretch with work and no counter moving, when that
 * is longer than its longest outside the trouble by more than two scrape gaps (a stretch's ends are each known
 * to a gap) and spans two gaps at least. Null when no decode is scraped with a running or waiting gauge and an answer
 * counter, when outside the trouble it was not read working long enough to know its pace, or when it did not stop.
 */
export function decodeStop(w: Window, ctx: Context): DecodeStop | null {
  let best: DecodeStop | null = null;
  for (const d of decodesOf(ctx)) {
    const inEpisode = d.points.filter((p) => p.run_ms >= w.from_ms && p.run_ms <= w.to_ms);
    const stop = longest(stillStretches(ctx, d.target, inEpisode).stretches);
    if (stop === null) continue;
    const ms = stop.to_ms - stop.from_ms;
    if (ms < 2 * d.gapMs || ms <= d.baselineMs + 2 * d.gapMs) continue;
    if (best === null || ms > best.to_ms - best.from_ms) best = { target: d.target, ...stop, baseline_ms: d.baselineMs, gap_ms: d.gapMs };
  }
  return best;
}

/** A decode's readings and its pace outside the trouble: the same for every episode of a diagnosis. */
interface DecodePace {
  target: string;
  points: ScrapePoint[];
  gapMs: number;
  baselineMs: number;
}

const paces = new WeakMap<Context, DecodePace[]>();

/** The decodes judged (scraped with a running or waiting gauge and an answer counter, read working outside the
 * trouble long enough to know their pace), computed once per diagnosis (set `troubled` first). */
function decodesOf(ctx: Context): DecodePace[] {
  const known = paces.get(ctx);
  if (known !== undefined) return known;
  const out: DecodePace[] = [];
  for (const target of ctx.targets.filter((t) => ctx.sideOf(t) === 'decode' && ctx.flows.some((f) => f.target === t))) {
    const points = ctx.scrapes.filter((s) => s.target === target && s.ok && (s.running !== null || s.queue !== null)).sort((a, b) => a.run_ms - b.run_ms);
    if (points.length < 3) continue;
    const outside = new Set(ctx.scrapesOutside(target));
    const base = stillStretches(
      ctx,
      target,
      points.filter((p) => outside.has(p)),
    );
    if (base.busy < BASELINE_INTERVALS) continue;
    const baseline = longest(base.stretches);
    out.push({ target, points, gapMs: median(points.slice(1).map((p, i) => p.run_ms - points[i]!.run_ms))!, baselineMs: baseline === null ? 0 : baseline.to_ms - baseline.from_ms });
  }
  paces.set(ctx, out);
  return out;
}

/** The stop told: where, how long, against what it did outside the trouble. */
export function stopText(stop: DecodeStop): string {
  const held = `${s1(stop.to_ms - stop.from_ms)} (${s1(stop.from_ms)} to ${s1(stop.to_ms)}) while it had up to ${stop.requests} request${stop.requests === 1 ? '' : 's'} running or waiting`;
  const before =
    stop.baseline_ms === 0 ? 'outside the trouble they moved between every two scrapes while it had some' : `outside the trouble they stood still ${s1(stop.baseline_ms)} at most while it had some`;
  return `${stop.target} made no token for ${held}: none of its answer counters moved; ${before} (scrapes every ${s1(stop.gap_ms)})`;
}
