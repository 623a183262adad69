// compare.html's charts, pure: per phase, a forest plot of every figure's delta with its interval across runs
// (from the comparison), and, when the arms' runs are at hand, their time series window by window (each run of
// each arm a line: A in blues, B in ambers) so a reader sees the load the deltas were taken over.
import { basename } from 'node:path';
import type { ChartSeries, ChartSpec, ForestSpec } from '../report/index.js';
import { BIN_COUNT, pooledQuantile, type Bins } from './bins.js';
import type { Arm, Comparison, FigureRow, PhaseComparison } from './compare.js';
import type { RunWindow } from './load.js';
import { round3 } from '../util/index.js';
import { AB_SERIES, type AbSeriesFigureName } from '../types/index.js';

/** The two arms a comparison was made of. */
export interface ArmPair {
  a: Arm;
  b: Arm;
}

/** The charts of one phase of one comparison. */
export interface PhaseCharts {
  phase: string;
  forests: ForestSpec[];
  series: ChartSpec[];
}

const A_COLORS = ['#2563eb', '#60a5fa', '#1e3a8a', '#93c5fd', '#3b82f6', '#1d4ed8'];
const B_COLORS = ['#d97706', '#fbbf24', '#92400e', '#f59e0b', '#b45309', '#fcd34d'];

const KINDS = [
  { kind: 'relative', suffix: 'relative', x_label: 'B − A, % of A', unit: '%', title: 'Deltas, % of A' },
  { kind: 'absolute', suffix: 'absolute', x_label: 'B − A, percentage points', unit: ' pt', title: 'Deltas, percentage points' },
] as const;

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]+/g, '_');
}

/** One forest plot per kind of delta (relative in %, absolute in points): axes never mix units. */
export function forestPlots(c: Comparison, p: PhaseComparison, index: number): ForestSpec[] {
  const out: ForestSpec[] = [];
  for (const k of KINDS) {
    const rows = p.rows.filter((r: FigureRow) => r.kind === k.kind);
    if (rows.length === 0) continue;
    const noInterval = rows.filter((r) => r.delta !== null && (r.low === null || r.high === null)).length;
    const axis = decidedAxis(rows);
    const arrows =
      axis === null
        ? ''
        : `; the axis spans the decided intervals: ${axis.beyond} other${axis.beyond === 1 ? '' : 's'} run${axis.beyond === 1 ? 's' : ''} past it, drawn as arrows with their ends written`;
    out.push({
      id: `forest-${index}-${slug(p.phase)}-${k.suffix}`,
      title: `${k.title} · ${c.b.name} vs ${c.a.name} · phase ${p.phase}`,
      x_label: k.x_label,
      unit: k.unit,
      rows: rows.map((r) => ({ label: r.label, delta: r.delta, low: r.low, high: r.high, verdict: r.verdict })),
      note: `bar: the interval across runs; square: the delta; green better, red worse, slate equivalent, amber inconclusive${noInterval > 0 ? `; hollow amber square${noInterval === 1 ? '' : 's'}: ${noInterval} figure${noInterval === 1 ? '' : 's'} without an interval (too little data)` : ''}${arrows}`,
      x_range: axis === null ? null : axis.range,
    });
  }
  return out;
}

const DECIDED: ReadonlySet<string> = new Set(['better', 'worse', 'equivalent']);

/** The axis of a forest plot fit to its decided rows (their intervals, deltas and 0), when some other row runs
 * past it: one wide inconclusive interval (−100% … +539%) would shrink the decided ones to dots. Null when no row
 * is decided or every row fits. */
export function decidedAxis(rows: readonly Pick<FigureRow, 'delta' | 'low' | 'high' | 'verdict'>[]): { range: [number, number]; beyond: number } | null {
  const decided = rows.filter((r) => DECIDED.has(r.verdict) && r.delta !== null);
  if (decided.length === 0) return null;
  const values = decided.flatMap((r) => [r.delta, r.low, r.high]).filter((v): v is number => v !== null && Number.isFinite(v));
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values);
  const past = (r: (typeof rows)[number]) => r.delta !== null && (Math.min(r.delta, r.low ?? r.delta) < lo || Math.max(r.delta, r.high ?? r.delta) > hi);
  const beyond = rows.filter(past).length;
  return beyond === 0 ? null : { range: [round3(lo), round3(hi)], beyond };
}

const scratch = new Float64Array(BIN_COUNT);
const p50 = (pick: (w: RunWindow) => Bins) => (w: RunWindow) => {
  const v = pooledQuantile([pick(w)], 0.5, scratch);
  return Number.isFinite(v) ? round3(v) : null;
};

/** A window's value of each figure compare.html charts (types/figures.ts `abSeries`; one left out does not compile). */
const WINDOW_VALUES = {
  output_tokens_per_s: (w) => round3(w.tokensPerS),
  ttft: p50((w) => w.ttft),
  e2e: p50((w) => w.e2e),
} satisfies Record<AbSeriesFigureName, (w: RunWindow) => number | null>;

/** Each arm's runs over the phase, window by window, on one time axis (seconds since the phase's first window). */
export function armSeries(pair: ArmPair, phase: string, index: number, steady: { a: number; b: number }): ChartSpec[] {
  const lines: { label: string; color: string; windows: RunWindow[] }[] = [];
  for (const [arm, colors, tag] of [
    [pair.a, A_COLORS, 'A'],
    [pair.b, B_COLORS, 'B'],
  ] as const) {
    arm.runs.forEach((run, i) => {
      const windows = run.phases.get(phase)?.windows ?? [];
      if (windows.length === 0) return;
      const which = arm.runs.length === 1 ? '' : ` r${i + 1} (${basename(run.dir)})`;
      // `compare` names same-named arms `A:smoke`, `B:smoke`; other names get their role in front.
      const name = /^[A-Z]:/.test(arm.name) ? arm.name : `${tag}: ${arm.name}`;
      lines.push({ label: `${name}${which}`, color: colors[i % colors.length]!, windows });
    });
  }
  if (lines.length === 0) return [];
  // Window ends relative to the phase's first window in that run: runs and arms line up from their start.
  const ends = (l: (typeof lines)[number]) => l.windows.map((w) => round3(w.endS - l.windows[0]!.startS));
  const x = [...new Set(lines.flatMap(ends))].sort((p, q) => p - q);
  const at = new Map(x.map((v, i) => [v, i]));
  const out: ChartSpec[] = [];
  for (const f of AB_SERIES) {
    const series: ChartSeries[] = lines.map((l) => {
      const values: (number | null)[] = x.map(() => null);
      const e = ends(l);
      l.windows.forEach((w, i) => (values[at.get(e[i]!)!] = WINDOW_VALUES[f.figure](w)));
      return { label: l.label, values, color: l.color, gaps: 'bridge' };
    });
    out.push({
      id: `arms-${index}-${slug(phase)}-${f.id}`,
      title: `${f.title} · phase ${phase}`,
      x_kind: 'seconds',
      x_label: 's since the phase started (window end)',
      y_label: f.yLabel,
      y2_label: null,
      x,
      series,
      markers: [],
      note: `every window of every run; the deltas use the steady ones (A ${steady.a}, B ${steady.b}), not ramp-up or ramp-down`,
    });
  }
  return out;
}

/** The charts of every phase of a comparison; the time series only when its arms are given. */
export function comparisonCharts(c: Comparison, index: number, pair?: ArmPair): PhaseCharts[] {
  return c.phases.map((p) => ({
    phase: p.phase,
    forests: forestPlots(c, p, index),
    series: pair === undefined ? [] : armSeries(pair, p.phase, index, { a: p.windowsA, b: p.windowsB }),
  }));
}
