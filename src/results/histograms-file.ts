// histograms.json: its one writer (a run at its end, a merge) and its one reader (a rebuild, a merge's shards).
// The file has its own format version (`version`, metrics/set.ts), apart from the results schema version.
import { existsSync, readFileSync } from 'node:fs';
import { HISTOGRAMS_FILE_VERSION, HistogramSet, type HistogramsFile } from '../metrics/index.js';
import { resultPath, writeJsonAtomic } from './folder.js';

/** What reading histograms.json of a run found: the histograms, or why there are none. */
export type HistogramsRead = { set: HistogramSet } | { missing: true } | { unreadable: string };

/** Writes histograms.json of `dir` atomically. @throws ResultsError */
export function writeHistograms(dir: string, set: HistogramSet): void {
  writeJsonAtomic(resultPath(dir, 'histograms'), set.toFile());
}

/** Reads histograms.json of `dir`; never throws (without it, ITL is approximated from the records). */
export function readHistograms(dir: string): HistogramsRead {
  const path = resultPath(dir, 'histograms');
  if (!existsSync(path)) return { missing: true };
  try {
    const file = JSON.parse(readFileSync(path, 'utf8')) as Record<keyof HistogramsFile, unknown>;
    // Another version's encodings or keys would be read as this one's: refused, named.
    if (file.version !== HISTOGRAMS_FILE_VERSION) throw new Error(`its format version is ${JSON.stringify(file.version)}; this roundload reads version ${HISTOGRAMS_FILE_VERSION}`);
    if (file.unit !== 'us') throw new Error(`its unit is ${JSON.stringify(file.unit)}, not "us"`);
    if (!Array.isArray(file.histograms)) throw new Error('no histograms array');
    return { set: HistogramSet.fromFile(file as HistogramsFile) };
  } catch (error) {
    return { unreadable: error instanceof Error ? error.message : String(error) };
  }
}
