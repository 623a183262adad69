// The lines of requests.jsonl, events.jsonl and gauges.jsonl as the readers take them: which lines are records of
// each file (enough of one for the summary to use it safely), and the one reader of each file, held to the
// record rules (config/record-rules.ts) — pushed to a callback (report, repro, compare) or pulled one at a time
// (a merge's k-way interleaving of its shards). Every version's lines read (line.ts takes their `v` off).
import { kindLineIssue, requestRecordIssue, type RecordIssue } from '../config/index.js';
import type { ArrivalsEndEvent, CanaryEvent, ClientSampleEvent, ConversationEndEvent, ConversationStartEvent, PhaseEvent, ProbeEvent, RequestRecord, ScrapeEvent } from '../types/index.js';
import { isObject } from '../util/index.js';
import { resultPath } from './folder.js';
import { emptyReport, isKindLine, jsonlRecords, readJsonlFile, type JsonlFileReport } from './read.js';

const REQUEST_STATUSES = new Set(['ok', 'error', 'hang']);

/** Enough of a RequestRecord for the SummaryBuilder to use it safely. */
export function isRequestRecord(v: unknown): v is RequestRecord {
  if (!isObject(v)) return false;
  if (typeof v.status !== 'string' || !REQUEST_STATUSES.has(v.status)) return false;
  if (typeof v.run_ms !== 'number' || typeof v.e2e_ms !== 'number' || typeof v.round !== 'number' || typeof v.phase !== 'string') return false;
  if (v.connection !== null && v.connection !== undefined && !(isObject(v.connection) && typeof v.connection.id === 'string' && typeof v.connection.nth === 'number')) return false;
  if (v.itl !== null && v.itl !== undefined && !(isObject(v.itl) && typeof v.itl.p50_ms === 'number' && typeof v.itl.max_ms === 'number' && typeof v.itl.count === 'number')) return false;
  if (v.status === 'hang' && v.hang !== null && !(isObject(v.hang) && typeof v.hang.phase === 'string')) return false;
  return true;
}

export function isClientSample(v: unknown): v is ClientSampleEvent {
  return isKindLine(v) && v.kind === 'client_sample' && typeof v.loop_delay_p99_ms === 'number' && typeof v.loop_utilization === 'number';
}

export function isProbe(v: unknown): v is ProbeEvent {
  return isKindLine(v) && v.kind === 'probe' && typeof v.run_ms === 'number' && typeof v.name === 'string' && typeof v.stdout === 'string' && typeof v.stderr === 'string';
}

export function isCanary(v: unknown): v is CanaryEvent {
  return isKindLine(v) && v.kind === 'canary' && typeof v.run_ms === 'number' && (v.leg === 'proxied' || v.leg === 'direct') && typeof v.status === 'string';
}

/** A line of events.jsonl the arrival figures are made of: a stage's start, an open-loop conversation's
 * start or end, the end of the arrivals. */
export function isLoadEvent(v: unknown): v is PhaseEvent | ConversationStartEvent | ConversationEndEvent | ArrivalsEndEvent {
  if (!isKindLine(v) || typeof v.run_ms !== 'number') return false;
  switch (v.kind) {
    case 'phase':
      return typeof v.name === 'string' && (v.load === undefined || (isObject(v.load) && typeof v.load.from === 'number' && typeof v.load.to === 'number' && typeof v.load.length_ms === 'number'));
    case 'conversation_start':
      return typeof v.conversation === 'string' && typeof v.phase === 'string' && typeof v.start_lag_ms === 'number' && typeof v.scheduled_ms === 'number' && typeof v.delayed === 'boolean';
    case 'conversation_end':
      return typeof v.conversation === 'string';
    case 'arrivals_end':
      return isObject(v.phases) && Object.values(v.phases).every((c) => isObject(c) && typeof c.not_started === 'number');
    default:
      return false;
  }
}

export function isScrapeEvent(v: unknown): v is ScrapeEvent {
  return isKindLine(v) && v.kind === 'scrape' && typeof v.run_ms === 'number' && typeof v.target === 'string' && Array.isArray(v.samples);
}

/** requests.jsonl of run `dir`, each record held to its rules. @throws RecordError on one that breaks them */
export function readRequestRecords(dir: string, onRecord: (record: RequestRecord) => void): Promise<JsonlFileReport> {
  return readJsonlFile(resultPath(dir, 'requests'), isRequestRecord, onRecord, requestRecordIssue);
}

/** events.jsonl or gauges.jsonl of run `dir`, each line held to the rules every kind shares.
 * @throws RecordError on one that breaks them */
export function readKindLines<T>(dir: string, file: KindLineFile, accept: (value: unknown) => value is T, onRecord: (record: T) => void): Promise<JsonlFileReport> {
  return readJsonlFile(resultPath(dir, file), accept, onRecord, kindLineIssue);
}

/** The JSONL files whose lines are events of a kind. */
export type KindLineFile = 'events' | 'gauges';

/** A pull reader over one JSONL file of a run (with its rotated parts): `next()` gives its next record, or null
 * at the end; `report` says what was skipped. @throws RecordError from `next()` on a record breaking its rules */
export class RecordCursor<T> {
  readonly report: JsonlFileReport;
  readonly #records: AsyncGenerator<T>;
  current: T | null = null;

  constructor(path: string, accept: (value: unknown) => value is T, check: (value: T) => RecordIssue | null) {
    this.report = emptyReport(path);
    this.#records = jsonlRecords(path, accept, check, this.report);
  }

  async next(): Promise<T | null> {
    const r = await this.#records.next();
    return (this.current = r.done === true ? null : r.value);
  }
}

/** requests.jsonl of run `dir`, one record at a time. */
export function requestCursor(dir: string): RecordCursor<RequestRecord> {
  return new RecordCursor(resultPath(dir, 'requests'), isRequestRecord, requestRecordIssue);
}

/** events.jsonl or gauges.jsonl of run `dir`, one line at a time. */
export function kindLineCursor(dir: string, file: KindLineFile): RecordCursor<Record<string, unknown> & { kind: string }> {
  return new RecordCursor(resultPath(dir, file), isKindLine, kindLineIssue);
}
