// `roundload trace show`: what a trace holds — conversations, rounds, sizes, think-time and idle-gap
// distributions, connections, errors — as figures (for --json) and as text. Pure: a trace in, figures out.
import type { Trace } from './read.js';
import type { TraceRequest } from './types.js';
import { printable } from '../util/index.js';

export interface Distribution {
  count: number;
  p50: number | null;
  p90: number | null;
  max: number | null;
}

export interface TraceRoundStats {
  round: number;
  requests: number;
  messages_mean: number;
  prompt_chars_mean: number;
  /** Mean of what the server reported; null when none reported it. */
  prompt_tokens_mean: number | null;
  completion_tokens_mean: number | null;
  ttft_p50_ms: number | null;
  e2e_p50_ms: number | null;
  errors: number;
}

export interface TraceStats {
  file: string;
  source: string;
  started_at: string;
  upstream: string | null;
  content: boolean;
  requests: number;
  conversations: number;
  /** From the first request's arrival to the last's. */
  span_ms: number;
  rounds_per_conversation: Distribution;
  models: Record<string, number>;
  streamed: number;
  with_tools: number;
  /** Think time: from a conversation's response to its next request. */
  think_ms: Distribution;
  /** Idle time of a connection before it carried its next request. */
  idle_ms: Distribution;
  connections: { count: number; reused_requests: number; max_requests: number; closed_by: Record<string, number> } | null;
  errors: Record<string, number>;
  rounds: TraceRoundStats[];
  skipped_lines: number;
  /** The recorder stopped recording before it stopped forwarding (its `incomplete` line), or null. */
  incomplete: { at_ms: number; reason: string; requests_not_recorded: number } | null;
  /** Requests the recorder numbered (`seq`) below its last recorded one that have no line: lost with a failing
   * volume, or in flight when a recorder was killed. */
  seq_gaps: number;
}

function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
}

export function distribution(values: readonly number[]): Distribution {
  const s = [...values].sort((a, b) => a - b);
  return { count: s.length, p50: quantile(s, 0.5), p90: quantile(s, 0.9), max: s.length === 0 ? null : (s[s.length - 1] ?? null) };
}

const mean = (v: readonly number[]): number | null => (v.length === 0 ? null : Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 10) / 10);

const promptChars = (r: TraceRequest): number => r.request.messages.reduce((n, m) => n + m.chars, 0) + (r.request.tools?.chars ?? 0);

export function traceStats(trace: Trace): TraceStats {
  const rs = trace.requests;
  const conversations = new Map<string, number>();
  const models: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const perConnection = new Map<number, number>();
  const byRound = new Map<number, TraceRequest[]>();
  let streamed = 0;
  let withTools = 0;
  for (const r of rs) {
    conversations.set(r.conversation, Math.max(conversations.get(r.conversation) ?? 0, r.round));
    const model = r.request.model ?? '(none)';
    models[model] = (models[model] ?? 0) + 1;
    if (r.request.stream) streamed += 1;
    if (r.request.tools !== null) withTools += 1;
    if (r.response.error !== null) errors[r.response.error.kind] = (errors[r.response.error.kind] ?? 0) + 1;
    if (r.connection !== null) perConnection.set(r.connection.id, (perConnection.get(r.connection.id) ?? 0) + 1);
    const list = byRound.get(r.round) ?? [];
    list.push(r);
    byRound.set(r.round, list);
  }
  const closedBy: Record<string, number> = {};
  for (const c of trace.closes) closedBy[c.by] = (closedBy[c.by] ?? 0) + 1;
  const known = rs.filter((r) => r.connection !== null);
  const ok = (r: TraceRequest): boolean => r.response.error === null;
  return {
    file: trace.file,
    source: trace.header.source,
    started_at: trace.header.started_at,
    upstream: trace.header.upstream,
    content: trace.header.content,
    requests: rs.length,
    conversations: conversations.size,
    span_ms: rs.length === 0 ? 0 : Math.round((rs[rs.length - 1]?.start_ms ?? 0) - (rs[0]?.start_ms ?? 0)),
    rounds_per_conversation: distribution([...conversations.values()]),
    models,
    streamed,
    with_tools: withTools,
    think_ms: distribution(rs.flatMap((r) => (r.think_ms === null ? [] : [r.think_ms]))),
    idle_ms: distribution(rs.flatMap((r) => (r.connection?.idle_ms === null || r.connection?.idle_ms === undefined ? [] : [r.connection.idle_ms]))),
    connections:
      known.length === 0
        ? null
        : { count: perConnection.size, reused_requests: known.filter((r) => (r.connection?.nth ?? 1) > 1).length, max_requests: Math.max(...perConnection.values()), closed_by: closedBy },
    errors,
    rounds: [...byRound.entries()]
      .sort(([a], [b]) => a - b)
      .map(([round, list]) => ({
        round,
        requests: list.length,
        messages_mean: mean(list.map((r) => r.request.messages.length)) ?? 0,
        prompt_chars_mean: mean(list.map(promptChars)) ?? 0,
        prompt_tokens_mean: mean(list.flatMap((r) => (r.response.prompt_tokens === null ? [] : [r.response.prompt_tokens]))),
        completion_tokens_mean: mean(list.flatMap((r) => (r.response.completion_tokens === null ? [] : [r.response.completion_tokens]))),
        ttft_p50_ms: distribution(list.filter(ok).flatMap((r) => (r.response.ttft_ms === null ? [] : [r.response.ttft_ms]))).p50,
        e2e_p50_ms: distribution(list.filter(ok).flatMap((r) => (r.response.e2e_ms === null ? [] : [r.response.e2e_ms]))).p50,
        errors: list.filter((r) => !ok(r)).length,
      })),
    skipped_lines: trace.skipped.length,
    incomplete: trace.incomplete === null ? null : { at_ms: trace.incomplete.at_ms, reason: trace.incomplete.reason, requests_not_recorded: trace.incomplete.requests_not_recorded },
    seq_gaps: seqGaps(rs),
  };
}

function seqGaps(rs: readonly TraceRequest[]): number {
  const seqs = new Set(rs.map((r) => r.seq).filter((s) => Number.isInteger(s) && s >= 1));
  let last = 0;
  for (const s of seqs) last = Math.max(last, s);
  return last - seqs.size;
}

const fmt = (v: number | null): string => (v === null ? '–' : v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10));

function dist(name: string, d: Distribution): string {
  return d.count === 0 ? `${name}: none` : `${name}: ${d.count} values, p50 ${fmt(d.p50)}, p90 ${fmt(d.p90)}, max ${fmt(d.max)}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

export function formatTraceStats(stats: TraceStats): string {
  // A shared trace's fields (its upstream, its file's name, model names): one line each, no controls.
  const s = printable(stats);
  const lines: string[] = [];
  lines.push(
    `trace ${s.file}: ${s.source === 'record' ? `recorded in front of ${s.upstream ?? '?'}` : s.source}, started ${s.started_at}, ${s.content ? 'WITH message contents' : 'shapes only (no message text)'}`,
  );
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  lines.push(
    `${plural(s.requests, 'request')} in ${plural(s.conversations, 'conversation')} over ${(s.span_ms / 1000).toFixed(1)} s; ${
      Object.keys(s.errors).length === 0
        ? 'no errors'
        : `errors: ${Object.entries(s.errors)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`
    }`,
  );
  const r = s.rounds_per_conversation;
  lines.push(`rounds per conversation: p50 ${fmt(r.p50)}, p90 ${fmt(r.p90)}, max ${fmt(r.max)}`);
  lines.push(
    `models: ${
      Object.entries(s.models)
        .map(([k, n]) => `${k} (${n})`)
        .join(', ') || 'none'
    }; streamed ${s.streamed} of ${s.requests}; tools offered in ${s.with_tools}`,
  );
  lines.push(dist("think time ms (response end → the conversation's next request)", s.think_ms));
  lines.push(dist("idle gap ms (a connection's response end → its next request)", s.idle_ms));
  if (s.connections === null) lines.push('connections: not in this trace (an import); a replay gives each conversation its own');
  else {
    const closed = Object.entries(s.connections.closed_by)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    lines.push(`connections: ${s.connections.count}, ${s.connections.reused_requests} requests on reused ones, at most ${s.connections.max_requests} on one; closed by: ${closed || 'none recorded'}`);
  }
  if (s.incomplete !== null)
    lines.push(
      `INCOMPLETE: recording stopped at ${(s.incomplete.at_ms / 1000).toFixed(1)} s (${s.incomplete.reason}); ${plural(s.incomplete.requests_not_recorded, 'request')} it forwarded ${s.incomplete.requests_not_recorded === 1 ? 'is' : 'are'} not in this trace`,
    );
  else if (s.seq_gaps > 0)
    lines.push(
      `INCOMPLETE: ${plural(s.seq_gaps, 'request')} the recorder numbered ${s.seq_gaps === 1 ? 'has' : 'have'} no line (its trace volume failed or stalled, or it was killed with them in flight)`,
    );
  if (s.skipped_lines > 0) lines.push(`skipped ${s.skipped_lines} torn line${s.skipped_lines === 1 ? '' : 's'} at the end (a recorder killed mid-write)`);
  lines.push('');
  const rows = [['round', 'req', 'messages', 'prompt chars', 'prompt tok', 'completion tok', 'ttft p50', 'e2e p50', 'errors']];
  for (const x of s.rounds)
    rows.push([
      String(x.round),
      String(x.requests),
      fmt(x.messages_mean),
      fmt(x.prompt_chars_mean),
      fmt(x.prompt_tokens_mean),
      fmt(x.completion_tokens_mean),
      fmt(x.ttft_p50_ms),
      fmt(x.e2e_p50_ms),
      String(x.errors),
    ]);
  lines.push(table(rows));
  return lines.join('\n');
}
