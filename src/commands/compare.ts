// `roundload compare <runA> <runB>…`: the first argument is the baseline arm A, each other one an arm B
// compared with it; an argument may list several runs joined by commas, each run one value per figure.
import { dirname, extname, join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import {
  loadRun,
  compareArms,
  formatComparison,
  comparisonHtml,
  DEFAULT_MIN_EFFECT_PCT,
  DEFAULT_MIN_EFFECT_POINTS,
  type AbSummary,
  type Arm,
  type ArmPair,
  type Comparison,
} from '../compare/index.js';
import { onResultsFs, writeJsonAtomic, writeTextAtomic } from '../results/index.js';
import { UsageError } from '../errors.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

export interface CompareCommandOptions {
  force?: boolean;
  /** compare.html path; compare.json is written beside it. @default "compare.html" */
  out?: string;
  /** Margins: % of A, and points for rates. @default 3, 1 */
  minEffect?: string;
  minEffectPoints?: string;
  json?: boolean;
}

/** An arm from one argument: `dir` or `dir1,dir2,…` (its runs). */
async function armOf(arg: string): Promise<Arm> {
  const dirs = arg
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
  if (dirs.length === 0) throw new UsageError(`an empty run list: "${arg}"`);
  const runs = await Promise.all(dirs.map((d) => loadRun(d)));
  const label = runs[0]!.labels.arm;
  return { name: label ?? runs[0]!.name, runs };
}

/** Writes compare.html and compare.json (beside it); returns their paths. `arms` (in the order of
 * `comparisons`) add the runs' time series to the page. */
export function writeComparisons(comparisons: readonly Comparison[], htmlPath: string, arms?: readonly ArmPair[], ab?: AbSummary | null): { html: string; json: string } {
  const html = resolve(htmlPath);
  const json = join(dirname(html), `${html.slice(dirname(html).length + 1, html.length - extname(html).length)}.json`);
  onResultsFs(dirname(html), 'create the folder', () => mkdirSync(dirname(html), { recursive: true }));
  writeTextAtomic(html, comparisonHtml(comparisons, { ...(arms === undefined ? {} : { arms }), ab: ab ?? null }));
  writeJsonAtomic(json, { schema_version: 2, ...(ab === undefined || ab === null ? {} : { ab }), comparisons });
  return { html, json };
}

export async function compareCommand(args: readonly string[], opts: CompareCommandOptions): Promise<number> {
  if (args.length < 2) throw new UsageError('compare needs at least two results folders: the baseline A, then B (or several B)');
  const rule = {
    minEffectPct: opts.minEffect === undefined ? DEFAULT_MIN_EFFECT_PCT : flag.number('--min-effect', opts.minEffect, { above: 0, atMost: 100 }),
    minEffectPoints: opts.minEffectPoints === undefined ? DEFAULT_MIN_EFFECT_POINTS : flag.number('--min-effect-points', opts.minEffectPoints, { above: 0, atMost: 100 }),
  };
  const arms = [];
  for (const arg of args) arms.push(await armOf(arg));
  // Arms that came out with the same name (two runs of one workload) are told apart by position.
  if (new Set(arms.map((a) => a.name)).size < arms.length) arms.forEach((a, i) => (a.name = `${String.fromCharCode(65 + Math.min(i, 25))}:${a.name}`));
  const [base, ...others] = arms;
  // Several arms against one baseline: the error split over them (each at 0.05 / (arms − 1)).
  const alpha = 0.05 / others.length;
  const comparisons = others.map((b) => compareArms(base!, b, { force: opts.force === true, rule: { ...rule, alpha } }));
  const written = writeComparisons(
    comparisons,
    opts.out ?? 'compare.html',
    others.map((b) => ({ a: base!, b })),
  );
  if (opts.json === true) process.stdout.write(`${JSON.stringify({ schema_version: 2, comparisons }, null, 2)}\n`);
  else process.stdout.write(`${comparisons.map(formatComparison).join('\n\n')}\n\nwritten      ${written.html}\n             ${written.json}\n`);
  for (const run of arms.flatMap((a) => a.runs)) {
    if (run.status !== 'completed') logLine(`roundload: note: ${run.dir} is ${run.status}, not completed`);
    if (run.badLines > 0) logLine(`roundload: note: ${run.dir}: ${run.badLines} unreadable lines in requests.jsonl were skipped`);
  }
  return 0;
}
