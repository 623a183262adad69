// An ab folder read back (ab.json and each run's summary.json): its completed pairs in the order they ran,
// for `ab --plan DIR` to plan from an earlier A/B.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Summary } from '../analysis/index.js';
import { NotARunError } from '../errors.js';

interface Manifest {
  arms: string[];
  runs: { seq: number; arm: string; dir: string; status: string }[];
}

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new NotARunError(`cannot plan from ${what}: ${error instanceof Error ? error.message : String(error)}`, { context: { file } });
  }
}

/** The completed pairs (runs 1+2, 3+4, …) of an earlier ab, as A's and B's summaries, and the mean seconds a
 * pair's two runs took (their own wall time: setup and health waits are not in the folder). */
export function readAbPairs(dir: string): { baseline: string; other: string; pairs: { a: Summary; b: Summary }[]; pairSeconds: number | null } {
  const manifest = readJson(join(dir, 'ab.json'), `${dir} (ab.json)`) as Partial<Manifest>;
  if (!Array.isArray(manifest.arms) || !Array.isArray(manifest.runs) || manifest.arms.length !== 2) {
    throw new NotARunError(`cannot plan from ${dir}: ab.json is not a two-arm roundload A/B`, { context: { dir } });
  }
  const [baseline, other] = manifest.arms as [string, string];
  const summaries = new Map<number, Summary>();
  for (const run of manifest.runs) {
    if (run.status !== 'completed') continue;
    // Run folders are the A/B folder's own subfolders: found there wherever the folder was moved.
    const runDir = join(dir, basename(run.dir));
    summaries.set(run.seq, readJson(join(runDir, 'summary.json'), `${runDir} (summary.json)`) as Summary);
  }
  const pairs: { a: Summary; b: Summary }[] = [];
  const seconds: number[] = [];
  const runs = [...manifest.runs].sort((x, y) => x.seq - y.seq);
  for (let k = 0; k + 1 < runs.length; k += 2) {
    const [x, y] = [runs[k]!, runs[k + 1]!];
    const a = summaries.get(x.arm === baseline ? x.seq : y.seq);
    const b = summaries.get(x.arm === baseline ? y.seq : x.seq);
    if (a === undefined || b === undefined) continue;
    pairs.push({ a, b });
    seconds.push(a.run.wall_s + b.run.wall_s);
  }
  const pairSeconds = seconds.length === 0 ? null : seconds.reduce((s, v) => s + v, 0) / seconds.length;
  return { baseline, other, pairs, pairSeconds };
}
