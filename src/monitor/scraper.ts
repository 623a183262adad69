// Scrapes each target's /metrics on a drift-free schedule (ticks at start + k × interval, missed ticks
// skipped, never two scrapes of one target at once), switches every target to the burst cadence on demand,
// and reports each scrape, failed or not, as a `scrape` event. Time comes from an injected clock.
import type { Clock } from '../watchdog/index.js';
import type { BurstEvent, ScrapeEvent } from '../types/index.js';
import { ExpositionParser } from './exposition.js';
import type { SeriesSelector } from './select.js';
import { round1 } from '../util/index.js';

export interface ScrapeTarget {
  name: string;
  url: string;
}

/** GETs a URL within `timeoutMs` (rejecting on timeout or network error). */
export type FetchText = (url: string, timeoutMs: number) => Promise<{ status: number; body: string }>;

export interface ScraperOptions {
  targets: readonly ScrapeTarget[];
  intervalMs: number;
  timeoutMs: number;
  burstIntervalMs: number;
  burstDurationMs: number;
  selector: SeriesSelector;
  clock: Clock;
  /** `clock.now()` at run start: `run_ms` is measured from it. */
  runStartMs: number;
  fetch: FetchText;
  emit: (event: ScrapeEvent | BurstEvent) => void;
  /** Wall-clock ms for the `t` fields. @default Date.now */
  wallNow?: () => number;
}

/** A metrics URL: a URL with no path gets `/metrics`. */
export function metricsUrl(url: string): string {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/metrics';
  return u.toString();
}

/** A short, stable reason for a failed scrape: the error code (walking `.cause`) and message. */
export function scrapeError(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e !== null && e !== undefined; depth += 1) {
    const code = (e as { code?: unknown }).code;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a coded error without a message is described as String() describes it
    if (typeof code === 'string' && code !== '') return `${code}: ${(e as Error).message ?? String(e)}`;
    e = (e as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}

class TargetLoop {
  #timer: unknown = null;
  #busy: Promise<void> | null = null;
  /** The tick the next scrape is due at (clock ms). */
  #lastDue = -Infinity;

  constructor(
    readonly target: ScrapeTarget,
    private readonly scraper: Scraper,
  ) {}

  get busy(): Promise<void> | null {
    return this.#busy;
  }

  /** Schedules the next scrape on the current grid (or at once when `now` is true). */
  schedule(now = false): void {
    const s = this.scraper;
    if (s.stopped || this.#busy !== null) return;
    if (this.#timer !== null) s.clock.clearTimer(this.#timer);
    const at = now ? s.clock.now() : s.nextTick(this.#lastDue);
    this.#timer = s.clock.setTimer(
      () => {
        this.#timer = null;
        this.#lastDue = at;
        this.#run();
      },
      Math.max(0, at - s.clock.now()),
    );
  }

  cancel(): void {
    if (this.#timer !== null) this.scraper.clock.clearTimer(this.#timer);
    this.#timer = null;
  }

  #run(): void {
    const s = this.scraper;
    if (s.stopped) return;
    this.#busy = s.scrapeOnce(this.target).finally(() => {
      this.#busy = null;
      this.schedule();
    });
  }
}

export class Scraper {
  readonly clock: Clock;
  stopped = false;
  readonly #o: ScraperOptions;
  readonly #loops: TargetLoop[];
  readonly #wallNow: () => number;
  readonly #baseMs: number;
  #burstStartMs = 0;
  #burstUntilMs = -Infinity;
  #burstTimer: unknown = null;
  #burstReason: BurstEvent['reason'] = 'hang';
  /** Scrape urls resolved once. */
  readonly #urls = new Map<string, string>();

  constructor(options: ScraperOptions) {
    this.#o = options;
    this.clock = options.clock;
    this.#wallNow = options.wallNow ?? Date.now;
    this.#baseMs = options.clock.now();
    this.#loops = options.targets.map((t) => new TargetLoop(t, this));
    for (const t of options.targets) this.#urls.set(t.name, metricsUrl(t.url));
  }

  get bursting(): boolean {
    return this.clock.now() < this.#burstUntilMs;
  }

  /** Starts every target at once (the first scrape right away). */
  start(): void {
    for (const loop of this.#loops) loop.schedule(true);
  }

  /** The first tick after `lastDue` and not before now: on the burst grid while bursting, else the base grid. */
  nextTick(lastDue: number): number {
    const now = this.clock.now();
    const from = Math.max(now, lastDue + 1e-6);
    if (from < this.#burstUntilMs) {
      const step = this.#o.burstIntervalMs;
      const at = this.#burstStartMs + Math.ceil((from - this.#burstStartMs) / step) * step;
      // A burst tick past the burst's end falls back to the base grid.
      if (at < this.#burstUntilMs) return at;
    }
    const step = this.#o.intervalMs;
    return this.#baseMs + Math.ceil((from - this.#baseMs) / step) * step;
  }

  /** Dense sampling for `burstDurationMs` from now (extends a burst already on). */
  burst(reason: BurstEvent['reason'], trigger: BurstEvent['trigger']): void {
    if (this.stopped || this.#loops.length === 0) return;
    const now = this.clock.now();
    const extending = now < this.#burstUntilMs;
    if (!extending) this.#burstStartMs = now;
    this.#burstUntilMs = now + this.#o.burstDurationMs;
    this.#burstReason = reason;
    this.#emitBurst(extending ? 'extend' : 'start', reason, trigger);
    if (this.#burstTimer !== null) this.clock.clearTimer(this.#burstTimer);
    this.#burstTimer = this.clock.setTimer(() => {
      this.#burstTimer = null;
      this.#emitBurst('end', this.#burstReason, null);
    }, this.#o.burstDurationMs);
    // Idle loops move to the burst grid now; a busy one does when its scrape ends.
    if (!extending) for (const loop of this.#loops) loop.schedule(true);
  }

  /** Stops scheduling; waits (bounded by the scrape timeout) for scrapes under way, so their events are written. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.#burstTimer !== null) {
      // The run ends mid-burst: the burst ends here.
      this.clock.clearTimer(this.#burstTimer);
      this.#burstUntilMs = this.clock.now();
      this.#emitBurst('end', this.#burstReason, null);
    }
    this.#burstTimer = null;
    for (const loop of this.#loops) loop.cancel();
    await Promise.all(this.#loops.map((l) => l.busy ?? Promise.resolve()));
  }

  /** One scrape of one target; never rejects. */
  async scrapeOnce(target: ScrapeTarget): Promise<void> {
    const o = this.#o;
    const url = this.#urls.get(target.name) ?? target.url;
    const startedMs = this.clock.now();
    const wall = this.#wallNow();
    const burst = this.bursting;
    const base = { kind: 'scrape' as const, t: new Date(wall).toISOString(), run_ms: Math.round(startedMs - o.runStartMs), target: target.name, url, burst };
    let event: ScrapeEvent;
    try {
      const res = await o.fetch(url, o.timeoutMs);
      const duration = round1(this.clock.now() - startedMs);
      if (res.status !== 200) {
        event = { ...base, duration_ms: duration, ok: false, error: `HTTP ${res.status}`, samples: [] };
      } else {
        const parser = new ExpositionParser({ keep: o.selector.keep });
        parser.feed(res.body);
        const parsed = parser.end();
        const samples = o.selector.select(parsed.samples);
        const bad = parser.issueCount;
        const first = parsed.issues[0];
        if (samples.length === 0 && bad > 0 && bad >= parsed.lines / 2) {
          event = { ...base, duration_ms: duration, ok: false, error: `not a Prometheus exposition: ${bad} of ${parsed.lines} lines unreadable (line ${first?.line}: ${first?.message})`, samples: [] };
        } else {
          const note = bad === 0 || first === undefined ? null : `${bad} malformed line${bad === 1 ? '' : 's'} skipped (line ${first.line}: ${first.message})`;
          event = { ...base, duration_ms: duration, ok: true, error: note, samples };
        }
      }
    } catch (error) {
      event = { ...base, duration_ms: round1(this.clock.now() - startedMs), ok: false, error: scrapeError(error), samples: [] };
    }
    // A scrape that ends after stop() still reports: it was under way, and the file is open until services stop.
    o.emit(event);
  }

  #emitBurst(state: BurstEvent['state'], reason: BurstEvent['reason'], trigger: BurstEvent['trigger']): void {
    const now = this.clock.now();
    this.#o.emit({
      kind: 'burst',
      t: new Date(this.#wallNow()).toISOString(),
      run_ms: Math.round(now - this.#o.runStartMs),
      state,
      reason,
      interval_ms: this.#o.burstIntervalMs,
      until_run_ms: Math.round(this.#burstUntilMs - this.#o.runStartMs),
      trigger,
    });
  }
}
