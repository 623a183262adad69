// The benchmark suite of issue 9, runnable alone: `node --import tsx bench/suite.ts [--quick]`.
import { clientCostBench } from './client-cost.js';
import { growthBench } from './growth.js';
import { monitorCostBench } from './monitor-cost.js';

export async function suite(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const started = Date.now();
  growthBench();
  await clientCostBench(quick ? [1, 16] : [1, 16, 96, 1024]);
  await monitorCostBench();
  process.stdout.write(`\nsuite done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await suite(process.argv.slice(2));
