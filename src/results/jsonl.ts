// Line-atomic JSONL: every record is one write(2) of one whole line, so a killed run leaves only whole
// lines on disk (at worst a torn last line, which the reader skips and reports).
import { closeSync, openSync, writeSync } from 'node:fs';
import { jsonlLines } from './rotate.js';

export class JsonlWriter {
  #fd: number | null;
  #lines = 0;
  readonly path: string;

  constructor(path: string) {
    this.path = path;
    this.#fd = openSync(path, 'a');
  }

  get lines(): number {
    return this.#lines;
  }

  write(value: unknown): void {
    if (this.#fd === null) return; // closed: late events after the run ended are dropped on purpose
    const line = `${JSON.stringify(value)}\n`;
    writeSync(this.#fd, line);
    this.#lines += 1;
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}

export interface JsonlReadResult {
  lines: number;
  /** Lines that did not parse (a torn last line of a killed run, typically), with their line number. */
  bad: { line: number; sample: string }[];
}

/** Streams a JSONL file line by line (constant memory), its rotated parts first (`requests.1.jsonl`,
 * `requests.2.jsonl.gz`…, see rotate.ts); a missing file reads as empty. */
export async function readJsonl(path: string, onRecord: (value: unknown) => void): Promise<JsonlReadResult> {
  const result: JsonlReadResult = { lines: 0, bad: [] };
  let n = 0;
  for await (const line of jsonlLines(path)) {
    n += 1;
    if (line.trim() === '') continue;
    try {
      onRecord(JSON.parse(line));
      result.lines += 1;
    } catch {
      result.bad.push({ line: n, sample: line.slice(0, 120) });
    }
  }
  return result;
}
