// Synthetic timelines for the diagnosis tests: canaries on a grid, scrapes, client windows and the client's
// requests, each built from "what was broken when" so a test reads as its scenario.
import type { CanaryPoint, ClientWindow, DiagnosisInput, ErrorSpan, FlowTrack, HangSpan, RequestActivity, ScrapePoint } from '../../src/analysis/index.js';
import type { GaugeVerdict, HangPhase, PathKind } from '../../src/types/index.js';

export interface Span {
  from: number;
  to: number;
}

export const inside = (ms: number, spans: readonly Span[]): boolean => spans.some((s) => ms >= s.from && ms < s.to);

export function hang(fromMs: number, toMs: number, phase: HangPhase = 'headers', path: PathKind = 'proxy', deadline = 1500): HangSpan {
  return { from_ms: fromMs, to_ms: toMs, phase, path, nth: 2, deadline_ms: deadline, request_id: null };
}

export function error(atMs: number, cls: string, options: Partial<ErrorSpan> = {}): ErrorSpan {
  return { from_ms: atMs, to_ms: atMs + 2, class: cls, http_status: null, answered_by: null, detail: '', path: 'proxy', ...options };
}

type Outcome = 'ok' | 'hang' | 'refused' | 'reset' | 'page503' | 'not_sent';

/** Canaries of one leg every `stepMs` from 0 to `toMs`; `outcome` says what each one met. */
export function canaries(leg: CanaryPoint['leg'], toMs: number, stepMs: number, outcome: (ms: number) => Outcome, path: PathKind = leg === 'direct' ? 'direct' : 'proxy'): CanaryPoint[] {
  const out: CanaryPoint[] = [];
  for (let ms = 0; ms <= toMs; ms += stepMs) {
    const o = outcome(ms);
    const base: CanaryPoint = { run_ms: ms, leg, path, status: 'ok', error_class: null, hang_phase: null, latency_ms: 20, http_status: 200, answered_by: null, not_sent: false };
    if (o === 'ok') out.push(base);
    else if (o === 'hang') out.push({ ...base, status: 'hang', hang_phase: 'headers', latency_ms: 1000, http_status: null });
    else if (o === 'refused') out.push({ ...base, status: 'error', error_class: 'connection_refused', latency_ms: 1, http_status: null });
    else if (o === 'reset') out.push({ ...base, status: 'error', error_class: 'connection_reset', latency_ms: 300, http_status: null });
    else if (o === 'page503') out.push({ ...base, status: 'error', error_class: 'http_5xx', latency_ms: 2, http_status: 503, answered_by: 'page' });
    else out.push({ ...base, status: 'error', error_class: 'not_sent', latency_ms: 0, http_status: null, not_sent: true });
  }
  return out;
}

/** Scrapes of `target` every `stepMs`; inside `down` they time out. `queue` gives the queue gauge, `handoff` the PD hand-off queues. */
export function scrapes(
  target: string,
  toMs: number,
  stepMs: number,
  down: readonly Span[],
  queue: (ms: number) => number | null = () => 0,
  durationMs = 3,
  handoff: (ms: number) => number | null = () => null,
): ScrapePoint[] {
  const out: ScrapePoint[] = [];
  for (let ms = 0; ms <= toMs; ms += stepMs) {
    const failed = inside(ms, down);
    out.push({
      target,
      run_ms: ms,
      duration_ms: failed ? 500 : durationMs,
      ok: !failed,
      error: failed ? 'ERR_GET_TIMEOUT: GET http://127.0.0.1/metrics got no complete answer within 500 ms' : null,
      queue: failed ? null : queue(ms),
      running: failed ? null : 1,
      handoff: failed ? null : handoff(ms),
    });
  }
  return out;
}

/** A flow counter that moved over every scrape interval outside `still`. */
export function flow(target: string, toMs: number, stepMs: number, still: readonly Span[]): FlowTrack {
  const moved: number[] = [];
  for (let ms = stepMs; ms <= toMs; ms += stepMs) {
    if (inside(ms - stepMs, still) || inside(ms, still)) continue;
    const n = moved.length;
    if (n >= 2 && moved[n - 1] === ms - stepMs) moved[n - 1] = ms;
    else moved.push(ms - stepMs, ms);
  }
  return { target, counter: 'generation_tokens_total', moved };
}

/** Client sample windows of 1 s; inside `late` the loop ran `delayMs` late and the process used `cpuShare` of a core. */
export function client(toMs: number, late: readonly Span[] = [], delayMs = 900, cpuShare = 0.02, utilization = 0.05): ClientWindow[] {
  const out: ClientWindow[] = [];
  for (let ms = 1000; ms <= toMs; ms += 1000) {
    const bad = inside(ms - 500, late);
    out.push({ from_ms: ms - 1000, to_ms: ms, delay_p99_ms: bad ? delayMs : 2, delay_max_ms: bad ? delayMs : 8, utilization: bad ? utilization : 0.05, cpu_ms: bad ? cpuShare * 1000 : 50 });
  }
  return out;
}

export interface Requests {
  completions?: number[];
  streaming?: Span[];
  inFlight?: Span[];
  /** [sent, ttft] of completed requests. */
  ttft?: [number, number][];
}

export function activity(r: Requests): RequestActivity {
  const share = (spans: readonly Span[], a: number, b: number): number => {
    if (b <= a) return 0;
    let covered = 0;
    for (const s of spans) covered += Math.max(0, Math.min(b, s.to) - Math.max(a, s.from));
    return Math.min(1, covered / (b - a));
  };
  return {
    completionsIn: (a, b) => (r.completions ?? []).filter((t) => t > a && t <= b).length,
    streamingShare: (a, b) => share(r.streaming ?? [], a, b),
    inFlightShare: (a, b) => share(r.inFlight ?? [], a, b),
    ttft: (a, b) => {
      const xs = (r.ttft ?? []).filter(([sent]) => sent >= a && sent <= b).map(([, t]) => t);
      return { count: xs.length, meanMs: xs.length === 0 ? 0 : xs.reduce((x, y) => x + y, 0) / xs.length };
    },
  };
}

/** Requests every 100 ms completing, outside `still`. */
export function steadyRequests(toMs: number, still: readonly Span[], ttftMs = (_ms: number) => 150): Requests {
  const completions: number[] = [];
  const ttft: [number, number][] = [];
  for (let ms = 0; ms <= toMs; ms += 100) {
    if (inside(ms, still)) continue;
    completions.push(ms);
    ttft.push([ms, ttftMs(ms)]);
  }
  const streaming: Span[] = [];
  let from = 0;
  for (const s of [...still].sort((a, b) => a.from - b.from)) {
    streaming.push({ from, to: s.from });
    from = s.to;
  }
  streaming.push({ from, to: toMs });
  return { completions, ttft, streaming, inFlight: [{ from: 0, to: toMs }] };
}

export function pinnedGauge(fromMs: number, toMs: number): GaugeVerdict {
  return {
    target: 'prefill',
    name: 'sglang:num_prefill_inflight_queue_reqs',
    labels: {},
    verdict: 'pinned',
    samples: 90,
    window_s: 90,
    longest_nonzero_s: (toMs - fromMs) / 1000,
    dips: 0,
    last_value: 1,
    needed_s: null,
    evidence: [],
    stuck: { from_ms: fromMs, to_ms: toMs },
  };
}

/** Behind a proxy, the engine alive and fast for small requests throughout `runMs`: canaries answered on both
 * legs every second, scrapes answered, work flowing, the agents' other requests completing; `extra` says what failed. */
export function aliveEngine(runMs: number, extra: Partial<DiagnosisInput> & Pick<DiagnosisInput, 'hangs'>): DiagnosisInput {
  return {
    path: 'proxy',
    canaries: [...canaries('direct', runMs, 1000, () => 'ok'), ...canaries('proxied', runMs, 1000, () => 'ok')],
    scrapes: scrapes('engine', runMs, 250, []),
    flows: [flow('engine', runMs, 250, [])],
    gauges: [],
    client: client(runMs),
    activity: activity(steadyRequests(runMs, [])),
    ...extra,
  };
}
