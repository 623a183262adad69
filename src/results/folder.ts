// The results folder of one run: its name, its files, and writing run.json / summary.json atomically.
import { mkdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

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

/** `results/<YYYYMMDD-HHMMSS>-<name>/` under `root`, made unique with a suffix if it already exists. */
export function createRunFolder(options: { out?: string | undefined; root?: string; name: string; now?: Date }): string {
  let dir: string;
  if (options.out !== undefined) {
    dir = resolve(options.out);
  } else {
    const base = join(resolve(options.root ?? 'results'), `${stamp(options.now ?? new Date())}-${options.name}`);
    dir = base;
    for (let i = 2; existsSync(dir); i += 1) dir = `${base}-${i}`;
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function resultPath(dir: string, file: ResultFile): string {
  return join(dir, RESULT_FILES[file]);
}

/** Writes JSON through a temporary file and a rename, so a reader never sees half a file. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

export function writeTextAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
