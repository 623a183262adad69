// Reading a results folder back: the manifest, the summary, and JSONL files (with their rotated parts) streamed line
// by line with every skipped line accounted for (a killed run can leave a torn last line: it is skipped
// and reported, never fatal).
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { Summary } from '../analysis/index.js';
import type { RecordIssue } from '../config/index.js';
import { NotARunError, RecordError } from '../errors.js';
import { onResultsFs, rethrowFs } from './fs-error.js';
import { RESULT_FILES, resultPath } from './folder.js';
import { jsonlParts, openPart } from './rotate.js';
import { isObject } from '../util/index.js';

/** run.json as written by the orchestrator (fields a report needs; anything else is kept as is). */
export interface RunManifest {
  schema_version: number;
  name: string;
  /** `running` until the run ends; a manifest still `running` after the fact means the process died. */
  status: string;
  started_at: string | null;
  ended_at: string | null;
  argv: string[];
  labels: Record<string, string>;
  target: { url: string; embedded: boolean; model: string | null; tls_insecure: boolean };
  path: string;
  versions: Record<string, string>;
  host: Record<string, string | number>;
  /** The workload as resolved (secrets redacted). */
  workload: Record<string, unknown>;
}

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

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
  return out;
}

/** Throws NotARunError (exit 2) when `dir` is missing or is not a roundload results folder, ResultsError
 * (exit 4) when the file system refuses to show it. */
export function assertRunFolder(dir: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotARunError(`${dir}: no such folder; pass a results folder (results/<stamp>-<name>/ or a run's --out)`, { context: { dir } });
    rethrowFs(error, dir, 'read the results folder');
  }
  if (!isDir) throw new NotARunError(`${dir} is a file, not a results folder`, { context: { dir } });
  if (!existsSync(resultPath(dir, 'manifest'))) {
    throw new NotARunError(`${dir} is not a roundload results folder: it has no ${RESULT_FILES.manifest} (every run writes it first)`, { context: { dir } });
  }
}

/** Reads run.json, tolerant of missing fields (older or partial manifests) but not of a non-run file. */
export function readManifest(dir: string): RunManifest {
  assertRunFolder(dir);
  const path = resultPath(dir, 'manifest');
  const text = onResultsFs(path, 'read', () => readFileSync(path, 'utf8'));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new NotARunError(`${path} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error, context: { dir } });
  }
  if (!isObject(raw) || typeof raw.name !== 'string' || typeof raw.status !== 'string') {
    throw new NotARunError(`${path} is not a roundload manifest (no name/status)`, { context: { dir } });
  }
  const target = isObject(raw.target) ? raw.target : {};
  return {
    schema_version: typeof raw.schema_version === 'number' ? raw.schema_version : 0,
    name: raw.name,
    status: raw.status,
    started_at: typeof raw.started_at === 'string' ? raw.started_at : null,
    ended_at: typeof raw.ended_at === 'string' ? raw.ended_at : null,
    argv: Array.isArray(raw.argv) ? raw.argv.filter((a): a is string => typeof a === 'string') : [],
    labels: stringRecord(raw.labels),
    target: {
      url: str(target.url, 'unknown'),
      embedded: target.embedded === true,
      model: typeof target.model === 'string' ? target.model : null,
      tls_insecure: target.tls_insecure === true,
    },
    path: str(raw.path, 'direct'),
    versions: stringRecord(raw.versions),
    host: isObject(raw.host) ? Object.fromEntries(Object.entries(raw.host).filter((e): e is [string, string | number] => typeof e[1] === 'string' || typeof e[1] === 'number')) : {},
    workload: isObject(raw.workload) ? raw.workload : {},
  };
}

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
 * A record that `check` finds breaking its rules (an id, a time, a class) is a RecordError with its place.
 * @throws RecordError
 */
export async function readJsonlFile<T>(
  path: string,
  accept: (value: unknown) => value is T,
  onRecord: (record: T) => void,
  check: (value: T) => RecordIssue | null = () => null,
): Promise<JsonlFileReport> {
  const report: JsonlFileReport = { file: basename(path), exists: false, records: 0, skipped: [] };
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
        if (!accept(value)) {
          report.skipped.push({ file, line: n, reason: 'not_a_record', sample: line.slice(0, SAMPLE_CHARS) });
          continue;
        }
        const issue = check(value);
        if (issue !== null) {
          failure = new RecordError(opened.file, n, issue.field, issue.problem);
          break;
        }
        onRecord(value);
        report.records += 1;
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
  return report;
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

/**
 * Reads summary.json: the one reader every command uses (compare, history import, shrink, repro, a rebuild's
 * previous summary). `what` starts the messages (`cannot compare results/x`). @throws NotARunError (exit 2)
 * when it is missing (a run killed before its end), not JSON, or not a roundload summary — each saying to
 * rebuild it with `roundload report`; ResultsError (exit 4) when the disk refuses it.
 */
export function readSummary(dir: string, what = dir): Summary {
  const path = resultPath(dir, 'summary');
  const rebuild = `rebuild it with \`roundload report ${dir}\``;
  if (!existsSync(path)) throw new NotARunError(`${what}: it has no ${RESULT_FILES.summary} (a run killed before its end); ${rebuild}`, { context: { dir } });
  const text = onResultsFs(path, 'read', () => readFileSync(path, 'utf8'));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new NotARunError(`${what}: ${RESULT_FILES.summary} is not valid JSON; ${rebuild}`, { context: { dir }, cause });
  }
  if (!isObject(raw) || !isObject(raw.run) || !isObject(raw.totals) || !Array.isArray(raw.phases) || !isObject(raw.thresholds)) {
    throw new NotARunError(`${what}: ${RESULT_FILES.summary} is not a roundload summary (no run, totals, phases or thresholds); ${rebuild}`, { context: { dir } });
  }
  return raw as unknown as Summary;
}
