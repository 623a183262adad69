// Comparing two arms (one or more runs each), phase by phase: every figure of figures.ts reduced to one value
// per run, then B's delta against A across runs with its interval and one of the four calls (across-runs.ts).
// Time windows only describe a run here (how many were steady). Pure: loaded runs in, a Comparison out.
import { isAbsolute, relative } from 'node:path';
import { DifferentWorkloadsError } from '../errors.js';
import { identityDifferences } from './identity.js';
import type { PhaseArrivals } from '../analysis/index.js';
import type { AbFamily } from '../types/index.js';
import type { RunData, RunWindow } from './load.js';
import { mean } from './stats.js';
import { FIGURE_SPECS, phaseNeed, phaseNeedLines, phaseWindows, runValue, tokensPerRequest, type BetterWhen, type DeltaKind, type Figure, type FigureSpec } from './figures.js';
import { alternatedPairs, callFigure, DEFAULT_MIN_EFFECT_PCT, DEFAULT_MIN_EFFECT_POINTS, type Call, type Rule, type Verdict } from './across-runs.js';
import { oneLine, round3 } from '../util/index.js';

export interface Arm {
  name: string;
  runs: readonly RunData[];
}

export interface FigureRow {
  figure: Figure;
  /** For people: `decode tok/s`, `ttft p99 ms`. */
  label: string;
  betterWhen: BetterWhen;
  /** `relative`: delta in % of A; `absolute`: B − A (error_rate in percentage points). */
  kind: DeltaKind;
  /** The stopping rule's headline family (`until.figures`), or null. */
  family: AbFamily | null;
  /** Each run's value, in run order (null: the run has none). */
  values: { a: (number | null)[]; b: (number | null)[] };
  /** The mean of each arm's run values. */
  a: number | null;
  b: number | null;
  /** The estimate of B − A across runs (paired: the mean of the pairs' differences) and its interval. */
  delta: number | null;
  low: number | null;
  high: number | null;
  verdict: Verdict;
  /** The call in words ("about 3 more pairs would likely settle it"). */
  text: string;
  /** The call after each look (a sequential A/B: one per pair; otherwise one). */
  calls: Call[];
}

export interface PhaseComparison {
  phase: string;
  /** Within-run description only (never the verdict): steady windows per arm, all runs together. */
  windowsA: number;
  windowsB: number;
  windowS: number;
  /** Whole-phase counts, warm-up included: a hang is never hidden by a window filter. */
  countsA: { requests: number; errors: number; hangs: number };
  countsB: { requests: number; errors: number; hangs: number };
  rows: FigureRow[];
  notes: string[];
  /** An open-loop phase (`agents.arrival`, rate stages): each arm's arrivals and start lag, runs pooled. */
  arrivals?: { a: ArmArrivals | null; b: ArmArrivals | null };
}

/** An arm's arrivals in one phase, over its runs. */
export interface ArmArrivals {
  runs: number;
  scheduled: number;
  started: number;
  /** Started after waiting for a slot (`max_active` conversations were running). */
  delayed: number;
  /** Still waiting for a slot at the end; null when a run did not say (a killed run). */
  not_started: number | null;
  /** Each run's start lag p99 (ms), in run order. */
  start_lag_p99_ms: number[];
  /** Runs whose start lag p99 passed one think time. */
  lagging_runs: number;
}

export interface Comparison {
  schema_version: 2;
  a: { name: string; runs: string[]; hash: string };
  b: { name: string; runs: string[]; hash: string };
  /** True when the workloads differ and --force compared them anyway. */
  forced: boolean;
  /** Where the workloads differ (empty when they are the same). */
  differences: string[];
  /** `paired`: runs alternated (A B, B A …), each pair's difference; `welch`: across the arms' runs. */
  method: 'paired' | 'welch';
  /** Which runs paired (index in A, index in B), in order; empty for Welch. */
  pairs: [number, number][];
  rule: {
    min_effect_pct: number;
    min_effect_points: number;
    /** Error of this comparison (0.05, split over the arms compared with one baseline). */
    alpha: number;
    looks: 'fixed' | 'sequential';
    /** A sequential rule's most pairs; null for a fixed look. */
    max_pairs: number | null;
  };
  phases: PhaseComparison[];
  /** Phases present in only one arm. */
  unmatched: string[];
}

export interface CompareOptions {
  /** Compare even when the workloads differ. @default false */
  force?: boolean;
  /** Which runs pair; default: inferred from their start times (alternatedPairs), Welch when they do not. */
  pairs?: [number, number][] | null;
  /** Margins, alpha and looks. @default fixed, ±3%, ±1 point, alpha 0.05 */
  rule?: Partial<Rule>;
}

/** Fewer steady windows than this in an arm and the intervals say nothing useful. */
export const MIN_STEADY_WINDOWS = 4;

/** Runs of one arm (or of both) must be one workload; returns the differences, throwing unless `force`. */
export function checkSameWorkload(a: Arm, b: Arm, force: boolean): string[] {
  const runs = [...a.runs, ...b.runs];
  const first = runs[0];
  if (first === undefined) return [];
  for (const run of runs.slice(1)) {
    if (run.hash === first.hash) continue;
    const differences = identityDifferences(first.workload, run.workload);
    if (force) return differences;
    throw new DifferentWorkloadsError(
      `${shown(first.dir)} and ${shown(run.dir)} are runs of different workloads (${oneLine(first.name)} ${first.hash} vs ${oneLine(run.name)} ${run.hash}): ${oneLine(differences.join('; '))}. ` +
        'A comparison ignores name, labels, engine, target (but its model), thresholds, results, client_metrics and monitor; ' +
        'anything else changes the load. Pass --force to compare them anyway.',
      differences,
    );
  }
  return [];
}

/** A folder as a person typed it: relative to the working directory when inside it. */
function shown(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? dir : rel;
}

function finite(v: number | null): number | null {
  return v !== null && Number.isFinite(v) ? round3(v) : null;
}

function seriesOf(arm: Arm, phase: string, which: 'steady' | 'all'): RunWindow[][] {
  return arm.runs.map((run) => (run.phases.get(phase)?.windows ?? []).filter((w) => which === 'all' || w.steady)).filter((s) => s.length > 0);
}

function counts(arm: Arm, phase: string): { requests: number; errors: number; hangs: number } {
  const out = { requests: 0, errors: 0, hangs: 0 };
  for (const run of arm.runs) {
    for (const w of run.phases.get(phase)?.windows ?? []) {
      out.requests += w.requests;
      out.errors += w.errors;
      out.hangs += w.hangs;
    }
  }
  return out;
}

/** One figure's row: each run's value, then the call across runs. */
function figureRow(spec: FigureSpec, a: Arm, b: Arm, phase: string, pairs: [number, number][] | null, rule: Rule): FigureRow {
  const values = { a: a.runs.map((r) => finite(runValue(spec, r, phase))), b: b.runs.map((r) => finite(runValue(spec, r, phase))) };
  // Decode tok/s moves with the answers' length; a change that does not move it is judged net of it.
  const covariate =
    spec.figure === 'decode_tokens_per_s'
      ? { covariate: { name: 'tokens per request', a: a.runs.map((r) => tokensPerRequest(phaseWindows(r, phase))), b: b.runs.map((r) => tokensPerRequest(phaseWindows(r, phase))) } }
      : {};
  const { calls } = callFigure({ ...values, pairs, ...covariate }, spec, rule);
  const last = calls.at(-1)!;
  const armMean = (xs: readonly (number | null)[]) => {
    const present = xs.filter((x): x is number => x !== null);
    return present.length === 0 ? null : finite(mean(present));
  };
  return {
    figure: spec.figure,
    label: spec.label,
    betterWhen: spec.betterWhen,
    kind: spec.kind,
    family: spec.family,
    values,
    a: armMean(values.a),
    b: armMean(values.b),
    delta: finite(last.estimate),
    low: finite(last.low),
    high: finite(last.high),
    verdict: last.verdict,
    text: last.text,
    calls,
  };
}

function comparePhase(a: Arm, b: Arm, phase: string, pairs: [number, number][] | null, rule: Rule): PhaseComparison {
  const windowsA = seriesOf(a, phase, 'steady').reduce((s, x) => s + x.length, 0);
  const windowsB = seriesOf(b, phase, 'steady').reduce((s, x) => s + x.length, 0);
  const notes: string[] = [];
  if (Math.min(windowsA, windowsB) < MIN_STEADY_WINDOWS) {
    notes.push(`only ${windowsA} and ${windowsB} steady windows (${MIN_STEADY_WINDOWS} per arm make a run's figures steadier): lengthen the phase or shorten window_s`);
  }
  if (pairs === null) {
    const blocked = blockedOrder(a, b);
    if (blocked !== null) notes.push(`every run of ${blocked[0]} started before every run of ${blocked[1]}: drift between them counts as a difference; alternate the runs (roundload ab) to cancel it`);
  }
  const rows = FIGURE_SPECS.map((spec) => figureRow(spec, a, b, phase, pairs, rule));
  // A percentile some runs lack: how long a phase must be for it (per figure), else why it is missing.
  const lacking = FIGURE_SPECS.filter((_, i) => rows[i]!.verdict === 'insufficient data' && [...rows[i]!.values.a, ...rows[i]!.values.b].some((v) => v === null));
  const needs = lacking.map((spec) => ({ spec, need: phaseNeed(spec, [...a.runs, ...b.runs], phase) }));
  notes.push(...phaseNeedLines(needs.flatMap(({ spec, need }) => (need === null ? [] : [{ label: spec.label, need }]))));
  const missing = needs.filter((n) => n.need === null).map((n) => n.spec.label.replace(/ ms$/, ''));
  if (missing.length > 0) notes.push(`some runs have no value for ${missing.join(', ')} (no steady window, or too few requests for the percentile)`);
  const windowS = a.runs[0]?.windowS ?? b.runs[0]?.windowS ?? 0;
  // `window_s: auto` on runs of rounds picks each run's window from its own length: say so when they differ.
  const lengths = [...new Set([...a.runs, ...b.runs].map((r) => r.windowS))].sort((x, y) => x - y);
  if (lengths.length > 1)
    notes.push(`the runs' windows differ (${lengths.join(', ')} s): window figures are not like for like; set window_s to one number (or give the runs a duration) and run again`);
  const arrivalsA = arrivalsOf(a, phase);
  const arrivalsB = arrivalsOf(b, phase);
  if (arrivalsA !== null && arrivalsB !== null) {
    const lags = (x: ArmArrivals) => `start lag p99 ${x.start_lag_p99_ms.map((v) => Math.round(v)).join(', ')} ms, ${x.delayed} delayed`;
    // Latency and throughput of an arm that fell behind its arrivals (in every run) while the other kept up
    // (in every run) are of fewer conversations at once than offered: not like for like.
    const behind = (name: string, x: ArmArrivals, otherName: string, other: ArmArrivals): string | null =>
      x.lagging_runs === x.runs && other.lagging_runs === 0
        ? `${name} fell behind its arrivals (${lags(x)}; ${otherName} ${lags(other)}): ${name} served fewer conversations at once than offered, so its latency and throughput are not of the same load as ${otherName}'s`
        : null;
    const note = behind('B', arrivalsB, 'A', arrivalsA) ?? behind('A', arrivalsA, 'B', arrivalsB);
    if (note !== null) notes.push(note);
  }
  return {
    phase,
    windowsA,
    windowsB,
    windowS,
    countsA: counts(a, phase),
    countsB: counts(b, phase),
    rows,
    notes,
    ...(arrivalsA === null && arrivalsB === null ? {} : { arrivals: { a: arrivalsA, b: arrivalsB } }),
  };
}

/** When every run of one arm started before every run of the other, [first, second] (their names); else null. */
function blockedOrder(a: Arm, b: Arm): [string, string] | null {
  const starts = (arm: Arm) => arm.runs.map((r) => Date.parse(r.startedAt ?? ''));
  const [sa, sb] = [starts(a), starts(b)];
  if ([...sa, ...sb].some((t) => !Number.isFinite(t)) || sa.length < 2 || sb.length < 2) return null;
  if (Math.max(...sa) < Math.min(...sb)) return [a.name, b.name];
  if (Math.max(...sb) < Math.min(...sa)) return [b.name, a.name];
  return null;
}

/** The arm's arrivals in `phase`, its runs added up; null when no run of it had arrivals there. */
function arrivalsOf(arm: Arm, phase: string): ArmArrivals | null {
  const each = arm.runs.map((run) => run.phases.get(phase)?.arrivals ?? null).filter((x): x is PhaseArrivals => x !== null);
  if (each.length === 0) return null;
  return {
    runs: each.length,
    scheduled: each.reduce((n, x) => n + x.scheduled, 0),
    started: each.reduce((n, x) => n + x.started, 0),
    delayed: each.reduce((n, x) => n + x.delayed, 0),
    not_started: each.some((x) => x.not_started === null) ? null : each.reduce((n, x) => n + (x.not_started ?? 0), 0),
    start_lag_p99_ms: each.map((x) => x.start_lag.p99_ms),
    lagging_runs: each.filter((x) => x.lagging).length,
  };
}

/** Phase names of an arm, in first-seen order; a failed run has none of its own (it ran no phase to its end),
 * so an arm of failed runs only is in every phase of the other arm. */
function phasesOf(arm: Arm, other: Arm): string[] {
  const names: string[] = [];
  const ran = arm.runs.filter((r) => r.status !== 'failed');
  for (const run of ran.length > 0 ? ran : other.runs) for (const name of run.phases.keys()) if (!names.includes(name)) names.push(name);
  return names;
}

/** The rule a comparison runs with: a fixed look at ±3% (±1 point for rates), alpha 0.05, unless given. */
export function resolveRule(rule: Partial<Rule> = {}): Rule {
  return {
    minEffectPct: rule.minEffectPct ?? DEFAULT_MIN_EFFECT_PCT,
    minEffectPoints: rule.minEffectPoints ?? DEFAULT_MIN_EFFECT_POINTS,
    alpha: rule.alpha ?? 0.05,
    looks: rule.looks ?? { kind: 'fixed' },
  };
}

/**
 * Compares arm B against arm A, per phase present in both, with runs as the unit: paired when the runs
 * alternated (or `options.pairs` says which pair), Welch's across runs otherwise.
 * @throws DifferentWorkloadsError when the runs are of different workloads and `force` is not set.
 */
export function compareArms(a: Arm, b: Arm, options: CompareOptions = {}): Comparison {
  const differences = checkSameWorkload(a, b, options.force === true);
  const rule = resolveRule(options.rule);
  const pairs = options.pairs === undefined ? alternatedPairs(a.runs, b.runs) : options.pairs;
  const namesA = phasesOf(a, b);
  const namesB = phasesOf(b, a);
  const both = namesA.filter((n) => namesB.includes(n));
  const unmatched = [...namesA.filter((n) => !namesB.includes(n)), ...namesB.filter((n) => !namesA.includes(n))];
  return {
    schema_version: 2,
    a: { name: a.name, runs: a.runs.map((r) => r.dir), hash: a.runs[0]?.hash ?? '' },
    b: { name: b.name, runs: b.runs.map((r) => r.dir), hash: b.runs[0]?.hash ?? '' },
    forced: differences.length > 0,
    differences,
    method: pairs === null ? 'welch' : 'paired',
    pairs: pairs ?? [],
    rule: {
      min_effect_pct: rule.minEffectPct,
      min_effect_points: rule.minEffectPoints,
      alpha: rule.alpha,
      looks: rule.looks.kind,
      max_pairs: rule.looks.kind === 'sequential' ? rule.looks.maxPairs : null,
    },
    phases: both.map((phase) => comparePhase(a, b, phase, pairs, rule)),
    unmatched,
  };
}
