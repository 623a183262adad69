// Everything report.html shows, gathered from a results folder and its summary: the manifest, the hangs
// and other notable events (events.jsonl), the scrapes (gauges.jsonl) and the chart data built from them.
import type { Summary } from '../analysis/index.js';
import { describeSkipped, isKindLine, isScrapeEvent, readJsonlFile, readManifest, resultPath, type RunManifest } from '../results/index.js';
import type { ClientSampleEvent, HangEvent, RequestRecord } from '../types/index.js';
import { clientCharts, GaugeSeriesBuilder, latencyCharts, timeCharts, type ChartSpec, type HangMark, type TargetHealth } from './charts.js';

/** One row of the hang table. */
export interface HangRow {
  t: string;
  run_s: number;
  agent: number;
  conversation: string;
  round: number;
  run_phase: string;
  /** Where the request was when the watchdog gave up (`first_token`, `mid_stream`, …). */
  hang_phase: string;
  deadline: string;
  deadline_ms: number | null;
  last_byte_age_ms: number | null;
  connection_id: string | null;
  connection_nth: number | null;
  connection_idle_ms: number | null;
  local_port: number | null;
  path: string;
  chunks: number;
}

/** A notable event other than hangs and client samples (probes, canaries, bursts, phases, run start/end). */
export interface EventRow {
  t: string;
  run_s: number | null;
  kind: string;
  text: string;
}

export interface ReportData {
  generated_at: string;
  manifest: RunManifest | null;
  summary: Summary;
  /** What was missing or approximated (from a rebuild), shown at the top. */
  notes: string[];
  hangs: HangRow[];
  hangs_total: number;
  events: EventRow[];
  events_by_kind: Record<string, number>;
  targets: TargetHealth[];
  charts: { latency: ChartSpec[]; time: ChartSpec[]; gauges: ChartSpec[]; client: ChartSpec[] };
}

export const MAX_HANG_ROWS = 500;
export const MAX_EVENT_ROWS = 300;
/** Kinds that have their own section (or are too many to list one by one). */
const NOT_LISTED = new Set(['client_sample', 'hang', 'error', 'request', 'request_start', 'scrape']);

function r3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

function hangRow(e: HangEvent): HangRow {
  const r: RequestRecord = e.record;
  return {
    t: e.t,
    run_s: r3((typeof e.run_ms === 'number' ? e.run_ms : r.run_ms + r.e2e_ms) / 1000),
    agent: r.agent,
    conversation: r.conversation,
    round: r.round,
    run_phase: r.phase,
    hang_phase: r.hang?.phase ?? 'unknown',
    deadline: r.hang?.deadline ?? '',
    deadline_ms: r.hang?.deadline_ms ?? null,
    last_byte_age_ms: r.hang?.last_byte_age_ms ?? null,
    connection_id: r.connection?.id ?? null,
    connection_nth: r.connection?.nth ?? null,
    connection_idle_ms: r.connection?.idle_ms ?? null,
    local_port: r.connection?.local_port ?? null,
    path: r.path,
    chunks: r.chunks,
  };
}

function isHangEvent(e: { kind: string } & Record<string, unknown>): e is { kind: string } & Record<string, unknown> & HangEvent {
  const r = e.record as Record<string, unknown> | null | undefined;
  return e.kind === 'hang' && typeof r === 'object' && r !== null && typeof r.round === 'number' && typeof r.run_ms === 'number';
}

function eventText(e: Record<string, unknown>): string {
  const { kind: _kind, t: _t, run_ms: _runMs, ...rest } = e;
  const text = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/** Reads what the report needs from `dir` beyond the summary. Missing files make empty sections. */
export async function collectReportData(dir: string, summary: Summary, options: { notes?: readonly string[]; now?: Date } = {}): Promise<ReportData> {
  const notes = [...(options.notes ?? [])];
  const addNote = (n: string) => {
    if (!notes.includes(n)) notes.push(n);
  };
  let manifest: RunManifest | null = null;
  try {
    manifest = readManifest(dir);
  } catch (error) {
    addNote(`run.json unreadable: ${error instanceof Error ? error.message : String(error)}`);
  }

  const hangs: HangRow[] = [];
  const marks: HangMark[] = [];
  let hangsTotal = 0;
  const samples: ClientSampleEvent[] = [];
  const events: EventRow[] = [];
  const byKind: Record<string, number> = {};
  const eventsRead = await readJsonlFile(resultPath(dir, 'events'), isKindLine, (e) => {
    byKind[e.kind] = (byKind[e.kind] ?? 0) + 1;
    if (isHangEvent(e)) {
      hangsTotal += 1;
      const row = hangRow(e);
      marks.push({ run_s: row.run_s, round: row.round, label: `hang a${row.agent} r${row.round} ${row.hang_phase}` });
      if (hangs.length < MAX_HANG_ROWS) hangs.push(row);
    } else if (e.kind === 'client_sample') {
      if (typeof e.run_ms === 'number' && typeof e.loop_delay_p99_ms === 'number') samples.push(e as unknown as ClientSampleEvent);
    } else if (!NOT_LISTED.has(e.kind) && events.length < MAX_EVENT_ROWS) {
      events.push({ t: typeof e.t === 'string' ? e.t : '', run_s: typeof e.run_ms === 'number' ? r3(e.run_ms / 1000) : null, kind: e.kind, text: eventText(e) });
    }
  });
  const gauges = new GaugeSeriesBuilder();
  const gaugesRead = await readJsonlFile(resultPath(dir, 'gauges'), isScrapeEvent, (s) => gauges.add(s));
  for (const f of [eventsRead, gaugesRead]) for (const n of describeSkipped(f)) addNote(n);

  return {
    generated_at: (options.now ?? new Date()).toISOString(),
    manifest,
    summary,
    notes,
    hangs,
    hangs_total: hangsTotal,
    events,
    events_by_kind: byKind,
    targets: gauges.health(),
    charts: {
      latency: latencyCharts(summary),
      time: timeCharts(summary, marks),
      gauges: gauges.charts(summary.gauges ?? [], marks),
      client: clientCharts(samples, marks),
    },
  };
}
