// The trace file's writer: lines go to a child process that appends them with blocking write(2) calls
// (writer-process.ts), so a full, failing or stalled trace volume never delays the recorder's event loop. A
// process, not a thread: a thread stuck in write(2) (or libuv's, for fs promises) cannot be ended and keeps
// the recorder from exiting, where a process can be killed. Bounded: at the first failed write, or once more
// than `maxQueueBytes` wait for the volume, recording stops for good; later lines are dropped and counted.
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ResultsError } from '../errors.js';
import { fsReason, spawnModuleProcess } from '../util/index.js';
import type { TraceIncomplete, TraceLine } from './types.js';

/** Recorder → writer process (IPC; the lines themselves go on its stdin). */
export type ToTraceWriter = { type: 'open'; path: string } | { type: 'finish'; line: TraceIncomplete | null } | { type: 'discard' };
/** Writer process → recorder. `lines`: whole lines written so far. */
export type FromTraceWriter =
  | { type: 'opened' }
  | { type: 'written'; lines: number }
  | { type: 'failed'; doing: 'open' | 'write'; code: string | null; message: string; lines: number }
  /** `givenBack`: lines taken out of the trace to make room for the closing line on a full volume. */
  | { type: 'closed'; lines: number; finished: boolean; givenBack: { requests: number; lines: number } };

/** @default 16 MiB: thousands of requests' lines (shapes are about 1 KiB each) held while the volume is slow. */
const DEFAULT_MAX_QUEUE_BYTES = 16 * 1024 * 1024;

export interface TraceWriterOptions {
  /** Bytes written by the recorder and not yet on the volume past which recording stops. @default 16 MiB */
  maxQueueBytes?: number;
  /** How long opening the file and writing its first line may take before the trace is refused. @default 10000 */
  startTimeoutMs?: number;
  /** A notice once no line has reached the volume for this long while some wait. @default 10000 */
  stallNoticeMs?: number;
  /** Notices: recording stopped (once), the volume stalled. */
  log?: (line: string) => void;
}

export interface TraceWriterStop {
  /** performance.now() when recording stopped. */
  atMs: number;
  /** Why, in words. */
  reason: string;
}

export interface TraceWriterResult {
  /** Request lines that are not in the trace: dropped after recording stopped, or lost with the volume. */
  requestsNotRecorded: number;
  linesNotRecorded: number;
  stopped: TraceWriterStop | null;
  /** The closing line (`finish`) reached the trace. */
  finished: boolean;
}

/** What to do about a trace volume's OS code. */
const HINTS: Record<string, string> = {
  ENOSPC: 'free space on that volume, or record to a file elsewhere',
  EDQUOT: 'free space or raise the quota, or record to a file elsewhere',
  EACCES: 'check the permissions of the file and its folder, or record elsewhere',
  EPERM: 'check the permissions of the file and its folder, or record elsewhere',
  EROFS: 'mount the volume read-write, or record elsewhere',
  ENOENT: 'create the folder first',
  ENOTDIR: 'a part of the path is a file: give a path under a folder',
  EISDIR: 'give a file path, not a folder',
  ENXIO: 'start the process that reads the FIFO first',
  EIO: 'the volume is failing or went away; record elsewhere',
};

const CLOSE_BOUND_MS = 2_000;
const STALL_CHECK_MS = 1_000;

function size(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** The OS reason in words: `no space left on device (ENOSPC)`. */
function reasonOf(m: { code: string | null; message: string }): string {
  if (m.code === 'ENXIO') return 'no process has the FIFO open for reading (ENXIO)';
  return m.code === null ? m.message : fsReason(Object.assign(new Error(m.message), { code: m.code, syscall: 'write' }));
}

interface Pending {
  bytes: number;
  request: boolean;
}

export class TraceWriter {
  readonly path: string;
  readonly #child: ChildProcess;
  readonly #maxQueueBytes: number;
  readonly #stallNoticeMs: number;
  readonly #log: (line: string) => void;
  /** Lines handed to the writer and not yet acknowledged written, oldest first (from `#head`). */
  #pending: Pending[] = [];
  #head = 0;
  #queuedBytes = 0;
  /** Whole lines the writer process has written. */
  #written = 0;
  /** performance.now() since when the oldest waiting line has waited without any line reaching the volume. */
  #waitingSince: number | null = null;
  #stallNoticed = false;
  #stallTimer: NodeJS.Timeout;
  #stopped: TraceWriterStop | null = null;
  #droppedRequests = 0;
  #droppedLines = 0;
  #exited = false;
  /** Started: from then on a failure stops recording (before, it refuses the trace). */
  #live = false;
  #closing: Promise<TraceWriterResult> | null = null;
  /** Told of every message, after the writer's own bookkeeping (start-up and close wait on these). */
  #listener: ((m: FromTraceWriter | { type: 'exit'; code: number | null }) => void) | null = null;

  private constructor(path: string, child: ChildProcess, options: TraceWriterOptions) {
    this.path = path;
    this.#child = child;
    this.#maxQueueBytes = options.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES;
    this.#stallNoticeMs = options.stallNoticeMs ?? 10_000;
    this.#log = options.log ?? (() => {});
    child.on('message', (m: FromTraceWriter) => this.#onMessage(m));
    child.on('exit', (code) => this.#onExit(code));
    // A spawn failure (no process left) is reported by exit; a dead writer's stdin by exit too.
    child.on('error', () => this.#onExit(null));
    child.stdin!.on('error', () => {});
    // Never what keeps the recorder alive: close() waits for it, bounded; a writer left behind (the recorder
    // killed) appends what it was handed and ends on its own.
    child.unref();
    child.channel?.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.#stallTimer = setInterval(() => this.#checkStall(), STALL_CHECK_MS);
    this.#stallTimer.unref();
  }

  /** Starts the writer on `path` and writes `first` (the header); resolves once it is on the volume.
   * @throws ResultsError (exit 4) when the file cannot be opened or written, or not within `startTimeoutMs`. */
  static async open(path: string, first: TraceLine, options: TraceWriterOptions = {}): Promise<TraceWriter> {
    const child = spawnModuleProcess(import.meta.url, 'writer-process', ['pipe', 'ignore', 'ignore']);
    const writer = new TraceWriter(path, child, options);
    const timeoutMs = options.startTimeoutMs ?? 10_000;
    try {
      await writer.#started(first, timeoutMs);
      writer.#live = true;
      return writer;
    } catch (error) {
      writer.#kill();
      throw error;
    }
  }

  #started(first: TraceLine, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listener = null;
        reject(
          new ResultsError(this.path, 'write the trace', `it took no line within ${timeoutMs / 1000} s (a stalled volume, or a FIFO whose reader does not read?)`, {
            hint: 'record to a file on a volume that answers',
          }),
        );
      }, timeoutMs);
      this.#listener = (m) => {
        if (m.type === 'written' || m.type === 'failed' || m.type === 'exit') {
          clearTimeout(timer);
          this.#listener = null;
        }
        if (m.type === 'written') resolve();
        else if (m.type === 'failed') {
          const doing = m.doing === 'open' ? 'open the trace' : 'write the trace';
          const hint = m.code === null ? undefined : HINTS[m.code];
          reject(new ResultsError(this.path, doing, reasonOf(m), { osCode: m.code, ...(hint === undefined ? {} : { hint }) }));
        } else if (m.type === 'exit') reject(new ResultsError(this.path, 'write the trace', `the trace writer process ended (exit code ${m.code ?? 'none'})`));
      };
      this.#send({ type: 'open', path: this.path });
      this.write(first);
    });
  }

  get stopped(): TraceWriterStop | null {
    return this.#stopped;
  }

  /** Requests and lines not recorded so far (dropped after recording stopped, or lost with the volume). */
  get notRecorded(): { requests: number; lines: number } {
    return { requests: this.#droppedRequests, lines: this.#droppedLines };
  }

  /** Hands `line` to the writer; never waits. After recording stopped it is only counted. */
  write(line: TraceLine): void {
    const request = line.kind === 'request';
    if (this.#stopped !== null || this.#closing !== null) {
      this.#drop(request);
      return;
    }
    const text = `${JSON.stringify(line)}\n`;
    const bytes = Buffer.byteLength(text);
    if (this.#queuedBytes + bytes > this.#maxQueueBytes) {
      this.#stop(`the trace volume fell more than ${size(this.#maxQueueBytes)} behind (stalled or too slow)`);
      this.#drop(request);
      return;
    }
    this.#pending.push({ bytes, request });
    this.#queuedBytes += bytes;
    this.#waitingSince ??= performance.now();
    this.#child.stdin!.write(text);
  }

  /** The recorder could not start: the writer empties the file (a regular one) and ends. */
  async discard(): Promise<void> {
    this.#send({ type: 'discard' });
    await this.close(() => null);
  }

  /**
   * Stops writing: waits (at most `boundMs`) for the lines handed over to reach the volume, then for
   * `finish(stop)` (a closing line, when recording stopped) to follow them; then ends the writer process,
   * killing it if the volume still holds it. Lines still waiting then are counted as not recorded.
   */
  close(finish: (stop: TraceWriterStop) => TraceIncomplete | null, boundMs = CLOSE_BOUND_MS): Promise<TraceWriterResult> {
    return (this.#closing ??= this.#close(finish, boundMs));
  }

  async #close(finish: (stop: TraceWriterStop) => TraceIncomplete | null, boundMs: number): Promise<TraceWriterResult> {
    clearInterval(this.#stallTimer);
    let finished = false;
    if (!this.#exited) {
      const closed = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), boundMs);
        this.#listener = (m) => {
          if (m.type === 'closed') {
            finished = m.finished;
            this.#droppedRequests += m.givenBack.requests;
            this.#droppedLines += m.givenBack.lines;
          }
          if (m.type === 'closed' || m.type === 'exit') {
            clearTimeout(timer);
            resolve(true);
          }
        };
      });
      this.#child.stdin!.end();
      const line = this.#stopped === null ? null : finish(this.#stopped);
      this.#send({ type: 'finish', line });
      if (!(await closed)) this.#kill();
      this.#listener = null;
    }
    const waiting = this.#pending.length - this.#head;
    if (waiting > 0 && this.#stopped === null) {
      const since = this.#waitingSince ?? performance.now();
      this.#stopped = {
        atMs: since,
        reason: `the trace volume stalled: it took no line in the last ${((performance.now() - since) / 1000).toFixed(1)} s, and ${waiting} lines (${size(this.#queuedBytes)}) still waited when the recorder stopped`,
      };
    }
    this.#loseWaiting();
    return { requestsNotRecorded: this.#droppedRequests, linesNotRecorded: this.#droppedLines, stopped: this.#stopped, finished };
  }

  #onMessage(m: FromTraceWriter): void {
    if (m.type === 'written' || m.type === 'closed' || m.type === 'failed') this.#acknowledge(m.lines);
    if (m.type === 'failed' && this.#live) {
      const hint = m.code === null ? undefined : HINTS[m.code];
      this.#stop(`cannot write ${this.path}: ${reasonOf(m)}`, hint);
      // The writer process discards what it had not written: those lines are lost.
      this.#loseWaiting();
    }
    this.#listener?.(m);
  }

  #onExit(code: number | null): void {
    if (this.#exited) return;
    this.#exited = true;
    clearInterval(this.#stallTimer);
    if (this.#closing === null && this.#live) {
      this.#stop(`the trace writer process ended (exit code ${code ?? 'none'})`);
      this.#loseWaiting();
    }
    this.#listener?.({ type: 'exit', code });
  }

  /** `lines` whole lines are on the volume: those waiting are acknowledged, oldest first. */
  #acknowledge(lines: number): void {
    for (; this.#written < lines && this.#head < this.#pending.length; this.#written += 1) {
      this.#queuedBytes -= this.#pending[this.#head]!.bytes;
      this.#head += 1;
    }
    this.#written = lines;
    if (this.#head === this.#pending.length) {
      this.#pending = [];
      this.#head = 0;
      this.#waitingSince = null;
    } else this.#waitingSince = performance.now();
    if (this.#stallNoticed && this.#waitingSince === null) {
      this.#stallNoticed = false;
      if (this.#stopped === null) this.#log('record: the trace volume takes lines again');
    }
  }

  /** Lines handed over and not written will never be: counted as not recorded. */
  #loseWaiting(): void {
    for (let i = this.#head; i < this.#pending.length; i += 1) this.#drop(this.#pending[i]!.request);
    this.#pending = [];
    this.#head = 0;
    this.#queuedBytes = 0;
    this.#waitingSince = null;
  }

  #drop(request: boolean): void {
    this.#droppedLines += 1;
    if (request) this.#droppedRequests += 1;
  }

  #stop(reason: string, hint?: string): void {
    if (this.#stopped !== null) return;
    this.#stopped = { atMs: performance.now(), reason };
    this.#log(
      `record: recording STOPPED: ${reason}${hint === undefined ? '' : ` (${hint})`}. Requests are still forwarded, but no longer recorded; the trace keeps what came before, and the count of what it misses is printed at exit`,
    );
  }

  #checkStall(): void {
    if (this.#stallNoticed || this.#stopped !== null || this.#waitingSince === null) return;
    const waitedMs = performance.now() - this.#waitingSince;
    if (waitedMs < this.#stallNoticeMs) return;
    this.#stallNoticed = true;
    this.#log(
      `record: the trace volume has taken no line for ${Math.round(waitedMs / 1000)} s; ${this.#pending.length - this.#head} lines (${size(this.#queuedBytes)}) wait in memory, and recording stops past ${size(this.#maxQueueBytes)}`,
    );
  }

  #send(m: ToTraceWriter): void {
    if (this.#child.connected) this.#child.send(m);
  }

  #kill(): void {
    clearInterval(this.#stallTimer);
    if (!this.#exited) this.#child.kill('SIGKILL');
  }
}
