// `roundload ab <ab.yaml>`: run the arms alternately, then print and write the comparison (compare.html,
// compare.json) in the A/B's folder. Exit 0, 1 when a run hung or an arm's command failed, 2 bad file, 130 interrupted.
import { join } from 'node:path';
import { loadAbFile } from '../config/index.js';
import { runAb, abSecrets, formatComparison, sequentialLines } from '../compare/index.js';
import { UsageError } from '../errors.js';
import { guardTerminal } from '../util/index.js';
import { writeComparisons } from './compare.js';
import { stopOnSignals } from './signals.js';

export interface AbCommandOptions {
  out?: string;
  force?: boolean;
  /** `worse`: exit 1 when a figure of the stopping rule ends worse. */
  failOn?: string;
}

export async function abCommand(file: string, opts: AbCommandOptions): Promise<number> {
  if (opts.failOn !== undefined && opts.failOn !== 'worse') throw new UsageError(`--fail-on takes "worse", not "${opts.failOn}"`);
  const plan = await loadAbFile(file);
  guardTerminal(abSecrets(plan));
  const stop = new AbortController();
  const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping the running arm (its teardown still runs; ${signal} again to exit at once)`);
  try {
    const result = await runAb({ plan, out: opts.out, force: opts.force === true, signal: stop.signal, log: (line) => process.stderr.write(`${line}\n`) });
    const lines = result.runs.map((r) => `  ${String(r.seq).padStart(2)}  ${r.arm.padEnd(12)} r${r.repeat}  ${r.status.padEnd(11)} ${r.dir}`);
    process.stdout.write(`roundload ab · ${plan.file} · ${result.status}\nruns (in the order they ran):\n${lines.join('\n')}\n\n`);
    if (result.comparisons.length > 0) {
      const written = writeComparisons(result.comparisons, join(result.dir, 'compare.html'), result.arms);
      process.stdout.write(`${result.comparisons.map(formatComparison).join('\n\n')}\n\nwritten      ${written.html}\n             ${written.json}\n`);
    } else {
      process.stdout.write('no comparison: not every arm has a completed run\n');
    }
    if (result.sequential !== null) {
      const rule = plan.until!;
      process.stdout.write(
        `\nsequential A/B (min_effect ±${rule.minEffectPct}%, max_pairs ${rule.maxPairs}): B = ${plan.arms[1]!.name} against A = ${plan.arms[0]!.name}\n${sequentialLines(result.sequential).join('\n')}\n             ${join(result.dir, 'sequential.json')}\n`,
      );
    }
    if (result.status === 'interrupted') return 130;
    if (opts.failOn === 'worse' && result.sequential?.some((f) => f.calls.at(-1)?.verdict === 'worse') === true) return 1;
    return result.runs.some((r) => r.hangs > 0) ? 1 : 0;
  } finally {
    removeSignalHandlers();
  }
}
