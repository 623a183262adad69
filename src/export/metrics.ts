// roundload's own Prometheus metrics, in a private registry: what the agents see while the run goes (requests
// by status and class, hangs, in flight, TTFT/ITL/e2e histograms, output tokens, the client's event-loop
// delay) and, once it is over, its verdicts as gauges (gauge verdicts, the diagnosis, thresholds, status).
// Fed only by run events and the built summary; prom-client is handed in, loaded by the caller on demand.
import type * as PromClient from 'prom-client';
import type { Registry } from 'prom-client';
import type { Summary } from '../analysis/index.js';
import { DIAGNOSIS_VERDICTS, GAUGE_VERDICTS, type RunEvent } from '../types/index.js';

/** Time to first token and end to end, in seconds: from a fast first token to a request at the total deadline. */
const LATENCY_BUCKETS_S = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
/** Inter-token latency, in seconds: a decode step of a few ms to a stall. */
const ITL_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5];

export interface RunMetricsOptions {
  /** The workload's name: the `workload` label of every series. */
  workload: string;
  /** The run's results folder name (`20250101-020000-nightly`): `roundload_run_info{run}`. */
  run: string;
  /** roundload's version: `roundload_run_info{version}`. */
  version: string;
  /** The run's labels (`--label k=v`): `roundload_run_info{label_k="v"}`. */
  labels: Readonly<Record<string, string>>;
  /** Requests in flight now, read at each scrape. */
  inFlight: () => number;
}

/** A Prometheus label name made of a run label's key (`git-sha` → `label_git_sha`). */
function labelName(key: string): string {
  return `label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

/** A gauge series' own labels as one label value, `worker="decode-0",…` (empty when it has none). */
function seriesText(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',');
}

/** A help text's list of the values a label takes, from the table that declares them: `a, b or c`. */
function valuesOf(table: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(table);
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** What the end of a run exports from its summary. */
export type RunVerdicts = Pick<Summary, 'run' | 'gauges' | 'diagnosis' | 'thresholds'>;

export class RunMetrics {
  readonly registry: Registry;
  readonly #requests: PromClient.Counter<'phase' | 'status' | 'class'>;
  readonly #errors: PromClient.Counter<'phase' | 'class'>;
  readonly #hangs: PromClient.Counter<'phase' | 'hang_phase'>;
  readonly #conversations: PromClient.Counter;
  readonly #outputTokens: PromClient.Counter<'phase'>;
  readonly #ttft: PromClient.Histogram<'phase'>;
  readonly #itl: PromClient.Histogram<'phase'>;
  readonly #e2e: PromClient.Histogram<'phase'>;
  readonly #loopDelayP99: PromClient.Gauge<'thread'>;
  readonly #loopDelayMax: PromClient.Gauge<'thread'>;
  readonly #loopUtilization: PromClient.Gauge<'thread'>;
  readonly #status: PromClient.Gauge<'status'>;
  readonly #prom: typeof PromClient;

  constructor(prom: typeof PromClient, o: RunMetricsOptions) {
    this.#prom = prom;
    const registry = new prom.Registry();
    registry.setDefaultLabels({ workload: o.workload });
    this.registry = registry;
    const registers = [registry];
    const info = new prom.Gauge({
      name: 'roundload_run_info',
      help: 'The run: its results folder, roundload version and --label labels (always 1)',
      labelNames: ['run', 'version', ...Object.keys(o.labels).map(labelName)],
      registers,
    });
    info.set({ run: o.run, version: o.version, ...Object.fromEntries(Object.entries(o.labels).map(([k, v]) => [labelName(k), v])) }, 1);
    this.#status = new prom.Gauge({ name: 'roundload_run_status', help: 'The run status (1 on the current one): running, then completed, interrupted or failed', labelNames: ['status'], registers });
    this.#status.set({ status: 'running' }, 1);
    new prom.Gauge({
      name: 'roundload_requests_in_flight',
      help: 'Requests sent and not yet at their terminal state',
      registers,
      collect() {
        this.set(o.inFlight());
      },
    });
    this.#requests = new prom.Counter({
      name: 'roundload_requests_total',
      help: 'Requests at their terminal state, by phase, status (ok, error, hang) and class (the error class of an error, the hang phase of a hang, empty when ok)',
      labelNames: ['phase', 'status', 'class'],
      registers,
    });
    this.#errors = new prom.Counter({ name: 'roundload_errors_total', help: 'Failed requests, by phase and error class', labelNames: ['phase', 'class'], registers });
    this.#hangs = new prom.Counter({
      name: 'roundload_hangs_total',
      help: 'Requests the watchdog declared hung, by phase and the point of the request it gave up at',
      labelNames: ['phase', 'hang_phase'],
      registers,
    });
    this.#conversations = new prom.Counter({ name: 'roundload_conversations_total', help: 'Conversations started (round 1 sent)', registers });
    this.#outputTokens = new prom.Counter({ name: 'roundload_output_tokens_total', help: 'Completion tokens of successful requests, by phase', labelNames: ['phase'], registers });
    this.#ttft = new prom.Histogram({ name: 'roundload_ttft_seconds', help: 'Time to first token of successful requests, by phase', labelNames: ['phase'], buckets: LATENCY_BUCKETS_S, registers });
    this.#itl = new prom.Histogram({
      name: 'roundload_itl_seconds',
      help: 'Inter-token latency of successful requests, by phase: one observation per request, its mean gap between token events',
      labelNames: ['phase'],
      buckets: ITL_BUCKETS_S,
      registers,
    });
    this.#e2e = new prom.Histogram({ name: 'roundload_e2e_seconds', help: 'End-to-end time of successful requests, by phase', labelNames: ['phase'], buckets: LATENCY_BUCKETS_S, registers });
    this.#loopDelayP99 = new prom.Gauge({
      name: 'roundload_client_loop_delay_p99_seconds',
      help: "The client's event-loop delay p99 over the last sample window, by thread",
      labelNames: ['thread'],
      registers,
    });
    this.#loopDelayMax = new prom.Gauge({
      name: 'roundload_client_loop_delay_max_seconds',
      help: "The client's event-loop delay max over the last sample window, by thread",
      labelNames: ['thread'],
      registers,
    });
    this.#loopUtilization = new prom.Gauge({
      name: 'roundload_client_loop_utilization_ratio',
      help: "The client's event-loop utilisation over the last sample window (0..1), by thread",
      labelNames: ['thread'],
      registers,
    });
  }

  /** Subscribe the run's events here. Never throws. */
  onEvent(event: RunEvent): void {
    switch (event.kind) {
      case 'request_start':
        if (event.round === 1) this.#conversations.inc();
        return;
      case 'hang':
        this.#hangs.inc({ phase: event.record.phase, hang_phase: event.record.hang?.phase ?? 'unknown' });
        return;
      case 'client_sample': {
        const thread = event.thread === undefined ? 'main' : String(event.thread);
        this.#loopDelayP99.set({ thread }, event.loop_delay_p99_ms / 1000);
        this.#loopDelayMax.set({ thread }, event.loop_delay_max_ms / 1000);
        this.#loopUtilization.set({ thread }, event.loop_utilization);
        return;
      }
      case 'request': {
        const r = event.record;
        const phase = r.phase;
        const cls = r.status === 'error' ? (r.error?.class ?? 'other') : r.status === 'hang' ? (r.hang?.phase ?? 'unknown') : '';
        this.#requests.inc({ phase, status: r.status, class: cls });
        if (r.status === 'error') this.#errors.inc({ phase, class: cls });
        if (r.status !== 'ok') return;
        if (r.ttft_ms !== null) this.#ttft.observe({ phase }, r.ttft_ms / 1000);
        if (r.itl !== null && r.itl.count > 0) this.#itl.observe({ phase }, r.itl.mean_ms / 1000);
        this.#e2e.observe({ phase }, r.e2e_ms / 1000);
        this.#outputTokens.inc({ phase }, r.completion_tokens ?? 0);
        return;
      }
      default:
        return;
    }
  }

  /** The run is over: its status and verdicts become gauges (made now: a gauge without labels would read 0,
   * "failed", before there is a verdict). Call once. */
  finish(summary: RunVerdicts): void {
    const prom = this.#prom;
    const registers = [this.registry];
    this.#status.reset();
    this.#status.set({ status: summary.run.status }, 1);
    const gaugeVerdict = new prom.Gauge({
      name: 'roundload_gauge_verdict',
      help: `The verdict on each monitored gauge series (1): ${valuesOf(GAUGE_VERDICTS)}`,
      labelNames: ['target', 'gauge', 'series', 'verdict'],
      registers,
    });
    for (const g of summary.gauges) gaugeVerdict.set({ target: g.target, gauge: g.name, series: seriesText(g.labels), verdict: g.verdict }, 1);
    const diagnosis = new prom.Gauge({
      name: 'roundload_diagnosis',
      help: `Where the hangs and errors most likely come from (1): ${valuesOf(DIAGNOSIS_VERDICTS)}`,
      labelNames: ['verdict'],
      registers,
    });
    diagnosis.set({ verdict: summary.diagnosis.verdict }, 1);
    const confidence = summary.diagnosis.confidence;
    if (typeof confidence === 'number') new prom.Gauge({ name: 'roundload_diagnosis_confidence', help: "The diagnosis' confidence (0..1; absent with verdict none)", registers }).set(confidence);
    const threshold = new prom.Gauge({ name: 'roundload_threshold_ok', help: 'Each threshold: 1 met, 0 failed', labelNames: ['threshold'], registers });
    for (const t of summary.thresholds.results) threshold.set({ threshold: t.name }, t.ok ? 1 : 0);
    new prom.Gauge({ name: 'roundload_thresholds_ok', help: 'Every threshold met (1: the exit code is not 1 for thresholds), 0 otherwise', registers }).set(summary.thresholds.ok ? 1 : 0);
  }
}
