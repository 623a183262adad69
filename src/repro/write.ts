// `roundload repro`'s work: read a run folder, pick the failing connection's sequence, and write the reproducer
// folder (repro.mjs, repro.sh with its bodies, README.txt).
import { chmodSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readRequestRecords, readManifest, readSummaryIfWritten, shownEntries, usedEntries, writeTextAtomic } from '../results/index.js';
import { UsageError } from '../errors.js';
import type { RequestRecord } from '../types/index.js';
import { VERSION } from '../version.js';
import { buildBodies } from './bodies.js';
import { reproMjs } from './mjs.js';
import { buildPlan, type ReproPlan } from './plan.js';
import { pickSequence } from './pick.js';
import { reproReadme } from './readme.js';
import { bodyFile, reproSh } from './sh.js';

export interface ReproOptions {
  /** The reproducer folder. @default "<run>/repro" */
  out?: string;
  /** The recorded connection to replay (`c7`). @default the connection of the first hang, else the first error */
  connection?: string;
}

interface ReproOutcome {
  out: string;
  plan: ReproPlan;
  files: string[];
}

/** The plan for run folder `dir`. @throws NotARunError (not a run, or a summary.json it cannot read), NoFailureError (nothing failed). */
async function planRepro(dir: string, options: ReproOptions = {}): Promise<ReproPlan> {
  const folder = resolve(dir);
  const manifest = readManifest(folder);
  const records: RequestRecord[] = [];
  await readRequestRecords(folder, (r) => records.push(r));
  const sequence = pickSequence(records, options.connection === undefined ? {} : { connection: options.connection });
  return buildPlan({ folder, manifest, summary: readSummaryIfWritten(folder, `cannot write a reproducer of ${dir}`), sequence, version: VERSION });
}

/** Writes the reproducer of run `dir`; returns where and what.
 * @throws UsageError (exit 2) when the folder it would write into holds anything already. */
export async function writeRepro(dir: string, options: ReproOptions = {}): Promise<ReproOutcome> {
  const plan = await planRepro(dir, options);
  const given = options.out ?? join(dir, 'repro');
  const out = resolve(given);
  // As run and merge do: a second reproducer would overwrite the first's scripts and mix its bodies in.
  const used = usedEntries(out);
  if (used.length > 0)
    throw new UsageError(`${given} is not empty (${shownEntries(used)}): a reproducer is written into a folder of its own; give --out a new or empty folder`, { context: { dir: out } });
  mkdirSync(join(out, 'bodies'), { recursive: true });
  const bodies = await buildBodies(plan);
  const files: string[] = [];
  const write = (name: string, text: string): void => {
    writeTextAtomic(join(out, name), text);
    files.push(join(out, name));
  };
  write('repro.mjs', reproMjs(plan));
  write('repro.sh', reproSh(plan));
  bodies.forEach((body, i) => write(bodyFile(i), body));
  write('README.txt', reproReadme(plan));
  chmodSync(join(out, 'repro.mjs'), 0o755);
  chmodSync(join(out, 'repro.sh'), 0o755);
  return { out, plan, files };
}
