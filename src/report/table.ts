// The terminal summary: a per-round table and the lines a person reads first (throughput, errors, hangs).
import { join } from 'node:path';
import {
  SATURATED_LOOP_DELAY_MS,
  SATURATED_UTILIZATION,
  STARTUP_OPENING,
  WRITER_LAG_FLAG_MS,
  describePathTimeout,
  type Summary,
  type PhaseSummary,
  type PhaseArrivals,
  type RoundSummary,
} from '../analysis/index.js';
import { DIAGNOSIS_VERDICTS, tableColumns, type LatencyTable, type PhaseLoad } from '../types/index.js';
import { fixedDigits, oneLine, printable } from '../util/index.js';
import { gaugeLines } from './gauges.js';
import { bannerLine, runVerdict, type RunVerdict } from './banner.js';
import { colors } from './progress-line.js';
import { replayLines } from './replay-table.js';
import { capacityLines } from './capacity.js';

/** What a figure with no samples shows. */
const NONE = '–';

function fmtMs(v: number, count: number): string {
  if (count === 0) return NONE;
  if (v >= 10_000) return `${(v / 1000).toFixed(1)}s`;
  if (v >= 100) return `${Math.round(v)}`;
  return v.toFixed(1);
}

function fmtInt(v: number): string {
  return Math.round(v).toLocaleString('en-US');
}

function table(rows: string[][], rightAlign: boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Marks a token figure that is in part the client's estimate (no usage chunk). */
const ESTIMATED = '~';
/** A cached-token figure the server did not report. */
const NOT_REPORTED = 'n/r';

function phaseTable(p: PhaseSummary): string {
  const head = ['round', 'req', 'ok', 'err', 'hang', 'prompt tok', 'cached', 'tools', ...latencyHeads('rounds', 'terminal'), 'tok/s/stream'];
  const rows = [head];
  for (const r of p.rounds) {
    const est = (r.tokens_estimated ?? 0) > 0 ? ESTIMATED : '';
    // Token figures are over ok answers: a round with none has none to show.
    const none = r.ok === 0;
    rows.push([
      String(r.round),
      String(r.requests),
      String(r.ok),
      String(r.errors),
      String(r.hangs),
      none ? NONE : `${est}${fmtInt(r.prompt_tokens_mean)}`,
      none ? NONE : r.cached_tokens_mean === null ? NOT_REPORTED : fmtInt(r.cached_tokens_mean),
      none || r.tool_calls === undefined ? NONE : String(r.tool_calls),
      ...latencyCells('rounds', r, fmtMs),
      r.stream_tokens_per_s_mean === 0 ? NONE : `${est}${r.stream_tokens_per_s_mean.toFixed(1)}`,
    ]);
  }
  const tools = p.rounds.reduce((sum, r) => sum + (r.tool_calls ?? 0), 0);
  rows.push(['all', String(p.requests), String(p.ok), String(p.errors), String(p.hangs), '', '', String(tools), ...latencyCells('rounds', p, fmtMs), '']);
  return table(
    rows,
    head.map((_, i) => i > 0),
  );
}

/** Reasoning and decode per round: reasoning tokens and time, TTFC beside TTFT, TPOT beside ITL, and the tokens
 * an event carried (so ITL reads per token when it is 1, per chunk when more). */
function decodeTable(p: PhaseSummary): string {
  const head = ['round', 'reason tok', ...latencyHeads('decode', 'terminal'), 'tok/event'];
  const rows = [head];
  const cells = (x: PhaseSummary | PhaseSummary['rounds'][number], reasoningEstimated: boolean, none: boolean): string[] => [
    none || x.reasoning_tokens_mean === undefined ? NONE : `${reasoningEstimated ? ESTIMATED : ''}${fmtInt(x.reasoning_tokens_mean)}`,
    ...latencyCells('decode', x, fmtMs),
    none || x.tokens_per_event_mean === undefined || x.tokens_per_event_mean === null ? NONE : fixedDigits(x.tokens_per_event_mean, 2),
  ];
  for (const r of p.rounds) rows.push([String(r.round), ...cells(r, (r.reasoning_tokens_estimated ?? 0) > 0, r.ok === 0)]);
  rows.push([
    'all',
    ...cells(
      p,
      p.rounds.some((r) => (r.reasoning_tokens_estimated ?? 0) > 0),
      p.ok === 0,
    ),
  ]);
  return table(
    rows,
    head.map((_, i) => i > 0),
  );
}

/** What the second table's columns start and end at: the figures people compare with SGLang's. */
const DECODE_LEGEND = [
  "(reason tok: mean reasoning tokens; reason: first → last reasoning token; ttft: send → first token of any kind, as SGLang's time_to_first_token;",
  " ttfc: send → first content or tool-call token, as bench_serving's chat TTFT; itl: gap between streamed events; tpot: (e2e − ttft) ÷ (tokens − 1);",
  ' tok/event: tokens an event carried: itl is per token when it is 1, per chunk when more)',
].join('\n');

/** The table's legend: units, and what `n/r` and `~` mean when they appear. */
function legend(s: Summary): string {
  const parts = ['latencies in ms', 'tools: tool calls in ok answers'];
  if (s.totals.cached_tokens === null && s.totals.ok > 0) parts.push(`${NOT_REPORTED}: cached tokens not reported by the server`);
  if (s.totals.tokens_estimated > 0) parts.push(`${ESTIMATED}: token counts in part estimated (no usage chunk)`);
  return `(${parts.join('; ')})`;
}

/** `12,345 prompt (31.0% cached), 2,345 completion`: cached tokens the server did not report said so, and
 * counts the client estimated (no usage chunk) marked `~` and explained. */
function tokensLine(s: Summary): string {
  const t = s.totals;
  if (t.ok === 0) return 'none counted (no request ended ok)';
  const est = t.tokens_estimated > 0 ? ESTIMATED : '';
  const cached =
    t.cache_hit_ratio !== null
      ? `${(t.cache_hit_ratio * 100).toFixed(1)}% cached`
      : t.tokens_estimated >= t.ok
        ? 'cached tokens unknown: no usage chunk'
        : 'cached tokens not reported by the server; SGLang reports them only with --enable-cache-report';
  const estimated = est === '' ? '' : `  ·  ${ESTIMATED} estimated for ${t.tokens_estimated} of ${t.ok} requests (no usage chunk): from the request body and the streamed text, 4 characters a token`;
  return `${est}${fmtInt(t.prompt_tokens)} prompt (${cached}), ${est}${fmtInt(t.completion_tokens)} completion${reasoningPart(s)}${estimated}`;
}

/** ` (1,200 reasoning, in 30 of 32 answers)`: the reasoning share of the completion tokens, marked when estimated. */
function reasoningPart(s: Summary): string {
  const t = s.totals;
  // No reasoning at all: nothing to say here (the per-round table says 0).
  if (t.reasoning_tokens === undefined || (t.reasoning_tokens === 0 && (t.reasoning_answers ?? 0) === 0)) return '';
  const est = (t.reasoning_tokens_estimated ?? 0) > 0 ? ESTIMATED : '';
  const n = t.reasoning_tokens_estimated ?? 0;
  const note = est === '' ? '' : `; ${ESTIMATED} the server gave no reasoning count for ${n} answer${n === 1 ? '' : 's'}: from the reasoning text`;
  return ` (${est}${fmtInt(t.reasoning_tokens)} reasoning, in ${t.reasoning_answers ?? 0} of ${t.ok} answers${note})`;
}

/** `finish stop 20, tool_calls 12  ·  12 tool calls`: how the answers ended. */
function answersLine(s: Summary): string | null {
  const reasons = s.finish_reasons;
  if (reasons === undefined || Object.keys(reasons).length === 0) return null;
  const tools = s.totals.tool_calls === undefined ? '' : `  ·  ${s.totals.tool_calls} tool calls in ${s.totals.ok} ok answers`;
  const only = s.totals.reasoning_only_answers ?? 0;
  const thinking =
    only === 0 ? '' : `  ·  ${only} answer${only === 1 ? ' was' : 's were'} reasoning only, no content or tool call (max_tokens reached while thinking? no ttfc for ${only === 1 ? 'it' : 'them'})`;
  return `finish ${counts(reasons)}${tools}${thinking}`;
}

/** One line per error class: its count, and the first one's where and what (the server's own message). */
function firstErrorLines(s: Summary): string[] {
  return (s.first_errors ?? []).map((e) => {
    const where = [`at ${(e.run_ms / 1000).toFixed(1)} s`, `${e.conversation} round ${e.round}`, e.http_status === null ? null : `HTTP ${e.http_status}`, e.url_path]
      .filter((x) => x !== null)
      .join(', ');
    return `           · ${e.class} ×${e.count}, first ${where}: ${e.message}`;
  });
}

/** `12 of 32 planned requests ran: 5 conversations ended at the context cap`, when any did. */
function contextCapLine(s: Summary): string | null {
  const c = s.conversations;
  if (c === undefined || c.context_capped === 0) return null;
  const ended = `${c.context_capped} conversation${c.context_capped === 1 ? '' : 's'} ended at the context cap (conversation.max_context_tokens), ${c.rounds_not_sent} round${c.rounds_not_sent === 1 ? '' : 's'} not sent`;
  return c.requests_planned === null ? ended : `${c.rounds_sent} of ${c.requests_planned} planned requests ran: ${ended}`;
}

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} ${v}`).join(', ');
}

/** Hangs on fresh vs reused keep-alive sockets (`nth` 1 vs ≥ 2; 0: no socket was had), e.g. `on reused sockets 3 (nth 4: 2, nth 5: 1)`. */
function bySocketUse(byNth: Record<string, number>): string {
  let fresh = 0;
  let none = 0;
  const reused: [number, number][] = [];
  for (const [key, n] of Object.entries(byNth)) {
    const nth = Number(key);
    if (nth === 0) none += n;
    else if (nth === 1) fresh += n;
    else reused.push([nth, n]);
  }
  reused.sort((a, b) => a[0] - b[0]);
  const reusedTotal = reused.reduce((sum, [, n]) => sum + n, 0);
  const parts = [`on fresh sockets ${fresh}`, `on reused sockets ${reusedTotal}${reused.length === 0 ? '' : ` (${reused.map(([nth, n]) => `nth ${nth}: ${n}`).join(', ')})`}`];
  if (none > 0) parts.push(`before any socket ${none}`);
  return parts.join(', ');
}

/** What opening sockets cost and the start-up rush, beside the TTFT it is part of. */
function openingNote(o: Summary['client']['opening']): string {
  if (o === undefined || o.sockets === 0) return '';
  const ms = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)} ms`);
  const tls = o.tls_ms_mean === null ? '' : `, TLS ${ms(o.tls_ms_mean)} (max ${ms(o.tls_ms_max)})`;
  const rush =
    o.startup_requests > 0
      ? `  ·  ${o.startup_requests} requests went out in the client's start-up rush (${STARTUP_OPENING}+ sockets opening at once), ${ms(o.startup_send_delay_ms_mean)} (max ${ms(o.startup_send_delay_ms_max)}) of their TTFT before they left`
      : '';
  return `  ·  opening one: connect ${ms(o.connect_ms_mean)} (max ${ms(o.connect_ms_max)})${tls}${rush}`;
}

/** `3 passed` or `FAILED 1 of 3: ttft p99 6120 ms > limit 5000 ms`, each failed limit named. */
function thresholdsLine(t: Summary['thresholds']): string {
  const failed = t.results.filter((r) => !r.ok);
  if (failed.length === 0) return t.results.length === 0 ? 'none set' : `${t.results.length} passed (${t.results.map((r) => `${r.name}${r.estimated === true ? ' (estimated)' : ''}`).join(', ')})`;
  return `FAILED ${failed.length} of ${t.results.length}: ${failed.map((r) => `${r.name}${r.always_on === true ? ' (always on, whatever the thresholds)' : ''}: ${r.message}`).join('; ')}`;
}

/** The call in words: where the engine holds the failed requests, when its gauges say so; the path's
 * timeout, when it cut them. */
export function diagnosisMeaning(d: Pick<Summary['diagnosis'], 'verdict' | 'held_in' | 'path_timeout'>): string {
  if (d.verdict === 'engine' && d.held_in !== undefined && d.held_in.length > 0) {
    return `the engine holds the failed requests in the ${d.held_in.join(' and the ')}, while other work goes through`;
  }
  if (d.verdict === 'proxy' && d.path_timeout?.by === 'path') {
    const what = d.path_timeout.kind === 'idle' ? `closes keep-alive connections idle for ${d.path_timeout.seconds.toFixed(1)} s or less` : `cuts requests at ${d.path_timeout.seconds.toFixed(1)} s`;
    return `the path in front of the engine ${what}: its timeout ended them (the engine's slowness, where seen, contributes)`;
  }
  return d.verdict === 'none' ? '' : DIAGNOSIS_VERDICTS[d.verdict].meaning;
}

/** Episodes printed in full on the terminal (summary.json and report.html have them all). */
const TERMINAL_EPISODES = 4;

/** The diagnosis: the call, then each episode with its evidence for (+) and against (−), one sentence a line. */
function diagnosisLines(d: Summary['diagnosis']): string[] {
  const out: string[] = [];
  const pad = '           ';
  const buffering = d.buffering;
  if (buffering !== undefined && buffering.buffered > 0) {
    const whole = `${buffering.buffered} of ${buffering.judged} streams arrived whole (all their tokens at once, faster than any decode)`;
    const late = (buffering.excluded_client_late ?? 0) > 0 ? `; ${buffering.excluded_client_late} more not judged (the client's loop was late then)` : '';
    out.push(`streams    ${whole}${buffering.share >= 0.5 ? ": the path buffers streams: TTFT and ITL are the proxy's, not the engine's" : ''}${late}`);
  }
  if (d.verdict === 'none') return out;
  const confidence = typeof d.confidence === 'number' && d.verdict !== 'unknown' ? ` (confidence ${d.confidence.toFixed(2)})` : '';
  out.push(`diagnosis  ${d.verdict}${confidence}: ${diagnosisMeaning(d)}`);
  if (d.path_timeout !== undefined) out.push(`timeout    ${describePathTimeout(d.path_timeout)}`);
  const episodes = d.episodes;
  if (episodes === undefined || episodes.length === 0) {
    // A summary written before episodes existed: its evidence as it was.
    for (const line of d.evidence) out.push(`${pad}· ${line}`);
    return out;
  }
  for (const e of episodes.slice(0, TERMINAL_EPISODES)) {
    const call = e.verdict === 'unknown' ? 'unknown' : `${e.verdict} (confidence ${e.confidence.toFixed(2)})`;
    out.push(`${pad}${e.kind} ${(e.start_ms / 1000).toFixed(1)}–${(e.end_ms / 1000).toFixed(1)} s, ${e.requests} request${e.requests === 1 ? '' : 's'}: ${call}`);
    const [what, ...rest] = e.facts;
    if (what !== undefined) out.push(`${pad}  · ${what}`);
    for (const line of e.evidence_for) out.push(`${pad}  + ${line}`);
    for (const line of e.evidence_against) out.push(`${pad}  − ${line}`);
    for (const line of rest) out.push(`${pad}  · ${line}`);
  }
  const more = episodes.length - TERMINAL_EPISODES + (d.episodes_omitted ?? 0);
  if (more > 0) out.push(`${pad}${more} more episode${more === 1 ? '' : 's'} in summary.json and report.html`);
  return out;
}

/** The client's health line: the worst sample window, and the saturated ones; `–` with no samples. */
function clientLine(c: Summary['client']): string {
  if (c.samples === 0) return `event-loop delay p99 ${NONE}, utilisation ${NONE} (no sample: the run ended within the first second)`;
  const n = c.saturated_windows;
  const saturated =
    n === 0
      ? ''
      : `  ·  late or busy in ${n} of ${c.samples} one-second samples (delay p99 over ${SATURATED_LOOP_DELAY_MS} ms or utilisation over ${SATURATED_UTILIZATION * 100}%): latencies measured then are suspect (the diagnosis says whether the client was busy or starved of CPU)`;
  return `event-loop delay p99 ≤ ${c.loop_delay_p99_ms_max.toFixed(1)} ms, utilisation ≤ ${(c.loop_utilization_max * 100).toFixed(0)}%${saturated}`;
}

/** `25 of 1 s · auto: 1 s for a planned 25 s run`; nothing for summaries from before `window`. */
function windowsLine(s: Summary): string | null {
  if (s.window === undefined) return null;
  return `${s.windows.length} of ${s.window.window_s} s  ·  ${s.window.basis}`;
}

/** The latency headings of a table (types/figures.ts: `rounds`, the per-round table, or `decode`), as the
 * terminal (`ttft p50`) or report.html (`TTFT p50`) writes them. */
export function latencyHeads(table: LatencyTable, by: 'terminal' | 'label'): string[] {
  return tableColumns(table).map((c) => c[by]);
}

/** The latency cells of a table's row, in its headings' order, each formatted by `fmtMs` (the terminal's and
 * report.html's own; count 0 — no request had it, or a summary older than the figure — is their `–`), so both
 * keep one column order. */
export function latencyCells(table: LatencyTable, x: PhaseSummary | RoundSummary, fmtMs: (ms: number, count: number) => string): string[] {
  return tableColumns(table).map(({ figure, p }) => {
    const q = x[figure];
    return fmtMs(q?.[`${p}_ms`] ?? 0, q?.count ?? 0);
  });
}

/** `4 conv/s`, `ramp 2 → 8 conv/s`, `16 agents`: a stage's level. */

export function loadText(load: PhaseLoad): string {
  const unit = load.kind === 'arrival' ? 'conv/s' : 'agents';
  return load.from === load.to ? `${fmtLevel(load.to)} ${unit}` : `ramp ${fmtLevel(load.from)} → ${fmtLevel(load.to)} ${unit}`;
}

function fmtLevel(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** A latency as the arrival lines give it: `0.4 ms`, `45 ms`, `1.2 s`. */
function fmtLag(v: number): string {
  if (v >= 1000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 10) return `${Math.round(v)} ms`;
  return `${v.toFixed(1)} ms`;
}

function lagText(p: PhaseArrivals['start_lag']): string {
  return p.count === 0 ? 'start lag –' : `start lag p50 ${fmtLag(p.p50_ms)} p99 ${fmtLag(p.p99_ms)} max ${fmtLag(p.max_ms)}`;
}

/** The sentence of a lagging stage: its lag against its limit, and who held the starts back — the client itself
 * (its event loop late by about the lag), or the server (conversations waited for a slot). `runLimitMs`: the
 * limit of a summary written before stages had their own. */
export function laggingText(p: PhaseArrivals, runLimitMs: number): string {
  const limitMs = p.lag_limit_ms ?? runLimitMs;
  const limit = limitMs > runLimitMs ? `one arrival gap at ${fmtRate(1000 / limitMs)}/s` : 'one think time';
  const head = `LAGGING: start lag p99 ${fmtLag(p.start_lag.p99_ms)} > ${fmtLag(limitMs)} (${limit})`;
  if (p.client_late === true)
    return `${head}: the client itself was late (event-loop delay p99 up to ${fmtLag(p.client_loop_delay_p99_ms ?? 0)}): a busy or starved client host, not the server, held the starts back`;
  if (p.delayed > 0) return `${head}: ${p.delayed} conversations waited for a slot (max_active): the server cannot keep up with the arrivals`;
  return `${head}: the client or the server cannot keep up with the arrivals`;
}

const fmtRate = (perS: number): string => String(Math.round(perS * 100) / 100);

/** One line per open-loop phase: arrivals and their rate against the target, delays, start lag, active
 * conversations, and the lagging flag; first a line of the whole run's when there are several stages. */
function arrivalLines(s: Summary): string[] {
  const a = s.arrivals;
  if (a === undefined) return [];
  const out: string[] = [];
  const notStarted =
    a.not_started === null ? ', not started unknown (no arrivals_end: the run was killed)' : a.not_started > 0 ? `, ${a.not_started} never started (still waiting for a slot at the end)` : '';
  const phases = s.phases.filter((p) => p.arrivals !== undefined);
  const phaseLine = (p: PhaseSummary): string => {
    const x = p.arrivals!;
    const target = p.load === undefined ? '' : ` (target ${loadText(p.load)})`;
    const delayed = x.delayed > 0 ? ` · ${x.delayed} delayed` : '';
    const never = x.not_started !== null && x.not_started > 0 ? ` · ${x.not_started} never started` : '';
    const lagging = x.lagging ? `  ${laggingText(x, a.lag_limit_ms)}` : '';
    return `${x.scheduled} arrived at ${x.arrivals_per_s.toFixed(2)}/s${target} · ${x.started} started${delayed}${never} · ${lagText(x.start_lag)} · active mean ${x.active_mean.toFixed(1)}, at most ${x.active_max}${lagging}`;
  };
  if (phases.length === 1 && s.phases.length === 1) {
    out.push(`arrivals   ${phaseLine(phases[0]!)}`);
  } else {
    out.push(`arrivals   ${a.started} conversations started, ${a.delayed} after waiting for a slot${notStarted} · ${lagText(a.start_lag)} · at most ${a.active_max} active`);
    const width = Math.max(...phases.map((p) => p.phase.length));
    for (const p of phases) out.push(`           · ${p.phase.padEnd(width)}  ${phaseLine(p)}`);
  }
  if (a.delayed > 0 || (a.not_started ?? 0) > 0) out.push('           (delayed: found agents.arrival.max_active conversations running and waited for a slot; the wait is in its start lag)');
  return out;
}

export interface FormatOptions {
  /** The verdict the banner shows; default the run's own (`runVerdict`). */
  verdict?: RunVerdict;
  /** Colour the banner (stdout is a terminal and NO_COLOR unset). @default false */
  color?: boolean;
}

/** The whole terminal summary, latencies in ms, between two verdict banners. */
export function formatSummary(summary: Summary, folder: string, options: FormatOptions = {}): string {
  // Every string of the summary came from outside at some point (a server's error message, a gauge's labels, a
  // run folder's name): each one is printed on one line, without the controls it may hold.
  const s = printable(summary);
  const dir = oneLine(folder);
  const out: string[] = [];
  const banner = bannerLine(options.verdict ?? runVerdict(s), dir, colors(options.color === true));
  out.push(banner);
  out.push(`roundload · ${s.run.name} · ${s.run.status} · ${s.run.target} (${s.run.path}) · ${s.run.wall_s.toFixed(1)} s`);
  for (const p of s.phases) {
    const warm = p.warmup === undefined ? '' : `  (warm-up: ${p.warmup.requests} requests left out of these figures)`;
    const load =
      p.load === undefined || s.phases.length === 1
        ? ''
        : `  (${loadText(p.load)} for ${(p.load.length_ms / 1000).toFixed(p.load.length_ms % 1000 === 0 ? 0 : 1)} s${p.arrivals?.lagging === true ? ', LAGGING' : ''})`;
    if (s.phases.length > 1 || p.warmup !== undefined) out.push(`\nphase ${p.phase}${warm}${load}`);
    out.push('', phaseTable(p), legend(s), '', decodeTable(p), DECODE_LEGEND);
  }
  const t = s.totals;
  out.push('');
  const estimatedRate = (s.throughput.tokens_estimated ?? 0) > 0 ? ESTIMATED : '';
  out.push(
    `requests   ${t.requests} (${t.ok} ok, ${t.errors} error${t.errors === 1 ? '' : 's'}, ${t.hangs} hang${t.hangs === 1 ? '' : 's'})  ·  ${estimatedRate}${s.throughput.output_tokens_per_s.toFixed(1)} output tokens/s${estimatedRate === '' ? '' : ' (estimated)'}  ·  ${s.throughput.requests_per_s.toFixed(2)} requests/s`,
  );
  out.push(...arrivalLines(s));
  out.push(...capacityLines(s));
  const capped = contextCapLine(s);
  if (capped !== null) out.push(`planned    ${capped}`);
  out.push(`tokens     ${tokensLine(s)}`);
  const answers = answersLine(s);
  if (answers !== null) out.push(`answers    ${answers}`);
  out.push(
    `sockets    ${s.connections.distinct} distinct, ${s.connections.requests_on_reused} requests on reused keep-alive sockets, up to ${s.connections.max_requests_per_connection} per socket${openingNote(s.client.opening)}`,
  );
  for (const w of s.warnings ?? []) out.push(`warning    ${w.class} on ${w.count} ok answer${w.count === 1 ? '' : 's'} (first ${w.first.conversation} round ${w.first.round}): ${w.meaning}`);
  out.push(`errors     ${counts(s.errors_by_class)}`);
  out.push(...firstErrorLines(s));
  out.push(`hangs      ${s.hangs.total === 0 ? 'none' : `${s.hangs.total}: by phase ${counts(s.hangs.by_phase)}; by round ${counts(s.hangs.by_round)}; ${bySocketUse(s.hangs.by_connection_reuse)}`}`);
  out.push(`client     ${clientLine(s.client)}`);
  const windows = windowsLine(s);
  if (windows !== null) out.push(`windows    ${windows}`);
  const writer = writerLine(s.client);
  if (writer !== null) out.push(writer);
  out.push(...gaugeLines(s.gauges, s.scrape_targets ?? []));
  // The call first, then its evidence, one sentence a line: this is what a person reads after a hang.
  out.push(...diagnosisLines(s.diagnosis));
  if (s.replay !== undefined) out.push(...replayLines(s.replay), '');
  out.push(`thresholds ${thresholdsLine(s.thresholds)}`);
  out.push(`results    ${dir}`);
  out.push(`report     ${join(dir, 'report.html')}  (junit.xml beside it)`);
  out.push('', banner);
  return out.join('\n');
}

/** The results writer, only when it fell behind or lost lines (a slow or full results volume). */
export function writerLine(c: Summary['client']): string | null {
  const parts: string[] = [];
  if (c.writer_lagging_windows > 0)
    parts.push(
      `up to ${fmtInt(c.writer_lag_ms_max ?? 0)} ms behind in ${c.writer_lagging_windows} sample windows (over ${WRITER_LAG_FLAG_MS} ms): a slow results volume (or a starved machine); the timings are not affected, but a kill there loses that much`,
    );
  if (c.writer_dropped_lines > 0) parts.push(`${fmtInt(c.writer_dropped_lines)} lines never written (queue full or the disk refused): the files hold fewer lines than this summary counts`);
  return parts.length === 0 ? null : `writer     ${parts.join('  ·  ')}`;
}
