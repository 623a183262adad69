// summary.json: its one writer (`writeSummary`: a run at its end, `report`'s rebuild, a merge) and its one reader
// (`readSummary`: compare, history import, shrink, repro, a rebuild's previous summary), which reads every
// version up to RESULTS_SCHEMA_VERSION and says how to rebuild one it cannot.
import { existsSync, readFileSync } from 'node:fs';
import type { Summary } from '../analysis/index.js';
import { NotARunError } from '../errors.js';
import { isObject, shellCommand } from '../util/index.js';
import { onResultsFs } from './fs-error.js';
import { RESULT_FILES, resultPath, writeJsonAtomic } from './folder.js';
import { versionProblem } from './line.js';

/** Writes summary.json of `dir` atomically; returns its path. @throws ResultsError */
export function writeSummary(dir: string, summary: Summary): string {
  const path = resultPath(dir, 'summary');
  writeJsonAtomic(path, summary);
  return path;
}

/** summary.json of `dir` through {@link readSummary}, or null when the run has none (killed before its end). */
export function readSummaryIfWritten(dir: string, what = dir): Summary | null {
  return existsSync(resultPath(dir, 'summary')) ? readSummary(dir, what) : null;
}

/**
 * Reads summary.json: the one reader every command uses (compare, history import, shrink, repro, a rebuild's
 * previous summary). Every version up to RESULTS_SCHEMA_VERSION reads (summary.json has had its schema_version
 * from the first). `what` starts the messages (`cannot compare results/x`). @throws NotARunError (exit 2)
 * when it is missing (a run killed before its end), not JSON, or not a roundload summary — each saying to
 * rebuild it with `roundload report`; ResultsError (exit 4) when the disk refuses it.
 */
export function readSummary(dir: string, what = dir): Summary {
  const path = resultPath(dir, 'summary');
  const rebuild = `rebuild it with \`${shellCommand('roundload', 'report', dir)}\``;
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
  const problem = versionProblem(raw.schema_version ?? 1);
  if (problem !== null) throw new NotARunError(`${what}: ${RESULT_FILES.summary} schema_version ${problem}`, { context: { dir } });
  return raw as unknown as Summary;
}
