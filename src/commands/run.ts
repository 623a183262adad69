// `roundload run`: load the workload, run it, print the summary, set the exit code.
import { loadWorkload } from '../config/index.js';
import { executeRun } from '../run/index.js';
import { formatSummary, progressLine } from '../report/index.js';
import { UsageError } from '../errors.js';

export interface RunCommandOptions {
  target?: string;
  agents?: string;
  rounds?: string;
  out?: string;
  label: string[];
  set: string[];
  json?: boolean;
}

function positive(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number ≥ 1, got "${value}"`);
  return n;
}

/** Exit code of a finished run: 130 interrupted, 1 hangs, else 0. */
export async function runCommand(file: string, opts: RunCommandOptions, argv: readonly string[]): Promise<number> {
  const agents = positive('--agents', opts.agents);
  const rounds = positive('--rounds', opts.rounds);
  const workload = await loadWorkload(file, {
    set: opts.set,
    labels: opts.label,
    ...(agents === undefined ? {} : { agents }),
    ...(rounds === undefined ? {} : { rounds }),
    ...(opts.target === undefined ? {} : { target: opts.target }),
  });
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`\n${signal} again: exiting now, results may be incomplete\n`);
      process.exit(130);
    }
    process.stderr.write(`\n${signal}: stopping (in-flight requests get a short grace, then results are written; ${signal} again to exit at once)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    log(`roundload: ${workload.name}: ${workload.agents.count} agents × ${workload.agents.rounds} rounds → ${workload.target.url ?? 'embedded engine'}`);
    // The live line only on a terminal: piped stderr (CI logs) gets plain notices.
    const progress = process.stderr.isTTY ? progressLine(process.stderr, workload.agents.count * workload.agents.rounds) : null;
    const result = await executeRun({
      workload,
      out: opts.out,
      argv,
      signal: stop.signal,
      log,
      ...(progress === null ? {} : { onEvent: (e) => progress.onEvent(e) }),
    }).finally(() => progress?.stop());
    if (opts.json === true) process.stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
    else process.stdout.write(`${formatSummary(result.summary, result.dir)}\n`);
    if (result.status === 'interrupted') return 130;
    return result.summary.totals.hangs > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
