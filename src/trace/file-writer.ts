// A trace file written by `roundload trace import`: one whole line per write, so a killed import leaves only
// whole lines (at worst a torn last line, which the reader skips). Synchronous: an import forwards nothing.
// The recorder, which does, writes through a process of its own (trace-writer.ts).
import { closeSync, openSync, writeSync } from 'node:fs';
import { TRACE_FILE_MODE, type TraceLine } from './types.js';

export class TraceFileWriter {
  #fd: number | null;
  readonly path: string;

  constructor(path: string) {
    this.path = path;
    // Owner-only when created: with --content the trace holds every prompt.
    this.#fd = openSync(path, 'a', TRACE_FILE_MODE);
  }

  write(value: TraceLine): void {
    // Closed: a late line is dropped on purpose.
    if (this.#fd === null) return;
    const buf = Buffer.from(`${JSON.stringify(value)}\n`);
    // write(2) may take part of a line (a pipe, a nearly full volume): the rest follows.
    for (let off = 0; off < buf.length;) off += writeSync(this.#fd, buf, off);
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}
