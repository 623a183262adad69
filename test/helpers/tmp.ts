// Test helpers: temporary folders that clean up after themselves, and running the CLI as a user would.
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { TestContext } from 'node:test';

export function tempDir(t: TestContext, prefix = 'roundload-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function readJsonl<T = Record<string, unknown>>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const ROOT = new URL('../../', import.meta.url).pathname;

/** Runs `roundload ARGS` from source (tsx), bounded by `timeoutMs`, in the repo root. `onData` sees each
 * chunk as it arrives (to time what a run prints). */
export function runCli(args: string[], options: { timeoutMs?: number; env?: Record<string, string>; onSpawn?: (pid: number) => void; onData?: (from: 'stdout' | 'stderr', text: string) => void } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      options.onData?.('stdout', d.toString());
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      options.onData?.('stderr', d.toString());
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
