// The load schedule of an open-loop or staged run (`agents.arrival`, `agents.stages`) and the arrival
// scheduler. Pure: arrival times are a function of the schedule and a seeded RNG, and the scheduler moves
// only on the clock it is given, so tests drive both with fake time.
import { arrivalSchema, parseDurationMs, type ArrivalSettings, type Workload } from '../config/index.js';
import type { Clock } from '../watchdog/index.js';
import type { Shard } from './shard.js';

/** One stage of the schedule: a phase of the run, on the schedule's clock (ms since it started). */
export interface Stage {
  /** The phase its requests are recorded in: `main` (a plain `agents.arrival`), `s1-r0.5`, `s2-c8`. */
  name: string;
  startMs: number;
  endMs: number;
  /** The level at the stage's start and at its end (conversations per second, or agents); equal under `step`. */
  from: number;
  to: number;
}

export interface LoadSchedule {
  /** `arrival`: conversations start at a rate (open loop); `agents`: a number of agents loop conversations. */
  kind: 'arrival' | 'agents';
  ramp: 'step' | 'linear';
  stages: Stage[];
  lengthMs: number;
}

/** `0.5`, `8`, `1.25`: a level in a phase name. */
function levelText(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** The schedule of a workload with `agents.arrival` or `agents.stages`; null for a closed-loop run without
 * stages (its phases are `main` or a sweep's levels). Expects a validated workload. */
export function loadSchedule(workload: Workload): LoadSchedule | null {
  const { arrival, stages, ramp } = workload.agents;
  if (stages === null) {
    if (arrival === null || arrival.rate_per_s === null || workload.duration === null) return null;
    const lengthMs = parseDurationMs(workload.duration);
    const rate = arrival.rate_per_s;
    return { kind: 'arrival', ramp: 'step', stages: [{ name: 'main', startMs: 0, endMs: lengthMs, from: rate, to: rate }], lengthMs };
  }
  const kind = stages.some((s) => s.rate_per_s !== undefined) ? 'arrival' : 'agents';
  const out: Stage[] = [];
  let atMs = 0;
  let previous = 0;
  stages.forEach((s, i) => {
    const level = (kind === 'arrival' ? s.rate_per_s : s.count) ?? 0;
    const lengthMs = parseDurationMs(s.duration);
    out.push({ name: `s${i + 1}-${kind === 'arrival' ? 'r' : 'c'}${levelText(level)}`, startMs: atMs, endMs: atMs + lengthMs, from: ramp === 'linear' ? previous : level, to: level });
    atMs += lengthMs;
    previous = level;
  });
  return { kind, ramp, stages: out, lengthMs: atMs };
}

/** The arrival settings of a scheduled run: `agents.arrival`, or its defaults when only stages are written. */
export function arrivalSettings(workload: Workload): ArrivalSettings {
  return workload.agents.arrival ?? arrivalSchema.parse({});
}

/** Agent slots (connection lanes) a schedule needs: `max_active` conversations, or the largest stage's agents. */
export function scheduleLanes(workload: Workload, schedule: LoadSchedule): number {
  if (schedule.kind === 'arrival') return arrivalSettings(workload).max_active;
  return Math.max(1, ...schedule.stages.map((s) => Math.max(s.from, s.to)));
}

/** The index of the stage running at `tMs` (clamped: before the start, the first; from the end on, the last). */
export function stageIndexAt(schedule: LoadSchedule, tMs: number): number {
  const { stages } = schedule;
  for (let i = 0; i < stages.length; i += 1) if (tMs < stages[i]!.endMs) return i;
  return stages.length - 1;
}

/** The level (conversations per second, or agents) at `tMs`; 0 outside the schedule. */
export function levelAt(schedule: LoadSchedule, tMs: number): number {
  if (tMs < 0 || tMs >= schedule.lengthMs) return 0;
  const s = schedule.stages[stageIndexAt(schedule, tMs)]!;
  const span = s.endMs - s.startMs;
  return span <= 0 ? s.to : s.from + ((s.to - s.from) * (tMs - s.startMs)) / span;
}

/** Expected arrivals of a stage over its first `xMs` (the integral of its rate). */
function massOf(s: Stage, xMs: number): number {
  const span = s.endMs - s.startMs;
  const slope = span <= 0 ? 0 : (s.to - s.from) / span;
  return (s.from * xMs + (slope * xMs * xMs) / 2) / 1000;
}

/** The time into a stage at which its expected arrivals reach `mass` (the inverse of `massOf`). */
function timeOfMass(s: Stage, mass: number): number {
  const span = s.endMs - s.startMs;
  const a = s.from;
  const b = span <= 0 ? 0 : (s.to - s.from) / span / 2;
  const c = mass * 1000;
  // a·x + b·x² = c, in the form that stays exact when b is 0 or negative (a ramp down).
  const root = Math.sqrt(Math.max(0, a * a + 4 * b * c));
  const x = a + root === 0 ? 0 : (2 * c) / (a + root);
  return Math.min(span, Math.max(0, x));
}

/** A source of uniform numbers in [0, 1) (the seeded `Rng`). */
export interface Uniform {
  next(): number;
}

export interface ArrivalOptions {
  distribution: 'poisson' | 'constant';
  rng: Uniform;
  /** This process's share (`--shard i/N`, split again over worker threads): it takes 1/N of the arrivals.
   * Under `constant` shard i takes every N-th start from the i-th on, so the shards together make the
   * one evenly spaced sequence; under `poisson` each shard is its own process of rate/N (seeded apart),
   * and independent Poisson processes add up to one of the whole rate. */
  shard?: Shard | null;
}

/**
 * The scheduled start times (ms on the schedule's clock, increasing) of an arrival schedule's conversations.
 * Time is warped by the schedule's expected arrivals Λ(t): arrivals are at Λ⁻¹(s) for s = 0, 1, 2… under
 * `constant`, and for s the running sum of unit exponential gaps under `poisson` (a Poisson process whose
 * rate follows the stages, ramps included).
 */
export function* arrivalTimes(schedule: LoadSchedule, options: ArrivalOptions): Generator<number, void, void> {
  const count = options.shard?.count ?? 1;
  const starts: number[] = [];
  let total = 0;
  for (const s of schedule.stages) {
    starts.push(total);
    total += massOf(s, s.endMs - s.startMs);
  }
  let mass = options.distribution === 'constant' ? (options.shard?.index ?? 0) : 0;
  let stage = 0;
  for (;;) {
    if (options.distribution === 'poisson') mass += count * -Math.log(1 - options.rng.next());
    if (mass >= total) return;
    while (stage < schedule.stages.length - 1 && mass >= starts[stage + 1]!) stage += 1;
    const s = schedule.stages[stage]!;
    yield s.startMs + timeOfMass(s, mass - starts[stage]!);
    if (options.distribution === 'constant') mass += count;
  }
}

/** The longest the scheduler's timer is set for; a longer wait is taken in several. */
const MAX_WAIT_MS = 86_400_000;

/** An arrival this close to due counts as due (floating-point sums of fractional ms). */
const DUE_SLACK_MS = 0.001;

/** One conversation's start, as the scheduler hands it out. */
export interface ArrivalStart {
  /** Its number in schedule order, 0-based. */
  seq: number;
  /** Its slot, 0 to `maxActive` − 1 (a connection lane; free again when the conversation ends). */
  slot: number;
  /** When it was due and when it started, ms on the schedule's clock; `lagMs` is the difference. */
  scheduledMs: number;
  startedMs: number;
  lagMs: number;
  /** It found `maxActive` conversations running and waited for a slot. */
  delayed: boolean;
}

export interface ArrivalTally {
  /** Arrivals that came due so far. */
  scheduled: number;
  started: number;
  /** Arrivals that found every slot taken (started later, or still waiting). */
  delayed: number;
  /** Due arrivals waiting for a slot now. */
  waiting: number;
  /** Conversations running now. */
  active: number;
}

export interface ArrivalSchedulerOptions {
  /** Scheduled start times, increasing (`arrivalTimes`). */
  times: Iterator<number>;
  maxActive: number;
  clock: Clock;
  /** Clock time of the schedule's 0. */
  originMs: number;
  /** Starts a conversation; the caller calls `release(slot)` when it ends. */
  start: (arrival: ArrivalStart) => void;
}

/**
 * Starts conversations at their scheduled times, at most `maxActive` at once. An arrival that finds every
 * slot taken is counted `delayed` and queued; the longest-waiting one starts as soon as a slot frees. Nothing
 * is dropped: once stopped, the arrivals still waiting are handed back to be counted as not started.
 */
export class ArrivalScheduler {
  readonly #o: ArrivalSchedulerOptions;
  /** Free slots, the most recently freed on top (its keep-alive socket is the warmest). */
  readonly #free: number[];
  /** Scheduled times of the waiting arrivals, oldest first, from `#head` on. */
  #queue: number[] = [];
  #head = 0;
  #next: number | undefined;
  #timer: unknown = null;
  #stopped = false;
  #seq = 0;
  readonly #tally: ArrivalTally = { scheduled: 0, started: 0, delayed: 0, waiting: 0, active: 0 };

  constructor(options: ArrivalSchedulerOptions) {
    this.#o = options;
    this.#free = Array.from({ length: options.maxActive }, (_, i) => options.maxActive - 1 - i);
  }

  get tally(): ArrivalTally {
    return { ...this.#tally, waiting: this.#queue.length - this.#head };
  }

  /** True when no arrival is left to come (the times ran out); some may still wait for a slot. */
  get exhausted(): boolean {
    return this.#next === undefined && this.#timer === null;
  }

  /** Starts the arrivals; those already due (a late call) start at once, their lag counted. */
  begin(): void {
    this.#next = this.#pull();
    this.#fire();
  }

  /** A conversation ended: its slot is free, and the longest-waiting arrival takes it. */
  release(slot: number): void {
    this.#tally.active -= 1;
    this.#free.push(slot);
    if (!this.#stopped && this.#head < this.#queue.length) {
      const scheduledMs = this.#queue[this.#head]!;
      this.#head += 1;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#startNow(scheduledMs, true);
    }
  }

  /** Takes in every arrival due by now (the timer for it may not have fired yet). */
  due(): void {
    if (this.#stopped) return;
    if (this.#timer !== null) this.#o.clock.clearTimer(this.#timer);
    this.#fire();
  }

  /** No more arrivals. Returns the scheduled times of those still waiting for a slot: they never start. */
  stop(): number[] {
    this.#stopped = true;
    if (this.#timer !== null) this.#o.clock.clearTimer(this.#timer);
    this.#timer = null;
    this.#next = undefined;
    const left = this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    return left;
  }

  #pull(): number | undefined {
    const r = this.#o.times.next();
    return r.done === true ? undefined : r.value;
  }

  #nowMs(): number {
    return this.#o.clock.now() - this.#o.originMs;
  }

  /** Every arrival due by now comes in (a late timer brings several at once), then the timer for the next. */
  #fire(): void {
    this.#timer = null;
    if (this.#stopped) return;
    // A microsecond of slack: the clock's origin and the schedule's times are both fractional ms.
    const now = this.#nowMs() + DUE_SLACK_MS;
    while (this.#next !== undefined && this.#next <= now && !this.#stopped) {
      this.#arrive(this.#next);
      this.#next = this.#pull();
    }
    // At most a day at a time: a pause longer than one Node timer (24.8 days) must not wrap to 1 ms.
    if (this.#next !== undefined && !this.#stopped) this.#timer = this.#o.clock.setTimer(() => this.#fire(), Math.min(MAX_WAIT_MS, Math.max(0, this.#next - this.#nowMs())));
  }

  #arrive(scheduledMs: number): void {
    this.#tally.scheduled += 1;
    if (this.#tally.active < this.#o.maxActive) this.#startNow(scheduledMs, false);
    else {
      this.#tally.delayed += 1;
      this.#queue.push(scheduledMs);
    }
  }

  #startNow(scheduledMs: number, delayed: boolean): void {
    const slot = this.#free.pop()!;
    this.#tally.active += 1;
    this.#tally.started += 1;
    const startedMs = this.#nowMs();
    const seq = this.#seq;
    this.#seq += 1;
    this.#o.start({ seq, slot, scheduledMs, startedMs, lagMs: Math.max(0, startedMs - scheduledMs), delayed });
  }
}
