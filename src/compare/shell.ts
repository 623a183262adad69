// Runs an arm's setup/teardown command: `/bin/sh -c`, its own process group, output streamed line by line
// to a log, and a deadline after which the whole group is killed (TERM, then KILL) — never a wait without end.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface ShellResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  /** The last lines of output (stdout and stderr interleaved), for an error message. */
  tail: string[];
}

/** Lines of output kept for the error message; everything goes to `onLine`. */
const TAIL_LINES = 20;
/** After TERM on timeout, KILL if the group is still there. */
const KILL_AFTER_MS = 2000;

export function runShell(command: string, options: { timeoutMs: number; env?: Record<string, string>; onLine?: (line: string, stream: 'stdout' | 'stderr') => void }): Promise<ShellResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const tail: string[] = [];
    let timedOut = false;
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const lines = (stream: 'stdout' | 'stderr') => {
      let rest = '';
      return (chunk: Buffer): void => {
        rest += chunk.toString('utf8');
        let at: number;
        while ((at = rest.indexOf('\n')) >= 0) {
          emit(rest.slice(0, at), stream);
          rest = rest.slice(at + 1);
        }
        // A line without an end that keeps growing is cut, so memory stays bounded.
        if (rest.length > 64 * 1024) {
          emit(rest, stream);
          rest = '';
        }
      };
    };
    const emit = (line: string, stream: 'stdout' | 'stderr'): void => {
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      options.onLine?.(line, stream);
    };
    child.stdout.on('data', lines('stdout'));
    child.stderr.on('data', lines('stderr'));
    let killTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_AFTER_MS);
    }, options.timeoutMs);
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      resolve({ code, signal, timedOut, durationMs: Math.round(performance.now() - started), tail });
    };
    child.on('error', (error) => {
      emit(`cannot start /bin/sh: ${error.message}`, 'stderr');
      finish(127, null);
    });
    // 'close' waits for the pipes: a command that leaves a background child holding them open is ended by the timeout.
    child.on('close', finish);
  });
}
