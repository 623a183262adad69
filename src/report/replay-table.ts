// The terminal summary's replay section: the replay against its recording, round by round.
import type { ReplaySummary } from '../analysis/index.js';

const NONE = '–';

const ms = (v: number | null): string => (v === null ? NONE : v >= 100 ? String(Math.round(v)) : v.toFixed(1));
const tok = (v: number | null): string => (v === null ? NONE : Math.round(v).toLocaleString('en-US'));
const pct = (v: number | null): string => (v === null ? NONE : `${v > 0 ? '+' : ''}${v.toFixed(1)}%`);

/** The lines of the section: a head line, the per-round table (recorded → replayed), sockets and answers. */
export function replayLines(r: ReplaySummary): string[] {
  const head = ['round', 'req rec/rep', 'prompt tok rec', 'replayed', 'diff', 'ttft p50 rec', 'replayed', 'e2e p50 rec', 'replayed', 'err rec/rep', 'hang rep'];
  const rows = [head];
  for (const x of r.rounds) {
    rows.push([
      String(x.round),
      `${x.recorded.requests}/${x.replayed.requests}`,
      tok(x.recorded.prompt_tokens_mean),
      tok(x.replayed.prompt_tokens_mean),
      pct(x.prompt_tokens_diff_pct),
      ms(x.recorded.ttft_p50_ms),
      ms(x.replayed.ttft_p50_ms),
      ms(x.recorded.e2e_p50_ms),
      ms(x.replayed.e2e_p50_ms),
      `${x.recorded.errors}/${x.replayed.errors}`,
      String(x.replayed.hangs ?? NONE),
    ]);
  }
  const widths = head.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  const table = rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  const s = r.sockets;
  const sockets = r.connection === 'as-recorded'
    ? `sockets as recorded: ${s.same} of ${s.compared} requests on the same nth request of the paired connection (${s.recorded_connections} recorded connections, ${s.replayed_connections} replayed)`
    : `sockets: ${r.connection} (not compared with the recording)`;
  return [
    `replay     ${r.file}: ${r.conversations.replayed} of ${r.conversations.recorded} conversations, ${r.requests.replayed} of ${r.requests.recorded} requests, ${r.connection}${r.speed === 1 ? '' : `, ${r.speed}× speed`}`,
    `           ${sockets}`,
    `           answers: ${r.answers.live} live, ${r.answers.substituted} with the recorded shape (the live answer had another number of tool calls)`,
    '',
    ...table,
    '(recorded vs replayed; latencies in ms)',
  ];
}
