// The `thresholds:` verdict: pure limits over a run's figures (and, with `per_window`, over each time
// window), one result per limit with a sentence for people and JUnit, plus one check that no setting turns
// off (a run with no ok request fails). Any failed result means exit code 1.
import type { Percentiles } from '../metrics/index.js';
import type { WindowFigures } from './windows.js';

/** The limits, as in the workload's `thresholds:` section (`null`: not checked). */
export interface ThresholdLimits {
  hangs: number | null;
  error_rate: number | null;
  ttft_p99_ms: number | null;
  /** Time to first content (or tool call) p99. Absent in workloads from before it existed (not checked). */
  ttfc_p99_ms?: number | null;
  itl_p99_ms: number | null;
  e2e_p99_ms: number | null;
  decode_tokens_per_s_min: number | null;
  /** Highest share of judged streams that arrived whole (`buffered_stream`); absent in older run.json files. */
  buffered_streams?: number | null;
  /** Highest share of ok answers with a warning: one share for any, or one per warning class. Absent in
   * workloads from before it existed (not checked). */
  answer_warnings?: number | Record<string, number> | null;
  per_window: boolean;
}

/** One threshold checked at the end of a run. Mirrors `ThresholdResult` of summary.json. */
export interface ThresholdVerdict {
  name: string;
  limit: number;
  actual: number;
  ok: boolean;
  message: string;
  /** True on the check no workload can turn off (`ok_requests`). Absent on the workload's own limits. */
  always_on?: true;
  /** True when `actual` is, in part, the client's estimate (token counts of requests without a usage chunk). */
  estimated?: true;
}

/** The always-on check: a run with no ok request failed, whatever its thresholds say. */
export const OK_REQUESTS_CHECK = 'ok_requests';

/** What the limits are checked against: the whole run's figures and its windows. */
export interface ThresholdInput {
  requests: number;
  /** Requests that ended ok (warm-up ones too). @default requests − errors − hangs */
  ok?: number;
  errors: number;
  hangs: number;
  /** Of `errors`, those the run itself caused by stopping (class `aborted`): not the server's, so left out of
   * the error rate. @default 0 */
  aborted?: number;
  /** Errors by class, for the sentences. @default {} */
  errors_by_class?: Record<string, number>;
  output_tokens_per_s: number;
  /** Requests counted in `output_tokens_per_s` whose token counts are estimated (no usage chunk). @default 0 */
  tokens_estimated?: number;
  /** Over all phases and rounds. */
  ttft: Percentiles;
  /** @default no samples (a `ttfc_p99_ms` limit then fails: nothing was measured) */
  ttfc?: Percentiles;
  itl: Percentiles;
  e2e: Percentiles;
  /** Ok answers with no content, no reasoning and no tool call (warning `empty_answer`): the error rate counts
   * them as errors, since a harness gets nothing from them. @default 0 */
  empty_answers?: number;
  /** Ok answers judged by the answer checks, those with any warning, and the count per warning class. @default none */
  answers?: { ok: number; warned: number; by_class: Record<string, number> };
  windows: readonly WindowFigures[];
  /** Streams judged for buffering and those that arrived whole (the diagnosis's figures). @default none */
  buffering?: { judged: number; buffered: number };
}

/** The default limits: a hang fails the run, and so do errors (empty answers counted as errors) on more than
 * 1% of the requests. */
export const DEFAULT_THRESHOLDS: ThresholdLimits = {
  hangs: 0,
  error_rate: 0.01,
  ttft_p99_ms: null,
  ttfc_p99_ms: null,
  itl_p99_ms: null,
  e2e_p99_ms: null,
  decode_tokens_per_s_min: null,
  buffered_streams: null,
  answer_warnings: null,
  per_window: false,
};

type LatencyKey = 'ttft_p99_ms' | 'ttfc_p99_ms' | 'itl_p99_ms' | 'e2e_p99_ms';
const LATENCY: readonly { key: LatencyKey; metric: 'ttft' | 'ttfc' | 'itl' | 'e2e'; label: string }[] = [
  { key: 'ttft_p99_ms', metric: 'ttft', label: 'ttft p99' },
  { key: 'ttfc_p99_ms', metric: 'ttfc', label: 'ttfc p99' },
  { key: 'itl_p99_ms', metric: 'itl', label: 'itl p99' },
  { key: 'e2e_p99_ms', metric: 'e2e', label: 'e2e p99' },
];

/** Checks the always-on check, then every limit that is set. `ok` is true when all pass. */
export function evaluateThresholds(limits: ThresholdLimits, input: ThresholdInput): { ok: boolean; results: ThresholdVerdict[] } {
  const results: ThresholdVerdict[] = [okRequestsCheck(input)];
  if (limits.hangs !== null) {
    const ok = input.hangs <= limits.hangs;
    results.push({ name: 'hangs', limit: limits.hangs, actual: input.hangs, ok, message: `${input.hangs} hung request${input.hangs === 1 ? '' : 's'} ${ok ? '≤' : '>'} limit ${limits.hangs}` });
  }
  if (limits.error_rate !== null) {
    const aborted = input.aborted ?? 0;
    const counted = input.requests - aborted;
    const empty = input.empty_answers ?? 0;
    const errors = input.errors - aborted + empty;
    const rate = counted <= 0 ? 0 : errors / counted;
    const ok = rate <= limits.error_rate;
    const emptyNote = empty > 0 ? `, ${empty} of them empty answers with no content, reasoning or tool call` : '';
    const left = `${emptyNote}${aborted > 0 ? `; ${aborted} aborted by the run's stop not counted` : ''}`;
    results.push({
      name: 'error_rate',
      limit: limits.error_rate,
      actual: round6(rate),
      ok,
      message: `errors on ${pct(rate)} of requests (${errors} of ${counted}${left}; hangs are checked by \`hangs\`) ${ok ? '≤' : '>'} limit ${pct(limits.error_rate)}`,
    });
  }
  for (const { key, metric, label } of LATENCY) {
    const limit = limits[key] ?? null;
    if (limit === null) continue;
    const p = input[metric] ?? NO_SAMPLES;
    if (p.count === 0) {
      // Nothing measured cannot pass a latency limit: a run where every request failed must not look fast.
      results.push({ name: key, limit, actual: 0, ok: false, message: `${label}: no ${metric} was measured (no successful request), limit ${limit} ms` });
      continue;
    }
    const ok = p.p99_ms <= limit;
    results.push({ name: key, limit, actual: p.p99_ms, ok, message: `${label} ${ms(p.p99_ms)} ${ok ? '≤' : '>'} limit ${ms(limit)} (${p.count} samples)` });
  }
  if (limits.decode_tokens_per_s_min !== null) {
    const limit = limits.decode_tokens_per_s_min;
    const actual = input.output_tokens_per_s;
    const ok = actual >= limit;
    const estimated = (input.tokens_estimated ?? 0) > 0;
    const note = estimated ? ` (estimated: ${input.tokens_estimated} requests had no usage chunk; their tokens were counted from the text, 4 characters a token)` : '';
    results.push({
      name: 'decode_tokens_per_s_min',
      limit,
      actual,
      ok,
      message: `output ${actual.toFixed(1)} tokens/s ${ok ? '≥' : '<'} minimum ${limit} tokens/s${note}`,
      ...(estimated ? { estimated: true as const } : {}),
    });
  }
  const bufferedLimit = limits.buffered_streams ?? null;
  if (bufferedLimit !== null) {
    const b = input.buffering ?? { judged: 0, buffered: 0 };
    const share = b.judged === 0 ? 0 : b.buffered / b.judged;
    const ok = share <= bufferedLimit;
    results.push({
      name: 'buffered_streams',
      limit: bufferedLimit,
      actual: round6(share),
      ok,
      message: `${b.buffered} of ${b.judged} streams arrived whole (${pct(share)}) ${ok ? '≤' : '>'} limit ${pct(bufferedLimit)}: ${ok ? 'the path streams' : "the path buffers streams, so TTFT and ITL are the proxy's"}`,
    });
  }
  if (limits.answer_warnings !== undefined && limits.answer_warnings !== null) results.push(...answerWarnings(limits.answer_warnings, input.answers ?? { ok: 0, warned: 0, by_class: {} }));
  if (limits.per_window) results.push(...perWindow(limits, input.windows, (input.tokens_estimated ?? 0) > 0));
  return { ok: results.every((r) => r.ok), results };
}

const NO_SAMPLES: Percentiles = { count: 0, p50_ms: 0, p90_ms: 0, p99_ms: 0, max_ms: 0, mean_ms: 0 };

/** `answer_warnings`: the share of ok answers with any warning, or with each listed class. A run with no ok
 * answer has nothing to judge here (the always-on `ok_requests` check fails it already). */
function answerWarnings(limits: number | Record<string, number>, answers: { ok: number; warned: number; by_class: Record<string, number> }): ThresholdVerdict[] {
  const checks: [name: string, what: string, count: number, limit: number][] =
    typeof limits === 'number'
      ? [['answer_warnings', 'a warning', answers.warned, limits]]
      : Object.entries(limits).map(([cls, limit]) => [`answer_warnings.${cls}`, cls, answers.by_class[cls] ?? 0, limit]);
  return checks.map(([name, what, count, limit]) => {
    const share = answers.ok === 0 ? 0 : count / answers.ok;
    const ok = share <= limit;
    return { name, limit, actual: round6(share), ok, message: `${what} on ${pct(share)} of ok answers (${count} of ${answers.ok}) ${ok ? '≤' : '>'} limit ${pct(limit)}` };
  });
}

/** The check no setting turns off: at least one request must have ended ok. */
function okRequestsCheck(input: ThresholdInput): ThresholdVerdict {
  const ok = input.ok ?? input.requests - input.errors - input.hangs;
  const base = { name: OK_REQUESTS_CHECK, limit: 1, actual: ok, ok: ok >= 1, always_on: true as const };
  if (ok >= 1) return { ...base, message: `${ok} of ${input.requests} requests ended ok (at least 1 must)` };
  if (input.requests === 0) return { ...base, message: 'no request was sent, so none ended ok' };
  const classes = Object.entries(input.errors_by_class ?? {})
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const parts = [input.errors > 0 ? `${input.errors} ended in error${classes === '' ? '' : ` (${classes})`}` : null, input.hangs > 0 ? `${input.hangs} hung` : null].filter((x) => x !== null);
  return { ...base, message: `no request ended ok: of ${input.requests}, ${parts.join(' and ')}` };
}

interface WindowCheck {
  name: string;
  limit: number;
  /** The window's figure, or null when it has none to check (no request ended there, or it is partial). */
  value: (w: WindowFigures, last: boolean) => number | null;
  /** Higher is worse (a maximum), or lower is worse (a minimum). */
  worse: 'higher' | 'lower';
  show: (v: number) => string;
  /** The figure is in part the client's estimate. */
  estimated?: boolean;
}

/** One result per limit over all windows: how many windows failed and the worst one. ITL has no per-window
 * figure, and the hang count is already a whole-run limit, so those two are checked over the run only. */
function perWindow(limits: ThresholdLimits, windows: readonly WindowFigures[], tokensEstimated: boolean): ThresholdVerdict[] {
  const checks: WindowCheck[] = [];
  if (limits.error_rate !== null) {
    checks.push({ name: 'error_rate', limit: limits.error_rate, value: (w) => (w.requests === 0 ? null : (w.errors + (w.empty_answers ?? 0)) / w.requests), worse: 'higher', show: pct });
  }
  if (limits.ttft_p99_ms !== null) checks.push({ name: 'ttft_p99_ms', limit: limits.ttft_p99_ms, value: (w) => w.ttft_p99_ms, worse: 'higher', show: ms });
  if (limits.e2e_p99_ms !== null) checks.push({ name: 'e2e_p99_ms', limit: limits.e2e_p99_ms, value: (w) => w.e2e_p99_ms, worse: 'higher', show: ms });
  if (limits.decode_tokens_per_s_min !== null) {
    // A phase's last window is cut short by the end of the run: its rate is not comparable, so it is skipped.
    checks.push({
      name: 'decode_tokens_per_s_min',
      limit: limits.decode_tokens_per_s_min,
      value: (w, last) => (last ? null : w.output_tokens_per_s),
      worse: 'lower',
      show: (v) => `${v.toFixed(1)} tokens/s`,
      estimated: tokensEstimated,
    });
  }
  const lastOfPhase = new Map<string, WindowFigures>();
  for (const w of windows) {
    const seen = lastOfPhase.get(w.phase);
    if (seen === undefined || w.start_s > seen.start_s) lastOfPhase.set(w.phase, w);
  }
  return checks.map((c) => {
    let checked = 0;
    let failed = 0;
    let worst: { w: WindowFigures; v: number } | null = null;
    for (const w of windows) {
      const v = c.value(w, lastOfPhase.get(w.phase) === w);
      if (v === null) continue;
      checked += 1;
      const bad = c.worse === 'higher' ? v > c.limit : v < c.limit;
      if (bad) failed += 1;
      if (worst === null || (c.worse === 'higher' ? v > worst.v : v < worst.v)) worst = { w, v };
    }
    const name = `${c.name} per window`;
    if (worst === null) return { name, limit: c.limit, actual: 0, ok: true, message: `${name}: no window to check` };
    const where = `${worst.w.start_s}–${worst.w.end_s} s${worst.w.phase === 'main' ? '' : ` of ${worst.w.phase}`}`;
    const ok = failed === 0;
    const est = c.estimated === true ? ' (estimated: some token counts came from the text, not usage chunks)' : '';
    const message = ok
      ? `all ${checked} windows within limit ${c.show(c.limit)}; worst ${c.show(worst.v)} at ${where}${est}`
      : `${failed} of ${checked} windows past limit ${c.show(c.limit)}; worst ${c.show(worst.v)} at ${where}${est}`;
    return { name, limit: c.limit, actual: round6(worst.v), ok, message, ...(c.estimated === true ? { estimated: true as const } : {}) };
  });
}

function pct(v: number): string {
  return `${(v * 100).toFixed(v !== 0 && v < 0.001 ? 3 : 2)}%`;
}

function ms(v: number): string {
  return `${Math.round(v * 10) / 10} ms`;
}

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}
