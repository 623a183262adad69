// How a comparison takes each figure's value from a run: the figures themselves (name, label, which way is
// better, headline family) are types/figures.ts's A/B figures; here each gets how one run's value is taken from
// its windows. A run is the unit: each figure is reduced to one number per run and phase before any two arms
// are compared.
import { AB_FIGURE_LIST, type AbFigureInfo, type AbFigureName } from '../types/index.js';
import { BIN_COUNT, pooledQuantile, type Bins } from './bins.js';
import type { RunData, RunWindow } from './load.js';
import { mean } from './stats.js';

export type Figure = AbFigureName;
export type { DeltaKind } from '../types/index.js';
export type BetterWhen = AbFigureInfo['betterWhen'];

export interface FigureSpec extends AbFigureInfo {
  /** For a latency percentile: which one (sets how many requests a run needs for it). */
  quantile?: number;
  /** The run's value in a phase; null when the run has none (no steady window, too few requests). */
  value: (windows: readonly RunWindow[]) => number | null;
}

/** A percentile needs this many requests beyond it (p99: 500 requests) in a run before it means anything. */
export const MIN_BEYOND_QUANTILE = 5;

const scratch = new Float64Array(BIN_COUNT);

function steady(windows: readonly RunWindow[]): RunWindow[] {
  return windows.filter((w) => w.steady);
}

/** A latency percentile over the run's steady windows, pooled; null below MIN_BEYOND_QUANTILE requests past it. */
function pooled(pick: (w: RunWindow) => Bins, p: number, countOf: (w: RunWindow) => number = (w) => pick(w).total): FigureSpec['value'] {
  const needed = Math.ceil(MIN_BEYOND_QUANTILE / Math.min(p, 1 - p));
  return (windows) => {
    const ws = steady(windows);
    const requests = ws.reduce((s, w) => s + countOf(w), 0);
    if (requests < needed) return null;
    const v = pooledQuantile(ws.map(pick), p, scratch);
    return Number.isFinite(v) ? v : null;
  };
}

/** The whole phase's error+hang rate in percent (warm-up windows too: a hang is never hidden by a filter). */
function errorRate(windows: readonly RunWindow[]): number | null {
  let bad = 0;
  let all = 0;
  for (const w of windows) {
    bad += w.errors + w.hangs;
    all += w.requests;
  }
  return all === 0 ? null : (bad / all) * 100;
}

/** How each A/B figure's run value is taken (a figure of the table without one does not compile). */
const VALUES = {
  // The mean of the steady windows: ramp-up, warm-up and the ramp-down as agents finish add noise, not signal.
  decode_tokens_per_s: {
    value: (windows) => {
      const ws = steady(windows);
      return ws.length === 0 ? null : mean(ws.map((w) => w.tokensPerS));
    },
  },
  ttft_p50_ms: { quantile: 0.5, value: pooled((w) => w.ttft, 0.5) },
  ttft_p99_ms: { quantile: 0.99, value: pooled((w) => w.ttft, 0.99) },
  // First content or tool-call token: what bench_serving's chat TTFT counts (reasoning left out).
  ttfc_p50_ms: { quantile: 0.5, value: pooled((w) => w.ttfc, 0.5) },
  ttfc_p99_ms: { quantile: 0.99, value: pooled((w) => w.ttfc, 0.99) },
  // A request's own p50 / p99 gap, its median over requests (the records keep no single gaps; see load.ts).
  itl_p50_ms: {
    quantile: 0.5,
    value: pooled(
      (w) => w.itlP50,
      0.5,
      (w) => w.e2e.total,
    ),
  },
  itl_p99_ms: {
    quantile: 0.5,
    value: pooled(
      (w) => w.itlP99,
      0.5,
      (w) => w.e2e.total,
    ),
  },
  // Per token, from each request's own (e2e − ttft) ÷ (completion tokens − 1): pooled over requests.
  tpot_p50_ms: { quantile: 0.5, value: pooled((w) => w.tpot, 0.5) },
  tpot_p99_ms: { quantile: 0.99, value: pooled((w) => w.tpot, 0.99) },
  e2e_p50_ms: { quantile: 0.5, value: pooled((w) => w.e2e, 0.5) },
  e2e_p99_ms: { quantile: 0.99, value: pooled((w) => w.e2e, 0.99) },
  error_rate: { value: errorRate },
} satisfies Record<Figure, Pick<FigureSpec, 'quantile' | 'value'>>;

/** The figures a comparison judges, in the table's order, each with how its run value is taken. */
export const FIGURE_SPECS: readonly FigureSpec[] = AB_FIGURE_LIST.map((f) => ({ ...f, ...VALUES[f.figure] }));

/** A phase's output tokens per ok request over its steady windows: how long the answers were, which moves
 * decode tok/s (fewer prefills per token) without being what a server setting changes. The covariate the
 * decode figure is adjusted for (sequential.ts `estimate`). */
export function tokensPerRequest(windows: readonly RunWindow[]): number | null {
  const ws = steady(windows);
  const ok = ws.reduce((s, w) => s + w.ok, 0);
  return ok === 0 ? null : ws.reduce((s, w) => s + w.outputTokens, 0) / ok;
}

/** A run's windows in a phase (none when the run lacks it or failed before its summary). */
export function phaseWindows(run: RunData, phase: string): readonly RunWindow[] {
  return run.phases.get(phase)?.windows ?? [];
}

/**
 * One run's value of a figure in a phase. A failed run (it ended `failed`: preflight, a results disk) has
 * no latency or throughput, and every request it was to send counts as failed: 100% errors+hangs.
 */
export function runValue(spec: FigureSpec, run: RunData, phase: string): number | null {
  if (run.status === 'failed') return spec.figure === 'error_rate' ? 100 : null;
  return spec.value(phaseWindows(run, phase));
}

/** What a percentile a run lacks would need: requests in a run's steady windows, what the runs had, and the
 * sweep.phase_duration at which every run would have them. */
export interface PhaseNeed {
  /** Requests past the percentile × its share: 500 for a p99, 10 for a p50. */
  requests: number;
  /** Fewest and most completed requests in a run's steady windows. */
  had: [number, number];
  /** Seconds: the phase as it ran, and as long as it would have to be (rounded up to 10 s). */
  phaseS: number;
  neededS: number;
}

/**
 * For a latency percentile some of `runs` have too few requests for: how long the phase would have to be for
 * each run to have it — the phase's span plus the steady time the missing requests take at that run's own
 * steady rate (completed requests sent in steady windows per steady second), the longest over the runs. Null
 * for a figure that is no percentile, when every run has enough, or when a run short of it has no steady window
 * to tell its rate from.
 */
export function phaseNeed(spec: FigureSpec, runs: readonly RunData[], phase: string): PhaseNeed | null {
  if (spec.quantile === undefined) return null;
  const requests = Math.ceil(MIN_BEYOND_QUANTILE / Math.min(spec.quantile, 1 - spec.quantile));
  let phaseS = 0;
  let neededS = 0;
  const had: number[] = [];
  for (const run of runs) {
    const windows = phaseWindows(run, phase);
    const ws = steady(windows);
    const count = ws.reduce((s, w) => s + w.e2e.total, 0);
    const spanS = windows.length === 0 ? 0 : windows.at(-1)!.endS - windows[0]!.startS;
    const steadyS = ws.reduce((s, w) => s + (w.endS - w.startS), 0);
    had.push(count);
    phaseS = Math.max(phaseS, spanS);
    if (count >= requests) continue;
    if (count === 0 || steadyS <= 0) return null;
    neededS = Math.max(neededS, spanS + ((requests - count) * steadyS) / count);
  }
  if (neededS === 0) return null;
  return { requests, had: [Math.min(...had), Math.max(...had)], phaseS, neededS: Math.ceil(neededS / 10) * 10 };
}

/** Figures with the same need, said once: `ttft p99, e2e p99 need 500 requests in a run's steady windows
 * (these runs had 96-130): a phase of ≥ 330 s (sweep.phase_duration; this one ran 60 s, warm-up and drain
 * included)`. */
export function phaseNeedLines(needs: readonly { label: string; need: PhaseNeed }[]): string[] {
  const groups = new Map<string, { labels: string[]; need: PhaseNeed }>();
  for (const { label, need } of needs) {
    const key = `${need.requests}:${need.had.join('-')}:${need.neededS}:${need.phaseS}`;
    const group = groups.get(key) ?? { labels: [], need };
    group.labels.push(label.replace(/ ms$/, ''));
    groups.set(key, group);
  }
  return [...groups.values()].map(({ labels, need }) => {
    const had = need.had[0] === need.had[1] ? `${need.had[0]}` : `${need.had[0]}-${need.had[1]}`;
    return `${labels.join(', ')} need${labels.length === 1 ? 's' : ''} ${need.requests} requests in a run's steady windows (these runs had ${had}): a phase of ≥ ${need.neededS} s (sweep.phase_duration; this one ran ${Math.round(need.phaseS)} s, warm-up and drain included)`;
  });
}
