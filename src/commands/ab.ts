// `roundload ab <ab.yaml>`: run the arms alternately, then print and write the calls (compare.html,
// compare.json, junit.xml) in the A/B's folder. Exit 0; 1 when a run hung, an arm failed twice or its command
// failed (or a figure ended worse, with --fail-on worse); 2 bad file; 130 interrupted.
import { join } from 'node:path';
import { loadAbFile } from '../config/index.js';
import { runAb, abSecrets, abJunit, formatComparison, planAb, readAbPairs, ruleText, type AbSummary, type RunData } from '../compare/index.js';
import type { AbPlan } from '../config/index.js';
import { writeTextAtomic } from '../results/index.js';
import { UsageError } from '../errors.js';
import { guardTerminal, oneLine } from '../util/index.js';
import { writeComparisons } from './compare.js';
import { stopOnSignals } from './signals.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

export interface AbCommandOptions {
  out?: string;
  force?: boolean;
  /** `worse`: exit 1 when a figure of the stopping rule ends worse. */
  failOn?: string;
  /** `true`: run a pilot of `pilotPairs` pairs and plan; a folder: plan from that earlier A/B. */
  plan?: string | boolean;
  pilotPairs?: string;
}

export async function abCommand(file: string, opts: AbCommandOptions): Promise<number> {
  if (opts.failOn !== undefined) flag.oneOf('--fail-on', opts.failOn, ['worse']);
  const plan = await loadAbFile(file);
  guardTerminal(abSecrets(plan));
  if (opts.plan !== undefined && opts.plan !== false) return planCommand(plan, opts);
  const stop = new AbortController();
  const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping the running arm (its teardown still runs; ${signal} again to exit at once)`);
  try {
    const result = await runAb({ plan, out: opts.out, force: opts.force === true, signal: stop.signal, log: logLine });
    const summary: AbSummary = { ...result.rule, pairs: result.pairs, ended: result.ended };
    const lines = result.runs
      .filter((r) => r.status !== 'not run')
      .map((r) => `  ${String(r.seq).padStart(2)}  ${r.arm.padEnd(12)} r${r.repeat}  ${r.status.padEnd(11)} ${oneLine(r.dir)}${r.reason === undefined ? '' : `  (${oneLine(r.reason)})`}`);
    process.stdout.write(
      `roundload ab · ${plan.file} · ${result.status} · ${ruleText(summary)}\nended after ${result.pairs} pair${result.pairs === 1 ? '' : 's'}: ${result.ended}\nruns (in the order they ran):\n${lines.join('\n')}\n\n`,
    );
    if (result.comparisons.length > 0) {
      const written = writeComparisons(result.comparisons, join(result.dir, 'compare.html'), result.arms, summary);
      const junit = join(result.dir, 'junit.xml');
      writeTextAtomic(junit, abJunit(result.comparisons, summary));
      process.stdout.write(
        `${result.comparisons.map(formatComparison).join('\n\n')}\n\nwritten      ${written.html}\n             ${written.json}\n             ${junit}\n             ${join(result.dir, 'sequential.json')}\n`,
      );
    } else {
      process.stdout.write('no comparison: no pair of runs completed\n');
    }
    if (result.status === 'interrupted') return 130;
    const worse = result.comparisons.some((c) => c.phases.some((p) => p.rows.some((r) => r.verdict === 'worse')));
    if (opts.failOn === 'worse' && worse) return 1;
    return result.runs.some((r) => r.hangs > 0) || result.failedArm !== null ? 1 : 0;
  } finally {
    removeSignalHandlers();
  }
}

/** `ab FILE --plan [DIR]`: the pairs and time the stopping rule would need, from an earlier A/B's folder or a
 * pilot of `--pilot-pairs` pairs (default 2) run now. Exit 0; 2 without a stopping rule in the file. */
async function planCommand(plan: AbPlan, opts: AbCommandOptions): Promise<number> {
  const rule = plan.until;
  if (rule === null) throw new UsageError(`${plan.file}: --plan plans the stopping rule, and this file fixes the pairs (repeats: ${plan.repeats}): drop repeats to plan`);
  let source: { pairs: { a: RunData; b: RunData }[]; pairSeconds: number | null; where: string };
  if (typeof opts.plan === 'string') {
    source = { ...(await readAbPairs(opts.plan)), where: opts.plan };
  } else {
    const pilotPairs = opts.pilotPairs === undefined ? 2 : flag.wholeNumber('--pilot-pairs', opts.pilotPairs, 2, 10);
    const started = performance.now();
    const stop = new AbortController();
    const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping the pilot`);
    try {
      const pilot = await runAb({
        plan: { ...plan, until: null, repeats: pilotPairs },
        out: opts.out,
        force: opts.force === true,
        signal: stop.signal,
        log: logLine,
      });
      const read = await readAbPairs(pilot.dir);
      // The pilot's own clock: setup, health waits and teardown included, as the real A/B will pay them.
      source = { pairs: read.pairs, pairSeconds: read.pairs.length === 0 ? null : (performance.now() - started) / 1000 / read.pairs.length, where: pilot.dir };
    } finally {
      removeSignalHandlers();
    }
  }
  const result = planAb(source.pairs, source.pairSeconds, rule);
  process.stdout.write(`roundload ab --plan · ${plan.file} · from ${source.where}\n${result.text.join('\n')}\n`);
  return 0;
}
