// Reading a results folder's JSONL files back (requests.jsonl, events.jsonl, gauges.jsonl, with their rotated
// parts), streamed line by line with every skipped line accounted for (a killed run can leave a torn last line:
// it is skipped and reported, never fatal). What each file's lines are: records.ts; the line's version: line.ts.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { RecordIssue } from '../config/index.js';
import { RecordError } from '../errors.js';
import { onResultsFs } from './fs-error.js';
import { jsonlParts, openPart } from './rotate.js';
import { stripLineVersion } from './line.js';
import { isObject } from '../util/index.js';

export type SkipReason = 'truncated' | 'invalid_json' | 'not_a_record' | 'unreadable';

export interface SkippedLine {
  /** The file (or rotated part) the line is in. */
  file: string;
  line: number;
  reason: SkipReason;
  sample: string;
}

/** What reading one JSONL file found. */
export interface JsonlFileReport {
  file: string;
  exists: boolean;
  /** Complete lines accepted as records. */
  records: number;
  skipped: SkippedLine[];
}

const SAMPLE_CHARS = 80;

function endsWithNewline(path: string): boolean {
  const fd = onResultsFs(path, 'read', () => openSync(path, 'r'));
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/**
 * Streams a JSONL file and its rotated parts (`requests.1.jsonl[.gz]`, …, then `requests.jsonl`) in
 * constant memory. `accept` says whether a parsed line is a record of this file; accepted records go to
 * `onRecord`. A missing file reads as `exists: false` with no records. A last line without its newline
 * that does not parse is `truncated` (the writer died mid-line); any other bad line is `invalid_json` or
 * `not_a_record`; a part that cannot be read at all (a corrupt gzip) is `unreadable` from where it broke.
 * Each line's version (`v`, line.ts) is taken off it before `accept` sees it. A record that `check` finds
 * breaking its rules (an id, a time, a class), or a line of a version this roundload does not read, is a
 * RecordError with its place.
 * @throws RecordError
 */
export async function readJsonlFile<T>(
  path: string,
  accept: (value: unknown) => value is T,
  onRecord: (record: T) => void,
  check: (value: T) => RecordIssue | null = () => null,
): Promise<JsonlFileReport> {
  const report = emptyReport(path);
  for await (const record of jsonlRecords(path, accept, check, report)) onRecord(record);
  return report;
}

/** What reading `path` found, before it is read. */
export function emptyReport(path: string): JsonlFileReport {
  return { file: basename(path), exists: false, records: 0, skipped: [] };
}

/** {@link readJsonlFile} as a pull reader (a merge takes one record at a time from each shard): yields each
 * accepted record, and fills `report` as it goes. @throws RecordError */
export async function* jsonlRecords<T>(path: string, accept: (value: unknown) => value is T, check: (value: T) => RecordIssue | null, report: JsonlFileReport): AsyncGenerator<T> {
  const parts = jsonlParts(path);
  for (const part of parts) {
    report.exists = true;
    const opened = onResultsFs(part, 'read', () => openPart(part));
    const file = basename(opened.file);
    const gz = opened.gz;
    // Only the live file can end mid-line: a part is closed between whole lines (and may be gzipped by now).
    const complete = gz || part !== parts.at(-1) || endsWithNewline(part);
    const raw = opened.raw;
    const input = gz ? raw.pipe(createGunzip()) : raw.setEncoding('utf8');
    raw.on('error', (error) => input.destroy(error));
    const rl = createInterface({ input, crlfDelay: Infinity });
    let n = 0;
    let pendingBad: SkippedLine | null = null;
    // A record that breaks its rules ends the read (thrown once the part is closed), never skipped.
    let failure: RecordError | null = null;
    try {
      for await (const line of rl) {
        n += 1;
        if (pendingBad !== null) {
          report.skipped.push(pendingBad);
          pendingBad = null;
        }
        if (line.trim() === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          // Held back one line: if it is the last line and the file has no final newline, it is torn.
          pendingBad = { file, line: n, reason: 'invalid_json', sample: line.slice(0, SAMPLE_CHARS) };
          continue;
        }
        // A line of a version this roundload does not read is refused before anything else is asked of it.
        const versionIssue = isObject(value) ? stripLineVersion(value) : null;
        if (versionIssue === null && !accept(value)) {
          report.skipped.push({ file, line: n, reason: 'not_a_record', sample: line.slice(0, SAMPLE_CHARS) });
          continue;
        }
        const issue = versionIssue ?? check(value as T);
        if (issue !== null) {
          failure = new RecordError(opened.file, n, issue.field, issue.problem);
          break;
        }
        report.records += 1;
        yield value as T;
      }
      if (pendingBad !== null) report.skipped.push(complete ? pendingBad : { ...pendingBad, reason: 'truncated' });
    } catch (error) {
      if (pendingBad !== null) report.skipped.push(pendingBad);
      report.skipped.push({ file, line: n + 1, reason: 'unreadable', sample: error instanceof Error ? error.message : String(error) });
    } finally {
      rl.close();
      raw.destroy();
    }
    if (failure !== null) throw failure;
  }
}

/** One sentence per skipped line, e.g. `requests.jsonl: last line truncated (line 57), skipped`. */
export function describeSkipped(report: JsonlFileReport): string[] {
  const out: string[] = [];
  const shown = report.skipped.slice(0, 5);
  for (const s of shown) {
    if (s.reason === 'truncated') out.push(`${s.file}: last line truncated (line ${s.line}), skipped`);
    else if (s.reason === 'invalid_json') out.push(`${s.file}: line ${s.line} is not valid JSON, skipped (${JSON.stringify(s.sample)})`);
    else if (s.reason === 'unreadable') out.push(`${s.file}: unreadable from line ${s.line} on (${s.sample}), rest of that file skipped`);
    else out.push(`${s.file}: line ${s.line} is not a ${report.file} record, skipped`);
  }
  if (report.skipped.length > shown.length) out.push(`${report.file}: ${report.skipped.length - shown.length} more bad lines skipped`);
  return out;
}

/** Every line as a plain object (events.jsonl, gauges.jsonl: each line has a string `kind`). */
export function isKindLine(value: unknown): value is Record<string, unknown> & { kind: string } {
  return isObject(value) && typeof value.kind === 'string';
}
