// Writes every event to its results file as it happens (routing fixed by EVENT_FILES): serialized here, once,
// scrubbed of secrets, then handed to the results writer thread, which rotates files past
// `results.max_file_mb`. Nothing here blocks on the disk.
import { EVENT_FILES, type EventFile, type RunEvent } from '../types/index.js';
import { ResultsWriter, resultPath, resultsLine, type WriterCloseResult, type WriterSample } from '../results/index.js';
import type { ResultsError } from '../errors.js';
import type { RunBus } from './bus.js';

type SinkFile = Exclude<EventFile, null>;

export interface SinkOptions {
  /** Rotate a file once it reaches this many bytes; null: never. @default null */
  maxFileBytes?: number | null;
  /** Gzip rotated parts. @default false */
  compress?: boolean;
  log?: (line: string) => void;
  /** Applied to every serialized line before it is queued (the run's secret scrubber). @default as is */
  scrub?: (line: string) => string;
  /** A results file cannot be written (ENOSPC, EIO…): called once. */
  onFailure?: (error: ResultsError) => void;
  /** Queue bound and test hooks of the writer (see the results writer's options). */
  writer?: WriterTuning;
}

/** Knobs of the results writer a caller (a test, mostly) may turn. */
export interface WriterTuning {
  /** @default 64 MiB */
  maxQueueBytes?: number;
  /** Test hook: every write(2) first blocks the writer thread this long. @default 0 */
  writeDelayMs?: number;
}

/** The one serialization step of a results line, in the results folder's line format (`{"v":2,…}`):
 * requests.jsonl holds bare records, the other files the events. */
function serialize(event: RunEvent): string {
  return resultsLine(event.kind === 'request' ? event.record : event);
}

export class EventSinks {
  readonly #writer: ResultsWriter<SinkFile>;
  readonly #scrub: (line: string) => string;

  constructor(dir: string, options: SinkOptions = {}) {
    this.#scrub = options.scrub ?? ((line) => line);
    this.#writer = new ResultsWriter<SinkFile>({
      files: { requests: resultPath(dir, 'requests'), events: resultPath(dir, 'events'), gauges: resultPath(dir, 'gauges') },
      maxFileBytes: options.maxFileBytes ?? null,
      compress: options.compress ?? false,
      ...(options.writer?.maxQueueBytes === undefined ? {} : { maxQueueBytes: options.writer.maxQueueBytes }),
      ...(options.writer?.writeDelayMs === undefined ? {} : { writeDelayMs: options.writer.writeDelayMs }),
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.onFailure === undefined ? {} : { onFailure: options.onFailure }),
    });
  }

  attach(bus: RunBus): void {
    bus.onAny((event) => this.write(event));
  }

  write(event: RunEvent): void {
    const file = EVENT_FILES[event.kind];
    if (file === null) return;
    this.#writer.write(file, `${this.#scrub(serialize(event))}\n`);
  }

  /** Resolves once the writer thread has its files open (see ResultsWriter.ready). */
  ready(timeoutMs: number): Promise<void> {
    return this.#writer.ready(timeoutMs);
  }

  /** writer_lag_ms and friends, for the client sample. */
  sample(): WriterSample {
    return this.#writer.sample();
  }

  /** Drains the queue to disk (bounded) and closes the files; see ResultsWriter.close. */
  close(options: { drainTimeoutMs: number; settleMs: number }): Promise<WriterCloseResult> {
    return this.#writer.close(options);
  }
}
