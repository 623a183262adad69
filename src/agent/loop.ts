// An agent worker: one conversation at a time, round after round, with think time between rounds,
// until its rounds are done (a `duration` run: one conversation after another) or the run stops.
// It never throws: every outcome is a record.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Workload, ToolSpec } from '../config/index.js';
import type { RequestRecord, RunEvent } from '../types/index.js';
import { Conversation } from './conversation.js';
import { sendRound, type RoundOptions, type RoundRequest, type RoundTarget } from './round.js';
import { shouldRetry } from './retry.js';

export interface AgentSpec {
  index: number;
  workload: Workload;
  target: RoundTarget;
  system: string;
  tools: readonly ToolSpec[];
  phase: string;
  /** Ordinal of the agent's first conversation (`a<index>-c<n>`): a sweep's later phases start at 2, 3…
   * so conversation ids stay unique in the run. @default 1 */
  conversationOrdinal?: number;
  emit: (event: RunEvent) => void;
  /** Aborted when the run stops: the agent sends nothing more and its in-flight request ends. */
  stop: AbortSignal;
  /** Aborting it ends the in-flight request (default: `stop`). A run passes a later signal here, so after a
   * stop (a signal, the end of `duration`) the request in flight gets its grace. */
  abortInFlight?: AbortSignal;
  /** Start a fresh conversation (`a<index>-c<n+1>`) whenever one ends, until `stop` (a `duration` run). @default false */
  loop?: boolean;
}

/** Runs one agent to completion; resolves with how many requests it sent. */
export async function runAgent(spec: AgentSpec): Promise<number> {
  let sent = 0;
  let ordinal = spec.conversationOrdinal ?? 1;
  const halt = { halted: false };
  do {
    sent += await runConversation(spec, ordinal, halt);
    ordinal += 1;
  } while (spec.loop === true && !spec.stop.aborted && !halt.halted);
  return sent;
}

/** One conversation `a<index>-c<ordinal>`: it ends at its last round or, from round 2 on, once its context
 * reaches `conversation.max_context_tokens` (about 4 characters of message JSON per token). */
async function runConversation(spec: AgentSpec, ordinal: number, halt: { halted: boolean }): Promise<number> {
  const { workload, index } = spec;
  const rounds = workload.agents.rounds;
  const abortInFlight = spec.abortInFlight ?? spec.stop;
  const maxContextChars = workload.conversation.max_context_tokens === null ? Infinity : workload.conversation.max_context_tokens * 4;
  let sent = 0;
  const conversation = new Conversation({
    id: `a${index}-c${ordinal}`,
    agent: index,
    ordinal,
    model: workload.target.model,
    settings: workload.conversation,
    system: spec.system,
    tools: spec.tools,
  });
  const more = (): boolean => conversation.nextRound <= rounds && (conversation.nextRound === 1 || conversation.contextChars < maxContextChars);
  while (more() && !spec.stop.aborted) {
    const round = conversation.nextRound;
    const request: RoundRequest = { agent: index, conversation: conversation.id, round, phase: spec.phase, body: conversation.body() };
    const options: RoundOptions = {
      onHang: workload.watchdog.on_hang,
      // The hang event goes out the moment the deadline passes (under `wait` the request is still open).
      onHangDetected: (snapshot) => spec.emit({ kind: 'hang', t: new Date().toISOString(), run_ms: snapshot.run_ms + snapshot.e2e_ms, record: snapshot }),
    };
    spec.emit({ kind: 'request_start', agent: index, conversation: conversation.id, round, run_ms: performance.now() - spec.target.runStartMs });
    let outcome = await sendRound(spec.target, request, abortInFlight, options);
    sent += 1;
    emitOutcome(spec.emit, outcome.record);
    // `retry:` resends once, at once; both attempts are recorded, the second with `attempt: 2`.
    if (shouldRetry(workload.retry, outcome.record) && !spec.stop.aborted) {
      spec.emit({ kind: 'request_start', agent: index, conversation: conversation.id, round, run_ms: performance.now() - spec.target.runStartMs });
      outcome = await sendRound(spec.target, { ...request, attempt: 2 }, abortInFlight, options);
      sent += 1;
      emitOutcome(spec.emit, outcome.record);
    }
    if (outcome.message !== null) conversation.answered(outcome.message);
    else conversation.failed();
    if (outcome.record.status === 'hang' && workload.watchdog.on_hang === 'abort-agent') {
      halt.halted = true;
      break;
    }
    if ((spec.loop === true || more()) && workload.agents.think_time_ms > 0 && !spec.stop.aborted) {
      await sleep(workload.agents.think_time_ms, undefined, { signal: spec.stop }).catch(() => {});
    }
  }
  return sent;
}

/** The terminal record, and an error event for an error (a hang's event went out when its deadline passed). */
function emitOutcome(emit: (event: RunEvent) => void, record: RequestRecord): void {
  emit({ kind: 'request', record });
  if (record.status === 'error' && record.error !== null) {
    emit({ kind: 'error', t: new Date().toISOString(), run_ms: record.run_ms + record.e2e_ms, agent: record.agent, conversation: record.conversation, round: record.round, class: record.error.class, message: record.error.message });
  }
}
