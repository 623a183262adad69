// The headline figures of a sequential A/B (`until:` in the ab file): per phase decode (output) tok/s and
// TTFT, ITL and e2e p50, and the run's error+hang rate; after every pair of runs, each figure's call
// (sequential.ts) and whether all are decided. Pure: summaries in, calls out.
import type { Summary } from '../analysis/index.js';
import type { AbFigure } from '../config/index.js';
import { sequentialCall, type SequentialCall } from './sequential.js';

export interface FigureSpec {
  /** e.g. `main decode tok/s`, `errors+hangs %`. */
  name: string;
  /** Which of `until.figures` it is. */
  family: AbFigure;
  betterWhen: 'higher' | 'lower';
  /** `relative`: the pair's difference in percent of A; `points`: B − A in percentage points. */
  kind: 'relative' | 'points';
  value: (s: Judged) => number | null;
  /** A figure of the run the change should not move, to adjust for (sequential.ts `estimate`). */
  covariate?: { name: string; value: (s: Judged) => number | null };
}

/** What a figure is read from: a run's summary. */
type Judged = Pick<Summary, 'phases' | 'totals' | 'windows'>;

export interface FigureCalls {
  name: string;
  family: AbFigure;
  betterWhen: 'higher' | 'lower';
  kind: 'relative' | 'points';
  /** The call after each pair, in order (the last is the verdict). */
  calls: SequentialCall[];
}

function phaseFigure(phase: string, pick: (p: Summary['phases'][number]) => number | null): FigureSpec['value'] {
  return (s) => {
    const p = s.phases.find((x) => x.phase === phase);
    return p === undefined ? null : pick(p);
  };
}

/** A phase's decode tok/s as `compare` takes it: the mean of its steady windows (ramp-up, warm-up and the
 * ramp-down as agents finish left out: they add noise, not signal); the whole phase's figure when none is
 * steady. */
function phaseDecodeRate(phase: string): FigureSpec['value'] {
  return (s) => {
    const steady = s.windows.filter((w) => w.phase === phase && w.steady === true);
    if (steady.length > 0) return steady.reduce((sum, w) => sum + w.output_tokens_per_s, 0) / steady.length;
    return s.phases.find((x) => x.phase === phase)?.output_tokens_per_s ?? null;
  };
}

/** A phase's output tokens per ok request over its steady windows: how long the answers were, which moves
 * decode tok/s (fewer prefills per token) without being what a server setting changes. */
function phaseTokensPerRequest(phase: string): FigureSpec['value'] {
  return (s) => {
    const steady = s.windows.filter((w) => w.phase === phase && w.steady === true);
    const ok = steady.reduce((sum, w) => sum + w.ok, 0);
    return ok === 0 ? null : steady.reduce((sum, w) => sum + w.output_tokens, 0) / ok;
  };
}

/** The figures a sequential A/B decides, from the baseline's first run (its phases). */
export function headlineFigures(first: Pick<Summary, 'phases'>): FigureSpec[] {
  const out: FigureSpec[] = [];
  for (const { phase } of first.phases) {
    out.push(
      {
        name: `${phase} decode tok/s`,
        family: 'decode',
        betterWhen: 'higher',
        kind: 'relative',
        value: phaseDecodeRate(phase),
        covariate: { name: 'tokens per request', value: phaseTokensPerRequest(phase) },
      },
      { name: `${phase} ttft p50`, family: 'ttft', betterWhen: 'lower', kind: 'relative', value: phaseFigure(phase, (p) => p.ttft.p50_ms) },
      { name: `${phase} itl p50`, family: 'itl', betterWhen: 'lower', kind: 'relative', value: phaseFigure(phase, (p) => p.itl.p50_ms) },
      { name: `${phase} e2e p50`, family: 'e2e', betterWhen: 'lower', kind: 'relative', value: phaseFigure(phase, (p) => p.e2e.p50_ms) },
    );
  }
  out.push({
    name: 'errors+hangs %',
    family: 'errors',
    betterWhen: 'lower',
    kind: 'points',
    value: (s) => (s.totals.requests === 0 ? null : ((s.totals.errors + s.totals.hangs) / s.totals.requests) * 100),
  });
  return out;
}

/** One pair's difference for a figure: percent of A, or points; null when either side lacks it. */
function difference(spec: Pick<FigureSpec, 'value' | 'kind'>, a: Judged, b: Judged): number | null {
  const va = spec.value(a);
  const vb = spec.value(b);
  if (va === null || vb === null || !Number.isFinite(va) || !Number.isFinite(vb)) return null;
  if (spec.kind === 'points') return vb - va;
  return va === 0 ? null : ((vb - va) / va) * 100;
}

/** Each pair's difference for a figure, pairs that lack it left out. */
export function pairDifferences(spec: FigureSpec, pairs: readonly { a: Judged; b: Judged }[]): number[] {
  return pairs.map((p) => difference(spec, p.a, p.b)).filter((d): d is number => d !== null);
}

/** The pairs so far (A's and B's summaries of each), judged figure by figure. `final`: a limit ends it now. */
export function judgePairs(specs: readonly FigureSpec[], pairs: readonly { a: Judged; b: Judged }[], rule: { minEffectPct: number; maxPairs: number }, final: boolean): FigureCalls[] {
  return specs.map((spec) => {
    const diffs: number[] = [];
    const covariate: number[] = [];
    const calls: SequentialCall[] = [];
    pairs.forEach((pair, i) => {
      // A figure once decided keeps its call: the interval is valid at the look that decided it.
      const before = calls.at(-1);
      if (before !== undefined && decided(before)) {
        calls.push(before);
        return;
      }
      const d = difference(spec, pair.a, pair.b);
      const x = spec.covariate === undefined ? null : difference({ value: spec.covariate.value, kind: 'relative' }, pair.a, pair.b);
      if (d !== null) {
        diffs.push(d);
        // A pair without the covariate ends the adjustment (the differences must line up).
        covariate.push(x ?? NaN);
      }
      const aligned = spec.covariate !== undefined && covariate.every(Number.isFinite) ? { covariate: { name: spec.covariate.name, differences: covariate } } : {};
      calls.push(sequentialCall(diffs, { minEffect: rule.minEffectPct, maxPairs: rule.maxPairs, betterWhen: spec.betterWhen, final: final && i === pairs.length - 1, ...aligned }));
    });
    return { name: spec.name, family: spec.family, betterWhen: spec.betterWhen, kind: spec.kind, calls };
  });
}

function decided(c: SequentialCall): boolean {
  return c.verdict === 'better' || c.verdict === 'worse' || c.verdict === 'equivalent';
}

/** Every figure the A/B waits for (`until.figures`) has its answer (better, worse or equivalent). */
export function allDecided(figures: readonly FigureCalls[], waitFor: readonly AbFigure[]): boolean {
  return figures.every((f) => {
    if (!waitFor.includes(f.family)) return true;
    const last = f.calls.at(-1);
    return last !== undefined && decided(last);
  });
}

/** The terminal's lines: a figure a line with its call. */
export function sequentialLines(figures: readonly FigureCalls[]): string[] {
  const width = Math.max(...figures.map((f) => f.name.length));
  return figures.map((f) => `  ${f.name.padEnd(width)}  ${f.calls.at(-1)?.text ?? 'no pair'}${f.kind === 'points' ? ' (points)' : ' (%)'}`);
}
