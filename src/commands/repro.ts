// `roundload repro <run>`: write a standalone reproducer of the run's first hang (or error) for another team.
import { writeRepro } from '../repro/index.js';
import { oneLine } from '../util/index.js';

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
  log(`  run it: node ${out}/repro.mjs --target ${oneLine(plan.target)}   (or sh ${out}/repro.sh; see ${out}/README.txt)`);
  process.stdout.write(`${out}\n`);
  return 0;
}
