// The trace file: one write(2) of one whole line per record, so a killed recorder leaves only whole lines
// (at worst a torn last line, which the reader skips). Synchronous on purpose: a trace line is written after
// its response has been forwarded, so nothing the harness waits for sits behind it.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { TraceLine } from './types.js';

export class TraceFileWriter {
  #fd: number | null;
  readonly path: string;

  constructor(path: string) {
    this.path = path;
    this.#fd = openSync(path, 'a');
  }

  write(value: TraceLine): void {
    // Closed: a late line after the recorder stopped is dropped on purpose.
    if (this.#fd === null) return;
    writeSync(this.#fd, `${JSON.stringify(value)}\n`);
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}
