// The results writer thread (see writer.ts): appends the batches the main thread posts, rotating and gzipping
// as configured, and acknowledges each with the time it reached the kernel. Its write(2) calls may block on a
// slow volume: only this thread waits.
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { ResultsError } from '../errors.js';
import { fsFailure, type FsFailure } from './fs-error.js';
import { RotatingJsonlWriter } from './rotate.js';
import type { FromWriterMessage, ToWriterMessage, WriterThreadInit } from './writer.js';

const init = workerData as WriterThreadInit;
const port = parentPort!;
const post = (m: FromWriterMessage): void => port.postMessage(m);
/** The test hook's clock: Atomics.wait blocks this thread as a stalled write(2) would. */
const pause = init.writeDelayMs > 0 ? new Int32Array(new SharedArrayBuffer(4)) : null;

function failureOf(error: unknown, path: string, doing: string): FsFailure {
  if (error instanceof ResultsError) return { path: error.path, doing: error.doing, reason: error.reason, hint: error.hint, osCode: error.osCode };
  return fsFailure(error, path, doing) ?? { path, doing, reason: error instanceof Error ? error.message : String(error), hint: null, osCode: null };
}

/** A file that failed is null from then on: its lines are counted lost, the others go on. */
const writers: (RotatingJsonlWriter | null)[] = init.files.map((path) => {
  try {
    return new RotatingJsonlWriter(path, { maxBytes: init.maxFileBytes, compress: init.compress, log: (message) => post({ type: 'notice', message }) });
  } catch (error) {
    post({ type: 'failed', failure: failureOf(error, path, 'open') });
    return null;
  }
});

function fail(i: number, error: unknown): void {
  const w = writers[i]!;
  writers[i] = null;
  post({ type: 'failed', failure: failureOf(error, w.path, 'write') });
  try {
    w.close();
  } catch {
    // already reported
  }
}

const queue: { seq: number; lines: string[][] }[] = [];
let settleMs: number | null = null;
let scheduled = false;

/** Everything queued, one write per file (more when a file rotates), then one acknowledgement. */
function drain(): void {
  scheduled = false;
  if (queue.length > 0) {
    const batches = queue.splice(0);
    let lost = 0;
    for (let i = 0; i < init.files.length; i += 1) {
      const lines = batches.length === 1 ? (batches[0]!.lines[i] ?? []) : batches.flatMap((b) => b.lines[i] ?? []);
      if (lines.length === 0) continue;
      const w = writers[i];
      if (w === null || w === undefined) {
        lost += lines.length;
        continue;
      }
      if (pause !== null) Atomics.wait(pause, 0, 0, init.writeDelayMs);
      const before = w.lines;
      try {
        w.writeLines(lines);
      } catch (error) {
        lost += lines.length - (w.lines - before);
        fail(i, error);
      }
    }
    post({ type: 'written', seq: batches.at(-1)!.seq, atMs: performance.timeOrigin + performance.now(), lost });
  }
  if (settleMs !== null && queue.length === 0) void finish(settleMs);
}

async function finish(ms: number): Promise<void> {
  settleMs = null;
  for (let i = 0; i < writers.length; i += 1) {
    try {
      writers[i]?.close();
    } catch (error) {
      fail(i, error);
    }
  }
  const left = await Promise.all(writers.map((w) => w?.settle(ms) ?? Promise.resolve(0)));
  post({ type: 'closed', compressing: left.reduce((a, b) => a + b, 0) });
  port.close();
}

post({ type: 'ready' });

port.on('message', (m: ToWriterMessage) => {
  if (m.type === 'batch') queue.push(m);
  else settleMs = m.settleMs;
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});
