// An ab folder read back (ab.json and each run's folder): its completed pairs in the order they ran, for
// `ab --plan DIR` to plan from an earlier A/B.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { NotARunError } from '../errors.js';
import { loadRun, type RunData } from './load.js';

interface Manifest {
  arms: string[];
  runs: { seq: number; arm: string; repeat?: number; dir: string; status: string }[];
}

function readManifest(dir: string): Partial<Manifest> {
  const file = join(dir, 'ab.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Partial<Manifest>;
  } catch (error) {
    throw new NotARunError(`cannot plan from ${dir} (ab.json): ${error instanceof Error ? error.message : String(error)}`, { context: { file } });
  }
}

/** The completed pairs (A's and B's run of each round) of an earlier two-arm ab, and the mean seconds a pair's
 * two runs took (their own wall time: setup and health waits are not in the folder). */
export async function readAbPairs(dir: string): Promise<{ baseline: string; other: string; pairs: { a: RunData; b: RunData }[]; pairSeconds: number | null }> {
  const manifest = readManifest(dir);
  if (!Array.isArray(manifest.arms) || !Array.isArray(manifest.runs) || manifest.arms.length !== 2) {
    throw new NotARunError(`cannot plan from ${dir}: ab.json is not a two-arm roundload A/B`, { context: { dir } });
  }
  const [baseline, other] = manifest.arms as [string, string];
  const runs = [...manifest.runs].sort((x, y) => x.seq - y.seq);
  const pairs: { a: RunData; b: RunData }[] = [];
  const seconds: number[] = [];
  for (let k = 0; k + 1 < runs.length; k += 2) {
    const [x, y] = [runs[k]!, runs[k + 1]!];
    if (x.status !== 'completed' || y.status !== 'completed') continue;
    // Run folders are the A/B folder's own subfolders: found there wherever the folder was moved.
    const [ra, rb] = x.arm === baseline ? [x, y] : [y, x];
    const a = await loadRun(join(dir, basename(ra.dir)));
    const b = await loadRun(join(dir, basename(rb.dir)));
    pairs.push({ a, b });
    seconds.push(a.wallS + b.wallS);
  }
  const pairSeconds = seconds.length === 0 || seconds.some((x) => !Number.isFinite(x)) ? null : seconds.reduce((s, v) => s + v, 0) / seconds.length;
  return { baseline, other, pairs, pairSeconds };
}
