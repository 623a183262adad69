// Benchmark helpers: an engine in its own process (so the client's CPU is its own), CPU and RSS sampling,
// and table printing. Benchmarks print figures; they assert nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

const ROOT = new URL('../', import.meta.url).pathname;

export interface EngineProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `roundload engine` in a child process with the given engine settings, as one unified server (its URL is
 * its /metrics too; the benchmarks measure the client, not the PD hops); resolves once it listens. */
export async function startEngineProcess(settings: Record<string, unknown>): Promise<EngineProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'roundload-bench-'));
  const file = join(dir, 'engine.yaml');
  writeFileSync(file, stringify(settings));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'engine', '--port', '0', '--topology', 'single', '--settings', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: ROOT,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`engine did not start in 20 s: ${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`engine exited (${code}): ${err}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** CPU time (ns) the calling thread has had, from Linux's /proc/thread-self/schedstat; null elsewhere. Beside
 * process.cpuUsage() (every thread) it tells the main thread's share from the other threads' (the results
 * writer, V8's background GC). */
export function threadCpuNs(): number | null {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns : null;
  } catch {
    return null;
  }
}

export function printTable(title: string, head: string[], rows: (string | number)[][]): void {
  const cells = [head, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  process.stdout.write(`\n${title}\n`);
  for (const [n, r] of cells.entries()) {
    process.stdout.write(`${r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ')}\n`);
    if (n === 0) process.stdout.write(`${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  }
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
