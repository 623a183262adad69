// What the suite's runner (test/run.ts) and npm test's checks (test/checks.ts) share: a child process whose
// output is kept and printed whole when it ends (no interleaving), bounded in time, and a pool running a list
// of such jobs a few at a time.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT } from './root.js';

export interface WholeResult {
  code: number | null;
  timedOut: boolean;
  ms: number;
  output: string;
}

/** Runs `command ARGS` in the repository's root, killed after `timeoutMs`; prints `▶ label — ok|FAILED…, N s`
 * and its whole output (stdout and stderr as they came) when it ends. */
export function runWhole(label: string, command: string, args: readonly string[], timeoutMs: number): Promise<WholeResult> {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('error', (error) => (output += `${error.message}\n`));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      const mark = code === 0 ? 'ok' : timedOut ? `TIMED OUT after ${timeoutMs / 1000} s` : `FAILED (exit ${code})`;
      process.stdout.write(`\n▶ ${label} — ${mark}, ${(ms / 1000).toFixed(1)} s\n${output}`);
      done({ code, timedOut, ms, output });
    });
  });
}

/** `run` over `items`, `jobs` at a time, in the items' order; the results in the order they ended. */
export async function pool<T, R>(items: readonly T[], jobs: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) results.push(await run(items[next++]!));
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results;
}
