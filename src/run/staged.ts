// Running a scheduled run (`agents.arrival`, `agents.stages`): one continuous schedule whose stages are the
// phases its requests are recorded in (a request belongs to the stage it was sent in). Open loop: conversations
// start at the schedule's rate, each on a free slot, at most `max_active` at once. Closed loop: the number of
// agents follows the stages' counts. Either way, at the end of the last stage nothing more is sent and the
// requests in flight finish.
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import { runAgent } from '../agent/index.js';
import { Rng, round3 } from '../util/index.js';
import { realClock } from '../watchdog/index.js';
import { longTimeout, type LongTimer } from '../util/index.js';
import type { ArrivalCounts } from '../types/index.js';
import { ArrivalScheduler, arrivalSettings, arrivalTimes, levelAt, stageIndexAt, scheduleLanes, type ArrivalStart, type LoadSchedule } from './arrival.js';
import { AgentEvents, agentTarget, type PhaseRunContext } from './phase-context.js';
import { shardAgents } from './shard.js';

/** How often a closed-loop schedule sets its number of agents (a linear ramp moves between ticks). */
const AGENTS_TICK_MS = 100;

/** What both kinds of schedule share while they run. */
interface Running {
  ctx: PhaseRunContext;
  schedule: LoadSchedule;
  /** `performance.now()` at the schedule's 0, and that as ms since the run started. */
  originMs: number;
  originRunMs: number;
  events: AgentEvents;
  /** Aborted at the end of the last stage, or when the run stops. */
  stop: AbortSignal;
  stageName: (scheduleMs: number) => string;
}

/** Runs a schedule to its end (or the run's stop); resolves once every conversation it started has ended. */
export async function runSchedule(ctx: PhaseRunContext, schedule: LoadSchedule): Promise<void> {
  const originMs = performance.now();
  const originRunMs = originMs - ctx.runStartMs;
  const stageName = (scheduleMs: number): string => schedule.stages[stageIndexAt(schedule, scheduleMs)]!.name;
  const events = new AgentEvents(ctx, { phaseAt: (runMs) => stageName(runMs - originRunMs), countConversations: schedule.kind === 'agents' });
  const phaseStop = new AbortController();
  // Every running agent's think-time sleep listens on it.
  setMaxListeners(0, phaseStop.signal);
  // Chained timers: a stage may start more than 24.8 days (one Node timer) in.
  const timers: LongTimer[] = [];
  const announce = (i: number): void => {
    const s = schedule.stages[i]!;
    ctx.bus.emit({
      kind: 'phase',
      t: new Date().toISOString(),
      // When the stage began on the schedule's clock (which records are sliced by), however late the timer.
      run_ms: Math.round(originRunMs + s.startMs),
      name: s.name,
      ...(schedule.kind === 'agents' ? { agents: Math.round(s.from) } : {}),
      load: { kind: schedule.kind, from: s.from, to: s.to, ramp: schedule.ramp, length_ms: s.endMs - s.startMs },
    });
  };
  announce(0);
  schedule.stages.forEach((s, i) => {
    if (i > 0) timers.push(longTimeout(() => announce(i), s.startMs));
  });
  const running: Running = { ctx, schedule, originMs, originRunMs, events, stop: phaseStop.signal, stageName };
  const runStopped = (): void => phaseStop.abort();
  if (ctx.stop.aborted) runStopped();
  ctx.stop.addEventListener('abort', runStopped, { once: true });
  try {
    if (schedule.kind === 'arrival') await runArrivals(running, phaseStop);
    else await runAgentStages(running, phaseStop);
  } finally {
    for (const t of timers) t.clear();
    ctx.stop.removeEventListener('abort', runStopped);
    phaseStop.abort();
  }
}

/** Open loop: conversations start at their scheduled times on free slots (this process's share of
 * `max_active`), each one conversation of `agents.rounds` rounds; `conversation_start`/`_end` events say when. */
async function runArrivals(r: Running, phaseStop: AbortController): Promise<void> {
  const { ctx, schedule } = r;
  const settings = arrivalSettings(ctx.workload);
  const shard = ctx.shard ?? null;
  // Global slot indices: shard i of N (or a worker's sub-shard) runs slots i, i+N…, so agent numbers and
  // conversation ids never collide between shards.
  const slots = shardAgents(scheduleLanes(ctx.workload, schedule), shard);
  const counts = new Map<string, ArrivalCounts>(schedule.stages.map((s) => [s.name, { scheduled: 0, started: 0, delayed: 0, not_started: 0 }]));
  const countsOf = (scheduleMs: number): ArrivalCounts => counts.get(r.stageName(scheduleMs))!;
  const conversations = new Set<Promise<void>>();
  const emitAt = (runMs: number): { t: string; run_ms: number } => ({ t: new Date().toISOString(), run_ms: round3(runMs) });
  const start = (a: ArrivalStart): void => {
    const agent = slots[a.slot]!;
    const ordinal = (ctx.conversations.get(agent) ?? 0) + 1;
    ctx.conversations.set(agent, ordinal);
    const conversation = `a${agent}-c${ordinal}`;
    const runMs = r.originRunMs + a.startedMs;
    const c = countsOf(a.scheduledMs);
    c.scheduled += 1;
    c.started += 1;
    if (a.delayed) c.delayed += 1;
    ctx.bus.emit({
      kind: 'conversation_start',
      ...emitAt(runMs),
      scheduled_ms: round3(r.originRunMs + a.scheduledMs),
      start_lag_ms: round3(a.lagMs),
      delayed: a.delayed,
      phase: r.stageName(a.scheduledMs),
      agent,
      conversation,
    });
    const done = runAgent({
      index: agent,
      workload: ctx.workload,
      target: agentTarget(ctx, a.slot, (gap) => r.events.onGap(agent, gap)),
      system: ctx.system,
      tools: ctx.tools,
      phase: r.stageName(a.startedMs),
      conversationOrdinal: ordinal,
      emit: (e) => r.events.emit(agent, e),
      stop: r.stop,
      abortInFlight: ctx.abortInFlight ?? ctx.stop,
    })
      .catch(() => 0)
      .then((requests) => {
        ctx.bus.emit({ kind: 'conversation_end', ...emitAt(performance.now() - ctx.runStartMs), agent, conversation, requests });
        conversations.delete(done);
        scheduler.release(a.slot);
      });
    conversations.add(done);
  };
  const scheduler = new ArrivalScheduler({
    times: arrivalTimes(schedule, { distribution: settings.distribution, rng: Rng.from('arrivals', ctx.workload.conversation.seed, shard?.index ?? 0, shard?.count ?? 1), shard }),
    maxActive: slots.length,
    clock: realClock,
    originMs: r.originMs,
    start,
  });
  let left: number[] = [];
  const end = (): void => {
    if (phaseStop.signal.aborted) return;
    // At the schedule's end every arrival has come due: take in the last ones before stopping (a timer may
    // be a little late), so each is started or counted as not started.
    scheduler.due();
    left = scheduler.stop();
    phaseStop.abort();
  };
  const endTimer = longTimeout(end, schedule.lengthMs);
  const stopped = new Promise<void>((resolve) => {
    if (phaseStop.signal.aborted) resolve();
    phaseStop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  try {
    if (!phaseStop.signal.aborted) scheduler.begin();
    await stopped;
    // A stop of the run: arrivals not due yet never come; those waiting for a slot never start.
    if (left.length === 0) left = scheduler.stop();
    for (const ms of left) {
      const c = countsOf(ms);
      c.scheduled += 1;
      c.not_started += 1;
    }
    while (conversations.size > 0) await Promise.all([...conversations]);
  } finally {
    endTimer.clear();
    scheduler.stop();
  }
  ctx.bus.emit({ kind: 'arrivals_end', ...emitAt(performance.now() - ctx.runStartMs), phases: Object.fromEntries(counts) });
}

/** Closed loop in stages: agents 0…n−1 run (this process's share of them), n following the schedule every
 * tick; an agent above n sends no more (its request in flight finishes) and one below it starts, carrying on
 * its conversation numbering. */
async function runAgentStages(r: Running, phaseStop: AbortController): Promise<void> {
  const { ctx, schedule } = r;
  const lanes = shardAgents(scheduleLanes(ctx.workload, schedule), ctx.shard);
  const agents = new Map<number, { stop: AbortController; done: Promise<void> }>();
  const adjust = (): void => {
    if (phaseStop.signal.aborted) return;
    const nowMs = performance.now() - r.originMs;
    const want = Math.round(levelAt(schedule, nowMs));
    lanes.forEach((i, lane) => {
      const running = agents.get(i);
      if (i < want && running === undefined) {
        const own = new AbortController();
        const stop = AbortSignal.any([phaseStop.signal, own.signal]);
        setMaxListeners(0, stop);
        const done = runAgent({
          index: i,
          workload: ctx.workload,
          target: agentTarget(ctx, lane, (gap) => r.events.onGap(i, gap)),
          system: ctx.system,
          tools: ctx.tools,
          phase: r.stageName(nowMs),
          conversationOrdinal: (ctx.conversations.get(i) ?? 0) + 1,
          emit: (e) => r.events.emit(i, e),
          stop,
          abortInFlight: ctx.abortInFlight ?? ctx.stop,
          loop: true,
        })
          .catch(() => 0)
          .then(() => {
            agents.delete(i);
          });
        agents.set(i, { stop: own, done });
      } else if (i >= want && running !== undefined) running.stop.abort();
    });
  };
  const tick = setInterval(adjust, AGENTS_TICK_MS);
  const endTimer = longTimeout(() => phaseStop.abort(), schedule.lengthMs);
  try {
    adjust();
    await new Promise<void>((resolve) => {
      if (phaseStop.signal.aborted) resolve();
      phaseStop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    while (agents.size > 0) await Promise.all([...agents.values()].map((a) => a.done));
  } finally {
    clearInterval(tick);
    endTimer.clear();
  }
}
