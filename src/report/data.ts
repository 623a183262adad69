// Everything report.html shows, gathered from a results folder and its summary: the manifest, the hangs
// and other notable events (events.jsonl), the scrapes (gauges.jsonl) and the chart data built from them.
import type { Summary } from '../analysis/index.js';
import { describeSkipped, isKindLine, isScrapeEvent, readKindLines, readManifest, type RunManifest } from '../results/index.js';
import { baseName, type CanaryEvent, type ClientSampleEvent, type GaugeSnapshot, type HangEvent, type RequestRecord, type ScrapeEvent } from '../types/index.js';
import { capacityChart } from './capacity.js';
import { arrivalCharts, canaryCharts, clientCharts, GaugeSeriesBuilder, isCounterName, latencyCharts, timeCharts, type ChartSpec, type HangMark, type TargetHealth } from './charts.js';
import { isObject, round3 } from '../util/index.js';

/** One row of the hang table. */
export interface HangRow {
  t: string;
  run_s: number;
  agent: number;
  conversation: string;
  round: number;
  /** The id the request was sent with (what the engine's log names it by); null in older records. */
  request_id: string | null;
  /** The W3C trace it started (its trace in Jaeger or Tempo); null in older records. */
  trace_id: string | null;
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
  /** What the monitored targets' gauges read at the hang (from the hang event), one line per target. */
  gauges: string[];
}

/** Canary outcomes per leg (proxied / direct). */
export interface CanaryLegSummary {
  leg: string;
  total: number;
  ok: number;
  /** Failures by status and class, e.g. `hang first_token 2`, `error connection_reset 1`. */
  failures: Record<string, number>;
  latency_ms_p50: number | null;
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
  /** The link template trace ids are shown through (`tracing.trace_url` in run.json, or `--trace-url`); null: none. */
  trace_url: string | null;
  events: EventRow[];
  events_by_kind: Record<string, number>;
  targets: TargetHealth[];
  canaries: CanaryLegSummary[];
  charts: { latency: ChartSpec[]; time: ChartSpec[]; gauges: ChartSpec[]; client: ChartSpec[]; canaries: ChartSpec[]; arrivals: ChartSpec[]; capacity: ChartSpec[] };
}

export const MAX_HANG_ROWS = 500;
export const MAX_EVENT_ROWS = 300;
/** Kinds that have their own section (or are too many to list one by one). */
const NOT_LISTED = new Set(['client_sample', 'hang', 'error', 'request', 'request_start', 'scrape', 'canary', 'conversation_start', 'conversation_end']);
/** Canaries kept for the chart and the per-leg figures (one every few seconds: a week is ~120k). */
const MAX_CANARIES = 200_000;

/** `engine (0.2 s old): num_running_reqs 2 · num_queue_reqs 0`: the gauges (not counters) at a hang. */
function gaugeLines(snapshots: GaugeSnapshot[] | undefined): string[] {
  if (!Array.isArray(snapshots)) return [];
  return snapshots.map((g) => {
    const age = g.age_ms === null ? 'no scrape yet' : `${(g.age_ms / 1000).toFixed(1)} s old`;
    const values = (g.samples ?? [])
      .filter((x) => !isCounterName(x.name, x.type))
      .map((x) => {
        const labels = Object.entries(x.labels).filter(([k]) => k !== 'model_name');
        return `${baseName(x.name)}${labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`} ${Math.round(x.value * 1000) / 1000}`;
      });
    return `${g.target} (${age}${g.last_error === null ? '' : `, last scrape failed: ${g.last_error}`}): ${values.length === 0 ? 'no gauges' : values.join(' · ')}`;
  });
}

function hangRow(e: HangEvent): HangRow {
  const r: RequestRecord = e.record;
  return {
    t: e.t,
    run_s: round3((typeof e.run_ms === 'number' ? e.run_ms : r.run_ms + r.e2e_ms) / 1000),
    agent: r.agent,
    conversation: r.conversation,
    round: r.round,
    request_id: r.request_id ?? null,
    trace_id: typeof r.trace_id === 'string' ? r.trace_id : null,
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
    gauges: gaugeLines(e.gauges),
  };
}

/** The run's `tracing.trace_url` from run.json's workload; null when it has none. */
function traceUrlOf(manifest: RunManifest | null): string | null {
  const tracing = manifest?.workload['tracing'];
  const url = isObject(tracing) ? tracing['trace_url'] : null;
  return typeof url === 'string' ? url : null;
}

/** A line of events.jsonl, as the results readers give it. */
type EventLine = { kind: string } & Record<string, unknown>;

function isHangEvent(e: EventLine): e is EventLine & HangEvent {
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

/**
 * What report.html shows beyond the summary, gathered from a run's events and scrapes fed one at a time: by a
 * read of the files (`collectReportData`), or by the pass a rebuild makes over them anyway (`roundload
 * report` reads each file once).
 */
export class ReportCollector {
  readonly #hangs: HangRow[] = [];
  readonly #marks: HangMark[] = [];
  #hangsTotal = 0;
  readonly #samples: ClientSampleEvent[] = [];
  readonly #events: EventRow[] = [];
  readonly #canaries: CanaryEvent[] = [];
  readonly #byKind: Record<string, number> = {};
  readonly #gauges = new GaugeSeriesBuilder();

  /** A line of events.jsonl. */
  readonly event = (e: EventLine): void => {
    this.#byKind[e.kind] = (this.#byKind[e.kind] ?? 0) + 1;
    if (isHangEvent(e)) {
      this.#hangsTotal += 1;
      const row = hangRow(e);
      this.#marks.push({ run_s: row.run_s, round: row.round, label: `hang a${row.agent} r${row.round} ${row.hang_phase}` });
      if (this.#hangs.length < MAX_HANG_ROWS) this.#hangs.push(row);
    } else if (e.kind === 'canary') {
      if (typeof e.run_ms === 'number' && typeof e.latency_ms === 'number' && typeof e.leg === 'string' && this.#canaries.length < MAX_CANARIES) this.#canaries.push(e as unknown as CanaryEvent);
    } else if (e.kind === 'client_sample') {
      if (typeof e.run_ms === 'number' && typeof e.loop_delay_p99_ms === 'number') this.#samples.push(e as unknown as ClientSampleEvent);
    } else if (!NOT_LISTED.has(e.kind) && this.#events.length < MAX_EVENT_ROWS) {
      this.#events.push({ t: typeof e.t === 'string' ? e.t : '', run_s: typeof e.run_ms === 'number' ? round3(e.run_ms / 1000) : null, kind: e.kind, text: eventText(e) });
    }
  };

  /** A line of gauges.jsonl. */
  readonly scrape = (s: ScrapeEvent): void => {
    this.#gauges.add(s);
  };

  /** The report's data, once every line was fed. */
  data(summary: Summary, manifest: RunManifest | null, notes: string[], now: Date): ReportData {
    const marks = this.#marks;
    return {
      generated_at: now.toISOString(),
      manifest,
      summary,
      notes,
      hangs: this.#hangs,
      hangs_total: this.#hangsTotal,
      trace_url: traceUrlOf(manifest),
      events: this.#events,
      events_by_kind: this.#byKind,
      targets: this.#gauges.health(),
      canaries: canaryLegs(this.#canaries),
      charts: {
        latency: latencyCharts(summary),
        time: timeCharts(summary, marks),
        gauges: this.#gauges.charts(summary.gauges ?? [], marks),
        client: clientCharts(this.#samples, marks),
        canaries: canaryCharts(this.#canaries, marks),
        arrivals: arrivalCharts(summary),
        capacity: [capacityChart(summary)].filter((c) => c !== null),
      },
    };
  }
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
  const collector = new ReportCollector();
  const eventsRead = await readKindLines(dir, 'events', isKindLine, collector.event);
  const gaugesRead = await readKindLines(dir, 'gauges', isScrapeEvent, collector.scrape);
  for (const f of [eventsRead, gaugesRead]) for (const n of describeSkipped(f)) addNote(n);
  return collector.data(summary, manifest, notes, options.now ?? new Date());
}

function canaryLegs(canaries: CanaryEvent[]): CanaryLegSummary[] {
  const legs = new Map<string, { total: number; ok: number; failures: Record<string, number>; latencies: number[] }>();
  for (const c of canaries) {
    let l = legs.get(c.leg);
    if (l === undefined) {
      l = { total: 0, ok: 0, failures: {}, latencies: [] };
      legs.set(c.leg, l);
    }
    l.total += 1;
    if (c.ok) {
      l.ok += 1;
      l.latencies.push(c.latency_ms);
    } else {
      const key = [c.status, c.hang_phase ?? c.error_class ?? (c.http_status === null ? null : `http ${c.http_status}`)].filter((x) => x !== null).join(' ');
      l.failures[key] = (l.failures[key] ?? 0) + 1;
    }
  }
  return [...legs.entries()].map(([leg, l]) => {
    const sorted = l.latencies.sort((a, b) => a - b);
    return { leg, total: l.total, ok: l.ok, failures: l.failures, latency_ms_p50: sorted.length === 0 ? null : round3(sorted[Math.floor(sorted.length / 2)]!) };
  });
}
