// The results folder of one run: its name, its files, and writing run.json / summary.json atomically.
// File-system failures become ResultsError (exit 4) with the path and the OS reason.
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { fsFailure, onResultsFs, rethrowFs, toResultsError } from './fs-error.js';
import { shellCommand } from '../util/index.js';

export const RESULT_FILES = {
  manifest: 'run.json',
  requests: 'requests.jsonl',
  gauges: 'gauges.jsonl',
  events: 'events.jsonl',
  histograms: 'histograms.json',
  summary: 'summary.json',
  report: 'report.html',
  junit: 'junit.xml',
} as const;
export type ResultFile = keyof typeof RESULT_FILES;

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** Entries of a folder that do not make it "used": a volume's lost+found, hidden files (.gitkeep, .nfs…). */
function isIncidental(name: string): boolean {
  return name === 'lost+found' || name.startsWith('.');
}

/** What folder `dir` holds that counts as use (not hidden files, not lost+found); none when it is missing.
 * @throws ResultsError (exit 4) when it cannot be listed (a file, no permission). */
export function usedEntries(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return onResultsFs(dir, 'list the folder', () => readdirSync(dir)).filter((name) => !isIncidental(name));
}

/** The first few of `names`, for a message: `run.json, requests.jsonl, summary.json, …`. */
export function shownEntries(names: readonly string[]): string {
  return names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
}

/** Refuses an `--out` that is a file (ResultsError, exit 4) or a folder already holding something (UsageError,
 * exit 2: a second run would mix its lines with the first's). A missing folder is fine: it is created. */
function checkOut(dir: string, given: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    rethrowFs(error, dir, 'use the results folder');
  }
  if (!isDir)
    throw toResultsError({ path: dir, doing: 'use the results folder', reason: 'it is a file, not a folder', hint: 'give --out a folder path (it is created when missing)', osCode: 'ENOTDIR' });
  const used = usedEntries(dir);
  if (used.length > 0) {
    throw new UsageError(
      `--out ${given} is not empty (${shownEntries(used)}): a run writes into a folder of its own; give a new or empty folder (to rebuild the report of the run already there: ${shellCommand('roundload', 'report', given)})`,
      { context: { dir } },
    );
  }
}

/** `results/<YYYYMMDD-HHMMSS>-<name>/` under `root`, made unique with a suffix if it already exists; or
 * `out` exactly, which must be missing or empty. `ownerOnly`: a folder it creates is mode 700 (the run sends
 * someone's prompts, which a server may echo into what the run writes); an empty `--out` keeps its own mode.
 * @throws ResultsError (exit 4) when the file system refuses, UsageError (exit 2) when `out` already holds something. */
export function createRunFolder(options: { out?: string | undefined; root?: string; name: string; now?: Date; ownerOnly?: boolean }): string {
  let dir: string;
  if (options.out !== undefined) {
    dir = resolve(options.out);
    checkOut(dir, options.out);
  } else {
    const base = join(resolve(options.root ?? 'results'), `${stamp(options.now ?? new Date())}-${options.name}`);
    dir = base;
    for (let i = 2; existsSync(dir); i += 1) dir = `${base}-${i}`;
  }
  const existed = existsSync(dir);
  try {
    mkdirSync(dir, { recursive: true });
    if (options.ownerOnly === true && !existed) chmodSync(dir, 0o700);
  } catch (error) {
    // Node's recursive mkdir reports some refusals (a read-only volume) as ENOENT: ask once more, plainly.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(dirname(dir))) onResultsFs(dir, 'create the results folder', () => mkdirSync(dir));
    rethrowFs(error, dir, 'create the results folder');
  }
  // An existing folder on a read-only volume, or not ours: said now, before anything starts.
  onResultsFs(dir, 'write into the results folder', () => accessSync(dir, constants.W_OK));
  return dir;
}

export function resultPath(dir: string, file: ResultFile): string {
  return join(dir, RESULT_FILES[file]);
}

/** Writes JSON through a temporary file and a rename, so a reader never sees half a file.
 * @throws ResultsError when the file system refuses (the temporary file is removed). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

export function writeTextAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
    rethrowFs(error, path, 'write');
  }
}

/**
 * Writes JSON atomically, or when that fails for lack of space (the temporary copy needs room the full disk
 * does not have), in place: truncating the old file frees its blocks first, so a run.json of about the same
 * size still fits. For the last word on a run (its status) on a disk that filled up.
 * @throws ResultsError when neither worked.
 */
export function writeJsonLastResort(path: string, value: unknown): void {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  try {
    writeTextAtomic(path, text);
  } catch (error) {
    const f = fsFailure((error as { cause?: unknown }).cause ?? error, path, 'write');
    if (f === null || (f.osCode !== 'ENOSPC' && f.osCode !== 'EDQUOT')) throw error;
    onResultsFs(path, 'write', () => writeFileSync(path, text));
  }
}
