// A replay run's one phase: the trace's conversations as agents, each started at its recorded offset (÷ speed),
// on lanes that follow `replay.connection` — under `as-recorded` one lane per recorded client connection,
// closed when the harness closed it — and, with `loop`, the whole trace again until the run stops.
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import type { ReplaySettings } from '../config/index.js';
import { runReplayAgent, type ReplayCalibration, type ReplayRound, type RoundTarget } from '../agent/index.js';
import { ALL_ROUNDS } from '../metrics/index.js';
import { readTrace, replayedConversations, type TraceRequest } from '../trace/index.js';
import { UsageError } from '../errors.js';
import type { PhaseRunContext, PhasePlan } from './phase.js';
import { abortableSleep, agentTarget } from './phase-context.js';

export interface ReplayConversationPlan {
  id: string;
  /** Recorded start of its first round, ms after the trace's first request. */
  startMs: number;
  rounds: ReplayRound[];
}

/** What a replay sends, read once from the trace. */
export interface ReplayPlan {
  file: string;
  settings: ReplaySettings;
  conversations: ReplayConversationPlan[];
  /** Recorded client connection ids in order of first use; lane i is connection `connections[i]`. */
  connections: number[];
  /** Connections the harness itself closed: after how long idle (ms, recorded). */
  clientCloses: Map<number, number>;
  /** Requests per pass. */
  requests: number;
  /** Longest recorded idle gap on a connection (the client keep-alive must outlast it). */
  maxIdleMs: number;
  contents: { messages: Map<string, Record<string, unknown>>; tools: Map<string, unknown[]> };
  /** The recorded requests replayed, for the comparison. */
  recorded: TraceRequest[];
  /** Lines skipped while reading (a torn last line). */
  skipped: number;
  /** The recorder stopped recording early (a full, failing or stalled trace volume): when, why, how many
   * requests the trace misses; else null. */
  incomplete: { atMs: number; reason: string; requestsNotRecorded: number } | null;
  /** Every message has its recorded content (a `--content` trace): nothing to size. */
  verbatim: boolean;
}

/** Reads the trace and plans the replay. @throws TraceError on a bad trace, UsageError on an empty one. */
export function planReplay(settings: ReplaySettings): ReplayPlan {
  const trace = readTrace(settings.file);
  const conversations = replayedConversations(trace, settings.conversations).map((c) => ({ id: c.id, rs: c.requests }));
  if (conversations.length === 0) throw new UsageError(`replay.file ${settings.file} holds no requests to replay`);
  const origin = conversations[0]?.rs[0]?.start_ms ?? 0;
  const connections: number[] = [];
  const seen = new Set<number>();
  const recorded: TraceRequest[] = [];
  let maxIdleMs = 0;
  for (const r of [...conversations.flatMap((c) => c.rs)].sort((a, b) => a.start_ms - b.start_ms)) {
    recorded.push(r);
    const id = r.connection?.id;
    if (id !== undefined && !seen.has(id)) {
      seen.add(id);
      connections.push(id);
    }
    maxIdleMs = Math.max(maxIdleMs, r.connection?.idle_ms ?? 0);
  }
  const clientCloses = new Map<number, number>();
  for (const c of trace.closes) if (c.by === 'client' && c.idle_ms !== null && seen.has(c.connection)) clientCloses.set(c.connection, c.idle_ms);
  return {
    file: settings.file,
    settings,
    conversations: conversations.map(({ id, rs }) => ({
      id,
      startMs: (rs[0]?.start_ms ?? origin) - origin,
      rounds: rs.map((r) => ({
        round: r.round,
        thinkMs: r.think_ms,
        request: r.request,
        connection: r.connection?.id ?? null,
        idleMs: r.connection?.idle_ms ?? null,
        seq: r.seq,
        promptTokens: r.response.prompt_tokens,
      })),
    })),
    connections,
    clientCloses,
    requests: recorded.length,
    maxIdleMs,
    contents: { messages: trace.contents, tools: trace.tools },
    recorded,
    skipped: trace.skipped.length,
    incomplete: trace.incomplete === null ? null : { atMs: trace.incomplete.at_ms, reason: trace.incomplete.reason, requestsNotRecorded: trace.incomplete.requests_not_recorded },
    verbatim: recorded.every((r) => r.request.messages.every((m) => trace.contents.has(m.hash))),
  };
}

/** Lanes the transport needs for a replay. */
export function replayLanes(plan: ReplayPlan): number {
  return plan.settings.connection === 'as-recorded' ? Math.max(1, plan.connections.length + plan.conversations.length) : plan.conversations.length;
}

/** What every conversation of the replay phase shares. */
interface ReplayPhase {
  ctx: PhaseRunContext;
  phase: PhasePlan;
  plan: ReplayPlan;
  calibration: ReplayCalibration;
  /** Aborted when the phase ends (the run stopped, or the phase's time is up). */
  stop: AbortSignal;
  laneOfConnection: Map<number, number>;
  /** Pending closes of connections the harness closed (`closeAfterLast`). */
  closeTimers: Set<NodeJS.Timeout>;
  order: RecordedOrder;
  /** Each agent's round in flight, for its ITL gaps. */
  current: Map<number, number>;
}

/** One pass over the trace (more than one with `loop`). */
interface ReplayPass {
  /** 1, 2, …: conversations of later passes get `~2`, `~3`… after their recorded id. */
  n: number;
  startMs: number;
  /** Requests left on each recorded connection in this pass (`closeAfterLast`). */
  left: Map<number, number>;
}

/** Runs the replay as one phase; resolves when every conversation has ended (or, looping, when the run stops). */
export async function runReplayPhase(ctx: PhaseRunContext, phase: PhasePlan, plan: ReplayPlan, calibration: ReplayCalibration): Promise<void> {
  ctx.bus.emit({ kind: 'phase', t: new Date().toISOString(), run_ms: Math.round(performance.now() - ctx.runStartMs), name: phase.name, agents: plan.conversations.length });
  const phaseStop = new AbortController();
  setMaxListeners(0, phaseStop.signal);
  const endPhase = (): void => phaseStop.abort();
  if (ctx.stop.aborted) endPhase();
  ctx.stop.addEventListener('abort', endPhase, { once: true });
  const timer = phase.durationMs === null ? null : setTimeout(endPhase, phase.durationMs);
  const replay: ReplayPhase = {
    ctx,
    phase,
    plan,
    calibration,
    stop: phaseStop.signal,
    laneOfConnection: new Map(plan.connections.map((id, i) => [id, i])),
    closeTimers: new Set<NodeJS.Timeout>(),
    order: new RecordedOrder(plan.recorded, phaseStop.signal, plan.settings.speed),
    current: new Map<number, number>(),
  };
  const { closeTimers } = replay;
  try {
    for (let pass = 1; !phaseStop.signal.aborted; pass += 1) {
      await runPass(replay, pass);
      if (!plan.settings.loop) break;
      // The next pass starts on fresh connections, as the recording did.
      for (const t of closeTimers) clearTimeout(t);
      closeTimers.clear();
      for (let i = 0; i < replayLanes(plan); i += 1) ctx.transport.lane(i).reset();
    }
  } finally {
    for (const t of closeTimers) clearTimeout(t);
    if (timer !== null) clearTimeout(timer);
    ctx.stop.removeEventListener('abort', endPhase);
  }
}

/** Every conversation of the trace once, each from its recorded offset; resolves when all have ended. */
async function runPass(replay: ReplayPhase, n: number): Promise<void> {
  replay.order.startPass();
  const left = new Map<number, number>();
  for (const c of replay.plan.conversations) for (const r of c.rounds) if (r.connection !== null) left.set(r.connection, (left.get(r.connection) ?? 0) + 1);
  const pass: ReplayPass = { n, startMs: performance.now(), left };
  const agents = replay.plan.conversations.map((conv, index) => replayConversation(replay, pass, conv, index));
  await Promise.all(agents);
}

/** One conversation as agent `index`, started at its recorded offset (÷ speed). @returns the rounds it sent. */
async function replayConversation(replay: ReplayPhase, pass: ReplayPass, conv: ReplayConversationPlan, index: number): Promise<number> {
  const { ctx, phase, plan, stop, order, current } = replay;
  const { workload, bus } = ctx;
  const speed = plan.settings.speed;
  const delayMs = conv.startMs / speed - (performance.now() - pass.startMs);
  if (delayMs > 0) await abortableSleep(delayMs, stop);
  if (stop.aborted) return 0;
  ctx.conversations.set(index, (ctx.conversations.get(index) ?? 0) + 1);
  const target: RoundTarget = agentTarget(ctx, index, (gap) => {
    // Once, in its round (round 0 when none is known): the all-rounds histogram is derived.
    ctx.histograms.recordMs('itl', phase.name, current.get(index) ?? ALL_ROUNDS, gap);
  });
  // Lanes 0…connections-1 are the recorded connections; a round the trace has no connection for gets
  // a lane of its conversation's own, after them.
  const asRecorded = plan.settings.connection === 'as-recorded';
  const sent = await runReplayAgent({
    index,
    conversation: pass.n === 1 ? conv.id : `${conv.id}~${pass.n}`,
    rounds: conv.rounds,
    contents: plan.contents,
    calibration: replay.calibration,
    model: plan.settings.model ?? workload.target.model,
    forceModel: plan.settings.model !== null,
    extraBody: workload.target.extra_body,
    speed,
    target,
    laneFor: (round) =>
      ctx.transport.lane(asRecorded ? (round.connection === null ? plan.connections.length + index : (replay.laneOfConnection.get(round.connection) ?? plan.connections.length + index)) : index),
    phase: phase.name,
    onHang: workload.watchdog.on_hang,
    emit: (e) => {
      if (e.kind === 'request_start') current.set(index, e.round);
      bus.emit(e);
    },
    stop,
    abortInFlight: ctx.abortInFlight ?? ctx.stop,
    ...(asRecorded ? { beforeRound: (round: ReplayRound) => order.turn(round) } : {}),
    onRoundEnd: (round) => {
      order.markEnded(round.seq);
      if (asRecorded) closeAfterLast(replay, pass, round);
    },
  });
  // A conversation that stopped early (abort-agent) must not hold up the connections it shared.
  for (const round of conv.rounds) if (!order.hasEnded(round.seq)) order.markEnded(round.seq);
  return sent;
}

/** After the last request of this pass on a recorded connection, a connection the harness closed is closed
 * here too, as long after as the harness did. */
function closeAfterLast(replay: ReplayPhase, pass: ReplayPass, round: ReplayRound): void {
  if (round.connection === null) return;
  const remaining = (pass.left.get(round.connection) ?? 1) - 1;
  pass.left.set(round.connection, remaining);
  const idleMs = replay.plan.clientCloses.get(round.connection);
  const lane = replay.laneOfConnection.get(round.connection);
  if (remaining > 0 || idleMs === undefined || lane === undefined) return;
  const t = setTimeout(() => {
    replay.closeTimers.delete(t);
    replay.ctx.transport.lane(lane).reset();
  }, idleMs / replay.plan.settings.speed);
  replay.closeTimers.add(t);
}

/** as-recorded: a request goes out on its connection only after the one recorded before it there has ended,
 * so every connection carries its requests in the recorded order (the nth of each as recorded). */
class RecordedOrder {
  /** The request recorded just before each one on its connection (by `seq`). */
  readonly #predecessor = new Map<number, number>();
  readonly #stop: AbortSignal;
  readonly #speed: number;
  /** When each request of the pass ended (performance.now()). */
  #ended = new Map<number, number>();
  #waiting = new Map<number, () => void>();

  constructor(recorded: readonly TraceRequest[], stop: AbortSignal, speed: number) {
    this.#stop = stop;
    this.#speed = speed;
    const lastOn = new Map<number, number>();
    for (const r of recorded) {
      if (r.connection === null) continue;
      const before = lastOn.get(r.connection.id);
      if (before !== undefined) this.#predecessor.set(r.seq, before);
      lastOn.set(r.connection.id, r.seq);
    }
  }

  /** A new pass: none of its requests has ended. */
  startPass(): void {
    this.#ended = new Map();
    this.#waiting = new Map();
  }

  hasEnded(seq: number): boolean {
    return this.#ended.has(seq);
  }

  markEnded(seq: number): void {
    this.#ended.set(seq, performance.now());
    for (const [waiter, wake] of this.#waiting) if (this.#predecessor.get(waiter) === seq) wake();
  }

  /** The round's turn on its connection: its predecessor there has ended, and the connection has sat idle
   * as long as recorded. */
  async turn(round: ReplayRound): Promise<void> {
    const before = this.#predecessor.get(round.seq);
    if (before === undefined) return;
    await this.#predecessorEnded(round.seq, before);
    const endAt = this.#ended.get(before);
    if (endAt === undefined || round.idleMs === null) return;
    const leftMs = endAt + round.idleMs / this.#speed - performance.now();
    if (leftMs > 0) await abortableSleep(leftMs, this.#stop);
  }

  #predecessorEnded(seq: number, before: number): Promise<void> {
    return this.#ended.has(before) || this.#stop.aborted
      ? Promise.resolve()
      : new Promise((resolve) => {
          const wake = (): void => {
            this.#waiting.delete(seq);
            this.#stop.removeEventListener('abort', wake);
            resolve();
          };
          this.#waiting.set(seq, wake);
          this.#stop.addEventListener('abort', wake, { once: true });
        });
  }
}
