// Where the hangs come from: the proxy, the engine, or the client itself. Pure: hung requests, canary
// results, gauge verdicts and the client's saturated windows in; a verdict with its evidence out.
// The order of the calls matters: a saturated client explains everything it overlaps, a pinned engine gauge
// or failing direct canaries put the fault in the engine, and only a healthy direct path with a failing
// proxied one puts it in the proxy.
import type { CanaryEvent, CanaryLeg, ClientSampleEvent, Diagnosis, GaugeVerdict, HangPhase, PathKind, RequestRecord, RequestStatus } from '../types/index.js';

/** A hung request: from send to the moment the watchdog gave up. */
export interface HangSpan {
  start_ms: number;
  end_ms: number;
  phase: HangPhase | null;
  path: PathKind;
  /** Which request on its socket (null: it never got one). */
  nth: number | null;
}

export interface CanaryPoint {
  run_ms: number;
  leg: CanaryLeg;
  path: PathKind;
  status: RequestStatus;
  error_class: string | null;
  hang_phase: HangPhase | null;
}

/** A client sample window where the event loop was too busy to trust the client's own timings. */
export interface SaturatedWindow {
  start_ms: number;
  end_ms: number;
  loop_delay_p99_ms: number;
  loop_utilization: number;
}

export interface DiagnosisInput {
  hangs: readonly HangSpan[];
  /** Hangs beyond those listed (a night of hangs is summarised from a sample). @default 0 */
  hangsOmitted?: number;
  canaries: readonly CanaryPoint[];
  gauges: readonly GaugeVerdict[];
  saturated: readonly SaturatedWindow[];
}

/** Canaries this close to the hang period still speak for it (about one canary interval either side). */
export const CANARY_SLACK_MS = 5_000;
/** Share of direct canaries that may fail while the direct path still counts as healthy. */
export const DIRECT_HEALTHY_MAX_FAILED = 0.2;
/** Share of direct canaries failing from which the engine itself is blamed. */
export const DIRECT_BROKEN_MIN_FAILED = 0.5;

function s1(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** How often each key occurs, most frequent first. */
function counted<T>(items: readonly T[], key: (t: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const it of items) {
    const k = key(it);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort(([, a], [, b]) => b - a);
}

/** `headers 3, mid_stream 1`. */
function countBy<T>(items: readonly T[], key: (t: T) => string): string {
  return counted(items, key)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** `3 hung at headers, 1 failed with connection_reset`. */
function tally<T>(items: readonly T[], label: (t: T) => string): string {
  return counted(items, label)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}

interface LegFigures {
  total: number;
  failed: number;
  sentence: string;
}

function legFigures(leg: CanaryLeg, points: readonly CanaryPoint[]): LegFigures {
  const mine = points.filter((p) => p.leg === leg);
  const bad = mine.filter((p) => p.status !== 'ok');
  const name = leg === 'direct' ? 'direct canaries (around the proxy, straight to the engine)' : `proxied canaries (the agents' path, ${mine[0]?.path ?? 'proxied'})`;
  if (mine.length === 0) return { total: 0, failed: 0, sentence: `no ${name} ran in that period` };
  const how = bad.length === 0 ? '' : `, ${tally(bad, (p) => (p.status === 'hang' ? `hung at ${p.hang_phase ?? 'an unknown phase'}` : `failed with ${p.error_class ?? 'other'}`))}`;
  return { total: mine.length, failed: bad.length, sentence: `${name}: ${mine.length - bad.length} of ${mine.length} ok${how}` };
}

function overlaps(h: HangSpan, w: SaturatedWindow): boolean {
  return h.start_ms <= w.end_ms && w.start_ms <= h.end_ms;
}

/** The verdict on a run's hangs (verdict `none` when nothing hung). */
export function diagnose(input: DiagnosisInput): Diagnosis {
  const { hangs, canaries, gauges, saturated } = input;
  const total = hangs.length + (input.hangsOmitted ?? 0);
  if (total === 0) return { verdict: 'none', evidence: [] };
  const evidence: string[] = [];
  const first = Math.min(...hangs.map((h) => h.start_ms));
  const last = Math.max(...hangs.map((h) => h.end_ms));
  const paths = countBy(hangs, (h) => h.path);
  const reused = hangs.filter((h) => h.nth !== null && h.nth >= 2).length;
  evidence.push(
    `${total} requests hung between ${s1(first)} and ${s1(last)} of the run (by phase: ${countBy(hangs, (h) => h.phase ?? 'unknown')}; by path: ${paths}); ${reused} of them on reused keep-alive connections`,
  );

  // 1. The client: a saturated event loop makes deadlines fire on the client's own delay.
  const overlapped = hangs.filter((h) => saturated.some((w) => overlaps(h, w)));
  if (saturated.length > 0 && overlapped.length * 2 >= hangs.length) {
    const worstDelay = Math.max(...saturated.map((w) => w.loop_delay_p99_ms));
    const worstElu = Math.max(...saturated.map((w) => w.loop_utilization));
    evidence.push(
      `${overlapped.length} of ${hangs.length} hangs overlap the client's ${saturated.length} saturated sample windows (event-loop delay p99 up to ${worstDelay.toFixed(0)} ms, utilisation up to ${(worstElu * 100).toFixed(0)}%): the client itself was too busy to read its sockets in time`,
    );
    return { verdict: 'client', evidence };
  }
  if (saturated.length > 0) evidence.push(`the client was saturated in ${saturated.length} sample windows, overlapping only ${overlapped.length} of ${hangs.length} hangs: not the explanation`);

  // Canaries around the hang period speak for it; with none there, the whole run's are better than nothing.
  let around: readonly CanaryPoint[] = canaries.filter((c) => c.run_ms >= first - CANARY_SLACK_MS && c.run_ms <= last + CANARY_SLACK_MS);
  let period = `between ${s1(Math.max(0, first - CANARY_SLACK_MS))} and ${s1(last + CANARY_SLACK_MS)}`;
  if (around.length === 0 && canaries.length > 0) {
    around = canaries;
    period = 'over the whole run (none ran near the hangs)';
  }
  const direct = legFigures('direct', around);
  const proxied = legFigures('proxied', around);
  const canarySentence = `${period}: ${direct.sentence}; ${proxied.sentence}`;

  // 2. The engine: a pinned gauge, or the direct path failing too.
  const pinned = gauges.filter((g) => g.verdict === 'pinned');
  for (const g of pinned) {
    const labels = Object.entries(g.labels).map(([k, v]) => `${k}="${v}"`).join(',');
    evidence.push(`engine gauge ${g.name}${labels === '' ? '' : `{${labels}}`} on ${g.target} is pinned at ${Number.isInteger(g.last_value) ? g.last_value : Number(g.last_value.toPrecision(4))} (unchanged and non-zero for ${g.longest_nonzero_s.toFixed(1)} s with no flow)`);
  }
  const directBroken = direct.total > 0 && direct.failed / direct.total >= DIRECT_BROKEN_MIN_FAILED;
  if (pinned.length > 0 || directBroken) {
    if (canaries.length > 0) evidence.push(canarySentence);
    if (directBroken) evidence.push(`${direct.failed} of ${direct.total} direct canaries failed: requests that never touch the proxy fail too, so the fault is at or behind the engine`);
    return { verdict: 'engine', evidence };
  }
  if (gauges.length > 0) evidence.push(`no engine gauge was pinned (${gauges.length} series judged: ${countBy(gauges, (g) => g.verdict)})`);

  if (canaries.length === 0) {
    evidence.push('no canaries ran: set target.bypass (a direct URL of the engine) and monitor.canary_interval_s to compare the proxied path with the direct one');
    return { verdict: 'unknown', evidence };
  }
  evidence.push(canarySentence);

  // 3. The proxy: the direct path healthy while the proxied one fails.
  const directHealthy = direct.total > 0 && direct.failed / direct.total <= DIRECT_HEALTHY_MAX_FAILED;
  if (directHealthy && proxied.failed > 0) {
    evidence.push(`the engine answered ${direct.total - direct.failed} of ${direct.total} direct canaries while ${proxied.failed} of ${proxied.total} proxied ones failed: the fault is in front of the engine (the proxy or hop)`);
    return { verdict: 'proxy', evidence };
  }
  if (directHealthy && proxied.total > 0) {
    evidence.push(
      `both canary paths stayed healthy: the hangs are specific to the agents' requests (their size, or their long-lived keep-alive connections: ${reused} of ${total} hangs came on reused ones)`,
    );
  } else if (direct.total === 0) {
    evidence.push('no direct canary ran near the hangs, so the engine cannot be cleared or blamed');
  }
  return { verdict: 'unknown', evidence };
}

/** Most hung requests kept for the diagnosis (the rest are counted): bounded memory over a night of hangs. */
const MAX_HANG_SPANS = 10_000;
const MAX_CANARIES = 100_000;
const MAX_SATURATED = 100_000;

/** Collects, in constant-bounded memory, what {@link diagnose} needs from a run's stream of records and events. */
export class DiagnosisCollector {
  readonly #hangs: HangSpan[] = [];
  #hangsOmitted = 0;
  readonly #canaries: CanaryPoint[] = [];
  readonly #saturated: SaturatedWindow[] = [];

  /** Any request record; only hung ones are kept. */
  add(r: RequestRecord): void {
    if (r.status !== 'hang') return;
    if (this.#hangs.length >= MAX_HANG_SPANS) {
      this.#hangsOmitted += 1;
      return;
    }
    this.#hangs.push({ start_ms: r.run_ms, end_ms: r.run_ms + r.e2e_ms, phase: r.hang?.phase ?? null, path: r.path, nth: r.connection?.nth ?? null });
  }

  addCanary(e: CanaryEvent): void {
    if (this.#canaries.length < MAX_CANARIES) this.#canaries.push({ run_ms: e.run_ms, leg: e.leg, path: e.path, status: e.status, error_class: e.error_class, hang_phase: e.hang_phase });
  }

  /** A client sample the summary judged saturated. */
  addSaturated(s: ClientSampleEvent): void {
    if (this.#saturated.length < MAX_SATURATED) this.#saturated.push({ start_ms: s.run_ms - s.window_ms, end_ms: s.run_ms, loop_delay_p99_ms: s.loop_delay_p99_ms, loop_utilization: s.loop_utilization });
  }

  diagnose(gauges: readonly GaugeVerdict[]): Diagnosis {
    return diagnose({ hangs: this.#hangs, hangsOmitted: this.#hangsOmitted, canaries: this.#canaries, gauges, saturated: this.#saturated });
  }
}
