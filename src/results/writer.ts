// The run's results writer: lines go to a worker thread that does the write(2) calls (with rotation and
// gzip), so a slow or stalled volume never blocks the event loop that times the streams. The queue between
// the two is bounded: past `maxQueueBytes` new lines are dropped and counted, never held without limit.
// How far behind the disk is (`lagMs`) is sampled into client_sample events.
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { ResultsError } from '../errors.js';
import { spawnModuleWorker } from '../util/index.js';
import { toResultsError, type FsFailure } from './fs-error.js';

/** @default 64 MiB: about a minute of a busy run's records on a stalled volume, then lines are dropped. */
const DEFAULT_WRITER_QUEUE_BYTES = 64 * 1024 * 1024;

export interface ResultsWriterOptions<F extends string> {
  /** The files, by name: `{ requests: '/…/requests.jsonl', … }`. */
  files: Record<F, string>;
  /** Rotate a file once it reaches this many bytes; null: never. */
  maxFileBytes: number | null;
  /** Gzip rotated parts (in the writer thread). */
  compress: boolean;
  /** Bytes queued (written by the run, not yet on disk) past which new lines are dropped and counted.
   * @default DEFAULT_WRITER_QUEUE_BYTES */
  maxQueueBytes?: number;
  /** Test hook: every write(2) of the writer thread first blocks it this long, like a stalled volume. @default 0 */
  writeDelayMs?: number;
  /** Notices (a part left uncompressed, lines dropped because the queue is full). */
  log?: (line: string) => void;
  /** Called once when a file cannot be written (ENOSPC, EIO…): the run should stop. Its lines are lost from then on. */
  onFailure?: (error: ResultsError) => void;
}

/** What a client sample reports about the writer. */
export interface WriterSample {
  /** The longest any line waited to reach the disk since the last sample, including lines still waiting. */
  writer_lag_ms: number;
  /** Bytes written by the run and not yet on disk, now. */
  writer_queued_bytes: number;
  /** Lines not written since the run started (queue full, or their file failed). */
  writer_dropped_lines: number;
}

export interface WriterCloseResult {
  /** Every line queued before close reached the disk (or was counted as dropped). */
  drained: boolean;
  /** Lines still queued when the drain timed out: lost. */
  undrainedLines: number;
  /** Lines not written over the writer's life (queue full or file failed), the undrained ones included. */
  droppedLines: number;
  /** Rotated parts still being gzipped when the writer thread ended (their plain copy stays). */
  compressing: number;
}

export interface WriterThreadInit {
  files: string[];
  maxFileBytes: number | null;
  compress: boolean;
  writeDelayMs: number;
}
/** Main → writer thread. `lines[i]`: lines of file i, each ending in `\n`. */
export type ToWriterMessage = { type: 'batch'; seq: number; lines: string[][] } | { type: 'close'; settleMs: number };
/** Writer thread → main. `atMs`: `performance.timeOrigin + performance.now()`, comparable across threads. */
export type FromWriterMessage =
  | { type: 'ready' }
  | { type: 'written'; seq: number; atMs: number; lost: number }
  | { type: 'failed'; failure: FsFailure }
  | { type: 'notice'; message: string }
  | { type: 'closed'; compressing: number };

interface Pending {
  seq: number;
  /** When its first line was queued (epoch-like ms). */
  firstAtMs: number;
  bytes: number;
  lines: number;
}

const nowMs = (): number => performance.timeOrigin + performance.now();
/** Lines are posted to the writer thread at most this often: each post wakes the thread for a write(2) and
 * wakes the main thread again for its acknowledgement (about 0.1-0.2 ms of CPU in all on the development
 * machine), so a run finishing a request every few milliseconds would pay that per record. A line written
 * after a quiet spell still goes out at the end of its event-loop turn; lines closer together wait for the
 * next post, at most this long (a SIGKILL then loses at most this much more: docs/results.md). */
export const POST_EVERY_MS = 20;
/** At most one "dropping lines" notice this often, however often the disk stalls. */
const NOTICE_EVERY_MS = 10_000;

function size(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

export class ResultsWriter<F extends string> {
  readonly #index: Map<F, number>;
  readonly #paths: string[];
  readonly #worker: Worker;
  readonly #maxQueueBytes: number;
  readonly #log: (line: string) => void;
  readonly #onFailure: (error: ResultsError) => void;
  /** Lines not yet posted, per file: posted together at the end of the loop turn, or POST_EVERY_MS after the
   * last post when that is later. */
  #batch: string[][];
  #batchLines = 0;
  #batchBytes = 0;
  #batchFirstAtMs = 0;
  #flushScheduled = false;
  #flushTimer: NodeJS.Timeout | null = null;
  /** performance.now() of the last post to the writer thread. */
  #lastPostAt = -Infinity;
  #seq = 0;
  /** Batches posted and not yet written, oldest first (from `#head`). */
  readonly #pending: Pending[] = [];
  #head = 0;
  #queuedBytes = 0;
  #dropped = 0;
  #dropping = false;
  #lastNoticeAtMs = -Infinity;
  /** This dropping episode was announced (so its end is too). */
  #noticed = false;
  #windowLagMs = 0;
  #failed = false;
  #closing: Promise<WriterCloseResult> | null = null;
  #onClosed: ((compressing: number | null) => void) | null = null;
  #exited = false;
  readonly #ready: Promise<void>;
  #settleReady: ((error: ResultsError | null) => void) | null = null;

  constructor(options: ResultsWriterOptions<F>) {
    const names = Object.keys(options.files) as F[];
    this.#index = new Map(names.map((n, i) => [n, i]));
    this.#paths = names.map((n) => options.files[n]);
    this.#batch = names.map(() => []);
    this.#maxQueueBytes = options.maxQueueBytes ?? DEFAULT_WRITER_QUEUE_BYTES;
    this.#log = options.log ?? (() => {});
    this.#onFailure = options.onFailure ?? (() => {});
    const init: WriterThreadInit = { files: this.#paths, maxFileBytes: options.maxFileBytes, compress: options.compress, writeDelayMs: options.writeDelayMs ?? 0 };
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#settleReady = (error) => {
        this.#settleReady = null;
        if (error === null) resolve();
        else reject(error);
      };
    });
    // Awaited by ready() only: a failure is also reported through onFailure.
    this.#ready.catch(() => {});
    // Its module graph is plain (node:fs, zlib, our own files): the lighter require hook from source.
    this.#worker = spawnModuleWorker(import.meta.url, 'writer-thread', init, { require: true });
    // Never what keeps the process alive: close() waits for it explicitly, bounded.
    this.#worker.unref();
    this.#worker.on('message', (m: FromWriterMessage) => this.#onMessage(m));
    this.#worker.on('error', (error) => this.#fail(new ResultsError(this.#paths[0] ?? '.', 'write', `the results writer thread failed: ${error.message}`, { cause: error })));
    this.#worker.on('exit', () => {
      this.#exited = true;
      if (this.#closing === null) this.#fail(new ResultsError(this.#paths[0] ?? '.', 'write', 'the results writer thread ended unexpectedly'));
      // Messages come before 'exit': a 'closed' already resolved close(); otherwise nothing more will come.
      this.#onClosed?.(null);
    });
  }

  /**
   * Resolves once the writer thread has its files open; rejects with the ResultsError of a file it could not
   * open, or when it is not up within `timeoutMs`. Waiting is optional: lines written before are queued, and
   * a file that cannot be opened is reported through `onFailure` too. The run does not wait (the thread's
   * start-up overlaps the run's own); tests do.
   */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ResultsError(this.#paths[0] ?? '.', 'open', `the results writer thread did not start within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.#ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Queues one serialized line (ending in `\n`) for `file`. Returns false when it was dropped (queue full,
   * or the writer failed); a line after close() is ignored (late events after the run ended). */
  write(file: F, line: string): boolean {
    if (this.#closing !== null) return false;
    const bytes = Buffer.byteLength(line);
    if (this.#failed || this.#queuedBytes + bytes > this.#maxQueueBytes) {
      this.#dropped += 1;
      if (!this.#dropping && !this.#failed) {
        this.#dropping = true;
        // Said once per episode, and not more than every NOTICE_EVERY_MS when the disk keeps stalling.
        const now = nowMs();
        this.#noticed = now - this.#lastNoticeAtMs >= NOTICE_EVERY_MS;
        if (this.#noticed) {
          this.#lastNoticeAtMs = now;
          this.#log(
            `results writer: ${size(this.#queuedBytes)} waiting for the disk (${Math.round(this.#oldestAgeMs(now))} ms behind): the results volume is too slow; new lines are dropped until it catches up (counted as writer_dropped_lines)`,
          );
        }
      }
      return false;
    }
    if (this.#batchLines === 0) this.#batchFirstAtMs = nowMs();
    this.#batch[this.#index.get(file)!]!.push(line);
    this.#batchLines += 1;
    this.#batchBytes += bytes;
    this.#queuedBytes += bytes;
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      const waitMs = this.#lastPostAt + POST_EVERY_MS - performance.now();
      if (waitMs <= 0) setImmediate(() => this.#flush());
      else this.#flushTimer = setTimeout(() => this.#flush(), waitMs);
    }
    return true;
  }

  /** The writer's state for a client sample; starts a new lag window. */
  sample(): WriterSample {
    const now = nowMs();
    const lag = Math.max(this.#windowLagMs, this.#oldestAgeMs(now));
    this.#windowLagMs = 0;
    return { writer_lag_ms: Math.round(lag), writer_queued_bytes: this.#queuedBytes, writer_dropped_lines: this.#dropped };
  }

  /** Batches posted to the writer thread so far (each wakes it for a write). */
  get postedBatches(): number {
    return this.#seq;
  }

  get droppedLines(): number {
    return this.#dropped;
  }

  /**
   * Writes what is queued, closes the files and ends the thread. Bounded: after `drainTimeoutMs` what is still
   * queued is counted lost; rotated parts still compressing after `settleMs` are left (their plain copy stays).
   */
  close(options: { drainTimeoutMs: number; settleMs: number }): Promise<WriterCloseResult> {
    this.#closing ??= this.#close(options);
    return this.#closing;
  }

  async #close(options: { drainTimeoutMs: number; settleMs: number }): Promise<WriterCloseResult> {
    this.#flush();
    this.#worker.postMessage({ type: 'close', settleMs: options.settleMs } satisfies ToWriterMessage);
    let timer: NodeJS.Timeout | undefined;
    const compressing = await new Promise<number | null>((resolve) => {
      if (this.#exited) resolve(null);
      this.#onClosed = resolve;
      timer = setTimeout(() => resolve(null), options.drainTimeoutMs + options.settleMs);
    });
    clearTimeout(timer);
    const undrained = this.#pendingLines();
    this.#dropped += undrained;
    // A thread stuck in a write(2) on a dead volume may not end: never wait for it more than a moment.
    await Promise.race([this.#worker.terminate().catch(() => 0), new Promise((r) => setTimeout(r, 1000).unref())]);
    return { drained: compressing !== null && undrained === 0, undrainedLines: undrained, droppedLines: this.#dropped, compressing: compressing ?? 0 };
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#flushTimer !== null) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (this.#batchLines === 0) return;
    this.#lastPostAt = performance.now();
    this.#seq += 1;
    this.#pending.push({ seq: this.#seq, firstAtMs: this.#batchFirstAtMs, bytes: this.#batchBytes, lines: this.#batchLines });
    this.#worker.postMessage({ type: 'batch', seq: this.#seq, lines: this.#batch } satisfies ToWriterMessage);
    this.#batch = this.#paths.map(() => []);
    this.#batchLines = 0;
    this.#batchBytes = 0;
  }

  #onMessage(m: FromWriterMessage): void {
    if (m.type === 'ready') {
      // The lag is the disk's: lines queued while the thread was starting count from now.
      const now = nowMs();
      for (let i = this.#head; i < this.#pending.length; i += 1) this.#pending[i]!.firstAtMs = Math.max(this.#pending[i]!.firstAtMs, now);
      if (this.#batchLines > 0) this.#batchFirstAtMs = Math.max(this.#batchFirstAtMs, now);
      this.#settleReady?.(null);
    } else if (m.type === 'written') {
      this.#dropped += m.lost;
      while (this.#head < this.#pending.length && this.#pending[this.#head]!.seq <= m.seq) {
        const p = this.#pending[this.#head]!;
        this.#windowLagMs = Math.max(this.#windowLagMs, m.atMs - p.firstAtMs);
        this.#queuedBytes -= p.bytes;
        this.#head += 1;
      }
      if (this.#head > 1024 && this.#head * 2 > this.#pending.length) {
        this.#pending.splice(0, this.#head);
        this.#head = 0;
      }
      if (this.#dropping && this.#queuedBytes < this.#maxQueueBytes / 2) {
        this.#dropping = false;
        if (this.#noticed) this.#log(`results writer: caught up (${this.#dropped} lines dropped so far)`);
      }
    } else if (m.type === 'failed') {
      this.#fail(toResultsError(m.failure));
    } else if (m.type === 'notice') {
      this.#log(m.message);
    } else {
      this.#onClosed?.(m.compressing);
    }
  }

  #fail(error: ResultsError): void {
    this.#settleReady?.(error);
    if (this.#failed) return;
    this.#failed = true;
    this.#onFailure(error);
  }

  /** Age of the oldest line not yet on disk (0 when none waits). */
  #oldestAgeMs(now: number): number {
    const oldest = this.#head < this.#pending.length ? this.#pending[this.#head]!.firstAtMs : this.#batchLines > 0 ? this.#batchFirstAtMs : null;
    return oldest === null ? 0 : Math.max(0, now - oldest);
  }

  #pendingLines(): number {
    let n = this.#batchLines;
    for (let i = this.#head; i < this.#pending.length; i += 1) n += this.#pending[i]!.lines;
    return n;
  }
}
