// Chart data for report.html, built purely from the summary, scrapes, hangs and client samples:
// per-round latency lines, throughput and latency over time, one chart per target × gauge family, client
// health. Long runs are reduced to an envelope (min and max per bucket) so a night stays a few MB.
import type { Summary } from '../analysis/index.js';
import { baseName, PERCENTILES, ROUND_CHARTS, type CanaryEvent, type ClientSampleEvent, type GaugeVerdict, type ScrapeEvent } from '../types/index.js';
import { round3 } from '../util/index.js';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** `y2`: the right-hand axis (a second unit). @default "y" */
  scale?: 'y' | 'y2';
  /** `bridge`: a null only means this series has no sample at that x (another series has one there), so
   * the line joins its neighbours across it. @default "gap" (a null breaks the line) */
  gaps?: 'gap' | 'bridge';
  /** `points`: a dot per value and no line (events such as failures). @default "line" */
  style?: 'line' | 'points';
  /** Draw a dot on every value of a line, however many. @default false (dots only on short series) */
  dots?: boolean;
  /** CSS colour; default: the chart palette by position. */
  color?: string;
}

/** The last x closes a window the run ended inside: its rate is over the time it covered, and it is drawn
 * as partial (its band shaded, the segment to it dashed), not as a drop. */
export interface PartialWindow {
  /** Where the partial window starts and where the run ended, on the x axis. */
  from_x: number;
  to_x: number;
  covered_s: number;
  window_s: number;
}

export interface ChartMarker {
  x: number;
  label: string;
  /** A marker with its own colour is labelled on the chart (the knee); default: red, unlabelled (hangs). */
  color?: string;
}

/** One chart: the browser draws it with uPlot into the element carrying `data-chart="<id>"`. */
export interface ChartSpec {
  id: string;
  title: string;
  /** `round`: x is the round number; `seconds`: seconds since the run started; `level`: a load level (conversations
   * per second, agents). */
  x_kind: 'round' | 'seconds' | 'level';
  x_label: string;
  y_label: string;
  y2_label: string | null;
  /** Drawn across the whole grid row (the one chart of a section). @default false */
  wide?: boolean;
  /** The left axis on a log scale (latencies from milliseconds to seconds). @default false */
  y_log?: boolean;
  x: number[];
  series: ChartSeries[];
  /** Vertical lines: hangs (at the time the watchdog fired, or on the round they hung in). */
  markers: ChartMarker[];
  /** A caveat shown under the chart (downsampled, series left out…). */
  note: string | null;
  /** What a marker is, in the key under the chart (`┆ 2 change points`). @default "hang marker" */
  marker_noun?: string;
  /** Set when the last point is a partial window (time charts). @default null */
  partial?: PartialWindow | null;
}

/** A forest plot: each figure's delta with its interval, one row per figure (compare.html). */
export interface ForestSpec {
  id: string;
  title: string;
  /** The axis: `% of A` or `percentage points`. */
  x_label: string;
  /** Appended to every number drawn: `%` or ` pt`. */
  unit: string;
  rows: ForestRow[];
  note: string | null;
  /** The axis's span, when it is fit to some rows only (compare.html: the decided ones): an interval running past
   * it is drawn to the edge as an arrow, its end written there. @default null (every row fits) */
  x_range?: [number, number] | null;
}

export interface ForestRow {
  label: string;
  /** null: no delta (a figure missing in an arm). */
  delta: number | null;
  /** null: no interval (too little data). */
  low: number | null;
  high: number | null;
  /** `better`, `worse`, `equivalent`, `inconclusive`, `insufficient data`: colours the row. */
  verdict: string;
}

/** Where a hang shows on the time charts. */
export interface HangMark {
  run_s: number;
  round: number;
  label: string;
}

/** Most points one chart carries; beyond it a min/max envelope per bucket keeps spikes and dips. */
export const MAX_CHART_POINTS = 2400;
/** Most series one gauge chart draws (the ones reaching the highest values are kept). */
export const MAX_SERIES_PER_CHART = 12;
const MAX_MARKERS = 300;

export function chartId(...parts: string[]): string {
  return parts.map((p) => p.replace(/[^A-Za-z0-9_.-]+/g, '_')).join('-');
}

/** Points a chart would draw: finite values over all series. */
export function chartPoints(spec: Pick<ChartSpec, 'series'>): number {
  let n = 0;
  for (const s of spec.series) for (const v of s.values) if (v !== null && Number.isFinite(v)) n += 1;
  return n;
}

/**
 * Reduces `x`/`ys` to at most `maxPoints` points: each bucket of consecutive points becomes two, the
 * minimum (at the bucket's first x) and the maximum (at its last x) of every series, so a one-sample dip
 * to 0 or a spike survives the reduction. Returns the input unchanged when it is small enough.
 */
export function envelope(x: number[], ys: (number | null)[][], maxPoints = MAX_CHART_POINTS): { x: number[]; ys: (number | null)[][]; reduced: boolean } {
  if (x.length <= maxPoints) return { x, ys, reduced: false };
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  const size = Math.ceil(x.length / buckets);
  const outX: number[] = [];
  const outYs: (number | null)[][] = ys.map(() => []);
  for (let start = 0; start < x.length; start += size) {
    const end = Math.min(x.length, start + size);
    outX.push(x[start]!);
    if (end - 1 > start) outX.push(x[end - 1]!);
    ys.forEach((values, si) => {
      let min: number | null = null;
      let max: number | null = null;
      for (let i = start; i < end; i += 1) {
        const v = values[i];
        if (v === null || v === undefined || !Number.isFinite(v)) continue;
        min = min === null ? v : Math.min(min, v);
        max = max === null ? v : Math.max(max, v);
      }
      outYs[si]!.push(min);
      if (end - 1 > start) outYs[si]!.push(max);
    });
  }
  return { x: outX, ys: outYs, reduced: true };
}

/** Each latency types/figures.ts charts (`ROUND_CHARTS`: TTFT, TTFC, ITL, TPOT, e2e), p50/p90/p99 over the round
 * number, one chart per figure (and phase, when several). */
export function latencyCharts(summary: Summary): ChartSpec[] {
  const out: ChartSpec[] = [];
  const several = summary.phases.length > 1;
  for (const phase of summary.phases) {
    if (phase.rounds.length === 0) continue;
    const markers = phase.rounds.filter((r) => r.hangs > 0).map((r) => ({ x: r.round, label: `${r.hangs} hung` }));
    for (const { figure: metric, title: name, note } of ROUND_CHARTS) {
      // Summaries from before ttfc and tpot existed have none: their charts are left out.
      const series: ChartSeries[] = PERCENTILES.map((label) => ({
        label,
        values: phase.rounds.map((r) => {
          const p = r[metric];
          return p === undefined || p.count === 0 ? null : p[`${label}_ms`];
        }),
      }));
      const spec = roundLatencySpec({
        id: several ? chartId('latency', metric, phase.phase) : chartId('latency', metric),
        title: `${name} by round${several ? ` · ${phase.phase}` : ''}`,
        rounds: phase.rounds.map((r) => r.round),
        series,
        markers,
        note,
      });
      if (chartPoints(spec) > 0) out.push(spec);
    }
  }
  return out;
}

interface WindowAgg {
  start_s: number;
  end_s: number;
  requests: number;
  ok: number;
  failed: number;
  tokens: number;
  best: Summary['windows'][number] | null;
}

/** Output tokens/s and finished requests/s per window, and the window latency percentiles, over time. */
export function timeCharts(summary: Summary, hangs: HangMark[]): ChartSpec[] {
  // Phases may share a window: their counts add up; latencies come from the busiest phase there.
  const byStart = new Map<number, WindowAgg>();
  for (const w of summary.windows) {
    let a = byStart.get(w.start_s);
    if (a === undefined) {
      a = { start_s: w.start_s, end_s: w.end_s, requests: 0, ok: 0, failed: 0, tokens: 0, best: null };
      byStart.set(w.start_s, a);
    }
    a.requests += w.requests;
    a.ok += w.ok;
    a.failed += w.errors + w.hangs;
    a.tokens += w.output_tokens;
    if (a.best === null || w.requests > a.best.requests) a.best = w;
  }
  const windows = [...byStart.values()].sort((a, b) => a.start_s - b.start_s);
  if (windows.length === 0) return [];
  // The last window ends with the run, not at its nominal end: its rates are over the time it covered,
  // and it is drawn as partial (a shorter window with fewer requests ending in it is not a collapse).
  const last = windows[windows.length - 1]!;
  const wallS = summary.run.wall_s;
  const windowS = round3(summary.windows[0]!.end_s - summary.windows[0]!.start_s);
  let partial: PartialWindow | null = null;
  if (wallS > last.start_s && wallS < last.end_s) {
    last.end_s = wallS;
    partial = { from_x: round3(last.start_s), to_x: round3(wallS), covered_s: round3(wallS - last.start_s), window_s: windowS };
  }
  const markers = hangMarkers(hangs);
  const lenS = (w: WindowAgg) => Math.max(0.001, w.end_s - w.start_s);
  const reducedNote = (reduced: boolean) => (reduced ? `; ${windows.length} windows reduced to their min/max envelope` : '');
  const rates = envelope(
    windows.map((w) => round3(w.end_s)),
    [windows.map((w) => round3(w.tokens / lenS(w))), windows.map((w) => round3(w.requests / lenS(w))), windows.map((w) => round3(w.failed / lenS(w)))],
  );
  const throughput = throughputSpec({
    id: 'throughput',
    title: 'Throughput over time',
    x_label: 's since start (window end)',
    x: rates.x,
    tokens: rates.ys[0]!,
    requests: rates.ys[1]!,
    failed: rates.ys[2]!,
    markers,
    note: `per ${windowS} s window${windows.length === 1 ? ' (one window: the run was shorter than window_s)' : ''}${partialNote(partial)}${reducedNote(rates.reduced)}`,
    partial: rates.reduced ? null : partial,
  });
  const lat = envelope(
    windows.map((w) => round3(w.end_s)),
    [windows.map((w) => w.best?.ttft_p50_ms ?? null), windows.map((w) => w.best?.ttft_p99_ms ?? null), windows.map((w) => w.best?.e2e_p50_ms ?? null), windows.map((w) => w.best?.e2e_p99_ms ?? null)],
  );
  const latency: ChartSpec = {
    id: 'latency-over-time',
    title: 'Latency over time',
    x_kind: 'seconds',
    x_label: 's since start (window end)',
    y_label: 'ms',
    y2_label: null,
    x: lat.x,
    series: [
      { label: 'TTFT p50', values: lat.ys[0]! },
      { label: 'TTFT p99', values: lat.ys[1]! },
      { label: 'e2e p50', values: lat.ys[2]! },
      { label: 'e2e p99', values: lat.ys[3]! },
    ],
    markers,
    note: `ok requests ending in each window${partialNote(partial)}${reducedNote(lat.reduced)}`,
    partial: lat.reduced ? null : partial,
  };
  return [throughput, latency].filter((c) => chartPoints(c) > 0);
}

/** Conversations started per second, conversations active (mean and most) and start lag p99, per window of
 * an open-loop run; stage boundaries as markers. Empty for a closed-loop run. */
export function arrivalCharts(summary: Summary): ChartSpec[] {
  const windows = summary.arrivals?.windows ?? [];
  if (windows.length === 0) return [];
  const x = windows.map((w) => round3(w.end_s));
  const e = envelope(x, [windows.map((w) => w.starts_per_s), windows.map((w) => w.active_mean), windows.map((w) => w.active_max), windows.map((w) => w.start_lag_p99_ms)]);
  const windowS = round3(windows[0]!.end_s - windows[0]!.start_s);
  // Where each stage began, in the note (the chart's markers are hangs).
  const staged = summary.phases.filter((p) => p.load !== undefined);
  const starts = staged.length > 1 ? `; stages start at ${staged.map((p) => `${round3(p.load!.start_ms / 1000)} s (${p.phase})`).join(', ')}` : '';
  const limit = summary.arrivals!.lag_limit_ms;
  const chart = arrivalsSpec({
    id: 'arrivals-over-time',
    title: 'Arrivals over time',
    x_label: 's since start (window end)',
    x: e.x,
    started: e.ys[0]!,
    active: [
      { label: 'active (mean)', values: e.ys[1]! },
      { label: 'active (most)', values: e.ys[2]! },
    ],
    lag: { label: 'start lag p99 ms', values: e.ys[3]! },
    note: `per ${windowS} s window; a stage whose start lag p99 passes its limit (one think time, ${limit} ms, or the mean gap between its arrivals when longer) is lagging${starts}${e.reduced ? `; ${windows.length} windows reduced to their min/max envelope` : ''}`,
  });
  return chartPoints(chart) > 0 ? [chart] : [];
}

// The charts report.html and the live dashboard both draw, built here once: each page gives its own data
// (the summary's windows, the live buckets) and gets the same chart.

/** Latency percentiles over the round number. */
export function roundLatencySpec(o: { id: string; title: string; rounds: number[]; series: ChartSeries[]; markers: ChartMarker[]; note: string | null }): ChartSpec {
  return { id: o.id, title: o.title, x_kind: 'round', x_label: 'round', y_label: 'ms', y2_label: null, x: o.rounds, series: o.series, markers: o.markers, note: o.note };
}

/** Output tokens/s (left) and finished requests and failures per second (right) over time. */
export function throughputSpec(o: {
  id: string;
  title: string;
  x_label: string;
  x: number[];
  tokens: (number | null)[];
  requests: (number | null)[];
  failed: (number | null)[];
  markers: ChartMarker[];
  note: string | null;
  partial: PartialWindow | null;
}): ChartSpec {
  return {
    id: o.id,
    title: o.title,
    x_kind: 'seconds',
    x_label: o.x_label,
    y_label: 'output tokens/s',
    y2_label: 'requests/s',
    x: o.x,
    series: [
      { label: 'output tokens/s', values: o.tokens },
      { label: 'requests finished/s', values: o.requests, scale: 'y2' },
      { label: 'errors + hangs/s', values: o.failed, scale: 'y2' },
    ],
    markers: o.markers,
    note: o.note,
    partial: o.partial,
  };
}

/** An open-loop run's conversations over time: started per second and active (left, conversations), start lag
 * (right, ms; bridged across buckets where none started). */
export function arrivalsSpec(o: { id: string; title: string; x_label: string; x: number[]; started: (number | null)[]; active: ChartSeries[]; lag: ChartSeries; note: string | null }): ChartSpec {
  return {
    id: o.id,
    title: o.title,
    x_kind: 'seconds',
    x_label: o.x_label,
    y_label: 'conversations',
    y2_label: 'start lag ms',
    x: o.x,
    series: [{ label: 'started/s', values: o.started }, ...o.active, { ...o.lag, scale: 'y2', gaps: 'bridge' }],
    markers: [],
    note: o.note,
  };
}

function partialNote(p: PartialWindow | null): string {
  return p === null ? '' : `; the last window is partial (the run ended ${p.covered_s} s into it): its rates are over those ${p.covered_s} s, drawn dashed`;
}

function hangMarkers(hangs: HangMark[]): ChartMarker[] {
  return hangs.slice(0, MAX_MARKERS).map((h) => ({ x: h.run_s, label: h.label }));
}

/** Event-loop delay and utilisation, and requests in flight, over the run (from client samples). */
export function clientCharts(samples: ClientSampleEvent[], hangs: HangMark[]): ChartSpec[] {
  if (samples.length === 0) return [];
  const sorted = [...samples].sort((a, b) => a.run_ms - b.run_ms);
  const x = sorted.map((s) => round3(s.run_ms / 1000));
  const markers = hangMarkers(hangs);
  const loop = envelope(x, [sorted.map((s) => s.loop_delay_p99_ms), sorted.map((s) => s.loop_delay_max_ms), sorted.map((s) => s.loop_utilization)]);
  const inflight = envelope(x, [sorted.map((s) => s.in_flight)]);
  const reducedNote = (reduced: boolean) => (reduced ? `${sorted.length} samples reduced to their min/max envelope` : null);
  const charts: ChartSpec[] = [
    {
      id: 'client-loop',
      title: 'Client event loop',
      x_kind: 'seconds',
      x_label: 's since start',
      y_label: 'delay ms',
      y2_label: 'utilisation',
      x: loop.x,
      series: [
        { label: 'loop delay p99 ms', values: loop.ys[0]! },
        { label: 'loop delay max ms', values: loop.ys[1]! },
        { label: 'utilisation', values: loop.ys[2]!, scale: 'y2' },
      ],
      markers,
      note: reducedNote(loop.reduced),
    },
    {
      id: 'in-flight',
      title: 'Requests in flight',
      x_kind: 'seconds',
      x_label: 's since start',
      y_label: 'requests',
      y2_label: null,
      x: inflight.x,
      series: [{ label: 'in flight', values: inflight.ys[0]! }],
      markers,
      note: reducedNote(inflight.reduced),
    },
  ];
  return charts.filter((c) => chartPoints(c) > 0);
}

/** `k="v",…` of a label set, keys in order: one series' identity, and how it is written. */
export function labelKey(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`)
    .join(',');
}

/** Label pairs with the same value in every label set. */
export function commonLabels(sets: Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = sets;
  if (first === undefined) return {};
  return Object.fromEntries(Object.entries(first).filter(([k, v]) => rest.every((r) => r[k] === v)));
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  return labelKey(a) === labelKey(b);
}

/** Counters are drawn as a per-second rate: their level says nothing, their slope is the flow. The
 * exposition's TYPE (a sample's `type`) decides; files without it fall back to the `_total` suffix. */
export function isCounterName(name: string, type?: 'gauge' | 'counter'): boolean {
  return type === undefined ? /_total$/.test(name) : type === 'counter';
}

interface SeriesAcc {
  labels: Record<string, string>;
  values: (number | null)[];
}

interface TargetAcc {
  x: number[];
  scrapes: number;
  failed: number;
  firstError: string | null;
  families: Map<string, { type: 'gauge' | 'counter' | undefined; series: Map<string, SeriesAcc> }>;
}

/** Scrape health per monitored target, for the gauges section. */
export interface TargetHealth {
  target: string;
  url: string;
  scrapes: number;
  failed: number;
  first_error: string | null;
}

/** Collects scrapes (in file order) into aligned series, one family at a time per target. */
export class GaugeSeriesBuilder {
  readonly #targets = new Map<string, TargetAcc & { url: string }>();

  add(s: ScrapeEvent): void {
    let t = this.#targets.get(s.target);
    if (t === undefined) {
      t = { x: [], scrapes: 0, failed: 0, firstError: null, families: new Map(), url: s.url };
      this.#targets.set(s.target, t);
    }
    const i = t.x.length;
    t.x.push(round3(s.run_ms / 1000));
    t.scrapes += 1;
    if (!s.ok) {
      t.failed += 1;
      t.firstError ??= s.error ?? 'failed';
    }
    for (const sample of s.ok ? s.samples : []) {
      if (!Number.isFinite(sample.value)) continue;
      let family = t.families.get(sample.name);
      if (family === undefined) {
        family = { type: sample.type, series: new Map() };
        t.families.set(sample.name, family);
      }
      family.type ??= sample.type;
      const key = labelKey(sample.labels);
      let series = family.series.get(key);
      if (series === undefined) {
        series = { labels: sample.labels, values: [] };
        family.series.set(key, series);
      }
      while (series.values.length < i) series.values.push(null);
      series.values[i] = sample.value;
    }
  }

  health(): TargetHealth[] {
    return [...this.#targets.entries()].map(([target, t]) => ({ target, url: t.url, scrapes: t.scrapes, failed: t.failed, first_error: t.firstError }));
  }

  /** One chart per target × family: a series per label set, hang markers, the verdicts in the title. */
  charts(verdicts: GaugeVerdict[], hangs: HangMark[]): ChartSpec[] {
    const out: { spec: ChartSpec; target: string; counter: boolean; rank: number; name: string }[] = [];
    const ids = new Set<string>();
    for (const [target, t] of this.#targets) {
      const order = [...t.x.keys()].sort((a, b) => t.x[a]! - t.x[b]!);
      const x = order.map((i) => t.x[i]!);
      for (const [name, family] of [...t.families.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        const counter = isCounterName(name, family.type);
        let series = [...family.series.values()].map((s) => {
          const raw = order.map((i) => s.values[i] ?? null);
          return { labels: s.labels, values: counter ? rate(x, raw) : raw };
        });
        const total = series.length;
        if (series.length > MAX_SERIES_PER_CHART) {
          const peak = (v: (number | null)[]) => v.reduce<number>((m, y) => (y !== null && y > m ? y : m), -Infinity);
          series = series.sort((a, b) => peak(b.values) - peak(a.values)).slice(0, MAX_SERIES_PER_CHART);
        }
        series.sort((a, b) => labelKey(a.labels).localeCompare(labelKey(b.labels)));
        const matched = series.map((s) => verdicts.find((v) => v.target === target && (v.name === name || baseName(v.name) === baseName(name)) && sameLabels(v.labels, s.labels)) ?? null);
        const reduced = envelope(
          x,
          series.map((s) => s.values),
        );
        let id = chartId('gauge', target, name);
        for (let k = 2; ids.has(id); k += 1) id = chartId('gauge', target, name, String(k));
        ids.add(id);
        const notes: string[] = [];
        if (reduced.reduced) notes.push(`${x.length} scrapes reduced to their min/max envelope`);
        if (total > series.length) notes.push(`${total - series.length} more label sets not drawn (the ${series.length} reaching the highest values are)`);
        if (t.failed > 0) notes.push(`${t.failed} of ${t.scrapes} scrapes of ${target} failed (gaps)`);
        // Labels every series shares (model_name, say) are said once, so each legend entry shows what differs.
        const common = commonLabels(series.map((s) => s.labels));
        if (Object.keys(common).length > 0) notes.unshift(labelKey(common));
        const anyVerdict = matched.some((v) => v !== null);
        const spec: ChartSpec = {
          id,
          title: `${target} · ${name}${counter ? ' (rate/s)' : ''} — ${counter && !anyVerdict ? 'flow counter' : verdictTitle(matched)}`,
          x_kind: 'seconds',
          x_label: 's since start',
          y_label: counter ? 'per s' : 'value',
          y2_label: null,
          x: reduced.x,
          series: series.map((s, i) => {
            const lk = labelKey(Object.fromEntries(Object.entries(s.labels).filter(([k]) => !(k in common))));
            const v = matched[i];
            const base = lk === '' ? (counter ? 'per s' : 'value') : `{${lk}}`;
            return { label: `${base}${v ? ` · ${v.verdict}` : ''}`, values: reduced.ys[i]! };
          }),
          markers: hangMarkers(hangs),
          note: notes.length === 0 ? null : notes.join('; '),
        };
        const rank = Math.min(...matched.map((v) => verdictRank(v?.verdict ?? '')));
        if (chartPoints(spec) > 0) out.push({ spec, target, counter, rank, name });
      }
    }
    // Per target: gauges before counters, the worst verdict first (a pinned gauge is what to look at).
    const targets = [...this.#targets.keys()];
    out.sort((a, b) => targets.indexOf(a.target) - targets.indexOf(b.target) || Number(a.counter) - Number(b.counter) || a.rank - b.rank || a.name.localeCompare(b.name));
    return out.map((o) => o.spec);
  }
}

function rate(x: number[], values: (number | null)[]): (number | null)[] {
  return values.map((v, i) => {
    if (i === 0) return null;
    const prev = values[i - 1];
    const dt = x[i]! - x[i - 1]!;
    if (v === null || prev === null || prev === undefined || dt <= 0 || v < prev) return null; // a reset or a gap
    return round3((v - prev) / dt);
  });
}

/** Worst first, so a title leads with what needs a look. */
const VERDICT_ORDER: readonly string[] = ['pinned', 'pinned_under_load', 'stale', 'insufficient', 'rotating', 'ratio', 'idle'];

/** A verdict's place, worst first (unknown ones last). */
export function verdictRank(k: string): number {
  const i = VERDICT_ORDER.indexOf(k);
  return i < 0 ? VERDICT_ORDER.length : i;
}

/** `rotating`, or `pinned ×1 · rotating ×3`, or `no verdict` when the summary has none for the series. */
export function verdictTitle(verdicts: (GaugeVerdict | null)[]): string {
  const counts = new Map<string, number>();
  for (const v of verdicts) if (v !== null) counts.set(v.verdict, (counts.get(v.verdict) ?? 0) + 1);
  if (counts.size === 0) return 'no verdict';
  if (counts.size === 1 && [...counts.values()][0] === verdicts.length) return [...counts.keys()][0]!;
  return (
    [...counts.entries()]
      .sort(([a], [b]) => verdictRank(a) - verdictRank(b))
      .map(([k, n]) => `${k} ×${n}`)
      .join(' · ') + (verdicts.some((v) => v === null) ? ' · no verdict for the rest' : '')
  );
}

/** `error_class` of a canary due on the grid but not sent (the leg's canaries were all still out). */
const NOT_SENT = 'not_sent';

/** Each leg's colour, and a darker one for its failures. */
const LEG_COLORS: Record<CanaryEvent['leg'], { ok: string; failed: string }> = {
  proxied: { ok: '#2563eb', failed: '#dc2626' },
  direct: { ok: '#d97706', failed: '#7c2d12' },
};

/**
 * Canary latency over time: each leg (proxied, direct) its own line through every one of its ok canaries,
 * bridged across the times only the other leg has a point (the legs share the x axis); a leg's failed
 * canaries are dots of their own at the time it took them to fail.
 */
export function canaryCharts(canaries: CanaryEvent[], hangs: HangMark[]): ChartSpec[] {
  if (canaries.length === 0) return [];
  const legs = (['proxied', 'direct'] as const).filter((l) => canaries.some((c) => c.leg === l));
  // One x per distinct send time (legs on one grid share their x), in order.
  const x = [...new Set(canaries.map((c) => round3(c.run_ms / 1000)))].sort((a, b) => a - b);
  const at = new Map(x.map((v, i) => [v, i]));
  const lines: { series: Omit<ChartSeries, 'values'>; values: (number | null)[] }[] = [];
  const dots: typeof lines = [];
  for (const leg of legs) {
    const ok: (number | null)[] = x.map(() => null);
    const failed: (number | null)[] = x.map(() => null);
    for (const c of canaries) {
      // A canary never sent (all the leg's canaries were still out) took no time to fail: no dot, the note counts it.
      if (c.leg !== leg || !Number.isFinite(c.latency_ms) || c.error_class === NOT_SENT) continue;
      (c.ok ? ok : failed)[at.get(round3(c.run_ms / 1000))!] = round3(c.latency_ms);
    }
    lines.push({ series: { label: `${leg} ms`, gaps: 'bridge', dots: true, color: LEG_COLORS[leg].ok }, values: ok });
    if (failed.some((v) => v !== null)) dots.push({ series: { label: `${leg} failed (ms to the failure)`, style: 'points', color: LEG_COLORS[leg].failed }, values: failed });
  }
  const columns = [...lines, ...dots];
  const reduced = envelope(
    x,
    columns.map((c) => c.values),
  );
  const notSent = canaries.filter((c) => c.error_class === NOT_SENT).length;
  const failedCount = canaries.filter((c) => !c.ok).length - notSent;
  const spec: ChartSpec = {
    id: 'canaries',
    title: 'Canaries: latency of the proxied path and the direct one',
    x_kind: 'seconds',
    x_label: 's since start',
    y_label: 'ms',
    y2_label: null,
    x: reduced.x,
    series: columns.map((c, i) => ({ ...c.series, values: reduced.ys[i]! })),
    markers: hangMarkers(hangs),
    note:
      [
        failedCount > 0 ? `${failedCount} failed canar${failedCount === 1 ? 'y' : 'ies'} drawn as dots at the time to the failure` : null,
        notSent > 0 ? `${notSent} not sent (every canary of the leg was still out), not drawn` : null,
        reduced.reduced ? `${canaries.length} canaries reduced to their min/max envelope` : null,
      ]
        .filter((n) => n !== null)
        .join('; ') || null,
  };
  return chartPoints(spec) > 0 ? [spec] : [];
}
