// One run as the history database holds it: plain rows whose keys are the columns of schema.ts, made purely
// from a run's manifest (run.json) and summary.json, so the same rows come from the end of a run and from
// `history import` of its folder years later.
import { createHash } from 'node:crypto';
import type { Summary, PhaseSummary, RoundSummary } from '../analysis/index.js';
import type { RunManifest } from '../results/index.js';
import type { Percentiles } from '../metrics/index.js';
import { runVerdict } from '../report/index.js';
import { workloadHash } from '../compare/index.js';
import { FIGURES, LATENCY_FIGURES, latencyColumn, type LatencyFigureName } from '../types/index.js';

type Cell = string | number | null;
export type Row = Record<string, Cell>;

export interface HistoryRun {
  /** The `runs` row; `run_id` is derived from the run itself, so a run added twice is one row. */
  run: Row & { run_id: string };
  figures: Row[];
  failures: Row[];
  gauges: Row[];
  thresholds: Row[];
}

/** A run's id: 12 hex characters of a hash of what makes it this run (name, start, host, argv, labels), the
 * same wherever its folder was copied to. */
export function runIdOf(manifest: Pick<RunManifest, 'name' | 'started_at' | 'host' | 'argv' | 'labels'>): string {
  const identity = JSON.stringify([manifest.name, manifest.started_at, manifest.host, manifest.argv, manifest.labels]);
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}

/** Each latency figure's history percentiles (types/figures.ts) as `ttft_p50_ms`…; null where the figure has no
 * value (no request had one, or a summary older than the figure). */
function latencyCells(source: Partial<Record<LatencyFigureName, Percentiles>>): Row {
  const row: Row = {};
  for (const figure of LATENCY_FIGURES) {
    const p = source[figure];
    for (const q of FIGURES[figure].history) row[latencyColumn(figure, q)] = p === undefined || p.count === 0 ? null : p[`${q}_ms`];
  }
  return row;
}

function phaseRow(runId: string, p: PhaseSummary): Row {
  return {
    run_id: runId,
    phase: p.phase,
    round: 0,
    requests: p.requests,
    ok: p.ok,
    errors: p.errors,
    hangs: p.hangs,
    output_tokens_per_s: p.output_tokens_per_s,
    stream_tokens_per_s: streamMean(p.rounds),
    ...latencyCells(p),
  };
}

/** A phase's mean stream decode speed: its rounds' means weighted by their ok requests. */
function streamMean(rounds: readonly RoundSummary[]): number | null {
  const ok = rounds.reduce((n, r) => n + r.ok, 0);
  if (ok === 0) return null;
  return rounds.reduce((sum, r) => sum + r.stream_tokens_per_s_mean * r.ok, 0) / ok;
}

function roundRow(runId: string, phase: string, r: RoundSummary): Row {
  return {
    run_id: runId,
    phase,
    round: r.round,
    requests: r.requests,
    ok: r.ok,
    errors: r.errors,
    hangs: r.hangs,
    output_tokens_per_s: null,
    stream_tokens_per_s: r.ok === 0 ? null : r.stream_tokens_per_s_mean,
    ...latencyCells(r),
  };
}

/** Errors by class (`kind` error) and hangs by where they hung (`kind` hang). */
function failureRows(runId: string, s: Summary): Row[] {
  const errors = Object.entries(s.errors_by_class).map(([cls, count]) => ({ run_id: runId, kind: 'error', class: cls, count }));
  const hangs = Object.entries(s.hangs.by_phase).map(([cls, count]) => ({ run_id: runId, kind: 'hang', class: cls, count: count ?? 0 }));
  return [...errors, ...hangs];
}

function runRow(runId: string, manifest: RunManifest, s: Summary, dir: string | null, now: Date): HistoryRun['run'] {
  const verdict = runVerdict(s);
  return {
    run_id: runId,
    name: manifest.name,
    started_at: manifest.started_at ?? s.run.started_at,
    ended_at: manifest.ended_at ?? s.run.ended_at,
    status: s.run.status,
    verdict: verdict.word.toLowerCase(),
    exit_code: verdict.exitCode,
    target: s.run.target,
    path: s.run.path,
    model: manifest.target.model,
    labels: JSON.stringify(manifest.labels),
    versions: JSON.stringify(manifest.versions),
    host: typeof manifest.host.hostname === 'string' ? manifest.host.hostname : null,
    workload_hash: workloadHash(manifest.workload),
    dir,
    wall_s: s.run.wall_s,
    requests: s.totals.requests,
    ok: s.totals.ok,
    errors: s.totals.errors,
    hangs: s.totals.hangs,
    error_rate: s.totals.error_rate,
    output_tokens_per_s: s.throughput.output_tokens_per_s,
    requests_per_s: s.throughput.requests_per_s,
    thresholds_ok: s.thresholds.ok ? 1 : 0,
    diagnosis: s.diagnosis.verdict,
    diagnosis_confidence: s.diagnosis.confidence ?? null,
    added_at: now.toISOString(),
  };
}

/** The rows of one run. `dir`: where its results folder was when it was added (null when not known). */
export function historyRunOf(manifest: RunManifest, summary: Summary, dir: string | null, now = new Date()): HistoryRun {
  const runId = runIdOf(manifest);
  return {
    run: runRow(runId, manifest, summary, dir, now),
    figures: summary.phases.flatMap((p) => [phaseRow(runId, p), ...p.rounds.map((r) => roundRow(runId, p.phase, r))]),
    failures: failureRows(runId, summary),
    gauges: summary.gauges.map((g) => ({
      run_id: runId,
      target: g.target,
      name: g.name,
      labels: JSON.stringify(g.labels),
      verdict: g.verdict,
      longest_nonzero_s: g.longest_nonzero_s,
      last_value: g.last_value,
    })),
    thresholds: summary.thresholds.results.map((t) => ({ run_id: runId, name: t.name, limit_value: t.limit, actual: t.actual, ok: t.ok ? 1 : 0, message: t.message })),
  };
}
