// `roundload ab FILE --plan`: before the GPUs are booked, how many pairs (and how long) a sequential A/B
// needs to settle each headline figure at the file's min_effect, from the spread of pair differences in a
// short pilot or an earlier ab's folder. Pure: pairs of runs in, a plan out.
//
// For each figure, at the spread seen (the standard deviation of the pairs' differences) and the stopping
// rule's own per-look levels (boundary.ts), it finds the fewest pairs at which
//   - no difference would be called `equivalent` (the one-sided interval fits inside ±min_effect), and
//   - a difference of twice min_effect would be called `better`/`worse` (the interval clears half the margin),
// and, where max_pairs is too few for either, the max_pairs that would do. A spread from two or three pairs is
// itself uncertain: the plan says how many pairs it rests on.
import type { AbFamily } from '../types/index.js';
import { difference } from './across-runs.js';
import { lookAlpha } from './boundary.js';
import { FIGURE_SPECS, phaseNeed, phaseNeedLines, runValue, type PhaseNeed } from './figures.js';
import type { RunData } from './load.js';
import { halfWidth, MIN_PAIRS } from './sequential.js';
import { mean, sampleSd } from './stats.js';

export interface FigurePlan {
  name: string;
  family: AbFamily;
  /** Pair differences the spread rests on. */
  pairs: number;
  /** Mean and standard deviation of the pairs' differences (percent of A, or points); null below 2 pairs. */
  mean: number | null;
  sd: number | null;
  /** Fewest pairs that settle "no difference" as equivalent, and "2× min_effect" as better/worse, within
   * max_pairs; null when max_pairs is too few (see `max_pairs_needed`). */
  equivalent_after: number | null;
  effect_after: number | null;
  /** The max_pairs (≤ 100) at which both would be settled; null when not even 100 would. */
  max_pairs_needed: number | null;
}

export interface AbPlanResult {
  figures: FigurePlan[];
  /** Seconds a pair took (both runs, with setup and health waits when measured). */
  pair_s: number | null;
  /** Pairs and seconds to settle every figure the rule waits for; null when some figure cannot be. */
  pairs_needed: number | null;
  seconds_needed: number | null;
  /** Percentiles (headline or not) some runs lack for want of requests: how long a phase must be for each. */
  phase_needs: { figure: string; need: PhaseNeed }[];
  text: string[];
}

const LIMIT = 100;

/**
 * The spread a forecast is made at, from the standard deviation `sd` of `pairs` pair differences: `sd` over the
 * median of its own sampling ratio (√(χ²ₙ₋₁/(n − 1)), its median by Wilson–Hilferty), so the forecast is as
 * often too many pairs as too few. From 2 pairs the seen spread is below the true one in most pilots (its
 * median is 0.67 σ): forecast at it, a 2-pair pilot said 6 pairs where the rule took 11 (bench/ab-plan.ts).
 */
export function forecastSd(sd: number, pairs: number): number {
  const k = pairs - 1;
  if (k < 1) return sd;
  const medianRatio = (1 - 2 / (9 * k)) ** 3;
  return sd / Math.sqrt(medianRatio);
}

/** Fewest pairs n (MIN_PAIRS ≤ n ≤ maxPairs) at which both calls would be made with that max_pairs's levels:
 * the plan's forecast for a figure whose pair differences spread by `sd` (bench/ab-plan.ts checks it against the
 * stopping rule run on simulated pairs). */
export function settledAt(sd: number, margin: number, maxPairs: number): { equivalent: number | null; effect: number | null } {
  const two = lookAlpha(0.05, maxPairs, MIN_PAIRS, 2) / 2;
  const one = lookAlpha(0.05, maxPairs, MIN_PAIRS, 1);
  let equivalent: number | null = null;
  let effect: number | null = null;
  for (let n = MIN_PAIRS; n <= maxPairs && (equivalent === null || effect === null); n += 1) {
    if (equivalent === null && halfWidth(sd, n, one) < margin) equivalent = n;
    // An effect of 2 × margin: the estimate passes the margin and the interval clears half of it.
    if (effect === null && halfWidth(sd, n, two) <= 1.5 * margin) effect = n;
  }
  return { equivalent, effect };
}

function planFigure(name: string, family: AbFamily, diffs: readonly number[], margin: number, maxPairs: number): FigurePlan {
  const base = { name, family, pairs: diffs.length };
  if (diffs.length < 2) return { ...base, mean: null, sd: null, equivalent_after: null, effect_after: null, max_pairs_needed: null };
  const m = mean(diffs);
  const sd = sampleSd(diffs, m);
  const planned = forecastSd(sd, diffs.length);
  const within = settledAt(planned, margin, maxPairs);
  const needed = within.equivalent !== null && within.effect !== null ? maxPairs : maxPairsNeeded(planned, margin, maxPairs);
  return { ...base, mean: m, sd, equivalent_after: within.equivalent, effect_after: within.effect, max_pairs_needed: needed };
}

/** The fewest max_pairs above `maxPairs` (at most LIMIT) with which both calls would be made, or null. By
 * bisection: a larger max_pairs lowers each look's level a little against the pairs it adds, so whether the
 * calls are made rises with it; each try calibrates a boundary (boundary.ts), and trying every value up to 100
 * took 27 CPU-s, nearly 4 minutes beside the stress run's busy loops, for one figure too noisy to settle. */
function maxPairsNeeded(sd: number, margin: number, maxPairs: number): number | null {
  const settles = (k: number): boolean => {
    const at = settledAt(sd, margin, k);
    return at.equivalent !== null && at.effect !== null;
  };
  if (!settles(LIMIT)) return null;
  let unsettled = maxPairs;
  let settled = LIMIT;
  while (settled - unsettled > 1) {
    const mid = Math.floor((unsettled + settled) / 2);
    if (settles(mid)) settled = mid;
    else unsettled = mid;
  }
  return settled;
}

/** The plan from the pairs so far (A's and B's runs each), the time a pair took and the stopping rule: every
 * headline figure (figures.ts, those with a family) of every phase, each run one value as the A/B judges it. */
export function planAb(
  pairs: readonly { a: RunData; b: RunData }[],
  pairSeconds: number | null,
  rule: { minEffectPct: number; minEffectPoints: number; maxPairs: number; waitFor: readonly AbFamily[] },
): AbPlanResult {
  const first = pairs[0];
  const figures: FigurePlan[] = [];
  const runs = pairs.flatMap((p) => [p.a, p.b]);
  for (const phase of first === undefined ? [] : first.a.phases.keys()) {
    for (const spec of FIGURE_SPECS) {
      if (spec.family === null) continue;
      const diffs = pairs.map((p) => difference(runValue(spec, p.a, phase), runValue(spec, p.b, phase), spec.kind)).filter((d): d is number => d !== null);
      const margin = spec.kind === 'relative' ? rule.minEffectPct : rule.minEffectPoints;
      figures.push(planFigure(`${phase} ${spec.label.replace(/ ms$/, '')}`, spec.family, diffs, margin, rule.maxPairs));
    }
  }
  const phaseNeeds = (first === undefined ? [] : [...first.a.phases.keys()]).map((phase) => ({
    phase,
    needs: FIGURE_SPECS.flatMap((spec) => {
      const need = runs.some((r) => runValue(spec, r, phase) === null) ? phaseNeed(spec, runs, phase) : null;
      return need === null ? [] : [{ label: spec.label, need }];
    }),
  }));
  const waited = figures.filter((f) => rule.waitFor.includes(f.family));
  const each = waited.map((f) => (f.equivalent_after === null || f.effect_after === null ? null : Math.max(f.equivalent_after, f.effect_after)));
  const pairsNeeded = each.length === 0 || each.some((n) => n === null) ? null : Math.max(...(each as number[]));
  const secondsNeeded = pairsNeeded === null || pairSeconds === null ? null : pairsNeeded * pairSeconds;
  const longer = phaseNeeds.flatMap((p) => phaseNeedLines(p.needs).map((l) => `${p.phase}: ${l}; until then they read insufficient data`));
  return {
    figures,
    pair_s: pairSeconds,
    pairs_needed: pairsNeeded,
    seconds_needed: secondsNeeded,
    phase_needs: phaseNeeds.flatMap((p) => p.needs.map((n) => ({ figure: `${p.phase} ${n.label.replace(/ ms$/, '')}`, need: n.need }))),
    text: [...planLines(figures, pairs.length, pairSeconds, pairsNeeded, rule), ...longer],
  };
}

function planLines(
  figures: readonly FigurePlan[],
  pairs: number,
  pairSeconds: number | null,
  pairsNeeded: number | null,
  rule: { minEffectPct: number; minEffectPoints: number; maxPairs: number; waitFor: readonly AbFamily[] },
): string[] {
  const width = Math.max(0, ...figures.map((f) => f.name.length));
  const lines = [
    `plan from ${pairs} pair${pairs === 1 ? '' : 's'}${pairSeconds === null ? '' : ` of ${minutes(pairSeconds)} each`} · min_effect ±${rule.minEffectPct}% (±${rule.minEffectPoints} pt for rates), max_pairs ${rule.maxPairs}`,
  ];
  for (const f of figures) {
    const waited = rule.waitFor.includes(f.family) ? '' : ' (not waited for)';
    const unit = f.family === 'errors' ? ' pt' : '%';
    const margin = f.family === 'errors' ? rule.minEffectPoints : rule.minEffectPct;
    if (f.sd === null) {
      lines.push(`  ${f.name.padEnd(width)}  no spread yet: a plan needs 2 pairs with this figure${waited}`);
      continue;
    }
    const settle =
      f.equivalent_after !== null && f.effect_after !== null
        ? `no difference → equivalent after ${f.equivalent_after} pairs; ±${2 * margin}${unit} → better/worse after ${f.effect_after}`
        : f.max_pairs_needed === null
          ? 'not settled within 100 pairs at this spread: lengthen the phases'
          : `not settled within ${rule.maxPairs} pairs: raise max_pairs to ${f.max_pairs_needed} or lengthen the phases`;
    lines.push(`  ${f.name.padEnd(width)}  spread ±${f.sd.toFixed(2)}${unit} per pair (seen ${f.mean! >= 0 ? '+' : ''}${f.mean!.toFixed(2)}${unit}): ${settle}${waited}`);
  }
  if (pairsNeeded !== null) lines.push(`every figure waited for settles within about ${pairsNeeded} pairs${pairSeconds === null ? '' : ` ≈ ${minutes(pairsNeeded * pairSeconds)}`}`);
  else lines.push('some figure waited for is not settled within max_pairs at this spread (see above)');
  if (pairs < 4) lines.push(`the spread rests on ${pairs} pair${pairs === 1 ? '' : 's'}: it is a rough guide; each pair more makes it firmer`);
  return lines;
}

function minutes(s: number): string {
  return s < 120 ? `${s.toFixed(0)} s` : `${(s / 60).toFixed(1)} min`;
}
