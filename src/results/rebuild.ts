// Rebuilds a run's summary from its folder alone: requests.jsonl through the same SummaryBuilder a live
// run uses, client samples and canaries from events.jsonl, scrapes from gauges.jsonl. Works on a killed run (no
// summary.json, run.json still `running`, a torn last line) and says what was missing. Reads only.
import { existsSync } from 'node:fs';
import { SummaryBuilder, plannedLengthS, ReplayComparison, windowSettingOf, type Summary } from '../analysis/index.js';
import { runThresholds } from './limits.js';
import type { HistogramSet } from '../metrics/index.js';
import { readTrace, recordedFigures, replayedConversations } from '../trace/index.js';
import type { RunEndEvent, ScrapeEvent } from '../types/index.js';
import { resultPath } from './folder.js';
import { readHistograms } from './histograms-file.js';
import { describeSkipped, isKindLine, type JsonlFileReport } from './read.js';
import { readManifest, type RunManifest } from './manifest.js';
import { isCanary, isClientSample, isLoadEvent, isProbe, isScrapeEvent, readKindLines, readRequestRecords } from './records.js';
import { readSummary } from './summary-file.js';

export interface RebuildResult {
  summary: Summary;
  manifest: RunManifest;
  /** What was missing or approximated, one sentence each (the `report` command prints them). */
  notes: string[];
  files: { requests: JsonlFileReport; events: JsonlFileReport; gauges: JsonlFileReport };
  /** Whether summary.json / histograms.json were there before the rebuild. */
  had: { summary: boolean; histograms: boolean };
}

/** The run's histograms, or null with a note saying why ITL is approximated. */
function histogramsOf(dir: string, notes: string[]): HistogramSet | null {
  const read = readHistograms(dir);
  if ('set' in read) return read.set;
  if ('missing' in read) notes.push("histograms.json missing: ITL percentiles approximated from per-request stats (each request's ITL p50 and max)");
  else notes.push(`histograms.json unreadable (${read.unreadable}): ITL percentiles approximated from per-request stats`);
  return null;
}

function readPreviousSummary(dir: string): Summary | null {
  try {
    return readSummary(dir);
  } catch {
    return null;
  }
}

/** `agents.think_time_ms` of the run (the limit of an open-loop stage's start lag); 100, the default, when unreadable. */
export function thinkTimeMsOf(workload: Record<string, unknown>): number {
  const agents = workload.agents as { think_time_ms?: unknown } | undefined;
  return typeof agents?.think_time_ms === 'number' && agents.think_time_ms >= 0 ? agents.think_time_ms : 100;
}

/** `monitor.pin_after_s` of the run, so the gauge verdicts are rebuilt as the run made them. */
function pinAfterSOf(manifest: RunManifest): number {
  const m = manifest.workload.monitor as { pin_after_s?: unknown } | undefined;
  return typeof m?.pin_after_s === 'number' && m.pin_after_s > 0 ? m.pin_after_s : 30;
}

/** A replay's comparison with its recording, made again from the trace file run.json names (null: not a replay,
 * or the trace cannot be read any more, which `notes` says). */
function replayComparisonOf(manifest: RunManifest, notes: string[]): ReplayComparison | null {
  const raw = manifest.workload.replay as { file?: unknown; conversations?: unknown; connection?: unknown; speed?: unknown } | null | undefined;
  if (raw === null || raw === undefined || typeof raw.file !== 'string') return null;
  const limit = typeof raw.conversations === 'number' ? raw.conversations : 'all';
  try {
    const recorded = replayedConversations(readTrace(raw.file), limit).flatMap((c) => c.requests.map(recordedFigures));
    return new ReplayComparison(recorded, { file: raw.file, connection: typeof raw.connection === 'string' ? raw.connection : 'as-recorded', speed: typeof raw.speed === 'number' ? raw.speed : 1 });
  } catch (error) {
    notes.push(`the replay's trace ${raw.file} could not be read again (${error instanceof Error ? error.message : String(error)}): no comparison with the recording was made`);
    return null;
  }
}

/** The span export and the engine's traces are not in the folder: the previous summary's, when there is one. */
function keepTracing(builder: SummaryBuilder, previous: Summary | null): void {
  if (previous?.tracing === undefined) return;
  builder.setTracing(previous.tracing);
  builder.setEngineTraceEnds(previous.tracing.engine_trace_ends ?? []);
}

/** Who else reads a rebuild's pass over events.jsonl and gauges.jsonl (the report: each file read once). */
export interface RebuildReaders {
  event?: (line: { kind: string } & Record<string, unknown>) => void;
  scrape?: (scrape: ScrapeEvent) => void;
}

/** Rebuilds the summary of the run in `dir`; `also` sees every line of its events and scrapes as it goes.
 * @throws NotARunError when `dir` is not a results folder, ResultsError when it cannot be read. */
export async function rebuildSummary(dir: string, also: RebuildReaders = {}): Promise<RebuildResult> {
  const manifest = readManifest(dir);
  const notes: string[] = [];
  const previous = readPreviousSummary(dir);
  const hadSummary = existsSync(resultPath(dir, 'summary'));
  if (!hadSummary) notes.push('summary.json was missing');
  else if (previous === null) notes.push('summary.json was unreadable');

  const fileHistograms = histogramsOf(dir, notes);
  const builder = new SummaryBuilder({
    itlFromRecords: fileHistograms === null,
    windowS: windowSettingOf(manifest.workload),
    plannedS: plannedLengthS(manifest.workload),
    thresholds: runThresholds(manifest.workload, notes),
    pinAfterS: pinAfterSOf(manifest),
    thinkTimeMs: thinkTimeMsOf(manifest.workload),
    targetUrl: manifest.target.url,
  });
  let lastWallMs = 0;
  const seen = (t: unknown, plusMs = 0): void => {
    const ms = typeof t === 'string' ? Date.parse(t) : NaN;
    if (Number.isFinite(ms)) lastWallMs = Math.max(lastWallMs, ms + plusMs);
  };

  const comparison = replayComparisonOf(manifest, notes);
  const requests = await readRequestRecords(dir, (r) => {
    builder.add(r);
    comparison?.add(r);
    seen(r.t, r.e2e_ms);
  });
  if (!requests.exists) notes.push('requests.jsonl missing: no request records');

  let runEnd: RunEndEvent | null = null;
  const arrivals = { starts: 0, ends: 0 };
  const events = await readKindLines(dir, 'events', isKindLine, (e) => {
    also.event?.(e);
    seen(e.t);
    if (isClientSample(e)) builder.addClientSample(e);
    else if (isCanary(e)) builder.addCanary(e);
    else if (isProbe(e)) builder.addProbe(e);
    else if (isLoadEvent(e)) {
      builder.addLoad(e);
      if (e.kind === 'conversation_start') arrivals.starts += 1;
      else if (e.kind === 'arrivals_end') arrivals.ends += 1;
    } else if (e.kind === 'run_end') runEnd = e as unknown as RunEndEvent;
  });
  if (!events.exists) notes.push('events.jsonl missing: no client samples, hangs or run events');
  if (arrivals.starts > 0 && arrivals.ends === 0)
    notes.push('events.jsonl has no arrivals_end (the run ended before its arrivals did): arrivals still waiting for a slot then are not counted (not_started: null)');

  // The gauge verdicts come from the scrapes, judged as the live run judged them.
  const gauges = await readKindLines(dir, 'gauges', isScrapeEvent, (s) => {
    also.scrape?.(s);
    seen(s.t);
    builder.addScrape(s);
  });

  if (fileHistograms !== null) {
    // ttft, ttfc, tpot, reasoning and e2e come from the records (the builder recorded them); ITL gaps only
    // exist in the file.
    builder.histograms.merge(fileHistograms, 'itl');
  }
  for (const f of [requests, events, gauges]) notes.push(...describeSkipped(f));

  const end = runEnd as RunEndEvent | null;
  let status = manifest.status;
  if (status === 'running') {
    if (end !== null) {
      status = end.status;
      notes.push(`run.json still said "running" but events.jsonl has run_end (${end.status}): the process died while writing its final files`);
    } else {
      status = 'killed';
      notes.push(
        `run.json still said "running" and events.jsonl has no run_end: the run was killed before it finished (status "killed"; if it is in fact still going, report it again once it ends); the summary covers the ${requests.records} requests it recorded`,
      );
    }
  }
  let endedAt = manifest.ended_at ?? end?.t ?? null;
  if (endedAt === null && lastWallMs > 0) {
    endedAt = new Date(lastWallMs).toISOString();
    notes.push('end time estimated from the last record written');
  }
  keepTracing(builder, previous);
  const startMs = manifest.started_at === null ? NaN : Date.parse(manifest.started_at);
  const endMs = endedAt === null ? NaN : Date.parse(endedAt);
  const summary = builder.build({
    name: manifest.name,
    status,
    started_at: manifest.started_at,
    ended_at: endedAt,
    wall_s: Number.isFinite(startMs) && Number.isFinite(endMs) ? Math.max(0, endMs - startMs) / 1000 : 0,
    target: manifest.target.url,
    path: manifest.path,
    labels: manifest.labels,
  });

  if (summary.client.writer_dropped_lines > 0)
    notes.push(`the run's results writer could not write ${summary.client.writer_dropped_lines} lines (its queue was full or the disk refused them): this summary covers only what reached the disk`);
  // What only the live run could compute (verdicts from sources not in the folder) is kept from the
  // previous summary rather than silently dropped.
  if (previous !== null) {
    const kept: string[] = [];
    if (gauges.records === 0 && summary.gauges.length === 0 && Array.isArray(previous.gauges) && previous.gauges.length > 0) {
      summary.gauges = previous.gauges;
      kept.push('gauge verdicts');
    }
    if (previous.diagnosis !== undefined && previous.diagnosis.verdict !== summary.diagnosis.verdict && summary.diagnosis.verdict === 'unknown' && summary.totals.hangs === previous.totals?.hangs) {
      summary.diagnosis = previous.diagnosis;
      kept.push('diagnosis');
    }
    if (comparison === null && previous.replay !== undefined) {
      // The recording it is compared with is a trace outside the folder, no longer readable.
      summary.replay = previous.replay;
      kept.push('replay comparison');
    }
    if (kept.length > 0) notes.push(`${kept.join(', ')} kept from the previous summary.json (not recomputable from the folder)`);
  }
  if (comparison !== null) summary.replay = comparison.result();
  return { summary, manifest, notes, files: { requests, events, gauges }, had: { summary: hadSummary, histograms: fileHistograms !== null } };
}
