// The benchmark suite `npm run bench` runs (about five minutes): client cost and timing fidelity, monitor cost, growth.
import { clientCostBench } from './client-cost.js';
import { growthBench } from './growth.js';
import { monitorCostBench } from './monitor-cost.js';

export async function suite(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const started = Date.now();
  growthBench();
  // Three alternated rounds a level keep the suite short; `npm run bench -- client` does five.
  await clientCostBench(quick ? [1, 16] : [1, 16, 96, 1024], 3);
  await monitorCostBench();
  process.stdout.write(`\nsuite done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
