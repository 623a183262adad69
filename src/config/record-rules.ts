// The rules of the records a results folder holds (requests.jsonl, events.jsonl, gauges.jsonl), for readers that
// take a folder from someone else (repro, report, merge): ids, times and classes are what roundload writes, or
// the record is refused with the field that broke the rule. Beside the workload's rules: one validator (zod).
import { z } from 'zod';

/** What roundload writes as a time: `new Date().toISOString()` (other offsets are accepted too). */
const isoTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/, 'is not an ISO 8601 time');
/** Conversation and socket ids: `a3-c12`, `c7`, `w1.c3`, a replayed `c4~2`. */
const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:~/-]{0,127}$/, 'is not an id (letters, digits and _ . : ~ / -, at most 128)');
/** A phase or stage name: any text on one line. */
const name = z.string().regex(/^[^\p{Cc}\u2028\u2029]{1,200}$/u, 'is not a name (one line, at most 200 characters)');
/** Error, warning and event classes: `http_5xx`, `keepalive_race`. */
const cls = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'is not a class (lower-case letters, digits and _)');
const num = z.number();

const connection = z.looseObject({ id, nth: num, idle_ms: num.nullable().optional() }).nullable().optional();
const error = z.looseObject({ class: cls }).nullable().optional();
const hang = z
  .looseObject({ phase: z.enum(['connect', 'headers', 'first_token', 'mid_stream', 'total']), deadline: cls, deadline_ms: num.optional() })
  .nullable()
  .optional();

/** A line of requests.jsonl (and the `record` of a hang event). */
const requestRecord = z.looseObject({
  t: isoTime,
  run_ms: num,
  conversation: id,
  round: num,
  phase: name,
  status: z.enum(['ok', 'error', 'hang']),
  e2e_ms: num,
  request_bytes: num.optional(),
  connection,
  error,
  hang,
  warnings: z.array(cls).optional(),
});

/** A line of events.jsonl or gauges.jsonl: the fields every kind shares, checked when present. */
const kindLine = z.looseObject({
  kind: cls,
  t: isoTime.optional(),
  run_ms: num.optional(),
  conversation: id.optional(),
  // A socket id, a record's connection, or the hop's number of a client connection (hop_fault).
  connection: z
    .union([id, num, z.looseObject({ id })])
    .nullable()
    .optional(),
  class: cls.optional(),
  phase: name.optional(),
  record: requestRecord.optional(),
});

/** The first field of `value` that breaks its rules (`connection.id`), and how; null when none does. */
export interface RecordIssue {
  field: string;
  problem: string;
}

function firstIssue(schema: z.ZodType, value: unknown): RecordIssue | null {
  const result = schema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.') || '(the line)';
  const problem = issue.code === 'invalid_type' ? `is not a ${issue.expected}` : issue.code === 'invalid_value' ? `is not one of ${issue.values.map(String).join(', ')}` : issue.message;
  return { field, problem };
}

/** A requests.jsonl record's first broken rule, or null. */
export const requestRecordIssue = (value: unknown): RecordIssue | null => firstIssue(requestRecord, value);

/** An events.jsonl or gauges.jsonl line's first broken rule, or null. */
export const kindLineIssue = (value: unknown): RecordIssue | null => firstIssue(kindLine, value);
