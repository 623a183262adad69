// Reading JSONL back in constant memory (the writer side is writer.ts and rotate.ts).
import { jsonlLines } from './rotate.js';

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
