// Reads a results folder into what a comparison needs: per phase, its time windows (tokens/s, outcomes,
// steady or not, from summary.json) each holding the latencies of the requests sent in it (from
// requests.jsonl, warm-up requests left out). Streams requests.jsonl, so a long run costs bins, not records.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readManifest, readRequestRecords, readSummary } from '../results/index.js';
import type { PhaseArrivals, WindowFigures } from '../analysis/index.js';
import { NotARunError } from '../errors.js';
import { Bins } from './bins.js';
import { workloadHash } from './identity.js';
import { isObject } from '../util/index.js';

export interface RunWindow {
  startS: number;
  endS: number;
  steady: boolean;
  tokensPerS: number;
  /** Output tokens and ok requests ended in the window (tokens per request: the decode figure's covariate). */
  outputTokens: number;
  ok: number;
  requests: number;
  errors: number;
  hangs: number;
  /** Latencies of the completed requests sent in this window (`ttfc`, `tpot`: of those that have one; none in
   * runs recorded before they existed). */
  ttft: Bins;
  ttfc: Bins;
  tpot: Bins;
  e2e: Bins;
  /** Each request's own ITL p50 and p99, weighted by its gaps (the records keep no single gaps). */
  itlP50: Bins;
  itlP99: Bins;
}

export interface RunPhase {
  name: string;
  /** In time order. */
  windows: RunWindow[];
  /** Requests sent in the phase's warm-up (not in any latency figure). */
  warmupRequests: number;
  /** An open-loop phase's arrivals and start lag (summary.json), else null. */
  arrivals: PhaseArrivals | null;
}

export interface RunData {
  dir: string;
  name: string;
  status: string;
  /** run.json's start (ISO), null when it has none: orders runs to tell alternated arms. */
  startedAt: string | null;
  labels: Record<string, string>;
  /** The resolved workload from run.json. */
  workload: unknown;
  hash: string;
  windowS: number;
  /** The run's wall time (summary.json), NaN when it has none. */
  wallS: number;
  phases: Map<string, RunPhase>;
  /** Lines of requests.jsonl that did not parse (a killed run's torn last line). */
  badLines: number;
}

/** Summaries written before windows said whether they are steady: every window but each phase's first and last. */
function steadyFallback(windows: WindowFigures[]): boolean[] {
  const byPhase = new Map<string, number[]>();
  windows.forEach((w, i) => byPhase.set(w.phase, [...(byPhase.get(w.phase) ?? []), i]));
  const steady = windows.map(() => true);
  for (const indexes of byPhase.values()) {
    steady[indexes[0]!] = false;
    steady[indexes[indexes.length - 1]!] = false;
  }
  return steady;
}

/** Reads one results folder. @throws NotARunError when it is not a finished roundload run folder. */
export async function loadRun(dirArg: string): Promise<RunData> {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new NotARunError(`cannot compare ${dirArg}: no such results folder`, { context: { dir } });
  const manifest = readManifest(dir);
  const summary = readSummary(dir, `cannot compare ${dirArg}`);
  if (!Array.isArray(summary.windows)) throw new NotARunError(`cannot compare ${dirArg}: its summary.json has no windows (written before roundload had them)`, { context: { dir } });
  const workload = manifest.workload;
  // The summary says its window length (`window_s: auto` picks it per run); older ones: run.json's number.
  const windowS = summary.window?.window_s ?? (isObject(workload) && typeof workload.window_s === 'number' ? workload.window_s : 10);
  const fallback = summary.windows.some((w) => w.steady === undefined) ? steadyFallback(summary.windows) : null;
  const phases = new Map<string, RunPhase>();
  const byKey = new Map<string, RunWindow>();
  summary.windows.forEach((w, i) => {
    let phase = phases.get(w.phase);
    if (phase === undefined) {
      const own = summary.phases.find((p) => p.phase === w.phase);
      phase = { name: w.phase, windows: [], warmupRequests: own?.warmup?.requests ?? 0, arrivals: own?.arrivals ?? null };
      phases.set(w.phase, phase);
    }
    const window: RunWindow = {
      startS: w.start_s,
      endS: w.end_s,
      steady: fallback === null ? w.steady === true : fallback[i]!,
      tokensPerS: w.output_tokens_per_s,
      outputTokens: w.output_tokens,
      ok: w.ok,
      requests: w.requests,
      errors: w.errors,
      hangs: w.hangs,
      ttft: new Bins(),
      ttfc: new Bins(),
      tpot: new Bins(),
      e2e: new Bins(),
      itlP50: new Bins(),
      itlP99: new Bins(),
    };
    phase.windows.push(window);
    byKey.set(`${w.phase}\u0000${Math.round(w.start_s / windowS)}`, window);
  });
  for (const phase of phases.values()) phase.windows.sort((a, b) => a.startS - b.startS);

  const windowMs = windowS * 1000;
  const windowFrom = (phase: string, from: number, to: number): RunWindow | undefined => {
    for (let i = from; i <= to; i += 1) {
      const w = byKey.get(`${phase}\u0000${i}`);
      if (w !== undefined) return w;
    }
    return undefined;
  };
  const read = await readRequestRecords(dir, (r) => {
    if (r.status !== 'ok' || r.warmup === true) return;
    // By send time, not end time: in a window of a short phase only the short requests would have ended, so
    // latencies by end time lean short early on; every request sent under steady load counts, however long.
    // summary.json lists the windows in which something ended or streamed, so the window a request was sent
    // in may not be there (sent early, its first token after the window closed): it then counts in the
    // next window listed, at the latest the one it ended in, never left out.
    const window = windowFrom(r.phase, Math.floor(r.run_ms / windowMs), Math.floor((r.run_ms + r.e2e_ms) / windowMs));
    if (window === undefined) return;
    if (typeof r.ttft_ms === 'number') window.ttft.add(r.ttft_ms);
    if (typeof r.ttfc_ms === 'number') window.ttfc.add(r.ttfc_ms);
    if (typeof r.tpot_ms === 'number') window.tpot.add(r.tpot_ms);
    window.e2e.add(r.e2e_ms);
    if (r.itl !== null && r.itl !== undefined && r.itl.count > 0) {
      window.itlP50.add(r.itl.p50_ms, r.itl.count);
      window.itlP99.add(r.itl.p99_ms, r.itl.count);
    }
  });
  return {
    dir,
    name: manifest.name,
    status: manifest.status,
    startedAt: manifest.started_at,
    labels: manifest.labels,
    workload,
    hash: workloadHash(workload),
    windowS,
    wallS: typeof summary.run?.wall_s === 'number' ? summary.run.wall_s : NaN,
    phases,
    badLines: read.skipped.length,
  };
}
