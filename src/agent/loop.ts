// An agent worker: one conversation at a time, round after round, with think time between rounds (longer
// while the server seems away: an exponential backoff), until its rounds are done (a `duration` run: one
// conversation after another) or the run stops. It never throws: every outcome is a record.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Workload, ToolSpec } from '../config/index.js';
import type { RequestRecord, RunEvent } from '../types/index.js';
import { Conversation } from './conversation.js';
import { sendRound, type RoundOptions, type RoundOutcome, type RoundRequest, type RoundTarget } from './round.js';
import { backoffMs, retryAfterMs, serverAway, shouldRetry } from './retry.js';

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

/** What an agent carries from one request to the next, across its conversations. */
interface AgentState {
  halted: boolean;
  /** Requests in a row whose failure said the server is away (`serverAway`): the backoff grows with it. */
  awayInRow: number;
  /** The backoff the agent waited before its next request (recorded on it as `backoff_ms`), 0 when none. */
  waitedMs: number;
}

/** Runs one agent to completion; resolves with how many requests it sent. */
export async function runAgent(spec: AgentSpec): Promise<number> {
  let sent = 0;
  let ordinal = spec.conversationOrdinal ?? 1;
  const state: AgentState = { halted: false, awayInRow: 0, waitedMs: 0 };
  do {
    sent += await runConversation(spec, ordinal, state);
    ordinal += 1;
  } while (spec.loop === true && !spec.stop.aborted && !state.halted);
  return sent;
}

/** One conversation `a<index>-c<ordinal>`: it ends at its last round or, from round 2 on, once its context
 * reaches `conversation.max_context_tokens` (about 4 characters of message JSON per token); the last record
 * of a conversation ended so carries `context_cap`. */
async function runConversation(spec: AgentSpec, ordinal: number, state: AgentState): Promise<number> {
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
    extraBody: workload.target.extra_body,
  });
  const capped = (): boolean => conversation.nextRound > 1 && conversation.contextChars >= maxContextChars;
  const more = (): boolean => conversation.nextRound <= rounds && !capped();
  const options: RoundOptions = {
    onHang: workload.watchdog.on_hang,
    tools: spec.tools,
    // The hang event goes out the moment the deadline passes (under `wait` the request is still open).
    onHangDetected: (snapshot) => spec.emit({ kind: 'hang', t: new Date().toISOString(), run_ms: snapshot.run_ms + snapshot.e2e_ms, record: snapshot }),
  };
  const send = async (request: RoundRequest): Promise<RoundOutcome> => {
    spec.emit({ kind: 'request_start', agent: index, conversation: conversation.id, round: request.round, run_ms: performance.now() - spec.target.runStartMs });
    const outcome = await sendRound(spec.target, request, abortInFlight, options);
    sent += 1;
    // A failure saying the server is away makes the next wait longer; anything else ends the streak.
    state.awayInRow = serverAway(outcome.record) ? state.awayInRow + 1 : 0;
    return outcome;
  };
  while (more() && !spec.stop.aborted) {
    const round = conversation.nextRound;
    const request: RoundRequest = { agent: index, conversation: conversation.id, round, phase: spec.phase, body: conversation.encodedBody(), backoffMs: state.waitedMs };
    state.waitedMs = 0;
    let outcome = await send(request);
    // One resend at most: a tool call cut by max_tokens is asked again without it (always; the cut answer
    // stays recorded), other failures as `retry:` says. Both records are written, the resend with `attempt: 2`.
    const truncated = outcome.record.error?.class === 'truncated_tool_call';
    if ((truncated || shouldRetry(workload.retry, outcome.record)) && !spec.stop.aborted) {
      emitOutcome(spec.emit, outcome.record);
      let backoffWaitMs = 0;
      let serverWaitMs: number | null = null;
      if (truncated) conversation.truncatedToolCall();
      else {
        // The server's `Retry-After` (a 429, a 503) and the agent's own backoff: the larger wins, both recorded.
        backoffWaitMs = backoffMs(state.awayInRow);
        serverWaitMs = retryAfterMs(outcome.retryAfter, workload.watchdog.total_ms);
        const waitMs = Math.max(backoffWaitMs, serverWaitMs ?? 0);
        if (waitMs > 0) await sleep(waitMs, undefined, { signal: spec.stop }).catch(() => {});
      }
      if (!spec.stop.aborted) {
        const waited = { backoffMs: backoffWaitMs, ...(serverWaitMs === null ? {} : { retryAfterMs: serverWaitMs }) };
        outcome = await send({ ...request, body: conversation.encodedBody(), attempt: 2, ...waited, ...(truncated ? { recovery: 'truncated_tool_call' as const } : {}) });
      } else {
        // Stopped while backing off: the round ends with the failure already recorded.
        if (outcome.message !== null) conversation.answered(outcome.message);
        else conversation.failed();
        break;
      }
    }
    if (outcome.message !== null) conversation.answered(outcome.message);
    else conversation.failed();
    // The round's last record goes out once the conversation knows whether it goes on: a conversation that
    // reached its context cap before its last round says so on it.
    const capRecord =
      conversation.nextRound <= rounds && capped()
        ? { ...outcome.record, context_cap: { context_tokens: Math.round(conversation.contextChars / 4), rounds_left: rounds - conversation.nextRound + 1 } }
        : outcome.record;
    emitOutcome(spec.emit, capRecord);
    if (outcome.record.status === 'hang' && workload.watchdog.on_hang === 'abort-agent') {
      state.halted = true;
      break;
    }
    // Think time, or the backoff when the server seems away and that is longer (it is recorded on the next request).
    const backoff = backoffMs(state.awayInRow);
    const waitMs = Math.max(workload.agents.think_time_ms, backoff);
    if ((spec.loop === true || more()) && waitMs > 0 && !spec.stop.aborted) {
      await sleep(waitMs, undefined, { signal: spec.stop }).catch(() => {});
      if (backoff > workload.agents.think_time_ms) state.waitedMs = backoff;
    }
  }
  return sent;
}

/** The terminal record, and an error event for an error (a hang's event went out when its deadline passed). */
export function emitOutcome(emit: (event: RunEvent) => void, record: RequestRecord): void {
  emit({ kind: 'request', record });
  if (record.status === 'error' && record.error !== null) {
    emit({
      kind: 'error',
      t: new Date().toISOString(),
      run_ms: record.run_ms + record.e2e_ms,
      agent: record.agent,
      conversation: record.conversation,
      round: record.round,
      class: record.error.class,
      message: record.error.message,
    });
  }
}
