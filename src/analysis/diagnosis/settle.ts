// An episode left `unknown`: why (too little said, or the evidence split between two verdicts), and the one
// measurement that would settle it — the one that tells those two verdicts apart, among what this run lacked.
import type { CanaryComparison } from '../../types/index.js';
import type { Context } from './context.js';
import type { Candidate } from './votes.js';

/** Canaries a leg needs in an episode for the failure comparison to say anything (Fisher's test on fewer
 * cannot reach p < 0.05 whatever the counts). */
const CANARIES_TO_COMPARE = 4;

const bits = (n: number): string => `${n} bit${n === 1 ? '' : 's'}`;

const ENGINE_SIDE: ReadonlySet<Candidate> = new Set(['engine', 'engine_overloaded']);
const CLIENT_SIDE: ReadonlySet<Candidate> = new Set(['client', 'host_starved']);

/** What tells the path from the engine: canaries on both legs, often enough for the episode's span. */
function canariesToTell(canaries: CanaryComparison | null, ctx: Context, spanMs: number): string | null {
  const fewest = canaries === null ? 0 : Math.min(canaries.direct.slots, canaries.proxied.slots);
  if (fewest >= CANARIES_TO_COMPARE) return null;
  // Often enough that a span like this one holds CANARIES_TO_COMPARE a leg.
  const every = Math.max(0.1, Math.floor((spanMs / CANARIES_TO_COMPARE / 1000) * 10) / 10);
  if (ctx.canaryIntervalMs === null || canaries === null)
    return `canaries on both legs (target.bypass, a direct URL of the engine, and monitor.canary_interval_s ${every} or less): the proxied leg failing alone is the path, both failing the engine`;
  return `canaries more often (monitor.canary_interval_s ${every} or less: the episode held ${fewest} on its thinner leg, ${CANARIES_TO_COMPARE} are needed to compare): the proxied leg failing alone is the path, both failing the engine`;
}

/** The measurement that tells `a` from `b` (either order), given what the run had. */
function tellApart(a: Candidate, b: Candidate, canaries: CanaryComparison | null, ctx: Context, spanMs: number): string {
  const pair = new Set([a, b]);
  const has = (x: ReadonlySet<Candidate>) => [...pair].some((c) => x.has(c));
  const scraped = ctx.targets.length > 0;
  if (has(CLIENT_SIDE)) return 'the same run with fewer agents per process (agents.workers, --shard) or the client on cores of its own: its hangs then are not its own delay';
  if (pair.has('proxy') && has(ENGINE_SIDE)) {
    return (
      canariesToTell(canaries, ctx, spanMs) ??
      (scraped
        ? "a probe reading the engine's logs (monitor.probes, on: [hang, end]): its own timeout lines place the request"
        : 'the engine scraped (monitor.targets): whether it answered and work flowed')
    );
  }
  if (pair.has('engine') && pair.has('engine_overloaded'))
    return scraped
      ? "a probe reading the engine's logs (monitor.probes, on: [hang, end]) or its queue gauges over a longer run: stopped or slow"
      : 'the engine scraped (monitor.targets): whether work kept flowing (slow) or stopped';
  if (pair.has('network')) return 'canaries on both legs (target.bypass and monitor.canary_interval_s): which leg could not connect';
  return canariesToTell(canaries, ctx, spanMs) ?? 'a longer run: more failures of the same kind';
}

/**
 * The sentence an `unknown` episode carries: the two best verdicts and their bits, or that nothing spoke for any
 * enough, and the measurement that would settle it.
 */
export function settleUnknown(scores: Partial<Record<Candidate, number>>, canaries: CanaryComparison | null, ctx: Context, spanMs: number): string {
  const all = (Object.entries(scores) as [Candidate, number][]).sort((x, y) => y[1] - x[1]);
  const ranked = all.filter(([, bits]) => bits > 0);
  const [first, second] = ranked;
  if (first === undefined) {
    const what = canariesToTell(canaries, ctx, spanMs) ?? (ctx.targets.length === 0 ? 'the engine scraped (monitor.targets)' : 'a longer run: more failures of the same kind');
    return `unknown: nothing spoke for any verdict in its own right; what would settle it: ${what}`;
  }
  // One verdict short of a call: the rival is the next best, whatever its sign.
  const rival = (second ?? all.find(([c]) => c !== first[0]))?.[0];
  const split = second === undefined ? `${first[0]} ${bits(first[1])}, short of a verdict` : `split between ${first[0]} (${bits(first[1])}) and ${second[0]} (${bits(second[1])})`;
  const what = rival === undefined ? (canariesToTell(canaries, ctx, spanMs) ?? 'a longer run: more failures of the same kind') : tellApart(first[0], rival, canaries, ctx, spanMs);
  return `unknown: ${split}; what would settle it: ${what}`;
}
