// What the progress display knows of a running run, folded from the run's events alone (convention 7, docs/development.md):
// counts, TTFT so far, requests in flight and their age, the latest key gauges of every target; and the
// moments worth announcing on their own line (a hang, a first error of a class, a target down, a
// saturated client). Time is the display's own clock at each event's arrival.
import { LatencyHistogram } from '../metrics/index.js';
import { KEY_GAUGES, keyGaugeValues } from '../monitor/index.js';
import { isSaturatedSample, SATURATED_UTILIZATION } from '../analysis/index.js';
import type { ClientSampleEvent, RequestRecord, RunEvent, ScrapeEvent } from '../types/index.js';

/** What the run plans, known before it starts. */
export interface ProgressPlan {
  /** Requests the run plans to send (a run of rounds); null when it lasts a time. */
  plannedRequests: number | null;
  /** Length of each phase (`duration`, or a sweep's `phase_duration`); null: phases end with their rounds. */
  phaseMs: number | null;
  /** Phases the run has (a sweep's levels, `agents.stages`; 1 otherwise). */
  phases: number;
  /** The whole run's planned length, counted from its first phase (`agents.stages`, `agents.arrival`); null
   * or absent: `phaseMs` × phases. */
  lengthMs?: number | null;
}

/** A moment announced on its own line as it happens. `atMs`: time since the run started. */
export type Notice =
  | { kind: 'hang'; atMs: number; record: RequestRecord }
  | { kind: 'first_error'; atMs: number; errorClass: string; message: string; agent: number; conversation: string; round: number }
  | { kind: 'target_down'; atMs: number; target: string; url: string; error: string; lastUpAgoMs: number | null }
  | { kind: 'target_up'; atMs: number; target: string; downForMs: number }
  | { kind: 'saturated'; atMs: number; loopDelayP99Ms: number; utilization: number; inFlight: number; thread: number | null; busy: boolean; cpuWaitMs: number | null; windowMs: number }
  | { kind: 'delayed'; atMs: number; conversation: string; phase: string; lagMs: number; active: number };

/** The figures of one progress line. Durations in ms, rates per second; null: nothing to show yet. */
export interface ProgressFigures {
  elapsedMs: number;
  /** Until the planned end (0 once past it, while in-flight requests finish); null: no planned length. */
  remainingMs: number | null;
  /** The running phase, when the run has several. */
  phase: string | null;
  done: number;
  planned: number | null;
  /** Over the interval since the previous line. */
  requestsPerS: number | null;
  outputTokensPerS: number | null;
  ttftP50Ms: number | null;
  ttftP99Ms: number | null;
  errors: number;
  hangs: number;
  inFlight: number;
  /** In-flight requests past their first token (their answer streaming). */
  streaming: number;
  oldestInFlightMs: number | null;
  /** Key gauges of the latest good scrape of each target, `running` or `decode.running` with several targets. */
  gauges: { name: string; value: number }[];
  /** Monitored targets whose latest scrape failed. */
  targetsDown: string[];
  /** An open-loop run (`agents.arrival`), once a conversation started: conversations started per second over
   * the last interval, running now, their start lag p99 over the last interval (null: none started in it),
   * and how many waited for a slot so far. */
  arrivals: { startsPerS: number | null; active: number; startLagP99Ms: number | null; delayed: number } | null;
}

const GAUGE_ORDER = [...new Set(KEY_GAUGES.map(([, short]) => short))];

interface TargetState {
  up: boolean | null;
  /** Clock time of the latest change (or of the latest good scrape while up). */
  sinceMs: number;
  lastGoodMs: number | null;
  gauges: [string, number][];
}

export class ProgressTracker {
  readonly #plan: ProgressPlan;
  readonly #clock: () => number;
  readonly #createdMs: number;
  #startMs: number | null = null;
  #phase: string | null = null;
  #phasesSeen = 0;
  #plannedEndMs: number | null = null;
  #done = 0;
  #errors = 0;
  #hangs = 0;
  readonly #ttft = new LatencyHistogram();
  /** Requests in flight by agent (an agent has one at a time): their start on our clock. */
  readonly #inFlight = new Map<number, number>();
  readonly #errorClasses = new Set<string>();
  readonly #targets = new Map<string, TargetState>();
  /** Saturated or not, per client thread (-1: the main thread). */
  readonly #saturated = new Map<number, boolean>();
  #interval = { atMs: 0, done: 0, tokens: 0 };
  /** Rates of the last whole interval (a redraw between two lines shows them again). */
  #rates: { requestsPerS: number; outputTokensPerS: number } | null = null;
  #tokens = 0;
  /** Per client thread (-1: the main thread): token events its streams received so far (`streamed_tokens`). */
  readonly #streamed = new Map<number, number>();
  /** Agents whose in-flight request has its first token (its TTFT already counted). */
  readonly #firstSeen = new Set<number>();
  /** Open-loop conversations: running now, started and delayed so far, the start lags of the current interval. */
  #arrivals: { active: number; starts: number; delayed: number; lags: LatencyHistogram; rate: { startsPerS: number; lagP99Ms: number | null } | null; intervalStarts: number } | null = null;

  constructor(plan: ProgressPlan, clock: () => number) {
    this.#plan = plan;
    this.#clock = clock;
    this.#createdMs = clock();
    this.#interval.atMs = this.#createdMs;
  }

  /** Time since the run started (since the tracker was made, before that). */
  elapsedMs(): number {
    return this.#clock() - (this.#startMs ?? this.#createdMs);
  }

  /** Folds one event in; returns what it makes worth announcing (usually nothing). */
  onEvent(event: RunEvent): Notice[] {
    const now = this.#clock();
    switch (event.kind) {
      case 'run_start':
        this.#startMs = now;
        this.#interval = { atMs: now, done: this.#done, tokens: this.#outputTokens() };
        return [];
      case 'phase':
        this.#phase = event.name;
        this.#phasesSeen += 1;
        if (this.#plan.lengthMs !== undefined && this.#plan.lengthMs !== null) this.#plannedEndMs ??= now + this.#plan.lengthMs;
        else if (this.#plan.phaseMs !== null) this.#plannedEndMs = now + this.#plan.phaseMs * Math.max(1, this.#plan.phases - this.#phasesSeen + 1);
        return [];
      case 'conversation_start': {
        const a = (this.#arrivals ??= { active: 0, starts: 0, delayed: 0, lags: new LatencyHistogram(), rate: null, intervalStarts: 0 });
        a.active += 1;
        a.starts += 1;
        a.lags.recordMs(event.start_lag_ms);
        if (!event.delayed) return [];
        a.delayed += 1;
        // Announced once: from then on the line's `delayed` count tells the rest.
        return a.delayed === 1 ? [{ kind: 'delayed', atMs: this.elapsedMs(), conversation: event.conversation, phase: event.phase, lagMs: event.start_lag_ms, active: a.active }] : [];
      }
      case 'conversation_end':
        if (this.#arrivals !== null) this.#arrivals.active = Math.max(0, this.#arrivals.active - 1);
        return [];
      case 'request_start':
        this.#inFlight.set(event.agent, now);
        this.#firstSeen.delete(event.agent);
        return [];
      case 'first_token':
        // TTFT as first tokens arrive: a long answer's TTFT is known long before the answer ends.
        this.#firstSeen.add(event.agent);
        this.#ttft.recordMs(event.ttft_ms);
        return [];
      case 'request':
        this.#request(event.record);
        return [];
      case 'hang':
        this.#hangs += 1;
        return [{ kind: 'hang', atMs: this.elapsedMs(), record: event.record }];
      case 'error':
        if (this.#errorClasses.has(event.class)) return [];
        this.#errorClasses.add(event.class);
        return [{ kind: 'first_error', atMs: this.elapsedMs(), errorClass: event.class, message: event.message, agent: event.agent, conversation: event.conversation, round: event.round }];
      case 'scrape':
        return this.#scrape(event, now);
      case 'client_sample':
        return this.#clientSample(event);
      default:
        return [];
    }
  }

  #request(r: RequestRecord): void {
    this.#inFlight.delete(r.agent);
    this.#done += 1;
    this.#tokens += r.completion_tokens ?? 0;
    if (r.status === 'error') this.#errors += 1;
    // Counted at its first token already; a source without first-token events counts it here.
    if (!this.#firstSeen.delete(r.agent) && r.status === 'ok' && r.ttft_ms !== null) this.#ttft.recordMs(r.ttft_ms);
    // A hang is counted by its event, when its deadline passed (under `on_hang: wait` the record comes later).
  }

  #scrape(e: ScrapeEvent, now: number): Notice[] {
    let t = this.#targets.get(e.target);
    if (t === undefined) {
      t = { up: null, sinceMs: now, lastGoodMs: null, gauges: [] };
      this.#targets.set(e.target, t);
    }
    if (e.ok) {
      t.gauges = keyGaugeValues(e.samples);
      const wasDown = t.up === false;
      const downForMs = now - t.sinceMs;
      t.lastGoodMs = now;
      if (t.up !== true) t.sinceMs = now;
      t.up = true;
      return wasDown ? [{ kind: 'target_up', atMs: this.elapsedMs(), target: e.target, downForMs }] : [];
    }
    if (t.up === false) return [];
    t.up = false;
    t.sinceMs = now;
    return [{ kind: 'target_down', atMs: this.elapsedMs(), target: e.target, url: e.url, error: e.error ?? 'scrape failed', lastUpAgoMs: t.lastGoodMs === null ? null : now - t.lastGoodMs }];
  }

  /** Output tokens so far: as they streamed when the client reports it, else those of finished requests. */
  #outputTokens(): number {
    if (this.#streamed.size === 0) return this.#tokens;
    let sum = 0;
    for (const n of this.#streamed.values()) sum += n;
    return sum;
  }

  #clientSample(e: ClientSampleEvent): Notice[] {
    const thread = e.thread ?? -1;
    // Counted from the run's start, as the finished requests' tokens are: the interval's baseline stays valid.
    if (e.streamed_tokens !== undefined) this.#streamed.set(thread, e.streamed_tokens);
    const saturated = isSaturatedSample(e);
    const was = this.#saturated.get(thread) ?? false;
    this.#saturated.set(thread, saturated);
    // Announced where a saturated stretch starts, not every second of it.
    if (!saturated || was) return [];
    // Busy: the thread's own loop used the time (its utilisation is of that thread alone), the client is the
    // bottleneck. Late but not busy: the host held it back (other processes or threads on its cores, a CPU
    // limit), as the diagnosis's host_starved.
    const busy = e.loop_utilization > SATURATED_UTILIZATION;
    return [
      {
        kind: 'saturated',
        atMs: this.elapsedMs(),
        loopDelayP99Ms: e.loop_delay_p99_ms,
        utilization: e.loop_utilization,
        inFlight: e.in_flight,
        thread: e.thread ?? null,
        busy,
        cpuWaitMs: e.cpu_wait_ms ?? null,
        windowMs: e.window_ms,
      },
    ];
  }

  /** The figures now. `advance`: close the rate interval (once per progress line); otherwise the rates are
   * the last closed interval's. */
  figures(advance: boolean): ProgressFigures {
    const now = this.#clock();
    const intervalS = (now - this.#interval.atMs) / 1000;
    if (advance && intervalS > 0) {
      const tokens = this.#outputTokens();
      this.#rates = { requestsPerS: (this.#done - this.#interval.done) / intervalS, outputTokensPerS: Math.max(0, tokens - this.#interval.tokens) / intervalS };
      this.#interval = { atMs: now, done: this.#done, tokens };
      const a = this.#arrivals;
      if (a !== null) {
        a.rate = { startsPerS: (a.starts - a.intervalStarts) / intervalS, lagP99Ms: a.lags.count === 0 ? null : a.lags.percentileMs(99) };
        a.intervalStarts = a.starts;
        a.lags = new LatencyHistogram();
      }
    }
    let oldest: number | null = null;
    for (const startMs of this.#inFlight.values()) oldest = oldest === null ? startMs : Math.min(oldest, startMs);
    const several = this.#targets.size > 1;
    const gauges: { name: string; value: number }[] = [];
    for (const [target, t] of this.#targets) {
      const sorted = [...t.gauges].sort(([a], [b]) => GAUGE_ORDER.indexOf(a) - GAUGE_ORDER.indexOf(b));
      for (const [name, value] of sorted) gauges.push({ name: several ? `${target}.${name}` : name, value });
    }
    const ttft = this.#ttft.count === 0 ? null : this.#ttft;
    return {
      elapsedMs: this.elapsedMs(),
      remainingMs: this.#plannedEndMs === null ? null : Math.max(0, this.#plannedEndMs - now),
      phase: this.#plan.phases > 1 ? this.#phase : null,
      done: this.#done,
      planned: this.#plan.plannedRequests,
      requestsPerS: this.#rates?.requestsPerS ?? null,
      outputTokensPerS: this.#rates?.outputTokensPerS ?? null,
      ttftP50Ms: ttft === null ? null : ttft.percentileMs(50),
      ttftP99Ms: ttft === null ? null : ttft.percentileMs(99),
      errors: this.#errors,
      hangs: this.#hangs,
      inFlight: this.#inFlight.size,
      streaming: this.#firstSeen.size,
      oldestInFlightMs: oldest === null ? null : now - oldest,
      gauges,
      targetsDown: [...this.#targets].filter(([, t]) => t.up === false).map(([name]) => name),
      arrivals:
        this.#arrivals === null
          ? null
          : { startsPerS: this.#arrivals.rate?.startsPerS ?? null, active: this.#arrivals.active, startLagP99Ms: this.#arrivals.rate?.lagP99Ms ?? null, delayed: this.#arrivals.delayed },
    };
  }
}
