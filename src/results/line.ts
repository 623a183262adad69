// A line of the results folder's JSONL files (requests.jsonl, events.jsonl, gauges.jsonl), as written and as
// read back: each line opens with the results schema version it was written in, `{"v":2,…}`; a line without
// one is version 1 (before lines had it). One writer of the line (`resultsLine`: the run's sinks and a merge)
// and one check on reading (`stripLineVersion`, in readJsonlFile), so every JSONL file of the folder is
// versioned the same way.
import type { RecordIssue } from '../config/index.js';
import { RESULTS_SCHEMA_VERSION } from '../types/index.js';

/** What every line of this version starts with. */
const LINE_HEAD = `{"v":${RESULTS_SCHEMA_VERSION}`;

/** `value` as one line of a results JSONL file, without its newline: `{"v":2,` and the value's own fields.
 * `value` is a plain object (a record or an event) without a `v` of its own. */
export function resultsLine(value: object): string {
  const json = JSON.stringify(value);
  return json === '{}' ? `${LINE_HEAD}}` : `${LINE_HEAD},${json.slice(1)}`;
}

/** Why `version` (run.json's or summary.json's `schema_version`, a line's `v`) is not one this roundload reads,
 * or null: every version from 1 up to RESULTS_SCHEMA_VERSION is; a newer one was written by a newer roundload. */
export function versionProblem(version: unknown): string | null {
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) return 'is not a results schema version (a whole number from 1)';
  if (version > RESULTS_SCHEMA_VERSION) return `is ${version}: written by a newer roundload (this one reads results up to version ${RESULTS_SCHEMA_VERSION}); use a newer roundload`;
  return null;
}

/** Takes a parsed line's `v` off it (readers see the record as it was written); a line without one is of version
 * 1. @returns the problem with its version, or null. */
export function stripLineVersion(line: Record<string, unknown>): RecordIssue | null {
  if (!('v' in line)) return null;
  const problem = versionProblem(line.v);
  delete line.v;
  return problem === null ? null : { field: 'v', problem };
}
