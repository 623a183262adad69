// `npm test`'s static checks, two at a time: Prettier, ESLint, dependency-cruiser and knip each use one core,
// so on a 2-core machine running them side by side takes about half the time (ESLint alone is most of it).
// Each check's output is printed whole when it ends; the exit code is 1 when any of them failed.
//
//   npm run -s build:test && node dist/test/checks.js
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ROOT } from './helpers/root.js';

/** The package.json scripts run, the longest first so the last one does not run alone. */
const CHECKS = ['lint', 'format:check', 'check:deps', 'check:unused'];

function runCheck(script: string): Promise<boolean> {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn('npm', ['run', '--silent', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('error', (error) => {
      output += `${error.message}\n`;
    });
    child.on('close', (code) => {
      const s = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(`▶ ${script} — ${code === 0 ? 'ok' : `FAILED (exit ${code})`}, ${s} s\n${output}`);
      done(code === 0);
    });
  });
}

async function main(): Promise<number> {
  const queue = [...CHECKS];
  const results: boolean[] = [];
  const worker = async (): Promise<void> => {
    for (let script = queue.shift(); script !== undefined; script = queue.shift()) results.push(await runCheck(script));
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), CHECKS.length) }, worker));
  return results.every(Boolean) ? 0 : 1;
}

process.exitCode = await main();
