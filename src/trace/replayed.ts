// Which of a trace's requests a replay sends: its conversations in order of their first request, the first N
// of them when `replay.conversations` says so. One choice, used by the replay itself and by a rebuild of a
// replay's summary from its folder (so a killed replay still gets its comparison with the recording).
import type { RecordedRequest } from '../analysis/index.js';
import type { Trace } from './read.js';
import type { TraceRequest } from './types.js';

export interface ReplayedConversation {
  id: string;
  /** Its requests, by round (then by start). */
  requests: TraceRequest[];
}

/** The conversations a replay of `trace` sends (`limit`: how many, or 'all'). */
export function replayedConversations(trace: Trace, limit: number | 'all'): ReplayedConversation[] {
  const byConversation = new Map<string, TraceRequest[]>();
  for (const r of trace.requests) {
    const list = byConversation.get(r.conversation);
    if (list === undefined) byConversation.set(r.conversation, [r]);
    else list.push(r);
  }
  const conversations = [...byConversation.entries()].map(([id, rs]) => ({ id, requests: rs.sort((a, b) => a.round - b.round || a.start_ms - b.start_ms) }));
  conversations.sort((a, b) => (a.requests[0]?.start_ms ?? 0) - (b.requests[0]?.start_ms ?? 0));
  return limit === 'all' ? conversations : conversations.slice(0, limit);
}

/** A recorded request as the replay comparison reads it: its place, its answer's figures, whether it failed. */
export function recordedFigures(r: TraceRequest): RecordedRequest {
  return {
    seq: r.seq,
    conversation: r.conversation,
    round: r.round,
    connection: r.connection,
    prompt_tokens: r.response.prompt_tokens,
    completion_tokens: r.response.completion_tokens,
    ttft_ms: r.response.ttft_ms,
    e2e_ms: r.response.e2e_ms,
    error: r.response.error !== null,
  };
}
