// report.html: one self-contained page (chart library, styles and data inlined; a CSP forbids any
// request) for people: the run's header and settings, totals, latency by round, throughput and gauges
// over time with hang markers and verdicts, hangs, errors, diagnosis, thresholds and client health.
import { WRITER_LAG_FLAG_MS, describePathTimeout, type PhaseSummary, type RoundSummary, type Summary } from '../analysis/index.js';
import { CAPACITY_REASONS, DIAGNOSIS_VERDICTS, GAUGE_VERDICTS, type DiagnosisEpisode, type GaugeVerdict } from '../types/index.js';
import { fixedDigits, shellCommand, traceLink } from '../util/index.js';
import { loadChartAssets, type ChartAssets } from './assets.js';
import type { ChartSpec } from './charts.js';
import type { ReportData } from './data.js';
import { badge, chartGrid, chartScripts, chartStyles, cspMeta, esc, table } from './page.js';
import { replaySection } from './replay-table.js';
import { gaugesText, levelText } from './capacity.js';
import { diagnosisMeaning, laggingText, latencyCells, latencyHeads } from './table.js';

function fmtMs(v: number | null | undefined, count = 1): string {
  if (v === null || v === undefined || count === 0 || !Number.isFinite(v)) return '–';
  if (v >= 10_000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 100) return `${Math.round(v)}`;
  return v.toFixed(1);
}

function fmtNum(v: number | null | undefined, digits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return fixedDigits(v, digits);
}

function fmtPct(v: number): string {
  return `${(v * 100).toFixed(1)}%`;
}

function fmtTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z');
}

/** A time that must not wrap (the table cell carries its own nowrap span). */
function timeCell(iso: string): string {
  return `<span class="time">${esc(fmtTime(iso))}</span>`;
}

function fmtDuration(s: number): string {
  if (!Number.isFinite(s) || s <= 0) return '–';
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

const STATUS_TONE: Record<string, string> = { completed: 'good', interrupted: 'warn', killed: 'bad', failed: 'bad', running: 'warn' };

function empty(text: string): string {
  return `<p class="empty-note">${esc(text)}</p>`;
}

function charts(list: ChartSpec[]): string {
  return chartGrid(list);
}

function kv(pairs: [string, string][]): string {
  return `<dl class="kv">${pairs.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function headerSection(d: ReportData): string {
  const s = d.summary;
  const m = d.manifest;
  const w = m?.workload ?? {};
  const labels = Object.entries(s.run.labels);
  const setting = (path: string, suffix = ''): string => {
    const v = get(w, path);
    return v === undefined || v === null ? '–' : `${esc(typeof v === 'object' ? JSON.stringify(v) : v)}${suffix}`;
  };
  const pairs: [string, string][] = [
    ['target', `<code>${esc(s.run.target)}</code>${m?.target.embedded ? ' (embedded engine)' : ''}`],
    ['path', esc(s.run.path)],
    ['model', esc(m?.target.model ?? '–')],
    ['started', esc(fmtTime(s.run.started_at))],
    ['ended', esc(fmtTime(s.run.ended_at))],
    ['wall time', esc(fmtDuration(s.run.wall_s))],
    ['labels', labels.length === 0 ? '–' : labels.map(([k, v]) => `<span class="chip">${esc(k)}=${esc(v)}</span>`).join(' ')],
    [
      'versions',
      m === null
        ? '–'
        : esc(
            Object.entries(m.versions)
              .map(([k, v]) => `${k} ${v}`)
              .join(' · '),
          ),
    ],
    ['host', m === null ? '–' : esc(Object.values(m.host).join(' · '))],
    ['command', m === null || m.argv.length === 0 ? '–' : `<code>${esc(shellCommand('roundload', ...m.argv))}</code>`],
  ];
  const settings: [string, string][] = [
    ['agents × rounds', `${setting('agents.count')} × ${setting('agents.rounds')}`],
    ['connection', `${setting('agents.connection')}, keep-alive ${setting('agents.keep_alive_timeout_ms', ' ms')}`],
    ['think time', setting('agents.think_time_ms', ' ms')],
    ['max_tokens', setting('conversation.max_tokens')],
    ['tools', setting('conversation.tools')],
    [
      'watchdog',
      `headers ${setting('watchdog.headers_ms', ' ms')}, first token ${setting('watchdog.first_token_ms', ' ms')}, stall ${setting('watchdog.stall_ms', ' ms')}, total ${setting('watchdog.total_ms', ' ms')}`,
    ],
  ];
  const notes = d.notes.length === 0 ? '' : `<div class="notes"><strong>Rebuilt from the files; what was missing:</strong><ul>${d.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></div>`;
  return `<header class="run-header">
<h1>${esc(s.run.name)} ${badge(s.run.status, STATUS_TONE[s.run.status])}</h1>
${notes}
<div class="two-col">${kv(pairs)}<div>${kv(settings)}
<details><summary>Workload as resolved (run.json)</summary><pre>${esc(JSON.stringify(w, null, 2))}</pre></details></div></div>
</header>`;
}

function verdictBar(s: Summary): string {
  const hangs = s.totals.hangs;
  const items = [
    `<div class="verdict ${hangs === 0 ? 'good' : 'bad'}"><b>${fmtNum(hangs)}</b> hang${hangs === 1 ? '' : 's'}</div>`,
    `<div class="verdict ${s.totals.errors === 0 ? 'good' : 'warn'}"><b>${fmtNum(s.totals.errors)}</b> error${s.totals.errors === 1 ? '' : 's'}</div>`,
    `<div class="verdict ${s.thresholds.results.length === 0 ? 'muted' : s.thresholds.ok ? 'good' : 'bad'}">thresholds <b>${s.thresholds.results.length === 0 ? 'none set' : s.thresholds.ok ? 'passed' : 'failed'}</b></div>`,
    ...s.thresholds.results
      .filter((r) => r.always_on === true && !r.ok)
      .map((r) => `<div class="verdict bad"><b>no request ended ok</b> · ${esc(r.message.replace(/^no request ended ok: /, ''))}</div>`),
    `<div class="verdict ${DIAGNOSIS_VERDICTS[s.diagnosis.verdict].tone}">diagnosis <b>${esc(s.diagnosis.verdict)}</b></div>`,
    ...(s.arrivals === undefined
      ? []
      : [
          `<div class="verdict ${s.arrivals.lagging_phases.length === 0 ? 'good' : 'bad'}">start lag <b>${s.arrivals.lagging_phases.length === 0 ? 'on time' : `lagging in ${s.arrivals.lagging_phases.length === 1 ? esc(s.arrivals.lagging_phases[0]!) : `${s.arrivals.lagging_phases.length} stages`}`}</b></div>`,
        ]),
    ...(s.capacity === undefined ? [] : [kneeVerdict(s.capacity)]),
  ];
  return `<div class="verdicts">${items.join('')}</div>`;
}

/** The knee at a glance: where it is, or that the ramp never reached it (a capacity planner's one number). */
function kneeVerdict(c: NonNullable<Summary['capacity']>): string {
  const knee = c.knee === null ? 'below the first stage' : `${esc(levelText(c, c.knee))} (${esc(c.knee.phase)})`;
  const past = c.past === null ? ' · every stage held' : ` · past it: ${esc(c.past.reasons.map((r) => r.kind).join(', '))}`;
  return `<div class="verdict ${c.past === null ? 'good' : 'warn'}"><a href="#capacity">knee</a> <b>${knee}</b>${past}</div>`;
}

function totalsSection(s: Summary): string {
  const t = s.totals;
  const estimated = t.tokens_estimated > 0;
  const rateEstimated = (s.throughput.tokens_estimated ?? 0) > 0;
  const cards: [string, string, string][] = [
    ['requests', fmtNum(t.requests), `${fmtNum(t.ok)} ok · ${fmtNum(t.errors)} errors · ${fmtNum(t.hangs)} hangs`],
    ['error + hang rate', fmtPct(t.error_rate), ''],
    [
      'output tokens/s',
      `${rateEstimated ? '~' : ''}${fmtNum(s.throughput.output_tokens_per_s, 1)}`,
      `${rateEstimated ? 'estimated (no usage chunk) · ' : ''}${fmtNum(s.throughput.requests_per_s, 2)} requests/s`,
    ],
    t.ok === 0
      ? ['prompt tokens', '–', 'no request ended ok']
      : [
          'prompt tokens',
          `${estimated ? '~' : ''}${fmtNum(t.prompt_tokens)}`,
          t.cache_hit_ratio !== null ? `${fmtPct(t.cache_hit_ratio)} cached` : t.ok > 0 && t.tokens_estimated >= t.ok ? 'cached: unknown (no usage chunk)' : 'cached: not reported by the server',
        ],
    t.ok === 0
      ? ['completion tokens', '–', 'no request ended ok']
      : [
          'completion tokens',
          `${estimated ? '~' : ''}${fmtNum(t.completion_tokens)}`,
          estimated ? `estimated for ${fmtNum(t.tokens_estimated)} requests (no usage chunk: from the text)` : 'from usage chunks',
        ],
    ['sockets', fmtNum(s.connections.distinct), `${fmtNum(s.connections.requests_on_reused)} requests on reused · max ${fmtNum(s.connections.max_requests_per_connection)}/socket`],
  ];
  if (t.reasoning_tokens !== undefined && t.ok > 0) {
    const est = (t.reasoning_tokens_estimated ?? 0) > 0;
    const only = t.reasoning_only_answers ?? 0;
    cards.push([
      'reasoning tokens',
      `${est ? '~' : ''}${fmtNum(t.reasoning_tokens)}`,
      `in ${fmtNum(t.reasoning_answers ?? 0)} of ${fmtNum(t.ok)} ok answers${only > 0 ? ` · ${fmtNum(only)} reasoning only (no content)` : ''}${est ? ` · estimated for ${fmtNum(t.reasoning_tokens_estimated ?? 0)} (no count in usage)` : ''}`,
    ]);
  }
  if (s.finish_reasons !== undefined)
    cards.push([
      'tool calls',
      fmtNum(t.tool_calls ?? 0),
      `finish: ${
        Object.entries(s.finish_reasons)
          .sort(([, a], [, b]) => b - a)
          .map(([k, v]) => `${k} ${v}`)
          .join(' · ') || 'none'
      }`,
    ]);
  const a = s.arrivals;
  if (a !== undefined) {
    const lag = a.start_lag.count === 0 ? 'start lag –' : `start lag p99 ${fmtMs(a.start_lag.p99_ms)} ms`;
    cards.push([
      'conversations arrived',
      fmtNum(a.scheduled),
      `${fmtNum(a.started)} started · ${fmtNum(a.delayed)} delayed${a.not_started !== null && a.not_started > 0 ? ` · ${fmtNum(a.not_started)} never started` : ''} · ${lag} · at most ${fmtNum(a.active_max)} active`,
    ]);
  }
  const c = s.conversations;
  if (c !== undefined && c.context_capped > 0) {
    cards.push([
      'ended at the context cap',
      fmtNum(c.context_capped),
      `${c.requests_planned === null ? '' : `${fmtNum(c.rounds_sent)} of ${fmtNum(c.requests_planned)} planned requests ran · `}${fmtNum(c.rounds_not_sent)} rounds not sent`,
    ]);
  }
  const html = cards.map(([k, v, sub]) => `<div class="card"><div class="card-k">${esc(k)}</div><div class="card-v">${esc(v)}</div><div class="card-s">${esc(sub)}</div></div>`).join('');
  return `<section id="totals"><h2>Totals</h2><div class="cards">${html}</div></section>`;
}

function roundsTable(s: Summary): string {
  if (s.phases.length === 0) return '';
  const head = ['phase', 'round', 'req', 'ok', 'err', 'hang', 'prompt tok', 'cached', 'tool calls', ...latencyHeads('rounds', 'label'), 'tok/s/stream'];
  const rows: string[][] = [];
  for (const p of s.phases) {
    for (const r of p.rounds) {
      const est = (r.tokens_estimated ?? 0) > 0 ? '~' : '';
      // Token figures are over ok answers: a round with none has none to show.
      const none = r.ok === 0;
      const cached = none ? '–' : r.cached_tokens_mean === null ? '<span class="muted-text">not reported</span>' : fmtNum(r.cached_tokens_mean);
      rows.push([
        esc(p.phase),
        String(r.round),
        fmtNum(r.requests),
        fmtNum(r.ok),
        fmtNum(r.errors),
        r.hangs > 0 ? `<b class="bad-text">${r.hangs}</b>` : '0',
        none ? '–' : `${est}${fmtNum(r.prompt_tokens_mean)}`,
        cached,
        none || r.tool_calls === undefined ? '–' : fmtNum(r.tool_calls),
        ...latencyCells('rounds', r, fmtMs),
        r.stream_tokens_per_s_mean === 0 ? '–' : `${est}${r.stream_tokens_per_s_mean.toFixed(1)}`,
      ]);
    }
    rows.push([`<b>${esc(p.phase)}</b>`, '<b>all</b>', fmtNum(p.requests), fmtNum(p.ok), fmtNum(p.errors), fmtNum(p.hangs), '', '', '', ...latencyCells('rounds', p, fmtMs), '']);
  }
  const notes = [
    s.totals.cached_tokens === null && s.totals.ok > 0 ? 'cached tokens: not reported by the server (SGLang reports them only with --enable-cache-report)' : null,
    s.totals.tokens_estimated > 0 ? '~: token counts in part estimated by the client (no usage chunk)' : null,
  ].filter((x) => x !== null);
  return `<details open><summary>Per-round figures (latencies in ms)</summary>${table(
    head,
    rows,
    head.map((_, i) => i > 1),
  )}${notes.length === 0 ? '' : `<p class="chart-note">${notes.map(esc).join(' · ')}</p>`}</details>`;
}

/** `4/s`, `ramp 2 → 8/s`, `16 agents`: a stage's level in a table cell. */
function levelCell(load: NonNullable<Summary['phases'][number]['load']>): string {
  const unit = load.kind === 'arrival' ? '/s' : ' agents';
  const v = (x: number): string => String(Math.round(x * 1000) / 1000);
  return esc(load.from === load.to ? `${v(load.to)}${unit}` : `ramp ${v(load.from)} → ${v(load.to)}${unit}`);
}

/** Open-loop arrivals (per stage: arrived, started, delayed, start lag, active conversations, lagging) and
 * stages of agents; nothing for a plain closed-loop run. */
function arrivalsSection(d: ReportData): string {
  const s = d.summary;
  const a = s.arrivals;
  const staged = s.phases.filter((p) => p.load !== undefined);
  if (a === undefined && staged.length === 0) return '';
  if (a === undefined) {
    const rows = staged.map((p) => [
      esc(p.phase),
      levelCell(p.load!),
      fmtDuration(p.load!.length_ms / 1000),
      fmtNum(p.requests),
      fmtMs(p.ttft.p50_ms, p.ttft.count),
      fmtMs(p.ttft.p99_ms, p.ttft.count),
      fmtNum(p.output_tokens_per_s, 1),
    ]);
    return `<section id="stages"><h2>Stages</h2><p class="lead">Agents by stage (<code>agents.stages</code>, ${esc(staged[0]!.load!.ramp)} ramp); each stage is a phase of its own, compared stage by stage.</p>${table(['stage', 'agents', 'length', 'requests', 'TTFT p50 ms', 'TTFT p99 ms', 'output tok/s'], rows, [false, false, true, true, true, true, true])}</section>`;
  }
  const rows = s.phases
    .filter((p) => p.arrivals !== undefined)
    .map((p) => {
      const x = p.arrivals!;
      const flag = x.lagging ? badge('lagging', 'bad') : badge('on time', 'good');
      return [
        esc(p.phase),
        p.load === undefined ? '–' : levelCell(p.load),
        fmtNum(x.scheduled),
        fmtNum(x.arrivals_per_s, 2),
        fmtNum(x.started),
        x.delayed > 0 ? `<b class="warn-text">${fmtNum(x.delayed)}</b>` : '0',
        x.not_started === null ? '–' : x.not_started > 0 ? `<b class="bad-text">${fmtNum(x.not_started)}</b>` : '0',
        fmtMs(x.start_lag.p50_ms, x.start_lag.count),
        fmtMs(x.start_lag.p99_ms, x.start_lag.count),
        fmtMs(x.start_lag.max_ms, x.start_lag.count),
        fmtNum(x.active_mean, 1),
        fmtNum(x.active_max),
        fmtMs(p.ttft.p50_ms, p.ttft.count),
        fmtMs(p.ttft.p99_ms, p.ttft.count),
        flag,
      ];
    });
  const head = ['stage', 'target', 'arrived', 'per s', 'started', 'delayed', 'never started', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'active mean', 'active most', 'TTFT p50 ms', 'TTFT p99 ms', ''];
  const lagging =
    a.lagging_phases.length === 0
      ? ''
      : s.phases
          .filter((p) => p.arrivals?.lagging === true)
          .map((p) => `<p class="bad-text">${esc(p.phase)}: ${esc(laggingText(p.arrivals!, a.lag_limit_ms))}.</p>`)
          .join('');
  const plots = d.charts.arrivals.length === 0 ? '' : charts(d.charts.arrivals);
  return `<section id="arrivals"><h2>Arrivals</h2><p class="lead">Open loop: conversations start at the scheduled rate whatever the server's state; an arrival that finds <code>max_active</code> conversations running waits for a slot (delayed), and its wait shows as start lag. Each stage is a phase.</p>${lagging}${table(
    head,
    rows,
    head.map((_, i) => i >= 2 && i < head.length - 1),
  )}${plots}</section>`;
}

/** A ramp's or sweep's knee: the chart of offered load against latency and throughput, and each stage's verdict
 * with the figures that decided it. */
function capacitySection(d: ReportData): string {
  const c = d.summary.capacity;
  if (c === undefined) return '';
  const rows = c.stages.map((st) => [
    esc(st.phase),
    esc(levelText(c, st)),
    st.holds ? badge('holds', 'good') : badge('past', 'bad'),
    fmtMs(st.ttft?.p50_ms, st.ttft?.count ?? 0),
    fmtMs(st.ttft?.p99_ms, st.ttft?.count ?? 0),
    fmtNum(st.ttft?.count ?? 0),
    fmtMs(st.itl?.p50_ms, st.itl?.count ?? 0),
    fmtMs(st.itl?.p99_ms, st.itl?.count ?? 0),
    `${fmtNum(st.throughput.output_tokens_per_s)}${st.throughput.se === null ? '' : ` ± ${fmtNum(1.96 * st.throughput.se)}`}`,
    st.reasons.length === 0 ? '' : st.reasons.map((r) => `<b title="${esc(CAPACITY_REASONS[r.kind])}">${esc(r.kind)}</b>: ${esc(r.text)}`).join('<br>'),
    esc(gaugesText(st.gauges)),
  ]);
  const head = ['stage', 'offered', '', 'TTFT p50 ms', 'TTFT p99 ms', 'n', 'ITL p50 ms', 'ITL p99 ms', 'output tok/s (95%)', 'why', 'engine gauges'];
  const lead =
    c.knee === null
      ? `No stage held: the first, ${esc(c.stages[0]!.phase)}, was already past the knee.`
      : `The knee: <b>${esc(c.knee.phase)}</b> at ${esc(levelText(c, c.knee))}, the highest stage whose service held${c.past === null ? '; every stage held, so the knee is at or above the last one' : `; past it, ${esc(c.past.phase)} at ${esc(levelText(c, c.past))}: ${esc(c.past.reasons.map((r) => r.kind).join(', '))}`}.`;
  return `<section id="capacity"><h2>Capacity</h2><p class="lead">${lead} A stage holds when: ${esc(c.basis)} (see docs/arrival.md, “Capacity: the knee”).</p>${charts(d.charts.capacity)}${table(
    head,
    rows,
    head.map((_, i) => i >= 3 && i <= 8),
  )}</section>`;
}

/** Reasoning and decode per round: reasoning tokens and time, TTFC beside TTFT, TPOT beside ITL, tokens per event. */
function decodeTable(s: Summary): string {
  if (s.phases.length === 0) return '';
  const head = ['phase', 'round', 'reasoning tok', ...latencyHeads('decode', 'label'), 'tok/event'];
  const rows: string[][] = [];
  const cells = (x: PhaseSummary | RoundSummary, estimated: boolean, none: boolean): string[] => [
    none || x.reasoning_tokens_mean === undefined ? '–' : `${estimated ? '~' : ''}${fmtNum(x.reasoning_tokens_mean)}`,
    ...latencyCells('decode', x, fmtMs),
    none ? '–' : fmtNum(x.tokens_per_event_mean, 2),
  ];
  for (const p of s.phases) {
    for (const r of p.rounds) rows.push([esc(p.phase), String(r.round), ...cells(r, (r.reasoning_tokens_estimated ?? 0) > 0, r.ok === 0)]);
    rows.push([
      `<b>${esc(p.phase)}</b>`,
      '<b>all</b>',
      ...cells(
        p,
        p.rounds.some((r) => (r.reasoning_tokens_estimated ?? 0) > 0),
        p.ok === 0,
      ),
    ]);
  }
  const note =
    "TTFT: send → first token of any kind, reasoning included (what SGLang's <code>sglang:time_to_first_token_seconds</code> counts) · TTFC: send → first content or tool-call token (what bench_serving's chat backend reports as TTFT) · ITL: gap between streamed events · TPOT: (e2e − TTFT) ÷ (completion tokens − 1), per token, reasoning included · tok/event: completion tokens per streamed event (ITL is per token when it is 1, per chunk when more)";
  return `<details open><summary>Reasoning and decode per round (latencies in ms)</summary>${table(
    head,
    rows,
    head.map((_, i) => i > 1),
  )}<p class="chart-note">${note}${s.totals.reasoning_tokens_estimated ? ' · ~: reasoning tokens in part estimated from the text (no count in the usage chunk)' : ''}</p></details>`;
}

function latencySection(d: ReportData): string {
  const body = d.charts.latency.length === 0 ? empty('no completed requests: no latencies to plot') : charts(d.charts.latency);
  return `<section id="latency"><h2>Latency by round</h2><p class="lead">p50, p90 and p99 of each round over all agents; a round where requests hung carries a red marker.</p>${body}${roundsTable(d.summary)}${decodeTable(d.summary)}</section>`;
}

function timeSection(d: ReportData): string {
  const list = [...d.charts.time, ...d.charts.client.filter((c) => c.id === 'in-flight')];
  const body = list.length === 0 ? empty('no request finished: nothing to plot over time') : charts(list);
  return `<section id="over-time"><h2>Over time</h2><p class="lead">Red dashed lines mark the moments the watchdog declared a hang.</p>${body}</section>`;
}

/** The verdict table: one row of figures per series, its evidence sentences on a full-width row below. */
function verdictTable(verdicts: GaugeVerdict[]): string {
  const head = ['target', 'gauge', 'labels', 'verdict', 'samples', 'window s', 'longest non-zero s', 'dips', 'last', 'needed s'];
  const numeric = [false, false, false, false, true, true, true, true, true, true];
  const th = head.map((h, i) => `<th${numeric[i] ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const bodies = verdicts.map((v) => {
    const labels = Object.entries(v.labels)
      .map(([k, x]) => `${k}="${x}"`)
      .join(', ');
    const cells = [
      esc(v.target),
      `<code>${esc(v.name)}</code>`,
      esc(labels || '–'),
      badge(v.verdict, GAUGE_VERDICTS[v.verdict].tone),
      fmtNum(v.samples),
      fmtNum(v.window_s, 1),
      fmtNum(v.longest_nonzero_s, 1),
      fmtNum(v.dips),
      fmtNum(v.last_value, 2),
      v.needed_s === null ? '–' : fmtNum(v.needed_s, 0),
    ];
    const row = `<tr>${cells.map((c, i) => `<td${numeric[i] ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`;
    const evidence = v.evidence.length === 0 ? '' : `<tr class="evidence-row"><td colspan="${head.length}">${v.evidence.map(esc).join(' · ')}</td></tr>`;
    return `<tbody>${row}${evidence}</tbody>`;
  });
  return `<div class="table-wrap"><table class="verdicts-table"><thead><tr>${th}</tr></thead>${bodies.join('\n')}</table></div>`;
}

function gaugesSection(d: ReportData): string {
  const verdicts = d.summary.gauges ?? [];
  if (d.targets.length === 0 && verdicts.length === 0) {
    return `<section id="gauges"><h2>Gauges</h2>${empty('no gauges were monitored (no monitor targets, or the monitor was off): gauges.jsonl is empty')}</section>`;
  }
  const failedCell = (n: number) => (n > 0 ? `<b class="bad-text">${fmtNum(n)}</b>` : '0');
  // The summary's per-target figures when it has them (interval, bursts); else what the scrapes themselves say.
  const st = d.summary.scrape_targets ?? [];
  const health =
    st.length > 0
      ? table(
          ['target', 'url', 'scrapes', 'in bursts', 'failed', 'interval p50 ms', 'interval max ms', 'series', 'last error'],
          st.map((t) => [
            esc(t.target),
            `<code>${esc(t.url)}</code>`,
            fmtNum(t.scrapes),
            fmtNum(t.burst),
            failedCell(t.failed),
            fmtNum(t.interval_ms_p50),
            fmtNum(t.interval_ms_max),
            fmtNum(t.series),
            esc(t.last_error ?? '–'),
          ]),
          [false, false, true, true, true, true, true, true, false],
        )
      : d.targets.length === 0
        ? ''
        : table(
            ['target', 'url', 'scrapes', 'failed', 'first error'],
            d.targets.map((t) => [esc(t.target), `<code>${esc(t.url)}</code>`, fmtNum(t.scrapes), failedCell(t.failed), esc(t.first_error ?? '–')]),
            [false, false, true, true, false],
          );
  const plots = d.charts.gauges.length === 0 ? empty('the scrapes carried no values to plot') : charts(d.charts.gauges);
  const vt = verdicts.length === 0 ? empty('no gauge verdicts in the summary') : `<h3>Verdicts</h3>${verdictTable(verdicts)}`;
  return `<section id="gauges"><h2>Gauges</h2><p class="lead">Every monitored series over time, one chart per target and gauge; the verdict (${Object.keys(GAUGE_VERDICTS)
    .map((v) => v.replaceAll('_', ' '))
    .join(', ')}) is in each title.</p>${health}${plots}${vt}</section>`;
}

function countsLine(rec: Record<string, number>): string {
  const e = Object.entries(rec).sort(([, a], [, b]) => b - a);
  return e.length === 0 ? 'none' : e.map(([k, v]) => `${esc(k)} ${fmtNum(v)}`).join(' · ');
}

function hangsSection(d: ReportData): string {
  const h = d.summary.hangs;
  if (h.total === 0 && d.hangs_total === 0) return `<section id="hangs"><h2>Hangs</h2>${empty('no hangs: every request reached a terminal state within its deadlines')}</section>`;
  const by = kv([
    ['by phase', countsLine(h.by_phase)],
    ['by round', countsLine(h.by_round)],
    ['by socket reuse (nth request)', countsLine(h.by_connection_reuse)],
  ]);
  const rows = d.hangs.map((r) => [
    timeCell(r.t),
    fmtNum(r.run_s, 1),
    String(r.agent),
    esc(r.conversation),
    String(r.round),
    r.request_id === null ? '–' : `<code>${esc(r.request_id)}</code>`,
    traceCell(r.trace_id, d.trace_url),
    badge(r.hang_phase, 'bad'),
    esc(r.deadline) + (r.deadline_ms === null ? '' : ` ${fmtNum(r.deadline_ms)}`),
    fmtNum(r.last_byte_age_ms),
    esc(r.connection_id ?? '–'),
    r.connection_nth === null ? '–' : String(r.connection_nth),
    fmtNum(r.connection_idle_ms),
    esc(r.path),
    fmtNum(r.chunks),
  ]);
  const more = d.hangs_total > d.hangs.length ? `<p class="chart-note">${fmtNum(d.hangs_total - d.hangs.length)} more hangs in events.jsonl</p>` : '';
  const head = ['time', 's', 'agent', 'conversation', 'round', 'request id', 'trace id', 'phase', 'deadline ms', 'last byte age ms', 'socket', 'nth on socket', 'idle ms before', 'path', 'chunks'];
  const numeric = [false, true, true, false, true, false, false, false, false, true, false, true, true, false, true];
  // Each hang a tbody: its row, then what the gauges read at that moment (when the monitor ran).
  const bodies = rows.map((cells, i) => {
    const row = `<tr class="hang-row">${cells.map((c, j) => `<td${numeric[j] ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`;
    const g = d.hangs[i]!.gauges;
    return `<tbody>${row}${g.length === 0 ? '' : `<tr class="evidence-row"><td colspan="${head.length}">gauges at the hang: ${g.map(esc).join('<br>')}</td></tr>`}</tbody>`;
  });
  const th = head.map((h, j) => `<th${numeric[j] ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const tableHtml =
    rows.length === 0
      ? empty('events.jsonl holds no hang events (the counts come from requests.jsonl)')
      : `<div class="table-wrap"><table class="verdicts-table"><thead><tr>${th}</tr></thead>${bodies.join('\n')}</table></div>`;
  return `<section id="hangs"><h2>Hangs <span class="count">${fmtNum(h.total)}</span></h2>${by}${tableHtml}${more}</section>`;
}

/** A trace id, as a link to its trace when the run has a `trace_url` (an http(s) URL only; escaped). */
function traceCell(traceId: string | null, template: string | null): string {
  if (traceId === null) return '–';
  const href = traceLink(template, traceId);
  const code = `<code>${esc(traceId)}</code>`;
  return href === null ? code : `<a href="${esc(href)}" rel="noopener noreferrer" target="_blank">${code}</a>`;
}

function errorsSection(s: Summary): string {
  const e = Object.entries(s.errors_by_class).sort(([, a], [, b]) => b - a);
  const first = new Map((s.first_errors ?? []).map((f) => [f.class, f]));
  const rows = e.map(([k, v]) => {
    const f = first.get(k);
    const where = f === undefined ? '–' : `${fmtNum(f.run_ms / 1000, 1)} s · ${esc(f.conversation)} round ${f.round}`;
    return [
      `<code>${esc(k)}</code>`,
      fmtNum(v),
      fmtPct(s.totals.requests === 0 ? 0 : v / s.totals.requests),
      f?.http_status == null ? '–' : String(f.http_status),
      f?.url_path == null ? '–' : `<code>${esc(f.url_path)}</code>`,
      where,
      `<span class="event-text">${esc(f?.message ?? '')}</span>`,
    ];
  });
  const body =
    e.length === 0
      ? empty('no errors')
      : table(['class', 'requests', 'share of requests', 'first: HTTP', 'path', 'when, which', 'message (the first of its class)'], rows, [false, true, true, true, false, false, false]);
  const warnings = s.warnings ?? [];
  const warn =
    warnings.length === 0
      ? ''
      : `<h3>Warnings (the answers still counted as ok)</h3>${table(
          ['warning', 'ok answers', 'first', 'meaning'],
          warnings.map((w) => [`<code>${esc(w.class)}</code>`, fmtNum(w.count), `${fmtNum(w.first.run_ms / 1000, 1)} s · ${esc(w.first.conversation)} round ${w.first.round}`, esc(w.meaning)]),
          [false, true, false, false],
        )}`;
  return `<section id="errors"><h2>Errors by class</h2>${body}${warn}</section>`;
}

function list(items: readonly string[], cls: string): string {
  return items.length === 0 ? '' : `<ul class="${cls}">${items.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>`;
}

/** One episode: its call, the evidence for and against it, the facts, and the canary comparison as figures. */
function episodeBlock(e: DiagnosisEpisode): string {
  const call = `${badge(e.verdict, DIAGNOSIS_VERDICTS[e.verdict].tone)}${e.verdict === 'unknown' ? '' : ` confidence ${e.confidence.toFixed(2)}`}`;
  const head = `<h3>${esc(e.kind)} ${fmtNum(e.start_ms / 1000, 1)}–${fmtNum(e.end_ms / 1000, 1)} s · ${fmtNum(e.requests)} request${e.requests === 1 ? '' : 's'} · ${call}</h3>`;
  const c = e.canaries;
  const comparison =
    c === null
      ? ''
      : table(
          ['leg', 'slots', 'failed', 'not sent', 'failure rate (95% interval)'],
          (
            [
              ['direct', c.direct],
              ['proxied', c.proxied],
            ] as const
          ).map(([leg, f]) => [
            esc(leg),
            fmtNum(f.slots),
            f.failed > 0 ? `<b class="bad-text">${fmtNum(f.failed)}</b>` : '0',
            fmtNum(f.not_sent),
            `${fmtPct(f.slots === 0 ? 0 : f.failed / f.slots)} (${fmtPct(f.failed_rate_low)}–${fmtPct(f.failed_rate_high)})`,
          ]),
          [false, true, true, true, true],
        ) +
        `<p class="chart-note">canaries ${fmtNum(c.from_ms / 1000, 1)}–${fmtNum(c.to_ms / 1000, 1)} s; one-sided Fisher exact p: proxied fails more ${fmtNum(c.p_proxied_worse, 3)}, direct fails more ${fmtNum(c.p_direct_worse, 3)}${c.excluded_client_late > 0 ? `; ${fmtNum(c.excluded_client_late)} left out (client late)` : ''}</p>`;
  const scores = Object.entries(e.scores)
    .sort(([, a], [, b]) => (b ?? 0) - (a ?? 0))
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');
  return `<div class="episode">${head}${list(e.facts.slice(0, 1), 'facts')}${e.evidence_for.length === 0 ? '' : `<p class="ev-head">for</p>${list(e.evidence_for, 'evidence for')}`}${e.evidence_against.length === 0 ? '' : `<p class="ev-head">against, or pointing elsewhere</p>${list(e.evidence_against, 'evidence against')}`}${list(e.facts.slice(1), 'facts')}${comparison}${scores === '' ? '' : `<p class="chart-note">scores (for minus against): ${esc(scores)}</p>`}</div>`;
}

function diagnosisSection(d: ReportData): string {
  const s = d.summary;
  const dg = s.diagnosis;
  const confidence = typeof dg.confidence === 'number' && dg.verdict !== 'unknown' && dg.verdict !== 'none' ? ` confidence ${dg.confidence.toFixed(2)}` : '';
  const b = dg.buffering;
  const buffering =
    b === undefined || b.buffered === 0
      ? ''
      : `<p class="${b.share >= 0.5 ? 'bad-text' : ''}">${fmtNum(b.buffered)} of ${fmtNum(b.judged)} streams arrived whole (all their tokens at once, faster than any decode)${b.share >= 0.5 ? ': the path buffers streams: TTFT and ITL are the proxy’s, not the engine’s' : ''}.</p>`;
  // Where the engine holds the requests, or the path's timeout that cut them: the call said in its own terms.
  const specific = (dg.verdict === 'engine' && (dg.held_in?.length ?? 0) > 0) || (dg.verdict === 'proxy' && dg.path_timeout?.by === 'path');
  const pathTimeout = dg.path_timeout === undefined ? '' : `<p class="bad-text" id="path-timeout">${esc(describePathTimeout(dg.path_timeout))}</p>`;
  const episodes = dg.episodes ?? [];
  const body =
    episodes.length > 0
      ? `${episodes.map(episodeBlock).join('\n')}${(dg.episodes_omitted ?? 0) > 0 ? `<p class="chart-note">${fmtNum(dg.episodes_omitted ?? 0)} smaller episodes not judged in full</p>` : ''}`
      : list(dg.evidence, 'evidence');
  const legs =
    d.canaries.length === 0
      ? empty('no canaries ran (monitor.canary_interval_s; with target.bypass a direct leg runs beside the proxied one)')
      : `<h3>Canaries</h3>${table(
          ['leg', 'canaries', 'ok', 'failed', 'latency p50 ms', 'failures'],
          d.canaries.map((c) => [
            esc(c.leg),
            fmtNum(c.total),
            fmtNum(c.ok),
            c.total - c.ok > 0 ? `<b class="bad-text">${fmtNum(c.total - c.ok)}</b>` : '0',
            fmtMs(c.latency_ms_p50),
            esc(countsLine(c.failures)),
          ]),
          [false, true, true, true, true, false],
        )}${d.charts.canaries.length === 0 ? '' : charts(d.charts.canaries)}`;
  return `<section id="diagnosis"><h2>Diagnosis</h2><p>Where the hangs and errors come from: ${badge(dg.verdict, DIAGNOSIS_VERDICTS[dg.verdict].tone)}${confidence} — ${esc(specific ? diagnosisMeaning(dg) : DIAGNOSIS_VERDICTS[dg.verdict].meaning)}</p>${pathTimeout}${buffering}${body}${legs}</section>`;
}

function thresholdsSection(s: Summary): string {
  const r = s.thresholds.results;
  const name = (t: (typeof r)[number]): string =>
    `<code>${esc(t.name)}</code>${t.always_on === true ? ` ${badge('always on', 'muted')}` : ''}${t.estimated === true ? ` ${badge('estimated', 'warn')}` : ''}`;
  const body =
    r.length === 0
      ? empty('no thresholds were set in the workload')
      : table(
          ['threshold', 'limit', 'actual', 'result', 'message'],
          r.map((t) => [name(t), fmtNum(t.limit, 3), fmtNum(t.actual, 3), badge(t.ok ? 'pass' : 'fail', t.ok ? 'good' : 'bad'), esc(t.message)]),
          [false, true, true, false, false],
        );
  return `<section id="thresholds"><h2>Thresholds</h2>${body}</section>`;
}

function clientSection(d: ReportData): string {
  const c = d.summary.client;
  const facts = kv([
    ['samples', fmtNum(c.samples)],
    ['worst loop delay p99', `${fmtMs(c.loop_delay_p99_ms_max)} ms`],
    ['highest loop utilisation', fmtPct(c.loop_utilization_max)],
    [
      'saturated windows',
      c.saturated_windows === 0
        ? '0 (the client kept up; its timings are sound)'
        : `<b class="bad-text">${fmtNum(c.saturated_windows)}</b> (the client was late or busy there: latencies measured then are suspect; the diagnosis says whether it was busy or starved of CPU)`,
    ],
    [
      'results writer lag',
      c.writer_lag_ms_max === null
        ? 'not sampled'
        : c.writer_lagging_windows === 0
          ? `≤ ${fmtMs(c.writer_lag_ms_max)} ms (the disk kept up)`
          : `<b class="bad-text">≤ ${fmtMs(c.writer_lag_ms_max)} ms, ${fmtNum(c.writer_lagging_windows)} windows over ${WRITER_LAG_FLAG_MS} ms</b> (a slow results volume, or a starved machine: timings unaffected, a kill there loses more)`,
    ],
    ...(c.writer_dropped_lines > 0
      ? [
          ['lines never written', `<b class="bad-text">${fmtNum(c.writer_dropped_lines)}</b> (writer queue full or disk refused: the files hold fewer lines than the summary counts)`] as [
            string,
            string,
          ],
        ]
      : []),
  ]);
  const list = d.charts.client.filter((x) => x.id !== 'in-flight');
  const plots = list.length === 0 ? empty('no client samples in events.jsonl') : charts(list);
  return `<section id="client"><h2>Client health</h2>${facts}${plots}</section>`;
}

function eventsSection(d: ReportData): string {
  const counts = Object.keys(d.events_by_kind).length === 0 ? 'none' : countsLine(d.events_by_kind);
  const rows = d.events.map((e) => [timeCell(e.t), e.run_s === null ? '–' : fmtNum(e.run_s, 1), `<code>${esc(e.kind)}</code>`, `<span class="event-text">${esc(e.text)}</span>`]);
  const body = rows.length === 0 ? '' : table(['time', 's', 'kind', 'details'], rows, [false, true, false, false]);
  return `<section id="events"><h2>Events</h2><p>events.jsonl: ${counts}</p>${body}</section>`;
}

const CSS = `
:root{--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;--good:#047857;--good-bg:#d1fae5;--warn:#b45309;--warn-bg:#fef3c7;--bad:#b91c1c;--bad-bg:#fee2e2;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:26px;margin:0 0 12px;display:flex;align-items:center;gap:12px}
h2{font-size:19px;margin:36px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 8px}
code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f5f9;padding:1px 4px;border-radius:4px}
pre{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#0f172a;color:#e2e8f0;padding:12px;border-radius:8px;overflow:auto;max-height:420px}
.lead{color:var(--muted);margin:0 0 12px}
.run-header{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:20px 22px}
.two-col{display:grid;grid-template-columns:1fr 1fr;gap:24px}
@media (max-width:900px){.two-col{grid-template-columns:1fr}}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
.kv dt{color:var(--muted)}
.kv dd{margin:0;overflow-wrap:anywhere}
details{margin-top:10px}
summary{cursor:pointer;color:var(--accent)}
.badge{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12.5px;font-weight:600;background:#e2e8f0;color:#334155;vertical-align:middle}
.badge.good{background:var(--good-bg);color:var(--good)}.badge.warn{background:var(--warn-bg);color:var(--warn)}.badge.bad{background:var(--bad-bg);color:var(--bad)}
h1 .badge{font-size:14px}
.chip{display:inline-block;background:#eef2ff;color:#3730a3;border-radius:6px;padding:0 6px;margin:1px 0;font-size:12.5px}
.notes{background:var(--warn-bg);border:1px solid #fcd34d;border-radius:8px;padding:10px 14px;margin:0 0 14px}
.notes ul{margin:4px 0 0;padding-left:20px}
.verdicts{display:flex;flex-wrap:wrap;gap:10px;margin:18px 0 0}
.verdict{padding:8px 14px;border-radius:8px;background:var(--card);border:1px solid var(--line);border-left-width:5px}
.verdict.good{border-left-color:var(--good)}.verdict.warn{border-left-color:var(--warn)}.verdict.bad{border-left-color:var(--bad)}.verdict.muted{border-left-color:#94a3b8}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.card-k{color:var(--muted);font-size:12.5px}.card-v{font-size:22px;font-weight:650;margin:2px 0}.card-s{color:var(--muted);font-size:12.5px}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px;margin:8px 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 10px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f1f5f9;font-weight:600;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.time{white-space:nowrap}
tbody tr:nth-child(even){background:#f8fafc}
.verdicts-table tbody:nth-of-type(even){background:#f8fafc}
.verdicts-table tbody tr{background:transparent}
.verdicts-table tr:has(+ .evidence-row) td{border-bottom:none}
.evidence-row td{color:var(--muted);font-size:12.5px;padding-top:0}
tbody tr:last-child td{border-bottom:none}
.empty-note{color:var(--muted);font-style:italic}
.bad-text{color:var(--bad)}
.warn-text{color:var(--warn)}
.muted-text{color:var(--muted)}
.count{font-size:14px;background:var(--bad-bg);color:var(--bad);border-radius:999px;padding:1px 9px;vertical-align:middle}
.evidence li{margin:2px 0}
.episode{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:4px 14px 10px;margin:10px 0}
.episode ul{margin:4px 0;padding-left:20px}.episode li{margin:2px 0}
.evidence.for li::marker{content:'+ ';color:var(--good)}.evidence.against li::marker{content:'− ';color:var(--bad)}
.ev-head{margin:6px 0 0;color:var(--muted);font-size:12.5px}
.event-text{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:12px;margin-top:40px}
`;

/** The whole page. `assets` defaults to uPlot from node_modules (tests may pass their own). */
export function renderReportHtml(d: ReportData, assets: ChartAssets = loadChartAssets()): string {
  const s = d.summary;
  const allCharts = [...d.charts.capacity, ...d.charts.latency, ...d.charts.time, ...d.charts.arrivals, ...d.charts.gauges, ...d.charts.canaries, ...d.charts.client];
  const payload = { charts: allCharts, summary: s };
  const version = d.manifest?.versions.roundload ?? '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${cspMeta()}
<title>roundload · ${esc(s.run.name)} · ${esc(s.run.status)}</title>
${chartStyles(assets)}
<style>${CSS}</style>
</head>
<body>
<main>
${headerSection(d)}
${verdictBar(s)}
${totalsSection(s)}
${capacitySection(d)}
${latencySection(d)}
${timeSection(d)}
${arrivalsSection(d)}
${replaySection(s)}
${gaugesSection(d)}
${hangsSection(d)}
${errorsSection(s)}
${diagnosisSection(d)}
${thresholdsSection(s)}
${clientSection(d)}
${eventsSection(d)}
<footer>report.html generated ${esc(fmtTime(d.generated_at))} by roundload ${esc(version)} · self-contained: charts drawn with uPlot (MIT), inlined; the data is in the <code>report-data</code> script element.</footer>
</main>
${chartScripts(payload, assets)}
</body>
</html>
`;
}
