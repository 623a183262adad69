// Comparing two arms (one or more runs each), phase by phase: decode throughput over steady windows,
// pooled latency percentiles, the error-and-hang rate; each with B's delta against A, a 95% block-bootstrap
// interval over time windows, and a verdict. Pure: loaded runs in, a Comparison out.
import { isAbsolute, relative } from 'node:path';
import { DifferentWorkloadsError } from '../errors.js';
import { BIN_COUNT, pooledQuantile, type Bins } from './bins.js';
import { identityDifferences } from './identity.js';
import type { PhaseArrivals } from '../analysis/index.js';
import type { RunData, RunWindow } from './load.js';
import { bootstrapDelta, mean, MAX_INTERVAL_WIDTH, tooWide, verdictOf, type ArmSeries, type BetterWhen, type DeltaKind, type Verdict } from './stats.js';
import { round3 } from '../util/index.js';

export interface Arm {
  name: string;
  runs: readonly RunData[];
}

export const FIGURES = [
  'decode_tokens_per_s',
  'ttft_p50_ms',
  'ttft_p99_ms',
  'ttfc_p50_ms',
  'ttfc_p99_ms',
  'itl_p50_ms',
  'itl_p99_ms',
  'tpot_p50_ms',
  'tpot_p99_ms',
  'e2e_p50_ms',
  'e2e_p99_ms',
  'error_rate',
] as const;
export type Figure = (typeof FIGURES)[number];

export interface FigureRow {
  figure: Figure;
  /** For people: `decode tok/s`, `ttft p99 ms`. */
  label: string;
  betterWhen: BetterWhen;
  /** `relative`: delta in % of A; `absolute`: B − A (error_rate in percentage points). */
  kind: DeltaKind;
  a: number | null;
  b: number | null;
  delta: number | null;
  low: number | null;
  high: number | null;
  verdict: Verdict;
}

export interface PhaseComparison {
  phase: string;
  /** Steady windows per arm (all repeats pooled) and the block length / autocorrelation the intervals used. */
  windowsA: number;
  windowsB: number;
  windowS: number;
  block: number;
  autocorrelation: number;
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
  schema_version: 1;
  a: { name: string; runs: string[]; hash: string };
  b: { name: string; runs: string[]; hash: string };
  /** True when the workloads differ and --force compared them anyway. */
  forced: boolean;
  /** Where the workloads differ (empty when they are the same). */
  differences: string[];
  level: number;
  resamples: number;
  seed: number;
  phases: PhaseComparison[];
  /** Phases present in only one arm. */
  unmatched: string[];
}

export interface CompareOptions {
  /** @default 2000 */
  resamples?: number;
  /** @default 1 */
  seed?: number;
  /** Compare even when the workloads differ. @default false */
  force?: boolean;
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
      `${shown(first.dir)} and ${shown(run.dir)} are runs of different workloads (${first.name} ${first.hash} vs ${run.name} ${run.hash}): ${differences.join('; ')}. ` +
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

interface Spec {
  figure: Figure;
  label: string;
  betterWhen: BetterWhen;
  kind: DeltaKind;
  /** Which windows the figure is taken over. */
  windows: 'steady' | 'all';
  /** For a pooled latency percentile: which one (sets how many requests it needs). */
  quantile?: number;
  statistic: (ws: readonly RunWindow[]) => number;
}

const scratch = new Float64Array(BIN_COUNT);
const pooled = (pick: (w: RunWindow) => Bins, p: number) => (ws: readonly RunWindow[]) => pooledQuantile(ws.map(pick), p, scratch);

/** A percentile needs this many requests beyond it (p99: 500 requests) before an interval means anything. */
export const MIN_BEYOND_QUANTILE = 5;

const SPECS: readonly Spec[] = [
  { figure: 'decode_tokens_per_s', label: 'decode tok/s', betterWhen: 'higher', kind: 'relative', windows: 'steady', statistic: (ws) => mean(ws.map((w) => w.tokensPerS)) },
  { figure: 'ttft_p50_ms', label: 'ttft p50 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.ttft, 0.5) },
  { figure: 'ttft_p99_ms', label: 'ttft p99 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.99, statistic: pooled((w) => w.ttft, 0.99) },
  // First content or tool-call token: what bench_serving's chat TTFT counts (reasoning left out).
  { figure: 'ttfc_p50_ms', label: 'ttfc p50 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.ttfc, 0.5) },
  { figure: 'ttfc_p99_ms', label: 'ttfc p99 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.99, statistic: pooled((w) => w.ttfc, 0.99) },
  // A request's own p99 gap, its median over requests: stands in for the pooled p99 of gaps (see load.ts).
  { figure: 'itl_p50_ms', label: 'itl p50 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.itlP50, 0.5) },
  { figure: 'itl_p99_ms', label: 'itl p99 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.itlP99, 0.5) },
  // Per token, from each request's own (e2e − ttft) ÷ (completion tokens − 1): pooled over requests.
  { figure: 'tpot_p50_ms', label: 'tpot p50 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.tpot, 0.5) },
  { figure: 'tpot_p99_ms', label: 'tpot p99 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.99, statistic: pooled((w) => w.tpot, 0.99) },
  { figure: 'e2e_p50_ms', label: 'e2e p50 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.5, statistic: pooled((w) => w.e2e, 0.5) },
  { figure: 'e2e_p99_ms', label: 'e2e p99 ms', betterWhen: 'lower', kind: 'relative', windows: 'steady', quantile: 0.99, statistic: pooled((w) => w.e2e, 0.99) },
  {
    figure: 'error_rate',
    label: 'errors+hangs %',
    betterWhen: 'lower',
    kind: 'absolute',
    windows: 'all',
    statistic: (ws) => {
      let bad = 0;
      let all = 0;
      for (const w of ws) {
        bad += w.errors + w.hangs;
        all += w.requests;
      }
      return all === 0 ? NaN : (bad / all) * 100;
    },
  },
];

function finite(v: number): number | null {
  return Number.isFinite(v) ? round3(v) : null;
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

function comparePhase(a: Arm, b: Arm, phase: string, options: Required<Omit<CompareOptions, 'force'>>): PhaseComparison {
  const steadyA: ArmSeries<RunWindow> = seriesOf(a, phase, 'steady');
  const steadyB: ArmSeries<RunWindow> = seriesOf(b, phase, 'steady');
  const windowsA = steadyA.reduce((s, x) => s + x.length, 0);
  const windowsB = steadyB.reduce((s, x) => s + x.length, 0);
  const enough = windowsA >= MIN_STEADY_WINDOWS && windowsB >= MIN_STEADY_WINDOWS;
  const notes: string[] = [];
  if (!enough) {
    notes.push(`only ${windowsA} and ${windowsB} steady windows (need ${MIN_STEADY_WINDOWS} per arm): lengthen the phase or shorten window_s`);
  } else if (Math.min(windowsA, windowsB) < 12) {
    notes.push(`${Math.min(windowsA, windowsB)} steady windows in the smaller arm: intervals are wide; 20 or more per arm make them tighter`);
  }
  let block = 1;
  let autocorrelation = 0;
  // Completed requests over the steady windows (each adds one e2e value).
  const okA = steadyA.flat().reduce((s, w) => s + w.e2e.total, 0);
  const okB = steadyB.flat().reduce((s, w) => s + w.e2e.total, 0);
  const thin: string[] = [];
  const wide: string[] = [];
  const rows: FigureRow[] = SPECS.map((spec, i) => {
    const armA = spec.windows === 'steady' ? steadyA : seriesOf(a, phase, 'all');
    const armB = spec.windows === 'steady' ? steadyB : seriesOf(b, phase, 'all');
    const est = bootstrapDelta(armA, armB, spec.statistic, spec.kind, {
      resamples: options.resamples,
      // One seed per figure, so adding a figure never changes another's interval.
      seed: options.seed * 1009 + i,
      seriesValue: (w) => w.tokensPerS,
    });
    if (spec.figure === 'decode_tokens_per_s') {
      block = est.block;
      autocorrelation = est.autocorrelation;
    }
    const needed = spec.quantile === undefined ? 0 : Math.ceil(MIN_BEYOND_QUANTILE / Math.min(spec.quantile, 1 - spec.quantile));
    if (Math.min(okA, okB) < needed && enough) thin.push(`${spec.label.replace(/ ms$/, '')} (needs ${needed})`);
    const usable = spec.windows === 'all' || (enough && Math.min(okA, okB) >= needed);
    if (usable && tooWide(est, spec.kind)) wide.push(spec.label.replace(/ ms$/, ''));
    return {
      figure: spec.figure,
      label: spec.label,
      betterWhen: spec.betterWhen,
      kind: spec.kind,
      a: finite(est.a),
      b: finite(est.b),
      delta: finite(est.delta),
      low: usable ? finite(est.low) : null,
      high: usable ? finite(est.high) : null,
      verdict: usable ? verdictOf(est, spec.betterWhen, spec.kind) : 'insufficient data',
    };
  });
  if (thin.length > 0) notes.push(`${okA} and ${okB} completed requests in steady windows: too few for an interval on ${thin.join(', ')}`);
  if (wide.length > 0) {
    notes.push(
      `interval wider than ${MAX_INTERVAL_WIDTH.relative} points of A (${MAX_INTERVAL_WIDTH.absolute} pt for a rate) and holding 0 on ${wide.join(', ')}: insufficient data, not "no difference"; more steady windows or repeats narrow it`,
    );
  }
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
    block,
    autocorrelation,
    countsA: counts(a, phase),
    countsB: counts(b, phase),
    rows,
    notes,
    ...(arrivalsA === null && arrivalsB === null ? {} : { arrivals: { a: arrivalsA, b: arrivalsB } }),
  };
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

/** Phase names of an arm, in first-seen order. */
function phasesOf(arm: Arm): string[] {
  const names: string[] = [];
  for (const run of arm.runs) for (const name of run.phases.keys()) if (!names.includes(name)) names.push(name);
  return names;
}

/**
 * Compares arm B against arm A, per phase present in both.
 * @throws DifferentWorkloadsError when the runs are of different workloads and `force` is not set.
 */
export function compareArms(a: Arm, b: Arm, options: CompareOptions = {}): Comparison {
  const differences = checkSameWorkload(a, b, options.force === true);
  const resolved = { resamples: options.resamples ?? 2000, seed: options.seed ?? 1 };
  const namesA = phasesOf(a);
  const namesB = phasesOf(b);
  const both = namesA.filter((n) => namesB.includes(n));
  const unmatched = [...namesA.filter((n) => !namesB.includes(n)), ...namesB.filter((n) => !namesA.includes(n))];
  return {
    schema_version: 1,
    a: { name: a.name, runs: a.runs.map((r) => r.dir), hash: a.runs[0]?.hash ?? '' },
    b: { name: b.name, runs: b.runs.map((r) => r.dir), hash: b.runs[0]?.hash ?? '' },
    forced: differences.length > 0,
    differences,
    level: 0.95,
    resamples: resolved.resamples,
    seed: resolved.seed,
    phases: both.map((phase) => comparePhase(a, b, phase, resolved)),
    unmatched,
  };
}
