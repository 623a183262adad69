// The replay against its recording, round by round: the terminal summary's section and report.html's.
import type { ReplaySummary, Summary } from '../analysis/index.js';
import { esc, table } from './page.js';

const NONE = '–';

const ms = (v: number | null): string => (v === null ? NONE : v >= 100 ? String(Math.round(v)) : v.toFixed(1));
const tok = (v: number | null): string => (v === null ? NONE : Math.round(v).toLocaleString('en-US'));
const pct = (v: number | null): string => (v === null ? NONE : `${v > 0 ? '+' : ''}${v.toFixed(1)}%`);

const HEAD = ['round', 'req rec/rep', 'prompt tok rec', 'replayed', 'diff', 'ttft p50 rec', 'replayed', 'e2e p50 rec', 'replayed', 'err rec/rep', 'hang rep'];

/** One row per round, as text: recorded → replayed. */
function rows(r: ReplaySummary): string[][] {
  return r.rounds.map((x) => [
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

function headLine(r: ReplaySummary): string {
  return `${r.file}: ${r.conversations.replayed} of ${r.conversations.recorded} conversations, ${r.requests.replayed} of ${r.requests.recorded} requests, ${r.connection}${r.speed === 1 ? '' : `, ${r.speed}× speed`}`;
}

function socketsLine(r: ReplaySummary): string {
  const s = r.sockets;
  return r.connection === 'as-recorded'
    ? `sockets as recorded: ${s.same} of ${s.compared} requests on the same nth request of the paired connection (${s.recorded_connections} recorded connections, ${s.replayed_connections} replayed)`
    : `sockets: ${r.connection} (not compared with the recording)`;
}

function answersLine(r: ReplaySummary): string {
  return `answers: ${r.answers.live} live, ${r.answers.substituted} with the recorded shape (the live answer had another number of tool calls)`;
}

/** The lines of the terminal's section: a head line, sockets and answers, the per-round table. */
export function replayLines(r: ReplaySummary): string[] {
  const all = [HEAD, ...rows(r)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const text = all.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  return [`replay     ${headLine(r)}`, `           ${socketsLine(r)}`, `           ${answersLine(r)}`, '', ...text, '(recorded vs replayed; latencies in ms)'];
}

/** report.html's section: the same figures as the terminal's; nothing for a run that is not a replay. */
export function replaySection(s: Summary): string {
  const r = s.replay;
  if (r === undefined) return '';
  const body = rows(r).map((row) => row.map(esc));
  const facts = [socketsLine(r), answersLine(r)].map((line) => `<li>${esc(line)}</li>`).join('');
  return `<section id="replay"><h2>Replay against the recording</h2><p class="lead">${esc(headLine(r))}. Per round, recorded → replayed (latencies in ms; the recorder does not judge hangs).</p><ul>${facts}</ul>${table(
    HEAD,
    body,
    HEAD.map((_, i) => i > 0),
  )}</section>`;
}
