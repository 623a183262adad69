// The arrival figures of an open-loop run (`agents.arrival`), folded from its events in time order: per stage
// (phase) and per time window, how many conversations came due, started, waited for a slot (`delayed`) or never
// started; their start lag; and the conversations active over time (from each one's start and end). Streaming:
// windows behind the newest event are closed and keep a few numbers, so a night costs little memory.
import { LatencyHistogram, type Percentiles } from '../metrics/index.js';
import type { ArrivalsEndEvent, ClientSampleEvent, ConversationEndEvent, ConversationStartEvent, PhaseEvent, PhaseLoad } from '../types/index.js';
import { pct } from './windows.js';
import { round3 } from '../util/index.js';

/** Arrival figures of one stage (summary.json `phases[].arrivals`). */
export interface PhaseArrivals {
  /** Arrivals scheduled in the stage that came due: `started` + `not_started` (unknown ones count as started). */
  scheduled: number;
  started: number;
  /** Started after waiting for a slot (`max_active` conversations were running when they came due). */
  delayed: number;
  /** Still waiting for a slot when the arrivals ended; null when no process said (a killed run). */
  not_started: number | null;
  /** `scheduled` over the stage's length: the rate the arrivals came at (set against `load`). */
  arrivals_per_s: number;
  /** Scheduled start → actual start of the stage's conversations. */
  start_lag: Percentiles;
  /** Conversations running (time-weighted mean, and most at once) while the stage ran. */
  active_mean: number;
  active_max: number;
  /** The start lag p99 this stage may reach: one think time (`agents.think_time_ms`, at least 10 ms) or the mean
   * gap between its arrivals at its highest rate, the larger — a lag within one gap leaves the arrival process
   * as planned. Absent in summaries written before it (their limit was the run's `lag_limit_ms`). */
  lag_limit_ms?: number;
  /** Start lag p99 above `lag_limit_ms`: the client or the server could not keep up. */
  lagging: boolean;
  /** The highest event-loop delay p99 of the client's samples (any thread) while the stage ran; null when none
   * (absent in older summaries). */
  client_loop_delay_p99_ms?: number | null;
  /** The client itself was late: its event-loop delay p99 reached half the stage's start lag p99 or more, so its
   * timers, not the server's pace, held the starts back (a busy or starved host). Absent in older summaries. */
  client_late?: boolean;
}

/** Arrival figures per time window (summary.json `arrivals.windows`). */
export interface ArrivalWindow {
  start_s: number;
  end_s: number;
  /** Conversations started in the window, and per second. */
  starts: number;
  starts_per_s: number;
  delayed: number;
  active_mean: number;
  active_max: number;
  /** Of the conversations started in the window; null when none did. */
  start_lag_p99_ms: number | null;
  start_lag_max_ms: number | null;
}

/** The arrivals of the whole run (summary.json `arrivals`). */
export interface RunArrivals {
  scheduled: number;
  started: number;
  delayed: number;
  not_started: number | null;
  start_lag: Percentiles;
  active_max: number;
  /** The floor of every stage's `lag_limit_ms`: `agents.think_time_ms`, at least 10 ms (a stage's own limit is
   * its mean arrival gap when that is longer). */
  lag_limit_ms: number;
  /** Stages whose start lag p99 passed `lag_limit_ms`, in order. */
  lagging_phases: string[];
  windows: ArrivalWindow[];
}

/** The floor of the lagging limit: with no think time, a few ms of timer slack is no verdict. */
export const MIN_LAG_LIMIT_MS = 10;
/** Lags kept per open window for its percentiles. */
const MAX_LAGS_PER_WINDOW = 20_000;
/** A window this many behind the newest event is closed (its lags become its percentiles). */
const OPEN_WINDOWS = 2;

interface WindowAcc {
  starts: number;
  delayed: number;
  /** Active conversations × ms. */
  areaMs: number;
  activeMax: number;
  lags: number[];
  lagMax: number | null;
  closed: { p99: number | null } | null;
}

interface StageAcc {
  name: string;
  startMs: number;
  load: PhaseLoad | null;
  started: number;
  delayed: number;
  notStarted: number | null;
  lag: LatencyHistogram;
  areaMs: number;
  activeMax: number;
  /** The highest client event-loop delay p99 seen while it ran, or null. */
  loopDelayMs: number | null;
}

/** The lagging limit for a think time (`agents.think_time_ms`). */
export function lagLimitMs(thinkTimeMs: number): number {
  return Math.max(MIN_LAG_LIMIT_MS, thinkTimeMs);
}

export class ArrivalStats {
  readonly #windowMs: number;
  readonly #lagLimitMs: number;
  /** Stages in time order (from `phase` events with a load, or first seen on a conversation). */
  readonly #stages: StageAcc[] = [];
  readonly #windows = new Map<number, WindowAcc>();
  #newest = -Infinity;
  /** Windows whose lags are still kept whole. */
  #unclosed: number[] = [];
  /** Start times of the conversations running now, by id. */
  readonly #open = new Map<string, number>();
  #active = 0;
  #lastMs = 0;
  #endsSeen = false;
  #any = false;

  /** @param windowMs the summary's window length. @param lagLimit `lagLimitMs(think time)`. */
  constructor(windowMs: number, lagLimit: number) {
    this.#windowMs = windowMs;
    this.#lagLimitMs = lagLimit;
  }

  /** Whether the run had any open-loop conversation (no `arrivals` figures otherwise). */
  get seen(): boolean {
    return this.#any;
  }

  /** Phases whose conversations arrived at a rate. */
  openLoopPhases(): Set<string> {
    return new Set(this.#stages.filter((s) => s.load?.kind === 'arrival' || s.started > 0).map((s) => s.name));
  }

  /** A stage began (a `phase` event with a `load`); other phase events, and a stage seen again (another shard
   * announcing it), change nothing. */
  addPhase(e: PhaseEvent): void {
    if (e.load === undefined) return;
    const seen = this.#stages.find((s) => s.name === e.name);
    if (seen === undefined) this.#stage(e.name, e.run_ms).load = e.load;
    else if (seen.load === null) {
      // Its first conversation came in just before the announcement: the announcement places it.
      seen.load = e.load;
      seen.startMs = e.run_ms;
      this.#stages.sort((a, b) => a.startMs - b.startMs);
    }
  }

  addStart(e: ConversationStartEvent): void {
    this.#any = true;
    this.#advance(e.run_ms);
    this.#active += 1;
    this.#open.set(e.conversation, e.run_ms);
    const stage = this.#stages.find((s) => s.name === e.phase) ?? this.#stage(e.phase, e.scheduled_ms);
    stage.started += 1;
    if (e.delayed) stage.delayed += 1;
    stage.lag.recordMs(e.start_lag_ms);
    const w = this.#window(Math.floor(e.run_ms / this.#windowMs));
    w.starts += 1;
    if (e.delayed) w.delayed += 1;
    if (w.closed === null && w.lags.length < MAX_LAGS_PER_WINDOW) w.lags.push(e.start_lag_ms);
    w.lagMax = Math.max(w.lagMax ?? 0, e.start_lag_ms);
    this.#peak(e.run_ms);
  }

  /** A sample of the client's health (any thread): its event-loop delay goes to the stage running then. */
  addClientSample(e: Pick<ClientSampleEvent, 'run_ms' | 'loop_delay_p99_ms'>): void {
    const s = this.#stageAt(e.run_ms);
    if (s !== null) s.loopDelayMs = Math.max(s.loopDelayMs ?? 0, e.loop_delay_p99_ms);
  }

  addEnd(e: ConversationEndEvent): void {
    if (!this.#open.delete(e.conversation)) return;
    this.#advance(e.run_ms);
    this.#active -= 1;
  }

  addArrivalsEnd(e: ArrivalsEndEvent): void {
    this.#endsSeen = true;
    for (const [name, c] of Object.entries(e.phases)) {
      const stage = this.#stages.find((s) => s.name === name) ?? this.#stage(name, Infinity);
      stage.notStarted = (stage.notStarted ?? 0) + c.not_started;
    }
  }

  #stage(name: string, startMs: number): StageAcc {
    const s: StageAcc = { name, startMs, load: null, started: 0, delayed: 0, notStarted: null, lag: new LatencyHistogram(), areaMs: 0, activeMax: 0, loopDelayMs: null };
    this.#stages.push(s);
    this.#stages.sort((a, b) => a.startMs - b.startMs);
    return s;
  }

  #window(index: number): WindowAcc {
    let w = this.#windows.get(index);
    if (w === undefined) {
      w = { starts: 0, delayed: 0, areaMs: 0, activeMax: 0, lags: [], lagMax: null, closed: null };
      this.#windows.set(index, w);
      this.#unclosed.push(index);
    }
    if (index > this.#newest) {
      this.#newest = index;
      this.#unclosed = this.#unclosed.filter((i) => {
        if (i > index - OPEN_WINDOWS) return true;
        const old = this.#windows.get(i)!;
        old.closed = { p99: pct(old.lags, 99) };
        old.lags = [];
        return false;
      });
    }
    return w;
  }

  /** The stage running at `ms` (the last one begun by then). */
  #stageAt(ms: number): StageAcc | null {
    let at: StageAcc | null = null;
    for (const s of this.#stages) if (s.startMs <= ms) at = s;
    return at ?? this.#stages[0] ?? null;
  }

  /** The level `#active` held from the last event to `toMs`: its area goes to the windows and stages it spans. */
  #advance(toMs: number): void {
    const from = this.#lastMs;
    if (toMs <= from) return;
    this.#lastMs = toMs;
    if (this.#active === 0) return;
    for (let i = Math.floor(from / this.#windowMs); i * this.#windowMs < toMs; i += 1) {
      const overlap = Math.min(toMs, (i + 1) * this.#windowMs) - Math.max(from, i * this.#windowMs);
      if (overlap <= 0) continue;
      const w = this.#window(i);
      w.areaMs += this.#active * overlap;
      w.activeMax = Math.max(w.activeMax, this.#active);
    }
    const stages = this.#stages.filter((s) => Number.isFinite(s.startMs));
    stages.forEach((s, i) => {
      const overlap = Math.min(toMs, stageEndMs(s, stages[i + 1]) ?? Infinity) - Math.max(from, s.startMs);
      if (overlap <= 0) return;
      s.areaMs += this.#active * overlap;
      s.activeMax = Math.max(s.activeMax, this.#active);
    });
  }

  /** A start raised the level: the window and stage it is in saw it. */
  #peak(ms: number): void {
    const w = this.#window(Math.floor(ms / this.#windowMs));
    w.activeMax = Math.max(w.activeMax, this.#active);
    const s = this.#stageAt(ms);
    if (s !== null) s.activeMax = Math.max(s.activeMax, this.#active);
  }

  /** The figures, with conversations still open counted active until `endMs` (the run's end). */
  build(endMs: number): { run: RunArrivals; phases: Map<string, PhaseArrivals> } {
    if (this.#active > 0) this.#advance(endMs);
    // The end of what was seen: the last conversation's end, or the run's end while some were still open.
    const lastMs = this.#active > 0 ? Math.max(endMs, this.#lastMs) : this.#lastMs;
    const phases = new Map<string, PhaseArrivals>();
    const all = new LatencyHistogram();
    const timed = this.#stages.filter((s) => Number.isFinite(s.startMs));
    let notStarted: number | null = this.#endsSeen ? 0 : null;
    for (const s of this.#stages) {
      const i = timed.indexOf(s);
      // A stage's time: its scheduled length (its active conversations are counted over it, the drain after
      // the last stage is not); a stage known only from its conversations: until the next, or the end.
      const spanMs = i < 0 ? 0 : Math.max(0, Math.min(stageEndMs(s, timed[i + 1]) ?? lastMs, s.load === null ? lastMs : Infinity) - s.startMs);
      const heldMs = spanMs;
      const scheduled = s.started + (s.notStarted ?? 0);
      const lag = s.lag.percentiles();
      const arrivalsPerS = spanMs <= 0 ? 0 : round3(scheduled / (spanMs / 1000));
      const limitMs = stageLagLimitMs(this.#lagLimitMs, s.load, arrivalsPerS);
      all.add(s.lag);
      if (s.notStarted !== null && notStarted !== null) notStarted += s.notStarted;
      phases.set(s.name, {
        scheduled,
        started: s.started,
        delayed: s.delayed,
        not_started: this.#endsSeen ? (s.notStarted ?? 0) : null,
        arrivals_per_s: arrivalsPerS,
        start_lag: lag,
        active_mean: heldMs <= 0 ? 0 : round3(s.areaMs / heldMs),
        active_max: s.activeMax,
        lag_limit_ms: limitMs,
        lagging: lag.count > 0 && lag.p99_ms > limitMs,
        client_loop_delay_p99_ms: s.loopDelayMs === null ? null : round3(s.loopDelayMs),
        client_late: lag.count > 0 && s.loopDelayMs !== null && s.loopDelayMs >= lag.p99_ms / 2,
      });
    }
    const windows: ArrivalWindow[] = [...this.#windows.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, w]) => {
        const startMs = index * this.#windowMs;
        // The last window ends with the run: its mean is over the time it covered.
        const coveredMs = Math.max(1, Math.min(this.#windowMs, lastMs - startMs));
        return {
          start_s: round3(startMs / 1000),
          end_s: round3((startMs + this.#windowMs) / 1000),
          starts: w.starts,
          starts_per_s: round3(w.starts / (this.#windowMs / 1000)),
          delayed: w.delayed,
          active_mean: round3(w.areaMs / coveredMs),
          active_max: w.activeMax,
          start_lag_p99_ms: w.closed !== null ? w.closed.p99 : pct(w.lags, 99),
          start_lag_max_ms: w.lagMax === null ? null : round3(w.lagMax),
        };
      });
    const phaseList = [...phases.values()];
    return {
      run: {
        scheduled: phaseList.reduce((n, p) => n + p.scheduled, 0),
        started: phaseList.reduce((n, p) => n + p.started, 0),
        delayed: phaseList.reduce((n, p) => n + p.delayed, 0),
        not_started: notStarted,
        start_lag: all.percentiles(),
        active_max: Math.max(0, ...windows.map((w) => w.active_max)),
        lag_limit_ms: this.#lagLimitMs,
        lagging_phases: [...phases.entries()].filter(([, p]) => p.lagging).map(([name]) => name),
        windows,
      },
      phases,
    };
  }
}

/** A stage's lag limit: the think-time floor, or the mean gap between arrivals at the stage's highest planned
 * rate (its measured rate when no plan was announced), the larger. */
function stageLagLimitMs(floorMs: number, load: PhaseLoad | null, arrivalsPerS: number): number {
  const rate = load?.kind === 'arrival' ? Math.max(load.from, load.to) : arrivalsPerS;
  return round3(Math.max(floorMs, rate > 0 ? 1000 / rate : 0));
}

/** Where a stage ends: its start plus its scheduled length, or the next stage's start (null: open-ended). */
function stageEndMs(s: StageAcc, next: StageAcc | undefined): number | null {
  if (s.load !== null) return s.startMs + s.load.length_ms;
  return next?.startMs ?? null;
}
