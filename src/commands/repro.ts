// `roundload repro <run>`: write a standalone reproducer of the run's first hang (or error) for another team.
import { writeRepro } from '../repro/index.js';
import { join } from 'node:path';
import { oneLine, shellCommand, shellQuote } from '../util/index.js';

export interface ReproCommandOptions {
  out?: string;
  connection?: string;
}

/** Exit 0 once the folder is written. @throws NotARunError or NoFailureError (exit 2), ResultsError (exit 4). */
export async function reproCommand(dir: string, opts: ReproCommandOptions): Promise<number> {
  const { out, plan } = await writeRepro(dir, {
    ...(opts.out === undefined ? {} : { out: opts.out }),
    ...(opts.connection === undefined ? {} : { connection: opts.connection }),
  });
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  // Recorded text, one line each: a run folder from someone else could carry line breaks or terminal controls.
  log(`roundload repro: ${plan.requests.length} requests of connection ${oneLine(plan.connection ?? '(none)')}; the failure: ${oneLine(plan.failure.description)}`);
  if (plan.diagnosis !== null) log(`  ${oneLine(plan.diagnosis)}`);
  // A command line to paste: every value quoted (the target comes from the folder, the path from anyone).
  log(`  run it: ${shellCommand('node', join(out, 'repro.mjs'), '--target', plan.target)}   (or ${shellCommand('sh', join(out, 'repro.sh'))}; see ${shellQuote(join(out, 'README.txt'))})`);
  process.stdout.write(`${out}\n`);
  return 0;
}
