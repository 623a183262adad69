// A results folder as history rows: run.json and summary.json read back (a folder made by any roundload
// since summaries had phases), then the same rows a run appends at its end.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Summary } from '../analysis/index.js';
import { readManifest, resultPath, onResultsFs } from '../results/index.js';
import { NotARunError } from '../errors.js';
import { isObject } from '../util/index.js';
import { historyRunOf, type HistoryRun } from './record.js';

function readSummary(dir: string): Summary {
  const path = resultPath(dir, 'summary');
  if (!existsSync(path)) {
    throw new NotARunError(`${dir} has no summary.json (a run killed before its end); rebuild it with \`roundload report ${dir}\`, then import it`, { context: { dir } });
  }
  const text = onResultsFs(path, 'read', () => readFileSync(path, 'utf8'));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new NotARunError(`${path} is not valid JSON; rebuild it with \`roundload report ${dir}\``, { context: { dir }, cause });
  }
  if (!isObject(raw) || !isObject(raw.run) || !isObject(raw.totals) || !Array.isArray(raw.phases) || !isObject(raw.thresholds)) {
    throw new NotARunError(`${path} is not a roundload summary (no run, totals, phases or thresholds)`, { context: { dir } });
  }
  return raw as unknown as Summary;
}

/** The history rows of the run in `dir`. @throws NotARunError when it is not a finished results folder. */
export function historyRunFromFolder(dirArg: string): HistoryRun {
  const dir = resolve(dirArg);
  const manifest = readManifest(dir);
  return historyRunOf(manifest, readSummary(dir), dir);
}
