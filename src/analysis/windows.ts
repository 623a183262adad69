// Figures per fixed time window of a run (e.g. every 10 s): the unit of drift over a night and of
// resampling in A/B statistics. Output tokens are spread evenly over each request's decode span, so a
// long stream counts in every window it produced tokens in, not just the one it ended in.

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

/** What bounds a phase's steady part (see `WindowFigures.steady`). */
interface PhaseSpan {
  firstSendMs: number;
  lastWarmupSendMs: number;
  /** Last request end of each agent (records without an agent count as one). */
  lastEndByAgent: Map<number, number>;
}

export class WindowBuilder {
  readonly windowMs: number;
  readonly #byPhase = new Map<string, Map<number, Acc>>();
  readonly #spans = new Map<string, PhaseSpan>();
  /** Windows not closed yet, and the newest window index a request ended in. */
  #open: { index: number; acc: Acc }[] = [];
  #newest = -Infinity;

  constructor(windowS: number) {
    this.windowMs = windowS * 1000;
  }

  #acc(phase: string, index: number): Acc {
    let windows = this.#byPhase.get(phase);
    if (windows === undefined) {
      windows = new Map();
      this.#byPhase.set(phase, windows);
    }
    let acc = windows.get(index);
    if (acc === undefined) {
      acc = { requests: 0, ok: 0, errors: 0, hangs: 0, tokens: 0, ttft: [], e2e: [], closed: null };
      windows.set(index, acc);
      this.#open.push({ index, acc });
    }
    return acc;
  }

  /** One finished request: send time and durations in ms since run start. */
  add(r: { phase: string; run_ms: number; e2e_ms: number; ttft_ms: number | null; status: string; completion_tokens: number | null; agent?: number; warmup?: boolean }): void {
    const endMs = r.run_ms + r.e2e_ms;
    let phaseSpan = this.#spans.get(r.phase);
    if (phaseSpan === undefined) {
      phaseSpan = { firstSendMs: r.run_ms, lastWarmupSendMs: -Infinity, lastEndByAgent: new Map() };
      this.#spans.set(r.phase, phaseSpan);
    }
    phaseSpan.firstSendMs = Math.min(phaseSpan.firstSendMs, r.run_ms);
    if (r.warmup === true) phaseSpan.lastWarmupSendMs = Math.max(phaseSpan.lastWarmupSendMs, r.run_ms);
    const agent = r.agent ?? -1;
    phaseSpan.lastEndByAgent.set(agent, Math.max(phaseSpan.lastEndByAgent.get(agent) ?? -Infinity, endMs));
    const endIndex = Math.floor(endMs / this.windowMs);
    if (endIndex > this.#newest) {
      this.#newest = endIndex;
      this.#close(endIndex - OPEN_WINDOWS);
    }
    const acc = this.#acc(r.phase, endIndex);
    acc.requests += 1;
    if (r.status === 'ok') {
      acc.ok += 1;
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

  /** Windows in time order; the last, partial window of each phase is measured over its real length. */
  build(): WindowFigures[] {
    const out: WindowFigures[] = [];
    for (const [phase, windows] of this.#byPhase) {
      const span = this.#spans.get(phase);
      const steadyFromMs = span === undefined ? Infinity : Math.max(span.firstSendMs, span.lastWarmupSendMs);
      const steadyUntilMs = span === undefined ? -Infinity : Math.min(...span.lastEndByAgent.values());
      for (const [index, acc] of [...windows.entries()].sort(([a], [b]) => a - b)) {
        const startMs = index * this.windowMs;
        out.push({
          phase,
          start_s: round3(startMs / 1000),
          end_s: round3((startMs + this.windowMs) / 1000),
          requests: acc.requests,
          ok: acc.ok,
          errors: acc.errors,
          hangs: acc.hangs,
          output_tokens: round3(acc.tokens),
          output_tokens_per_s: round3(acc.tokens / (this.windowMs / 1000)),
          ttft_p50_ms: acc.closed?.ttft50 ?? pct(acc.ttft, 50),
          ttft_p99_ms: acc.closed?.ttft99 ?? pct(acc.ttft, 99),
          e2e_p50_ms: acc.closed?.e2e50 ?? pct(acc.e2e, 50),
          e2e_p99_ms: acc.closed?.e2e99 ?? pct(acc.e2e, 99),
          steady: startMs >= steadyFromMs && startMs + this.windowMs <= steadyUntilMs,
        });
      }
    }
    return out.sort((a, b) => a.start_s - b.start_s);
  }
}

function pct(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return round3(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
