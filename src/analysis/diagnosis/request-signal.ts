// Failures that depend on the request: the episode's failed requests against the run's completed ones, on
// what each request was (its body's size, its prompt tokens, its round, its place on its connection). The
// feature that separates them (Mann–Whitney, two-sided, Bonferroni over the features) is named; when it is the
// request's size, failures the larger, and the completed requests' TTFT climbs with size to reach the failures'
// deadline at their size, the engine is slow for long prompts — however fast its small canaries.
import type { Context } from './context.js';
import type { Episode } from './episodes.js';
import type { CompletedPoint, RequestFeatures } from './inputs.js';
import { bitsText, creditedBits, creditedSe, mannWhitney, normalQuantile, tQuantile } from './stats.js';
import { dur, median, pValue } from './text.js';
import { STRONG, vote, type Signal, type Vote } from './votes.js';

/** Significance of each test here (two-sided for the separation, shared by the features tested). */
export const FEATURE_ALPHA = 0.05;

interface Feature {
  name: string;
  read: (f: RequestFeatures) => number | null;
  /** A size: failures the larger may be the engine slow on long prompts. */
  size: boolean;
}

/** In this order: a tie goes to the first (the body's size says more than the round that grew it). */
const FEATURES: readonly Feature[] = [
  { name: 'request body size (bytes)', read: (f) => f.request_bytes, size: true },
  { name: 'prompt tokens', read: (f) => f.prompt_tokens, size: true },
  { name: 'round of the conversation', read: (f) => f.round, size: false },
  { name: 'request number on its connection', read: (f) => f.nth, size: false },
];

interface Separation {
  feature: Feature;
  failed: number[];
  completed: number[];
  auc: number;
  z: number;
}

function values(items: readonly (RequestFeatures | undefined)[], read: Feature['read']): number[] {
  return items.flatMap((f) => {
    const v = f === undefined ? null : read(f);
    return v === null || !Number.isFinite(v) ? [] : [v];
  });
}

/** Ordinary least squares of y on x: slope, its standard error, and the prediction at x0 with its standard error. */
function regression(xs: readonly number[], ys: readonly number[], x0: number): { slope: number; seSlope: number; at: number; seAt: number; df: number } | null {
  const n = xs.length;
  if (n < 4) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i += 1) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (ys[i]! - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  let rss = 0;
  for (let i = 0; i < n; i += 1) rss += (ys[i]! - my - slope * (xs[i]! - mx)) ** 2;
  const s = Math.sqrt(rss / (n - 2));
  return { slope, seSlope: s / Math.sqrt(sxx), at: my + slope * (x0 - mx), seAt: s * Math.sqrt(1 / n + (x0 - mx) ** 2 / sxx), df: n - 2 };
}

function separationText(s: Separation): string {
  const larger = s.auc > 0.5;
  return `the ${s.feature.name} separates the ${s.failed.length} failed requests from ${s.completed.length} completed ones: median ${Math.round(median(s.failed) ?? 0)} against ${Math.round(median(s.completed) ?? 0)}, the failed ${larger ? 'larger' : 'smaller'} in ${Math.round(100 * (larger ? s.auc : 1 - s.auc))}% of pairs (Mann–Whitney z = ${s.z.toFixed(1)}, ${pValue(2 * (1 - normalCdf(Math.abs(s.z))))})`;
}

/** Φ, to state a p-value (Zelen & Severo 26.2.17, error under 7.5e-8). */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const d = 0.3989423 * Math.exp((-z * z) / 2);
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))));
  return z > 0 ? 1 - p : p;
}

export function requestSignal(ep: Episode, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  const failedFeatures = [...ep.hangs.map((h) => h.features), ...ep.errors.map((e) => e.features)];
  if (ctx.completed.length === 0 || failedFeatures.every((f) => f === undefined)) return signal;
  const crit = normalQuantile(1 - FEATURE_ALPHA / (2 * FEATURES.length));
  const tested = FEATURES.flatMap((feature): Separation[] => {
    const failed = values(failedFeatures, feature.read);
    const completed = values(
      ctx.completed.map((c) => c.features),
      feature.read,
    );
    if (failed.length === 0 || completed.length === 0) return [];
    return [{ feature, failed, completed, ...mannWhitney(failed, completed) }];
  });
  const separating = tested.filter((s) => Math.abs(s.z) > crit).sort((a, b) => Math.abs(b.z) - Math.abs(a.z));
  const best = separating[0];
  if (best === undefined) return signal;
  // In a growing conversation the round and the size rise together, and which separates a little better is
  // chance: a size that separates too (the failed the larger) is the one tested against the engine's TTFT trend.
  const larger = separating.find((s) => s.feature.size && s.auc > 0.5);
  if (larger === undefined) {
    signal.facts.push(
      `${separationText(best)}: the failures depend on the request; ${best.feature.size ? 'the small ones failing' : 'what that points to is not weighed here'} (a connection's use: its age and reuse on the path)`,
    );
    return signal;
  }
  const also = larger === best ? '' : ` (the ${best.feature.name} separates them too, z = ${best.z.toFixed(1)}: it grows with the size)`;
  signal.votes.push(...slowForLong(ep, ctx, larger, crit, `${separationText(larger)}${also}`, signal));
  return signal;
}

/** The deadline the failures met: their median, or null when none is known. */
function deadlineOf(ep: Episode): number | null {
  return median(ep.hangs.flatMap((h) => (h.deadline_ms === null ? [] : [h.deadline_ms])));
}

/**
 * Failures the larger: the completed requests' TTFT against the same size. A slope significantly above 0
 * whose prediction at the failures' median size reaches their deadline says the engine
 * was slow for long prompts: the vote credits the weaker of the two tests (separation, slope).
 */
function slowForLong(ep: Episode, ctx: Context, best: Separation, crit: number, separation: string, signal: Signal): Vote[] {
  const timed = ctx.completed.filter((c): c is CompletedPoint & { ttft_ms: number } => c.ttft_ms !== null && best.feature.read(c.features) !== null);
  const xs = timed.map((c) => best.feature.read(c.features)!);
  const ys = timed.map((c) => c.ttft_ms);
  const size = median(best.failed) ?? 0;
  const fit = regression(xs, ys, size);
  const deadline = deadlineOf(ep);
  const settle = `the completed requests' TTFT against their ${best.feature.name} would tell an engine slow on long prompts from a path that fails large requests`;
  if (fit === null || deadline === null) {
    signal.facts.push(`${separation}: the larger requests failed; ${settle}`);
    return [];
  }
  const tCrit = tQuantile(1 - FEATURE_ALPHA, fit.df);
  const zSlope = fit.slope / fit.seSlope;
  // The trend itself, not its interval, must reach the deadline: in a run whose conversations grow, the failures
  // of any fault are the later, larger requests, and a noisy TTFT's interval reaches far.
  const reaches = fit.at >= deadline;
  const trend = `completed requests' TTFT ${zSlope > tCrit ? 'climbs' : 'does not climb significantly'} with it (${(fit.slope * 1000).toFixed(2)} ms per 1,000, t = ${zSlope.toFixed(1)}), which predicts ${dur(Math.max(0, fit.at))} at the failed requests' median ${Math.round(size)} against their ${dur(deadline)} deadline`;
  if (zSlope <= tCrit || !reaches) {
    // The path fits better only when the trend is measured below the deadline there (its one-sided interval);
    // a few scattered completions (a cold first round, queue waits) leave it open, and that is what is said.
    const margin = tCrit * fit.seAt;
    signal.facts.push(
      fit.at + margin < deadline
        ? `${separation}; ${trend}: the engine's own trend does not explain the failures — the path failing large requests (a body or buffer limit) fits better, or a fault that began once the conversations had grown (their later requests are the larger); ${settle}`
        : `${separation}; ${trend} (± ${dur(margin)} at that size): too few completed requests, or too scattered, to tell whether the engine's trend reaches the deadline there; ${settle}`,
    );
    return [];
  }
  const bits = Math.min(creditedBits(Math.abs(best.z), crit, STRONG), creditedBits(zSlope, tCrit, STRONG));
  if (bits === 0) return [];
  const why = `it is slow on the failed requests' kind: ${best.feature.name} ${Math.round(size)}, where its TTFT trend reaches the deadline`;
  return [
    {
      ...vote(bits, `${separation}; ${trend}: the engine was slow for long prompts, however fast its small canaries (${bitsText(bits)}, the weaker of the two tests)`, ['engine']),
      se: Math.abs(best.z) - crit < zSlope - tCrit ? creditedSe(Math.abs(best.z), crit, STRONG) : creditedSe(zSlope, tCrit, STRONG),
      selective: why,
    },
  ];
}
