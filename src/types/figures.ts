// The figures roundload reports, each declared once: what it is, its unit, which way is worse, where it is shown
// (the terminal's and report.html's tables and charts, `history show`, compare.html), its columns in the history
// database, the names a trend follows it by, and how an A/B judges it. The terminal, report.html, the history,
// trend and compare/ab take their lists from here; test/types/figures.test.ts holds the history's latest schema
// and summary.json to it, test/types/tables.test.ts the docs. How a value is computed stays where it is computed,
// keyed by these names (a latency's name is its summary.json key). No runtime dependencies.

/** The percentiles a latency is kept at in the history (`ttft_p50_ms`…) and followed by a trend. */
export const PERCENTILES = ['p50', 'p90', 'p99'] as const;
export type Percentile = (typeof PERCENTILES)[number];

/** The headline families of an A/B's stopping rule (`until.figures` in the ab file), in the order it lists them. */
export const AB_FAMILIES = ['decode', 'ttft', 'itl', 'e2e', 'errors'] as const;
export type AbFamily = (typeof AB_FAMILIES)[number];

/** `relative`: an A/B's difference in % of A; `absolute`: B − A in the figure's unit (a rate: percentage points). */
export type DeltaKind = 'relative' | 'absolute';

/** A latency: percentiles in ms, over the requests that had it. */
interface LatencyFigure {
  kind: 'latency';
  /** In report.html's tables (`TTFT p50`); the terminal writes `terminal` (default the figure's name). */
  label: string;
  terminal?: string;
  unit: 'ms';
  worse: 'up';
  /** From what to what, in one sentence. */
  means: string;
  /** The per-round table (terminal and report.html) and the reasoning-and-decode table: the percentiles each shows. */
  rounds: readonly Percentile[];
  decode: readonly Percentile[];
  /** report.html's chart of its p50/p90/p99 by round (title and note), or null. */
  chart: { title: string; note: string | null } | null;
  /** Its columns in the history's `figures` table, `<name>_<p>_ms` (a trend can follow each); [] for none. */
  history: readonly Percentile[];
  /** What `history show` and `trend` without `--metric` show of them. */
  historyShow: readonly Percentile[];
  trendDefault: readonly Percentile[];
  /** The percentiles an A/B judges (`<name>_<p>_ms`, relative), each with its headline family or null. */
  ab: Partial<Record<Percentile, AbFamily | null>>;
  /** compare.html's chart of it window by window, each run a line. */
  abSeries?: AbSeries;
}

/** A chart of compare.html: a figure window by window (its id in the page, title and y axis). */
interface AbSeries {
  id: string;
  title: string;
  yLabel: string;
}

/** A single number per phase or run: a throughput, a rate, a count. */
interface ValueFigure {
  kind: 'value';
  /** Its name for people. */
  label: string;
  unit: 'tok/s' | '%' | 'count';
  worse: 'up' | 'down';
  means: string;
  /** Where the terminal and report.html show it, in words (docs/results.md's figures table). */
  shown: string;
  /** Its column in the history's `figures` table, or null. */
  history: string | null;
  /** Its name for `trend --metric`, and whether a trend shows it by default; null when no trend follows it. */
  trend: { name: string; default: boolean } | null;
  /** How an A/B judges it: its name in compare.json, its label, its delta and its headline family; or null. */
  ab: { figure: string; label: string; kind: DeltaKind; family: AbFamily | null } | null;
  abSeries?: AbSeries;
}

type FigureInfo = LatencyFigure | ValueFigure;

/**
 * Every figure, in the order the tables, the history, trends and A/Bs list them (a latency's name is also its
 * key in summary.json's phases and rounds, and its histograms' metric).
 */
export const FIGURES = {
  output_tokens_per_s: {
    kind: 'value',
    label: 'output tok/s',
    unit: 'tok/s',
    worse: 'down',
    means: 'output tokens per second of the phase (an A/B: the mean of its steady windows)',
    shown: 'the `requests` line; report.html: totals, stages, throughput over time',
    history: 'output_tokens_per_s',
    trend: { name: 'output_tok_s', default: true },
    ab: { figure: 'decode_tokens_per_s', label: 'decode tok/s', kind: 'relative', family: 'decode' },
    abSeries: { id: 'tokens', title: 'Decode tokens/s per window', yLabel: 'output tokens/s' },
  },
  stream_tokens_per_s: {
    kind: 'value',
    label: 'tok/s/stream',
    unit: 'tok/s',
    worse: 'down',
    means: 'the decode speed of one stream: (completion tokens − 1) ÷ (last token − first token), its mean',
    shown: 'the per-round table (`tok/s/stream`)',
    history: 'stream_tokens_per_s',
    trend: { name: 'stream_tok_s', default: true },
    ab: null,
  },
  reasoning: {
    kind: 'latency',
    label: 'reasoning',
    terminal: 'reason',
    unit: 'ms',
    worse: 'up',
    means: 'first → last reasoning token, over ok answers that reasoned',
    rounds: [],
    decode: ['p50'],
    chart: null,
    history: [],
    historyShow: [],
    trendDefault: [],
    ab: {},
  },
  ttft: {
    kind: 'latency',
    label: 'TTFT',
    unit: 'ms',
    worse: 'up',
    means: 'send → first token of any kind, reasoning included',
    rounds: ['p50', 'p99'],
    decode: ['p50'],
    chart: { title: 'TTFT', note: "send → first token of any kind, reasoning included (SGLang's time_to_first_token)" },
    history: ['p50', 'p90', 'p99'],
    historyShow: ['p50', 'p99'],
    trendDefault: ['p50', 'p99'],
    ab: { p50: 'ttft', p99: null },
    abSeries: { id: 'ttft', title: 'TTFT p50 per window', yLabel: 'ms' },
  },
  ttfc: {
    kind: 'latency',
    label: 'TTFC',
    unit: 'ms',
    worse: 'up',
    means: 'send → first content or tool-call token, reasoning left out',
    rounds: [],
    decode: ['p50', 'p99'],
    chart: { title: 'TTFC (first content)', note: "send → first content or tool-call token: reasoning left out (bench_serving's chat TTFT)" },
    history: ['p50', 'p90', 'p99'],
    historyShow: ['p99'],
    trendDefault: ['p99'],
    ab: { p50: null, p99: null },
  },
  itl: {
    kind: 'latency',
    label: 'ITL',
    unit: 'ms',
    worse: 'up',
    means: "gaps between streamed token events (an A/B: a request's own p50 or p99 gap, its median over requests)",
    rounds: ['p50', 'p99'],
    decode: ['p50'],
    chart: { title: 'ITL', note: 'gaps between streamed events as the client saw them (an event may carry several tokens)' },
    history: ['p50', 'p90', 'p99'],
    historyShow: ['p50', 'p99'],
    trendDefault: ['p50', 'p99'],
    ab: { p50: 'itl', p99: null },
  },
  tpot: {
    kind: 'latency',
    label: 'TPOT',
    unit: 'ms',
    worse: 'up',
    means: '(e2e − ttft) ÷ (completion tokens − 1), per request',
    rounds: [],
    decode: ['p50', 'p99'],
    chart: { title: 'TPOT', note: "(e2e − ttft) ÷ (completion tokens − 1) per request: the bench scripts' TPOT, per token" },
    history: ['p50', 'p90', 'p99'],
    historyShow: [],
    trendDefault: ['p50'],
    ab: { p50: null, p99: null },
  },
  e2e: {
    kind: 'latency',
    label: 'e2e',
    unit: 'ms',
    worse: 'up',
    means: 'send → end of the stream',
    rounds: ['p50', 'p99'],
    decode: [],
    chart: { title: 'end to end', note: null },
    history: ['p50', 'p90', 'p99'],
    historyShow: ['p50', 'p99'],
    trendDefault: ['p50', 'p99'],
    ab: { p50: 'e2e', p99: null },
    abSeries: { id: 'e2e', title: 'End-to-end p50 per window', yLabel: 'ms' },
  },
  error_rate: {
    kind: 'value',
    label: 'errors+hangs %',
    unit: '%',
    worse: 'up',
    means: 'failed requests in % of those sent (an A/B: errors and hangs, warm-up included; a trend: errors)',
    shown: 'errors and hangs counted on the `requests` line; the `error_rate` threshold',
    history: null,
    trend: { name: 'error_rate', default: true },
    ab: { figure: 'error_rate', label: 'errors+hangs %', kind: 'absolute', family: 'errors' },
  },
  hangs: {
    kind: 'value',
    label: 'hangs',
    unit: 'count',
    worse: 'up',
    means: 'requests the watchdog declared hung',
    shown: 'the per-round table (`hang`), the `hangs` line',
    history: 'hangs',
    trend: { name: 'hangs', default: true },
    ab: null,
  },
} as const satisfies Record<string, FigureInfo>;

export type FigureName = keyof typeof FIGURES;
type Figures = typeof FIGURES;

/** The latency figures, in order: each one's name is its key in summary.json's phases and rounds. */
export type LatencyFigureName = { [K in FigureName]: Figures[K]['kind'] extends 'latency' ? K : never }[FigureName];

const NAMES = Object.keys(FIGURES) as FigureName[];
export const LATENCY_FIGURES = NAMES.filter((n): n is LatencyFigureName => FIGURES[n].kind === 'latency');

/** A latency percentile's history column: `ttft_p99_ms`. */
export function latencyColumn(figure: LatencyFigureName, p: Percentile): `${LatencyFigureName}_${Percentile}_ms` {
  return `${figure}_${p}_ms`;
}

/** The figures' columns in the history's `figures` table, in order. */
export const HISTORY_FIGURE_COLUMNS: readonly string[] = NAMES.flatMap((n) => {
  const f: FigureInfo = FIGURES[n];
  if (f.kind === 'value') return f.history === null ? [] : [f.history];
  return f.history.map((p) => latencyColumn(n as LatencyFigureName, p));
});

/** The names an A/B judges a figure by: `ttft_p50_ms` for a latency's percentile, the declared one otherwise. */
type AbNameOf<K extends FigureName> = Figures[K] extends { kind: 'latency'; ab: infer A } ? `${K}_${keyof A & string}_ms` : Figures[K] extends { ab: { figure: infer N } } ? N : never;
export type AbFigureName = { [K in FigureName]: AbNameOf<K> }[FigureName];

/** One figure an A/B judges, as compare needs it. */
export interface AbFigureInfo {
  figure: AbFigureName;
  /** `decode tok/s`, `ttft p99 ms`. */
  label: string;
  betterWhen: 'higher' | 'lower';
  kind: DeltaKind;
  family: AbFamily | null;
}

/** The figures an A/B judges, in the order compare's tables, compare.json and the stopping rule list them. */
export const AB_FIGURE_LIST: readonly AbFigureInfo[] = NAMES.flatMap((n): AbFigureInfo[] => {
  const f: FigureInfo = FIGURES[n];
  const betterWhen = f.worse === 'up' ? 'lower' : 'higher';
  if (f.kind === 'value') return f.ab === null ? [] : [{ figure: f.ab.figure as AbFigureName, label: f.ab.label, betterWhen, kind: f.ab.kind, family: f.ab.family }];
  return (Object.entries(f.ab) as [Percentile, AbFamily | null][]).map(([p, family]) => ({
    figure: latencyColumn(n as LatencyFigureName, p) as AbFigureName,
    label: `${n} ${p} ms`,
    betterWhen,
    kind: 'relative',
    family,
  }));
});

/** Every headline family is some figure's: one left without a figure does not compile. */
type FamilyOf<K extends FigureName> = Figures[K] extends { kind: 'latency'; ab: infer A } ? A[keyof A] : Figures[K] extends { ab: { family: infer F } } ? F : never;
type UnclaimedFamily = Exclude<AbFamily, { [K in FigureName]: FamilyOf<K> }[FigureName]>;
const everyFamilyClaimed: [UnclaimedFamily] extends [never] ? true : UnclaimedFamily = true;
void everyFamilyClaimed;

/** A trend's name of a figure: `ttft_p99`, `output_tok_s`. */
export interface TrendFigureInfo {
  name: string;
  figure: FigureName;
  unit: 'ms' | 'tok/s' | '%' | 'count';
  worse: 'up' | 'down';
  /** The history column it reads (a latency: always; a value figure: its column, or null when computed). */
  column: string | null;
  default: boolean;
}

/** The figures a trend follows that have no history column of their own (trend computes them from the row). */
export type ComputedTrendFigureName = { [K in FigureName]: Figures[K] extends { kind: 'value'; history: null; trend: { name: string } } ? K : never }[FigureName];

/** The figures a trend can follow: every latency column of the history (p50/p90/p99), then the value figures. */
export const TREND_FIGURES: readonly TrendFigureInfo[] = [
  ...LATENCY_FIGURES.flatMap((n) => {
    const f: LatencyFigure = FIGURES[n];
    return f.history.map((p) => ({ name: `${n}_${p}`, figure: n, unit: f.unit, worse: f.worse, column: latencyColumn(n, p), default: f.trendDefault.includes(p) }));
  }),
  ...NAMES.flatMap((n): TrendFigureInfo[] => {
    const f: FigureInfo = FIGURES[n];
    return f.kind === 'value' && f.trend !== null ? [{ name: f.trend.name, figure: n, unit: f.unit, worse: f.worse, column: f.history, default: f.trend.default }] : [];
  }),
];

/** Where a latency's percentiles are shown in a table: `rounds` (the per-round table) or `decode`. */
export type LatencyTable = 'rounds' | 'decode';

/** The latency cells of a table, in order: which figure and percentile each is, and its heading (`label`:
 * report.html's, `terminal`: the terminal's). */
export function tableColumns(table: LatencyTable): readonly TableColumn[] {
  return TABLE_COLUMNS[table];
}

interface TableColumn {
  figure: LatencyFigureName;
  p: Percentile;
  label: string;
  terminal: string;
}

function columnsOf(table: LatencyTable): readonly TableColumn[] {
  return LATENCY_FIGURES.flatMap((n) => {
    const f: LatencyFigure = FIGURES[n];
    return f[table].map((p) => ({ figure: n, p, label: `${f.label} ${p}`, terminal: `${f.terminal ?? n} ${p}` }));
  });
}

/** Built once: every row of both tables asks for them. */
const TABLE_COLUMNS: Readonly<Record<LatencyTable, readonly TableColumn[]>> = { rounds: columnsOf('rounds'), decode: columnsOf('decode') };

/** The latencies report.html charts by round, with the chart's title and note. */
export const ROUND_CHARTS: readonly { figure: LatencyFigureName; title: string; note: string | null }[] = LATENCY_FIGURES.flatMap((n) => {
  const chart = (FIGURES[n] as LatencyFigure).chart;
  return chart === null ? [] : [{ figure: n, ...chart }];
});

/** The figures compare.html charts window by window. */
export type AbSeriesFigureName = { [K in FigureName]: Figures[K] extends { abSeries: AbSeries } ? K : never }[FigureName];

/** compare.html's charts of the figures window by window, in order. */
export const AB_SERIES: readonly (AbSeries & { figure: AbSeriesFigureName })[] = NAMES.flatMap((n) => {
  const f: FigureInfo = FIGURES[n];
  return f.abSeries === undefined ? [] : [{ figure: n as AbSeriesFigureName, ...f.abSeries }];
});

/** The history columns `history show` prints per phase and round. */
export const HISTORY_SHOW_COLUMNS: readonly string[] = LATENCY_FIGURES.flatMap((n) => (FIGURES[n] as LatencyFigure).historyShow.map((p) => latencyColumn(n, p)));
