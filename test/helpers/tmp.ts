// Test helpers: temporary folders that clean up after themselves, and running the CLI as a user would.
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { cliArgs, ROOT } from './root.js';

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

/** Runs `roundload ARGS` (built or from source: `cliArgs`), bounded by `timeoutMs`, in the repo root. `onData` sees each
 * chunk as it arrives (to time what a run prints); `onStderrLine` each whole line of stderr. */
export function runCli(
  args: string[],
  options: {
    timeoutMs?: number;
    env?: Record<string, string>;
    onSpawn?: (pid: number) => void;
    onData?: (from: 'stdout' | 'stderr', text: string) => void;
    onStderrLine?: (line: string) => void;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), {
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
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      options.onData?.('stderr', d.toString());
      if (options.onStderrLine === undefined) return;
      partial += d.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onStderrLine(line);
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

export interface EngineProcess {
  url: string;
  port: number;
  pid: number;
  /** SIGKILLs it (if still running) and resolves once it is gone. */
  kill(): Promise<void>;
}

/** `roundload engine --port PORT` as a separate process (0: any free port), killed after the test. Its router's
 * metrics listen on any free port (the default), so two such tests running at once do not collide. */
export function engineProcess(t: TestContext, port = 0, extra: string[] = []): Promise<EngineProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs('engine', '--port', String(port), ...extra), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    const kill = async (): Promise<void> => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await gone;
    };
    t.after(kill);
    let err = '';
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`engine did not start within 60 s: ${err}`));
    }, 60_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        const url = m[1]!;
        resolve({ url, port: Number(new URL(url).port), pid: child.pid!, kill });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited with ${code}: ${err}`));
    });
  });
}
