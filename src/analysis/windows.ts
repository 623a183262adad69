// Figures per fixed time window of a run (e.g. every 10 s): the unit of drift over a night and of
// resampling in A/B statistics. Output tokens are spread evenly over each request's decode span, so a
// long stream counts in every window it produced tokens in, not just the one it ended in.
// `window_s: auto` picks the window from the run's planned length, or re-bins 1 s windows at the end.
import { parseDurationMs } from '../config/index.js';
import { round3 } from '../util/index.js';

export interface WindowFigures {
  phase: string;
  /** Window start and end, seconds since the run started. */
  start_s: number;
  end_s: number;
  /** Requests that ended in this window, by outcome. */
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  /** Of `ok`, the answers with no content, reasoning or tool call (warning `empty_answer`), which the
   * `error_rate` limit counts as errors. Written only when there are any. */
  empty_answers?: number;
  output_tokens: number;
  output_tokens_per_s: number;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  e2e_p50_ms: number | null;
  e2e_p99_ms: number | null;
  /** Inside its phase's steady part: it starts after the phase's first request and its last warm-up
   * request were sent, and ends before the phase's first agent was done. Edge windows (ramp-up, warm-up,
   * ramp-down as agents finish) are false; A/B statistics resample only steady windows. Always written;
   * absent only in summaries from before it existed. */
  steady?: boolean;
}

interface Acc {
  requests: number;
  ok: number;
  errors: number;
  hangs: number;
  empty: number;
  tokens: number;
  ttft: number[];
  e2e: number[];
  /** Percentiles of a closed window (its latency arrays are freed then). */
  closed: { ttft50: number | null; ttft99: number | null; e2e50: number | null; e2e99: number | null } | null;
}

/** Cap on latencies kept per window for its percentiles (a reservoir would be overkill at window sizes). */
const MAX_LATENCIES_PER_WINDOW = 20_000;
/** A window this many behind the newest request end is closed: its latencies become its percentiles and
 * are freed, so a night of windows costs a few numbers each (memory stays flat over a soak). Records come
 * in end order (live, rebuilt from requests.jsonl, merged), so only a record ending two windows late would
 * miss its window's percentiles (it is still counted). */
const OPEN_WINDOWS = 2;

/** `window_s` as a workload gives it: seconds, or `auto`. */
export type WindowSetting = number | 'auto';

/** `window_s: auto` aims at this many windows at least. */
export const AUTO_MIN_WINDOWS = 20;
/** The window lengths `auto` picks from: 1 s at least, 10 s for long soaks. */
const AUTO_STEPS_S = [1, 2, 5, 10] as const;

/** The window length `auto` picks for a run of `lengthS` seconds: the largest of 1, 2, 5 or 10 s that still
 * gives at least 20 windows (1 s when even that gives fewer). */
export function autoWindowS(lengthS: number): number {
  let pick: number = AUTO_STEPS_S[0];
  for (const step of AUTO_STEPS_S) if (lengthS / step >= AUTO_MIN_WINDOWS) pick = step;
  return pick;
}

/** How a summary's windows were chosen (summary.json `window`). */
export interface WindowChoice {
  /** Length of every window in `windows`. */
  window_s: number;
  /** True when the workload said `window_s: auto`. */
  auto: boolean;
  /** Why this length, in words, e.g. `auto: 5 s for a planned 2 min run`, `window_s: 10 in the workload`. */
  basis: string;
}

/** The planned length of a run in seconds, from its workload (as validated, or as read back from run.json):
 * `duration`, the sum of `agents.stages`' durations, or a sweep's levels × `phase_duration`; null when it
 * runs rounds, not time. */
export function plannedLengthS(workload: unknown): number | null {
  if (typeof workload !== 'object' || workload === null) return null;
  const w = workload as { duration?: unknown; sweep?: unknown };
  const seconds = (v: unknown): number | null => {
    if (typeof v !== 'string' && typeof v !== 'number') return null;
    try {
      const ms = parseDurationMs(v);
      return ms > 0 ? ms / 1000 : null;
    } catch {
      return null;
    }
  };
  const stages = (w as { agents?: { stages?: unknown } }).agents?.stages;
  if (Array.isArray(stages) && stages.length > 0) {
    const each = stages.map((s: unknown) => seconds(typeof s === 'object' && s !== null ? (s as { duration?: unknown }).duration : null));
    return each.some((x) => x === null) ? null : each.reduce((a: number, b) => a + b!, 0);
  }
  const sweep = w.sweep as { agents?: unknown; phase_duration?: unknown } | null | undefined;
  if (typeof sweep === 'object' && sweep !== null) {
    const each = seconds(sweep.phase_duration);
    return each === null || !Array.isArray(sweep.agents) ? null : each * sweep.agents.length;
  }
  return seconds(w.duration);
}

/** `window_s` of a workload (as validated, or as read back from run.json; older runs wrote a number, and a
 * missing or unreadable one is the old default, 10). */
export function windowSettingOf(workload: unknown): WindowSetting {
  const v = typeof workload === 'object' && workload !== null ? (workload as { window_s?: unknown }).window_s : undefined;
  if (v === 'auto') return 'auto';
  return typeof v === 'number' && v > 0 ? v : 10;
}

/** What bounds a phase's steady part (see `WindowFigures.steady`). */
interface PhaseSpan {
  firstSendMs: number;
  lastWarmupSendMs: number;
  /** Last request end of each agent (records without an agent count as one). */
  lastEndByAgent: Map<number, number>;
  /** Last request sent (an open-loop phase is steady until then). */
  lastSendMs: number;
}

export class WindowBuilder {
  /** Length of the windows records are binned into while they come (1 s when re-binned at the end). */
  readonly windowMs: number;
  /** How the length was chosen; `rebin`: `auto` without a planned length, decided in `build`. */
  readonly #choice: { windowS: number; auto: boolean; basis: string } | { rebin: true };
  readonly #byPhase = new Map<string, Map<number, Acc>>();
  readonly #spans = new Map<string, PhaseSpan>();
  /** Windows not closed yet, and the newest window index a request ended in. */
  #open: { index: number; acc: Acc }[] = [];
  #newest = -Infinity;

  /**
   * @param window seconds, or `auto`: with `plannedS` (a `duration` run, a timed sweep) the window is known
   * from the start (`autoWindowS(plannedS)`); without it (a run of rounds, whose length nobody knows before it
   * ends) records are binned in 1 s windows, kept whole, and re-binned in `build` to `autoWindowS` of the
   * run's real length.
   * @param plannedS the run's planned length (`plannedLengthS`), for `auto`.
   */
  constructor(window: WindowSetting, plannedS: number | null = null) {
    if (window !== 'auto') {
      this.#choice = { windowS: window, auto: false, basis: `window_s: ${window} in the workload` };
    } else if (plannedS !== null && plannedS > 0) {
      const windowS = autoWindowS(plannedS);
      this.#choice = { windowS, auto: true, basis: `auto: ${autoPick(windowS, plannedS)} for a planned ${fmtS(plannedS)} run` };
    } else {
      this.#choice = { rebin: true };
    }
    this.windowMs = 'rebin' in this.#choice ? AUTO_STEPS_S[0] * 1000 : this.#choice.windowS * 1000;
  }

  #acc(phase: string, index: number): Acc {
    let windows = this.#byPhase.get(phase);
    if (windows === undefined) {
      windows = new Map();
      this.#byPhase.set(phase, windows);
    }
    let acc = windows.get(index);
    if (acc === undefined) {
      acc = { requests: 0, ok: 0, errors: 0, hangs: 0, empty: 0, tokens: 0, ttft: [], e2e: [], closed: null };
      windows.set(index, acc);
      if (!('rebin' in this.#choice)) this.#open.push({ index, acc });
    }
    return acc;
  }

  /** One finished request: send time and durations in ms since run start. */
  add(r: {
    phase: string;
    run_ms: number;
    e2e_ms: number;
    ttft_ms: number | null;
    status: string;
    completion_tokens: number | null;
    agent?: number;
    warmup?: boolean;
    warnings?: readonly string[];
  }): void {
    const endMs = r.run_ms + r.e2e_ms;
    let phaseSpan = this.#spans.get(r.phase);
    if (phaseSpan === undefined) {
      phaseSpan = { firstSendMs: r.run_ms, lastWarmupSendMs: -Infinity, lastEndByAgent: new Map(), lastSendMs: r.run_ms };
      this.#spans.set(r.phase, phaseSpan);
    }
    phaseSpan.firstSendMs = Math.min(phaseSpan.firstSendMs, r.run_ms);
    phaseSpan.lastSendMs = Math.max(phaseSpan.lastSendMs, r.run_ms);
    if (r.warmup === true) phaseSpan.lastWarmupSendMs = Math.max(phaseSpan.lastWarmupSendMs, r.run_ms);
    const agent = r.agent ?? -1;
    phaseSpan.lastEndByAgent.set(agent, Math.max(phaseSpan.lastEndByAgent.get(agent) ?? -Infinity, endMs));
    const endIndex = Math.floor(endMs / this.windowMs);
    // Re-binned windows keep their latencies to the end: a run of rounds is bounded by its planned requests.
    if (endIndex > this.#newest && !('rebin' in this.#choice)) {
      this.#newest = endIndex;
      this.#close(endIndex - OPEN_WINDOWS);
    }
    const acc = this.#acc(r.phase, endIndex);
    acc.requests += 1;
    if (r.status === 'ok') {
      acc.ok += 1;
      if (r.warnings?.includes('empty_answer') === true) acc.empty += 1;
      if (acc.closed === null && r.ttft_ms !== null && acc.ttft.length < MAX_LATENCIES_PER_WINDOW) acc.ttft.push(r.ttft_ms);
      if (acc.closed === null && acc.e2e.length < MAX_LATENCIES_PER_WINDOW) acc.e2e.push(r.e2e_ms);
    } else if (r.status === 'hang') acc.hangs += 1;
    else acc.errors += 1;
    const tokens = r.completion_tokens ?? 0;
    if (tokens <= 0) return;
    const from = r.run_ms + (r.ttft_ms ?? r.e2e_ms);
    const span = endMs - from;
    if (span <= 0) {
      this.#acc(r.phase, Math.floor(endMs / this.windowMs)).tokens += tokens;
      return;
    }
    // Spread over the windows the decode span crosses, in proportion to the overlap.
    for (let w = Math.floor(from / this.windowMs); w * this.windowMs < endMs; w += 1) {
      const overlap = Math.min(endMs, (w + 1) * this.windowMs) - Math.max(from, w * this.windowMs);
      if (overlap > 0) this.#acc(r.phase, w).tokens += (tokens * overlap) / span;
    }
  }

  /** Closes every open window up to `index` (all phases: they share the run's clock). */
  #close(index: number): void {
    const still: { index: number; acc: Acc }[] = [];
    for (const w of this.#open) {
      if (w.index > index) {
        still.push(w);
        continue;
      }
      const a = w.acc;
      a.closed = { ttft50: pct(a.ttft, 50), ttft99: pct(a.ttft, 99), e2e50: pct(a.e2e, 50), e2e99: pct(a.e2e, 99) };
      a.ttft = [];
      a.e2e = [];
    }
    this.#open = still;
  }

  /** The window length and why (re-binned windows: decided from `lengthS`, the run's real length). */
  choice(lengthS: number): WindowChoice {
    if (!('rebin' in this.#choice)) return { window_s: this.#choice.windowS, auto: this.#choice.auto, basis: this.#choice.basis };
    const last = this.#newest === -Infinity ? 0 : ((this.#newest + 1) * this.windowMs) / 1000;
    const length = lengthS > 0 ? lengthS : last;
    const windowS = autoWindowS(length);
    return { window_s: windowS, auto: true, basis: `auto: ${autoPick(windowS, length)} for a ${fmtS(length)} run (no duration: 1 s windows re-binned at the end)` };
  }

  /** Windows in time order. `lengthS`: the run's real length, which re-binned windows are chosen by.
   * `openLoop`: phases whose conversations arrived at a rate (`agents.arrival`): no agent is ever "done"
   * there, so their steady part runs from their first request sent to their last. */
  build(lengthS = 0, openLoop: ReadonlySet<string> = new Set()): WindowFigures[] {
    const windowS = this.choice(lengthS).window_s;
    const windowMs = windowS * 1000;
    const out: WindowFigures[] = [];
    for (const [phase, binned] of this.#byPhase) {
      const windows = windowMs === this.windowMs ? binned : rebin(binned, Math.round(windowMs / this.windowMs));
      const span = this.#spans.get(phase);
      const steadyFromMs = span === undefined ? Infinity : Math.max(span.firstSendMs, span.lastWarmupSendMs);
      const steadyUntilMs = span === undefined ? -Infinity : openLoop.has(phase) ? span.lastSendMs : Math.min(...span.lastEndByAgent.values());
      for (const [index, acc] of [...windows.entries()].sort(([a], [b]) => a - b)) {
        const startMs = index * windowMs;
        out.push({
          phase,
          start_s: round3(startMs / 1000),
          end_s: round3((startMs + windowMs) / 1000),
          requests: acc.requests,
          ok: acc.ok,
          errors: acc.errors,
          hangs: acc.hangs,
          ...(acc.empty > 0 ? { empty_answers: acc.empty } : {}),
          output_tokens: round3(acc.tokens),
          output_tokens_per_s: round3(acc.tokens / windowS),
          ttft_p50_ms: acc.closed?.ttft50 ?? pct(acc.ttft, 50),
          ttft_p99_ms: acc.closed?.ttft99 ?? pct(acc.ttft, 99),
          e2e_p50_ms: acc.closed?.e2e50 ?? pct(acc.e2e, 50),
          e2e_p99_ms: acc.closed?.e2e99 ?? pct(acc.e2e, 99),
          steady: startMs >= steadyFromMs && startMs + windowMs <= steadyUntilMs,
        });
      }
    }
    return out.sort((a, b) => a.start_s - b.start_s);
  }
}

/** Open windows merged `factor` at a time (window i goes to i / factor): counts and tokens add up, latencies
 * are pooled (each window's cap still applies to the pool). */
function rebin(windows: Map<number, Acc>, factor: number): Map<number, Acc> {
  const out = new Map<number, Acc>();
  for (const [index, acc] of windows) {
    const to = Math.floor(index / factor);
    let m = out.get(to);
    if (m === undefined) {
      m = { requests: 0, ok: 0, errors: 0, hangs: 0, empty: 0, tokens: 0, ttft: [], e2e: [], closed: null };
      out.set(to, m);
    }
    m.requests += acc.requests;
    m.ok += acc.ok;
    m.errors += acc.errors;
    m.hangs += acc.hangs;
    m.empty += acc.empty;
    m.tokens += acc.tokens;
    for (const v of acc.ttft) if (m.ttft.length < MAX_LATENCIES_PER_WINDOW) m.ttft.push(v);
    for (const v of acc.e2e) if (m.e2e.length < MAX_LATENCIES_PER_WINDOW) m.e2e.push(v);
  }
  return out;
}

/** `5 s`, or `1 s, the shortest` when the run is too short for 20 windows of it. */
function autoPick(windowS: number, lengthS: number): string {
  return `${windowS} s${lengthS / windowS < AUTO_MIN_WINDOWS ? ', the shortest,' : ''}`;
}

/** `25 s`, `2 min`, `8 h`: a run length in the basis sentence. */
function fmtS(s: number): string {
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600} h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** The `p`th percentile of a window's kept values (nearest rank), rounded to the µs; null when none. */
export function pct(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return round3(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}
