// Remote write while the run goes: a snapshot of the registry every interval, queued (bounded), pushed as soon
// as the receiver takes it and retried with backoff when it does not; at the end one last snapshot and the
// queue flushed, all of it within the push timeout. Counts what was sent, failed, refused and dropped.
import { RemoteWriteError } from '../errors.js';
import { redactUrlCredentials } from '../util/index.js';
import { pushRemoteWrite } from './remote-write.js';
import { SnapshotQueue } from './remote-queue.js';
import { SeriesIndex, type MetricFamily } from './series.js';

export interface RemoteWriteLimits {
  /** Samples waiting at most; past it the oldest snapshots are dropped. @default 500000 */
  maxQueuedSamples: number;
  /** Samples in one push at most (a push takes at least one whole snapshot). @default 10000 */
  maxSamplesPerPush: number;
  /** Samples older than this are dropped unsent: a Prometheus refuses them (its head takes about an hour
   * back). @default 3600000 */
  maxSampleAgeMs: number;
}

const DEFAULT_LIMITS: RemoteWriteLimits = { maxQueuedSamples: 500_000, maxSamplesPerPush: 10_000, maxSampleAgeMs: 3_600_000 };

/** Failure streaks warned about one by one; later ones are only counted. */
const STREAK_WARNINGS = 5;

export interface RemoteWriterOptions {
  url: string;
  /** Time between snapshots (and pushes). */
  intervalMs: number;
  /** One push is given up after this long; the end (the last snapshot and the flush) takes no longer either. */
  timeoutMs: number;
  /** Reads the registry. */
  read: () => Promise<readonly MetricFamily[]>;
  /** Labels every series carries besides its own (`job`, `instance`). */
  extraLabels: Readonly<Record<string, string>>;
  /** Notices and warnings (stderr). */
  log: (line: string) => void;
  limits?: Partial<RemoteWriteLimits>;
}

/** What remote write did over the run. */
export interface RemoteWriteStats {
  /** Pushes the receiver took. */
  pushes: number;
  samplesSent: number;
  /** Compressed bytes of the pushes taken. */
  bytesSent: number;
  /** Series seen. */
  series: number;
  /** Pushes that failed (retried when the receiver may take them later). */
  failedPushes: number;
  /** Samples the receiver refused for good (a 4xx but 429: out of order, too old, unauthorized). */
  refusedSamples: number;
  /** Samples dropped unsent: the queue over its bound, or older than `maxSampleAgeMs`. */
  droppedSamples: number;
  /** Samples still queued when the end's bound ran out. */
  unsentSamples: number;
}

/** Wait before the next try after `failures` failed pushes in a row: 0.5 s, doubling, never over the interval
 * (once the receiver is back, the run is at most one interval behind). */
export function retryDelayMs(failures: number, intervalMs: number): number {
  return Math.min(intervalMs, 500 * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}

export class RemoteWriter {
  readonly #o: RemoteWriterOptions;
  readonly #limits: RemoteWriteLimits;
  readonly #shown: string;
  readonly #index: SeriesIndex;
  readonly #queue: SnapshotQueue;
  readonly #stats: RemoteWriteStats = { pushes: 0, samplesSent: 0, bytesSent: 0, series: 0, failedPushes: 0, refusedSamples: 0, droppedSamples: 0, unsentSamples: 0 };
  /** Aborted when the end's bound runs out, or on close: the push in flight is given up. */
  readonly #end = new AbortController();
  #timer: NodeJS.Timeout | null = null;
  #retryTimer: NodeJS.Timeout | null = null;
  #draining: Promise<void> | null = null;
  #ending = false;
  // One snapshot at a time, each stamped once its values are read: a series' samples stay in time order
  // (Prometheus refuses a whole push over one sample out of order).
  #snapshotting: Promise<void> = Promise.resolve();
  #lastSnapshotMs = 0;
  /** Failed pushes in a row (reset by one the receiver takes). */
  #failing = 0;
  #streaks = 0;
  #lastError = '';
  readonly #warned = { refused: false, bound: false, old: false, read: false };

  constructor(o: RemoteWriterOptions) {
    this.#o = o;
    this.#limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.#shown = redactUrlCredentials(o.url);
    this.#index = new SeriesIndex(o.extraLabels);
    this.#queue = new SnapshotQueue(this.#limits.maxQueuedSamples);
  }

  /** Takes the first snapshot and pushes one every interval from now on. */
  async start(): Promise<void> {
    await this.#snapshot();
    this.#kick();
    this.#timer = setInterval(() => {
      void this.#snapshot().then(() => this.#kick());
    }, this.#o.intervalMs).unref();
  }

  /** The run is over (its final values are in the registry): one last snapshot, then the queue is pushed
   * until empty or until `timeoutMs` has passed; logs what was sent, failed and dropped. Never throws. */
  async finish(): Promise<RemoteWriteStats> {
    if (this.#ending) return this.stats();
    this.#ending = true;
    this.#stopTimers();
    const deadlineMs = performance.now() + this.#o.timeoutMs;
    const cut = setTimeout(() => this.#end.abort(), this.#o.timeoutMs).unref();
    await this.#snapshot();
    await this.#draining; // its push in flight ends by the deadline
    while (!this.#queue.empty && !this.#end.signal.aborted) {
      const leftMs = deadlineMs - performance.now();
      if (leftMs <= 0) break;
      if ((await this.#pushBatch(Math.min(this.#o.timeoutMs, leftMs))) === 'retry') {
        await wait(Math.min(retryDelayMs(this.#failing, this.#o.intervalMs), deadlineMs - performance.now()), this.#end.signal);
      }
    }
    clearTimeout(cut);
    this.#stats.unsentSamples = this.#queue.samples;
    this.#queue.dropOlderThan(Number.POSITIVE_INFINITY);
    this.#o.log(this.#describe());
    return this.stats();
  }

  /** Stops at once, pushing nothing more (a run that failed before its summary); idempotent. */
  close(): void {
    this.#ending = true;
    this.#stopTimers();
    this.#end.abort();
  }

  stats(): RemoteWriteStats {
    return { ...this.#stats, series: this.#index.size };
  }

  #stopTimers(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#timer = null;
    this.#retryTimer = null;
  }

  #snapshot(): Promise<void> {
    this.#snapshotting = this.#snapshotting.then(async () => {
      let families: readonly MetricFamily[];
      try {
        families = await this.#o.read();
      } catch (error) {
        // A registry that cannot be read this time costs one snapshot, never the run (this runs on a timer).
        if (!this.#warned.read) this.#o.log(`warning: remote write: the metrics could not be read for a snapshot: ${error instanceof Error ? error.message : String(error)}`);
        this.#warned.read = true;
        return;
      }
      const nowMs = Date.now();
      if (nowMs <= this.#lastSnapshotMs) return;
      this.#lastSnapshotMs = nowMs;
      this.#dropped(this.#queue.add(this.#index.snapshot(families, nowMs)), 'bound');
    });
    return this.#snapshotting;
  }

  /** Starts pushing the queue unless a push is under way, a retry is waiting, or the run is ending. */
  #kick(): void {
    if (this.#draining !== null || this.#retryTimer !== null || this.#ending) return;
    this.#draining = this.#drain().finally(() => {
      this.#draining = null;
    });
  }

  async #drain(): Promise<void> {
    while (!this.#queue.empty && !this.#ending) {
      if ((await this.#pushBatch(this.#o.timeoutMs)) !== 'retry') continue;
      if (this.#ending) return;
      this.#retryTimer = setTimeout(
        () => {
          this.#retryTimer = null;
          this.#kick();
        },
        retryDelayMs(this.#failing, this.#o.intervalMs),
      ).unref();
      return;
    }
  }

  /** One push of the oldest snapshots queued. */
  async #pushBatch(timeoutMs: number): Promise<'sent' | 'refused' | 'retry'> {
    this.#dropped(this.#queue.dropOlderThan(Date.now() - this.#limits.maxSampleAgeMs), 'old');
    if (this.#queue.empty) return 'sent';
    const batch = this.#queue.take(this.#limits.maxSamplesPerPush);
    const samples = batch.reduce((n, s) => n + s.values.length, 0);
    try {
      const r = await pushRemoteWrite(this.#o.url, this.#index.series(batch), { timeoutMs, signal: this.#end.signal });
      this.#stats.pushes += 1;
      this.#stats.samplesSent += r.samples;
      this.#stats.bytesSent += r.bytes;
      if (this.#failing > 0 && this.#streaks <= STREAK_WARNINGS) this.#o.log(`remote write to ${this.#shown}: pushing again after ${plural(this.#failing, 'failed push', 'failed pushes')}`);
      this.#failing = 0;
      return 'sent';
    } catch (error) {
      const e = error instanceof RemoteWriteError ? error : new RemoteWriteError(error instanceof Error ? error.message : String(error), { retryable: true, cause: error });
      this.#stats.failedPushes += 1;
      this.#lastError = e.message;
      if (!e.retryable) {
        this.#stats.refusedSamples += samples;
        if (!this.#warned.refused) this.#o.log(`warning: remote write to ${this.#shown} refused ${samples} samples: ${e.message}; they are not sent again (later refusals are counted at the end)`);
        this.#warned.refused = true;
        return 'refused';
      }
      this.#failing += 1;
      if (this.#failing === 1 && !this.#end.signal.aborted) this.#streakStarted(e.message);
      this.#dropped(this.#queue.putBack(batch), 'bound');
      return 'retry';
    }
  }

  #streakStarted(why: string): void {
    this.#streaks += 1;
    if (this.#streaks > STREAK_WARNINGS) return;
    const later = this.#streaks === STREAK_WARNINGS ? '; further failures are counted at the end, not shown' : '';
    this.#o.log(`warning: remote write to ${this.#shown} failed: ${why}; retrying with backoff while the samples wait (at most ${this.#limits.maxQueuedSamples})${later}`);
  }

  #dropped(samples: number, why: 'bound' | 'old'): void {
    if (samples === 0) return;
    this.#stats.droppedSamples += samples;
    if (this.#warned[why]) return;
    this.#warned[why] = true;
    const what =
      why === 'bound'
        ? `more than ${this.#limits.maxQueuedSamples} samples wait for ${this.#shown}; the oldest are dropped`
        : `samples older than ${this.#limits.maxSampleAgeMs / 60_000} min are dropped unsent (a Prometheus refuses them)`;
    this.#o.log(`warning: remote write: ${what} (counted at the end)`);
  }

  /** The last line: what was sent, and what failed or was lost. */
  #describe(): string {
    const s = this.stats();
    const sent = `${plural(s.pushes, 'push', 'pushes')}, ${s.samplesSent} samples of ${s.series} series (${s.bytesSent} bytes) sent to ${this.#shown}`;
    const lost = s.refusedSamples + s.droppedSamples + s.unsentSamples;
    if (s.failedPushes === 0 && lost === 0) return `remote write: ${sent}`;
    const failed = `${plural(s.failedPushes, 'push', 'pushes')} failed`;
    if (lost === 0) return `remote write: ${sent}; ${failed} and ${s.failedPushes === 1 ? 'was' : 'were'} retried`;
    return `warning: remote write: ${sent}; ${failed} (last: ${this.#lastError}); samples not sent: ${s.refusedSamples} refused, ${s.droppedSamples} dropped, ${s.unsentSamples} still queued at the end; the run's results are written all the same`;
  }
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Waits `ms`, or until `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
