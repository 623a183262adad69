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

/** How close the replay's prompt (and completion) tokens came to the recording, per round. */
function matchLine(r: ReplaySummary): string {
  const m = r.match;
  if (m.prompt_mean_abs_pct === null || m.prompt_worst === null) return 'prompt tokens: not compared (no usage on one side)';
  const w = m.completion_worst;
  const why = w !== null && Math.abs(w.diff_pct) > 3 ? ": not matched — the recorded max_tokens is sent, the server decides the answers' lengths" : '';
  const completion = w === null ? '' : `; completion tokens ${m.completion_mean_abs_pct}% (worst round ${w.round}, ${pct(w.diff_pct)}${why})`;
  return `prompt tokens off by ${m.prompt_mean_abs_pct}% per round on average, worst round ${m.prompt_worst.round} (${pct(m.prompt_worst.diff_pct)})${completion}`;
}

/** How the synthetic text was sized to the server's tokens. */
function sizingLine(r: ReplaySummary): string {
  const m = r.match;
  const s = m.sized;
  const scale = m.scale_mean === null ? '' : `, synthetic text ×${m.scale_mean.toFixed(2)} its recorded characters on average`;
  if (s.tokenize > 0) return `sized with the server's /tokenize, then each answer's usage (${s.tokenize} requests by /tokenize, ${s.usage} by usage${scale})`;
  if (s.probe > 0)
    return `first requests sized by one probe request of the first one's exact shape (max_tokens 1, not a request of this run), then each answer's usage (${s.probe} requests by the probe, ${s.usage} by usage${scale})`;
  if (s.usage > 0 && m.first_sized === 'characters' && m.first_ratio !== null) return `calibrated from the server's usage (ratio ${m.first_ratio.toFixed(2)} after round 1${scale})`;
  if (s.usage > 0) return `calibrated from the server's usage (a probe request's, then each answer's${scale})`;
  if (s.verbatim > 0) return 'recorded contents sent verbatim (a --content trace): no sizing';
  return m.first_ratio === null
    ? 'synthetic text at its recorded characters'
    : `synthetic text at its recorded characters (recorded / replayed prompt tokens ${m.first_ratio.toFixed(2)} on the first request)`;
}

/** The lines of the terminal's section: a head line, sockets and answers, the per-round table. */
export function replayLines(r: ReplaySummary): string[] {
  const all = [HEAD, ...rows(r)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const text = all.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  const facts = [socketsLine(r), answersLine(r), sizingLine(r), matchLine(r)].map((line) => `           ${line}`);
  return [`replay     ${headLine(r)}`, ...facts.slice(0, 2), '', ...text, '(recorded vs replayed; latencies in ms)', ...facts.slice(2)];
}

/** report.html's section: the same figures as the terminal's; nothing for a run that is not a replay. */
export function replaySection(s: Summary): string {
  const r = s.replay;
  if (r === undefined) return '';
  const body = rows(r).map((row) => row.map(esc));
  const facts = [socketsLine(r), answersLine(r), sizingLine(r), matchLine(r)].map((line) => `<li>${esc(line)}</li>`).join('');
  return `<section id="replay"><h2>Replay against the recording</h2><p class="lead">${esc(headLine(r))}. Per round, recorded → replayed (latencies in ms; the recorder does not judge hangs).</p><ul>${facts}</ul>${table(
    HEAD,
    body,
    HEAD.map((_, i) => i > 0),
  )}</section>`;
}
