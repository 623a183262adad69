// A results folder as history rows: run.json and summary.json read back (a folder made by any roundload
// since summaries had phases), then the same rows a run appends at its end.
import { resolve } from 'node:path';
import { readManifest, readSummary } from '../results/index.js';
import { historyRunOf, type HistoryRun } from './record.js';

/** The history rows of the run in `dir`. @throws NotARunError when it is not a finished results folder. */
export function historyRunFromFolder(dirArg: string): HistoryRun {
  const dir = resolve(dirArg);
  const manifest = readManifest(dir);
  return historyRunOf(manifest, readSummary(dir, `cannot import ${dirArg}`), dir);
}
