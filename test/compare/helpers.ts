// Synthetic runs for comparison tests: windows with a given tokens/s series and latencies, no files.
import type { PhaseArrivals } from '../../src/analysis/index.js';
import { Bins } from '../../src/compare/bins.js';
import { workloadHash, type RunData, type RunWindow } from '../../src/compare/index.js';
import { SeededRandom } from '../../src/compare/stats.js';

/** A standard normal draw (Box-Muller). */
export function gauss(rng: SeededRandom): number {
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/** An AR(1) series around `level`: relative noise `cv`, lag-1 autocorrelation `rho` (stationary from the start). */
export function ar1(rng: SeededRandom, n: number, level: number, cv: number, rho: number): number[] {
  const out: number[] = [];
  let e = gauss(rng);
  for (let i = 0; i < n; i += 1) {
    out.push(level * (1 + cv * e));
    e = rho * e + Math.sqrt(1 - rho * rho) * gauss(rng);
  }
  return out;
}

/** One window: tokens/s, and `requests` requests whose latencies scale with `latencyScale`. */
export function window(
  startS: number,
  tokensPerS: number,
  options: { steady?: boolean; requests?: number; latencyScale?: number; errors?: number; hangs?: number; rng?: SeededRandom } = {},
): RunWindow {
  const w: RunWindow = {
    startS,
    endS: startS + 1,
    steady: options.steady ?? true,
    tokensPerS,
    outputTokens: tokensPerS,
    ok: (options.requests ?? 10) - (options.errors ?? 0) - (options.hangs ?? 0),
    requests: options.requests ?? 10,
    errors: options.errors ?? 0,
    hangs: options.hangs ?? 0,
    ttft: new Bins(),
    ttfc: new Bins(),
    tpot: new Bins(),
    e2e: new Bins(),
    itlP50: new Bins(),
    itlP99: new Bins(),
  };
  const rng = options.rng ?? new SeededRandom(Math.round(startS * 1000));
  const scale = options.latencyScale ?? 1;
  for (let i = 0; i < (options.requests ?? 10) - (options.errors ?? 0) - (options.hangs ?? 0); i += 1) {
    w.ttft.add(scale * (50 + 20 * rng.next()));
    w.ttfc.add(scale * (400 + 100 * rng.next()));
    w.tpot.add(scale * (8 + 2 * rng.next()));
    w.e2e.add(scale * (2000 + 500 * rng.next()));
    w.itlP50.add(scale * (20 + 2 * rng.next()), 100);
    w.itlP99.add(scale * (30 + 5 * rng.next()), 100);
  }
  return w;
}

/** A run of one phase from a tokens/s series (all windows steady unless `edges`: first and last not). */
export function run(
  name: string,
  series: number[],
  options: { phase?: string; workload?: Record<string, unknown>; latencyScale?: number; edges?: boolean; requests?: number; arrivals?: PhaseArrivals; startedAt?: string } = {},
): RunData {
  const workload = options.workload ?? { window_s: 1, agents: { count: 8, rounds: 10 }, engine: { decode_speedup: 1 } };
  const windows = series.map((v, i) =>
    window(i, v, {
      steady: options.edges === true ? i > 0 && i < series.length - 1 : true,
      latencyScale: options.latencyScale ?? 1,
      requests: options.requests ?? 10,
      rng: new SeededRandom(i + 17 * name.length),
    }),
  );
  const phase = options.phase ?? 'main';
  return {
    dir: `/tmp/${name}`,
    name,
    status: 'completed',
    startedAt: options.startedAt ?? null,
    labels: {},
    workload,
    hash: workloadHash(workload),
    windowS: 1,
    wallS: series.length,
    phases: new Map([[phase, { name: phase, windows, warmupRequests: 0, arrivals: options.arrivals ?? null }]]),
    badLines: 0,
  };
}
