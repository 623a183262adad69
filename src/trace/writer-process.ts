// The trace writer process (see trace-writer.ts): reads trace lines on stdin and appends them to the trace with
// blocking write(2) calls, acknowledging whole lines over IPC. A full, failing or stalled volume blocks or fails
// only this process; the recorder kills it when it must go. Node built-ins only: it starts in about 40 ms.
import { closeSync, constants, fstatSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import type { FromTraceWriter, ToTraceWriter } from './trace-writer.js';
import { TRACE_FILE_MODE, type TraceIncomplete } from './types.js';

const post = (m: FromTraceWriter): void => {
  if (process.connected) process.send!(m);
};
const codeOf = (error: unknown): string | null => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
};
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

// A terminal's Ctrl-C reaches the whole process group: the recorder decides when this process ends.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

let fd: number | null = null;
/** Bytes of whole lines in the file (what a torn write is cut back to), and whole lines written. */
let goodBytes = 0;
let lines = 0;
let failed = false;
/** A failed write left part of a line that could not be cut (a pipe, a device): nothing may follow it. */
let torn = false;
let done = false;
let held: Buffer[] = [];
let inputEnded = false;
/** The last line to append once the input is drained (`finish`), undefined until the recorder says. */
let finishLine: TraceIncomplete | null | undefined;
let scheduled = false;
/** The last lines written (where each starts, whether it is a request's), so that room for the closing line
 * can be made on a full volume by giving a few back. */
const recent: { start: number; request: boolean }[] = [];
const RECENT_LINES = 64;
const WRITE_BYTES = 16 * 1024;
/** Every trace line is an object whose first key is `kind` (JSON.stringify keeps the literal's order). */
const REQUEST_PREFIX = Buffer.from('{"kind":"request"');

function open(path: string): void {
  try {
    // A FIFO no process reads would block open(2) until one comes: say so now instead.
    if (statSync(path, { throwIfNoEntry: false })?.isFIFO() === true) closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    // Owner-only when created: with --content the trace holds every prompt the harness sent.
    fd = openSync(path, 'a', TRACE_FILE_MODE);
    const stat = fstatSync(fd);
    goodBytes = stat.isFile() ? stat.size : 0;
    post({ type: 'opened' });
  } catch (error) {
    failed = true;
    post({ type: 'failed', doing: 'open', code: codeOf(error), message: messageOf(error), lines });
  }
}

/** Appends whole lines, looping over short writes; returns the error of a failed write, after cutting the
 * file back to the last whole line it holds. `lines` and `recent` follow what is in the file. */
function writeLines(buf: Buffer): unknown {
  let off = 0;
  let error: unknown = null;
  try {
    while (off < buf.length) off += writeSync(fd!, buf, off);
  } catch (e) {
    error = e;
  }
  const keep = error === null ? buf.length : buf.lastIndexOf(0x0a, off - 1) + 1;
  for (let from = 0; from < keep;) {
    const to = buf.indexOf(0x0a, from) + 1;
    recent.push({ start: goodBytes + from, request: buf.subarray(from, from + REQUEST_PREFIX.length).equals(REQUEST_PREFIX) });
    lines += 1;
    from = to;
  }
  if (recent.length > RECENT_LINES) recent.splice(0, recent.length - RECENT_LINES);
  goodBytes += keep;
  if (error !== null && off > keep) {
    try {
      ftruncateSync(fd!, goodBytes);
    } catch {
      // not a regular file (a pipe, a device): the torn line stays, and the reader skips a torn last line
      torn = true;
    }
  }
  return error;
}

function drain(): void {
  scheduled = false;
  if (held.length > 0 && fd !== null && !failed) {
    const all = held.length === 1 ? held[0]! : Buffer.concat(held);
    const end = all.lastIndexOf(0x0a) + 1;
    held = end === all.length ? [] : [all.subarray(end)];
    // In pieces of about WRITE_BYTES, each acknowledged: what a stalled volume took before it stalled is known.
    for (let from = 0; from < end && !failed;) {
      const to = from + WRITE_BYTES >= end ? end : all.indexOf(0x0a, from + WRITE_BYTES - 1) + 1;
      const error = writeLines(all.subarray(from, to));
      if (error === null) post({ type: 'written', lines });
      else {
        failed = true;
        post({ type: 'failed', doing: 'write', code: codeOf(error), message: messageOf(error), lines });
      }
      from = to;
    }
  }
  if (failed) held = [];
  if (inputEnded && finishLine !== undefined) finish(finishLine);
}

/** Appends the closing line (after a failure too: cutting a torn line may have freed room for it). On a full
 * volume the last lines are given back, a few at most, to make room: it says what the trace misses, they
 * are counted in it. */
function finish(line: TraceIncomplete | null): void {
  if (done) return;
  done = true;
  let finished = false;
  const givenBack = { requests: 0, lines: 0 };
  if (line !== null && fd !== null && !torn) {
    for (;;) {
      const closing = { ...line, requests_not_recorded: line.requests_not_recorded + givenBack.requests, lines_not_recorded: line.lines_not_recorded + givenBack.lines };
      if (writeLines(Buffer.from(`${JSON.stringify(closing)}\n`)) === null) {
        finished = true;
        break;
      }
      const last = recent.pop();
      if (last === undefined || torn) break;
      try {
        ftruncateSync(fd, last.start);
      } catch {
        break;
      }
      goodBytes = last.start;
      lines -= 1;
      givenBack.lines += 1;
      if (last.request) givenBack.requests += 1;
    }
  }
  if (fd !== null) closeSync(fd);
  fd = null;
  post({ type: 'closed', lines, finished, givenBack });
  process.disconnect();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(drain);
}

process.on('message', (m: ToTraceWriter) => {
  if (m.type === 'open') open(m.path);
  else if (m.type === 'discard') {
    // The recorder could not start: leave the file as it was, so the same --out can be used again.
    try {
      if (fd !== null) ftruncateSync(fd, 0);
    } catch {
      // a pipe or a device: nothing to take back
    }
  } else {
    finishLine = m.line;
    schedule();
  }
});
// The recorder went away without saying how to finish (killed): write what arrived, then end.
process.on('disconnect', () => {
  finishLine ??= null;
  schedule();
});
process.stdin.on('data', (chunk: Buffer) => {
  held.push(chunk);
  schedule();
});
process.stdin.on('end', () => {
  inputEnded = true;
  schedule();
});
process.stdin.on('error', () => {
  inputEnded = true;
  schedule();
});
// No stderr of its own (an orphan stuck on a stalled volume must not hold the recorder's): a bug is reported.
process.on('uncaughtException', (error) => {
  post({ type: 'failed', doing: 'write', code: null, message: `the trace writer failed: ${error.stack ?? error.message}`, lines });
  process.exit(1);
});
