// An agent worker: one conversation at a time, round after round, with think time between rounds,
// until its rounds are done or the run stops. It never throws: every outcome is a record.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Workload, ToolSpec } from '../config/index.js';
import type { RequestRecord, RunEvent } from '../types/index.js';
import { Conversation } from './conversation.js';
import { sendRound, type RoundTarget } from './round.js';

export interface AgentSpec {
  index: number;
  workload: Workload;
  target: RoundTarget;
  system: string;
  tools: readonly ToolSpec[];
  phase: string;
  emit: (event: RunEvent) => void;
  /** Aborted when the run stops: the agent sends nothing more and its in-flight request ends. */
  stop: AbortSignal;
}

/** Runs one agent to completion; resolves with how many requests it sent. */
export async function runAgent(spec: AgentSpec): Promise<number> {
  const { workload, index } = spec;
  const rounds = workload.agents.rounds;
  let sent = 0;
  const conversation = new Conversation({
    id: `a${index}-c1`,
    agent: index,
    ordinal: 1,
    model: workload.target.model,
    settings: workload.conversation,
    system: spec.system,
    tools: spec.tools,
  });
  while (conversation.nextRound <= rounds && !spec.stop.aborted) {
    const round = conversation.nextRound;
    spec.emit({ kind: 'request_start', agent: index, conversation: conversation.id, round, run_ms: performance.now() - spec.target.runStartMs });
    const outcome = await sendRound(spec.target, { agent: index, conversation: conversation.id, round, phase: spec.phase, body: conversation.body() }, spec.stop);
    sent += 1;
    emitOutcome(spec.emit, outcome.record);
    if (outcome.message !== null) conversation.answered(outcome.message);
    else conversation.failed();
    if (conversation.nextRound <= rounds && workload.agents.think_time_ms > 0 && !spec.stop.aborted) {
      await sleep(workload.agents.think_time_ms, undefined, { signal: spec.stop }).catch(() => {});
    }
  }
  return sent;
}

function emitOutcome(emit: (event: RunEvent) => void, record: RequestRecord): void {
  emit({ kind: 'request', record });
  if (record.status === 'hang') emit({ kind: 'hang', t: new Date().toISOString(), run_ms: record.run_ms + record.e2e_ms, record });
  else if (record.status === 'error' && record.error !== null) {
    emit({ kind: 'error', t: new Date().toISOString(), run_ms: record.run_ms + record.e2e_ms, agent: record.agent, conversation: record.conversation, round: record.round, class: record.error.class, message: record.error.message });
  }
}
