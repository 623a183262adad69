// `roundload validate <file>`: load a workload (with any --set) or an ab file (with the loader `roundload ab`
// uses: its base workload, each arm's `set` applied) and say it is valid, or throw the WorkloadError whose
// message is the full located report (cli.ts prints it and exits 2).
import { configFileKind, loadAbFile, loadWorkload, redactWorkload, type AbPlan, type Workload } from '../config/index.js';
import { abSecrets } from '../compare/index.js';
import { UsageError } from '../errors.js';
import { guardTerminal } from '../util/index.js';
import { describeSchedule } from './run.js';

export interface ValidateOptions {
  /** `--set path=value` overrides, applied before validation as in `run` (workloads only: an arm has its own `set`). */
  set?: string[] | undefined;
  /** Print the resolved workload (an ab file: each arm's) as JSON instead of the verdict. */
  json?: boolean | undefined;
}

export async function validateCommand(file: string, opts: ValidateOptions): Promise<void> {
  if ((await configFileKind(file)) === 'ab') return validateAbFile(file, opts);
  const workload = await loadWorkload(file, { set: opts.set });
  if (opts.json === true) {
    // Same form as run.json's workload, so what validate shows is what a run records.
    process.stdout.write(`${JSON.stringify(redactWorkload(workload), null, 2)}\n`);
    return;
  }
  process.stdout.write(`✓ ${file}: valid (${workloadTerms(workload)})\n`);
}

/** `name smoke, 4 agents × 8 rounds, target embedded engine` (`sweep of 64 → 96 agents (10s each) × 8 rounds`). */
function workloadTerms(workload: Workload): string {
  const target = workload.target.url ?? 'embedded engine';
  const sweep = workload.sweep;
  const agents = sweep === null ? `${workload.agents.count} agents` : `sweep of ${sweep.agents.join(' → ')} agents${sweep.phase_duration === null ? '' : ` (${sweep.phase_duration} each)`}`;
  const load = describeSchedule(workload) ?? `${agents} × ${workload.agents.rounds} rounds`;
  return `name ${workload.name}, ${load}, target ${target}`;
}

/** An ab file, read exactly as `roundload ab` reads it (nothing runs). */
async function validateAbFile(file: string, opts: ValidateOptions): Promise<void> {
  if (opts.set !== undefined && opts.set.length > 0) throw new UsageError(`${file} is an ab file: --set applies to a workload; put overrides in an arm's set: list`);
  const plan = await loadAbFile(file);
  // As `ab` does: a secret of any arm's workload or health URL never reaches the terminal.
  guardTerminal(abSecrets(plan));
  if (opts.json === true) {
    process.stdout.write(`${JSON.stringify(abJson(plan), null, 2)}\n`);
    return;
  }
  process.stdout.write(`${abSummary(plan, file).join('\n')}\n`);
}

/** The verdict and what the A/B would do: its arms with their `set`, and how long it runs. */
function abSummary(plan: AbPlan, file: string): string[] {
  const base = plan.arms[0]!.workload;
  const from = plan.workloadFile === null ? 'inline workload' : `workload ${plan.workloadFile}`;
  const width = Math.max(...plan.arms.map((a) => a.name.length));
  const arms = plan.arms.map((arm, i) => {
    const letter = i < 26 ? String.fromCharCode(65 + i) : String(i + 1);
    const change = arm.set.length === 0 ? 'the base workload' : `set ${arm.set.join(', ')}`;
    const target = arm.workload.target.url === base.target.url ? '' : `, target ${arm.workload.target.url ?? 'embedded engine'}`;
    return `  ${letter.padEnd(2)} ${arm.name.padEnd(width)}  ${change}${target}${i === 0 ? ' (the baseline)' : ''}`;
  });
  const until = plan.until;
  const stopping =
    until === null
      ? `  runs: exactly ${plan.repeats} pairs (repeats), in rotating order, judged once within ±${plan.minEffectPct}% (±${plan.minEffectPoints} point${plan.minEffectPoints === 1 ? '' : 's'} for rates)`
      : `  stopping rule: pairs until every figure of ${until.waitFor.join(', ')} is decided within ±${until.minEffectPct}% (±${until.minEffectPoints} point${until.minEffectPoints === 1 ? '' : 's'} for rates), at most ${until.maxPairs} pairs`;
  return [`✓ ${file}: valid ab file (${from}: ${workloadTerms(base)}; ${plan.arms.length} arms)`, ...arms, stopping];
}

/** `--json`: the plan, each arm's workload as run.json would record it. */
function abJson(plan: AbPlan): unknown {
  return {
    file: plan.file,
    workload_file: plan.workloadFile,
    repeats: plan.repeats,
    until: plan.until,
    arms: plan.arms.map(({ workload, ...arm }) => ({ ...arm, workload: redactWorkload(workload) })),
  };
}
