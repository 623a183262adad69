// `roundload validate <workload.yaml>`: load the workload (with any --set) and say it is valid, or throw the
// WorkloadError whose message is the full located report (cli.ts prints it and exits 2).
import { loadWorkload, redactWorkload } from '../config/index.js';
import { describeSchedule } from './run.js';

export interface ValidateOptions {
  /** `--set path=value` overrides, applied before validation as in `run`. */
  set?: string[] | undefined;
  /** Print the resolved workload as JSON instead of the one-line verdict. */
  json?: boolean | undefined;
}

export async function validateCommand(file: string, opts: ValidateOptions): Promise<void> {
  const workload = await loadWorkload(file, { set: opts.set });
  if (opts.json === true) {
    // Same form as run.json's workload, so what validate shows is what a run records.
    process.stdout.write(`${JSON.stringify(redactWorkload(workload), null, 2)}\n`);
    return;
  }
  const target = workload.target.url ?? 'embedded engine';
  const load = describeSchedule(workload) ?? `${workload.agents.count} agents × ${workload.agents.rounds} rounds`;
  process.stdout.write(`✓ ${file}: valid (name ${workload.name}, ${load}, target ${target})\n`);
}
