// The phases of a run and running one: a plain run is one phase (`main`); a sweep is one phase per level
// (`c64`, `c96`…), one after another, each with a warm-up whose requests are recorded with `warmup: true`.
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import { parseDurationMs, type Workload, type ToolSpec } from '../config/index.js';
import type { Transport, ConnectionTracker } from '../transport/index.js';
import { runAgent, type RoundTarget } from '../agent/index.js';
import { ALL_ROUNDS, type HistogramSet, type LatencyHistogram } from '../metrics/index.js';
import { realClock } from '../watchdog/index.js';
import type { HangEvent, PathKind, RunEvent } from '../types/index.js';
import type { RunBus } from './bus.js';
import { shardAgents, type Shard } from './shard.js';
import { longTimeout } from '../util/index.js';

export interface PhasePlan {
  /** `main`, or `c<agents>` for a sweep level. */
  name: string;
  agents: number;
  /** Requests sent in the phase's first `warmupMs` are warm-up. */
  warmupMs: number;
  /** `sweep.phase_duration`: agents loop conversations and stop sending after it; null: one conversation each. */
  durationMs: number | null;
}

/** The phases a workload runs, in order. */
export function planPhases(workload: Workload): PhasePlan[] {
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

/** What every phase of a run shares. */
export interface PhaseRunContext {
  workload: Workload;
  bus: RunBus;
  transport: Transport;
  tracker: ConnectionTracker;
  headers: Record<string, string>;
  endpoint: string;
  path: PathKind;
  runStartMs: number;
  /** Live ITL gaps go here (records keep only per-request stats). */
  histograms: HistogramSet;
  system: string;
  tools: readonly ToolSpec[];
  /** Aborted when the run stops: no phase starts after it, the running one ends. */
  stop: AbortSignal;
  /** Ends in-flight requests (default `stop`); a run may pass a later signal so they get a grace. */
  abortInFlight?: AbortSignal;
  /** Conversations each agent has started so far in the run, so a later phase's ids continue (`a0-c2`…). */
  conversations: Map<number, number>;
  /** This process's share of every phase's agents (`--shard i/N`); none: all of them. */
  shard?: Shard | null;
  /** Adds what the monitor knows to a hang event before anyone sees it. */
  enrichHang?: (event: HangEvent) => HangEvent;
}

/** Runs one phase to its end: every agent done with its rounds, or `durationMs` up, or the run stopped.
 * Every phase starts fresh conversations. */
export async function runPhase(ctx: PhaseRunContext, plan: PhasePlan): Promise<void> {
  const { workload, bus } = ctx;
  const w = workload.watchdog;
  const phaseStartMs = performance.now() - ctx.runStartMs;
  const warmupEndMs = phaseStartMs + plan.warmupMs;
  bus.emit({
    kind: 'phase',
    t: new Date().toISOString(),
    run_ms: Math.round(phaseStartMs),
    name: plan.name,
    agents: plan.agents,
    ...(plan.warmupMs > 0 ? { warmup_ms: plan.warmupMs } : {}),
  });
  // Per agent: the ITL histograms of its in-flight request's round (null in the warm-up, whose gaps stay
  // out of the phase's figures), looked up once per request rather than once per gap.
  const current = new Map<number, { round: LatencyHistogram; phase: LatencyHistogram } | null>();
  const emit = (index: number, raw: RunEvent): void => {
    // A hang record carries the latest gauges of every monitored target (when the monitor runs).
    const event = raw.kind === 'hang' && ctx.enrichHang !== undefined ? ctx.enrichHang(raw) : raw;
    if (event.kind === 'request_start') {
      current.set(index, event.run_ms < warmupEndMs ? null : { round: ctx.histograms.get('itl', plan.name, event.round), phase: ctx.histograms.get('itl', plan.name, ALL_ROUNDS) });
      if (event.round === 1) ctx.conversations.set(index, (ctx.conversations.get(index) ?? 0) + 1);
    }
    else if ((event.kind === 'request' || event.kind === 'hang') && event.record.run_ms < warmupEndMs) {
      // A copy: the agent's record is never mutated.
      bus.emit({ ...event, record: { ...event.record, warmup: true } });
      return;
    }
    bus.emit(event);
  };
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
    const target: RoundTarget = {
      lane: ctx.transport.lane(laneIndex),
      tracker: ctx.tracker,
      clock: realClock,
      deadlines: { connectMs: w.connect_ms, headersMs: w.headers_ms, firstTokenMs: w.first_token_ms, stallMs: w.stall_ms, totalMs: w.total_ms },
      path: ctx.path,
      endpoint: ctx.endpoint,
      headers: ctx.headers,
      runStartMs: ctx.runStartMs,
      // A connect-level failure on a proxied path is the proxy's (`proxy_unreachable`): the CONNECT proxy, or
      // the TLS proxy the requests are sent to.
      proxyUrl: ctx.transport.options.connectProxy ?? (ctx.path === 'proxy' ? ctx.transport.options.url : null),
      onGap: (gap) => {
        const now = current.get(i);
        if (now === undefined) ctx.histograms.recordMs('itl', plan.name, 0, gap);
        else if (now !== null) {
          now.round.recordMs(gap);
          now.phase.recordMs(gap);
        }
      },
    };
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
          emit: (e) => emit(i, e),
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

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
