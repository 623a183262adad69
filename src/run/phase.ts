// The phases of a run and running one: a plain run is one phase (`main`); a sweep is one phase per level
// (`c64`, `c96`…), one after another, each with a warm-up whose requests are recorded with `warmup: true`;
// an open-loop or staged run (`agents.arrival`, `agents.stages`) is one schedule whose stages are its phases.
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import { parseDurationMs, type Workload } from '../config/index.js';
import { runAgent } from '../agent/index.js';
import { shardAgents, type Shard } from './shard.js';
import { longTimeout } from '../util/index.js';
import { loadSchedule, scheduleLanes, type LoadSchedule } from './arrival.js';
import { AgentEvents, abortableSleep, agentTarget, type PhaseRunContext } from './phase-context.js';
import { runSchedule } from './staged.js';

export type { PhaseRunContext } from './phase-context.js';

export interface PhasePlan {
  /** `main`, or `c<agents>` for a sweep level. */
  name: string;
  agents: number;
  /** Requests sent in the phase's first `warmupMs` are warm-up. */
  warmupMs: number;
  /** `sweep.phase_duration`: agents loop conversations and stop sending after it; null: one conversation each. */
  durationMs: number | null;
  /** An open-loop or staged run: one continuous schedule, each stage a phase (`name` is the first's;
   * `agents`: the connection lanes it needs, `arrival.max_active` or the largest stage's count). */
  schedule?: LoadSchedule;
}

/** The phases a workload runs, in order (a scheduled run: one plan, whose stages are the phases). */
export function planPhases(workload: Workload): PhasePlan[] {
  const schedule = loadSchedule(workload);
  if (schedule !== null) {
    return [{ name: schedule.stages[0]!.name, agents: scheduleLanes(workload, schedule), warmupMs: 0, durationMs: schedule.lengthMs, schedule }];
  }
  const sweep = workload.sweep;
  if (sweep === null) return [{ name: 'main', agents: workload.agents.count, warmupMs: 0, durationMs: workload.duration === null ? null : parseDurationMs(workload.duration) }];
  const durationMs = sweep.phase_duration === null ? null : parseDurationMs(sweep.phase_duration);
  return sweep.agents.map((agents) => ({ name: `c${agents}`, agents, warmupMs: sweep.warmup_s * 1000, durationMs }));
}

/** Connection lanes the transport needs: the largest phase's agents (agent i of every phase uses lane i). */
export function laneCount(workload: Workload): number {
  return Math.max(...planPhases(workload).map((p) => p.agents));
}

/** Requests a run (or one shard of it) plans to send, for the progress line; null when it lasts a time, not rounds. */
export function plannedRequests(workload: Workload, shard: Shard | null = null): number | null {
  const phases = planPhases(workload);
  if (workload.duration !== null || phases.some((p) => p.durationMs !== null)) return null;
  return phases.reduce((sum, p) => sum + shardAgents(p.agents, shard).length * workload.agents.rounds, 0);
}

/** Runs one phase to its end: every agent done with its rounds, or `durationMs` up, or the run stopped.
 * Every phase starts fresh conversations. */
export async function runPhase(ctx: PhaseRunContext, plan: PhasePlan): Promise<void> {
  if (plan.schedule !== undefined) return runSchedule(ctx, plan.schedule);
  const { workload, bus } = ctx;
  const phaseStartMs = performance.now() - ctx.runStartMs;
  bus.emit({
    kind: 'phase',
    t: new Date().toISOString(),
    run_ms: Math.round(phaseStartMs),
    name: plan.name,
    agents: plan.agents,
    ...(plan.warmupMs > 0 ? { warmup_ms: plan.warmupMs } : {}),
  });
  const events = new AgentEvents(ctx, { phaseAt: () => plan.name, warmupEndMs: phaseStartMs + plan.warmupMs });
  // The phase's own stop: its duration, or the run's stop. In-flight requests end on the run's signal only,
  // so the end of a phase lets them finish.
  const phaseStop = new AbortController();
  // Every agent's think-time sleep listens on it: many listeners are expected.
  setMaxListeners(0, phaseStop.signal);
  const endPhase = (): void => phaseStop.abort();
  if (ctx.stop.aborted) endPhase();
  ctx.stop.addEventListener('abort', endPhase, { once: true });
  // A chained timer: a `duration` past 24.8 days (one Node timer) still ends when it says.
  const timer = plan.durationMs === null ? null : longTimeout(endPhase, plan.durationMs);
  const agents: Promise<number>[] = [];
  const stagger = plan.agents > 1 ? workload.agents.start_stagger_ms / (plan.agents - 1) : 0;
  // Agent indices are global (a shard runs i, i+N…); lanes are this process's own, 0 to its agent count.
  for (const [laneIndex, i] of shardAgents(plan.agents, ctx.shard).entries()) {
    const target = agentTarget(ctx, laneIndex, (gap) => events.onGap(i, gap));
    const delay = stagger * i;
    agents.push(
      (async () => {
        if (delay > 0) await abortableSleep(delay, phaseStop.signal);
        if (phaseStop.signal.aborted) return 0;
        return runAgent({
          index: i,
          workload,
          target,
          system: ctx.system,
          tools: ctx.tools,
          phase: plan.name,
          conversationOrdinal: (ctx.conversations.get(i) ?? 0) + 1,
          emit: (e) => events.emit(i, e),
          stop: phaseStop.signal,
          abortInFlight: ctx.abortInFlight ?? ctx.stop,
          loop: plan.durationMs !== null,
        });
      })(),
    );
  }
  try {
    await Promise.all(agents);
  } finally {
    timer?.clear();
    ctx.stop.removeEventListener('abort', endPhase);
  }
}
