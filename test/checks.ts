// `npm test`'s static checks, two at a time: Prettier, ESLint, dependency-cruiser and knip each use one core,
// so on a 2-core machine running them side by side takes about half the time (ESLint alone is most of it).
// Each check's output is printed whole when it ends; the exit code is 1 when any of them failed.
//
//   npm run -s build:test && node dist/test/checks.js
import { availableParallelism } from 'node:os';
import { pool, runWhole } from './helpers/whole.js';

/** The package.json scripts run, the longest first so the last one does not run alone. */
const CHECKS = ['lint', 'format:check', 'check:deps', 'check:unused'];

async function main(): Promise<number> {
  // A check is bounded as a test file is (10 minutes): a hung one fails the command instead of holding it.
  const results = await pool(CHECKS, availableParallelism(), (script) => runWhole(script, 'npm', ['run', '--silent', script], 600_000));
  return results.every((r) => r.code === 0) ? 0 : 1;
}

process.exitCode = await main();
