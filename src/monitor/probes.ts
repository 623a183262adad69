// Probes: shell commands run at start, on hangs and at the end (e.g. a journalctl grep for a watchdog line),
// each in its own process group, killed whole at its timeout, its output bounded; every run is a `probe`
// event. Hang probes are rate-limited: one at a time per probe, at most one per `minIntervalMs`.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { HangEvent, ProbeEvent } from '../types/index.js';

export type ProbeWhen = ProbeEvent['on'];

export interface ProbeCommand {
  name: string;
  command: string;
  on: readonly ProbeWhen[];
  timeout_s: number;
}

/** What one run of a probe gave: the result fields of a `probe` event. */
export type ProbeOutcome = Pick<ProbeEvent, 'exit_code' | 'signal' | 'duration_ms' | 'timed_out' | 'error' | 'stdout' | 'stderr' | 'stdout_truncated' | 'stderr_truncated'>;

/** After SIGTERM to the group, SIGKILL follows this much later; then we stop waiting at all. */
const KILL_GRACE_MS = 500;
const GIVE_UP_AFTER_KILL_MS = 1000;

/** Process groups of probes still running, killed if roundload exits first (a detached group outlives us). */
const running = new Set<number>();
let exitHookInstalled = false;
function killAllOnExit(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

class Capture {
  readonly #parts: Buffer[] = [];
  #bytes = 0;
  truncated = false;
  constructor(private readonly maxBytes: number) {}
  add(chunk: Buffer): void {
    const room = this.maxBytes - this.#bytes;
    if (room <= 0) {
      this.truncated = this.truncated || chunk.length > 0;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.#parts.push(kept);
    this.#bytes += kept.length;
  }
  text(): string {
    return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(this.#parts));
  }
}

/** Runs `/bin/sh -c command` in a new process group; resolves (never rejects) when it ends or is killed. */
export function runCommand(command: string, options: { timeoutMs: number; maxOutputBytes: number; env?: Record<string, string> }): Promise<ProbeOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const out = new Capture(options.maxOutputBytes);
    const err = new Capture(options.maxOutputBytes);
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let giveUpTimer: NodeJS.Timeout | undefined;
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const pid = child.pid;
    if (pid !== undefined) {
      running.add(pid);
      if (!exitHookInstalled) {
        process.on('exit', killAllOnExit);
        exitHookInstalled = true;
      }
    }
    const finish = (code: number | null, signal: string | null, error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(killTimer);
      clearTimeout(giveUpTimer);
      if (pid !== undefined) running.delete(pid);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        exit_code: code,
        signal,
        duration_ms: Math.round(performance.now() - started),
        timed_out: timedOut,
        error,
        stdout: out.text(),
        stderr: err.text(),
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
      });
    };
    const killGroup = (signal: NodeJS.Signals): void => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, signal);
      } catch {
        // the group is gone already
      }
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => {
        killGroup('SIGKILL');
        // Output pipes held open by something outside the group: stop waiting for them.
        giveUpTimer = setTimeout(() => finish(null, 'SIGKILL', null), GIVE_UP_AFTER_KILL_MS);
      }, KILL_GRACE_MS);
    }, options.timeoutMs);
    child.stdout?.on('data', (d: Buffer) => out.add(d));
    child.stderr?.on('data', (d: Buffer) => err.add(d));
    child.on('error', (e) => finish(null, null, e.message));
    // 'close' waits for the output pipes too, so everything written is captured.
    child.on('close', (code, signal) => finish(code, signal, null));
  });
}

export interface ProbeRunnerOptions {
  probes: readonly ProbeCommand[];
  /** A hang probe runs at most once per this long. */
  minIntervalMs: number;
  maxOutputBytes: number;
  runStartMs: number;
  /** Results folder, passed to the commands as ROUNDLOAD_RUN_DIR. */
  dir: string;
  emit: (event: ProbeEvent) => void;
}

export class ProbeRunner {
  readonly #o: ProbeRunnerOptions;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #busy = new Set<string>();
  readonly #lastHangStart = new Map<string, number>();
  readonly #skipped = new Map<string, number>();
  #stopped = false;

  constructor(options: ProbeRunnerOptions) {
    this.#o = options;
  }

  /** Runs every probe with `on` containing `when`; resolves when they have all ended. */
  run(when: 'start' | 'end'): Promise<void> {
    const runs = this.#o.probes.filter((p) => p.on.includes(when)).map((p) => this.#launch(p, when, {}));
    return Promise.all(runs).then(() => undefined);
  }

  /** A hang: runs the hang probes that are neither running nor run too recently (those count it as skipped). */
  onHang(e: HangEvent): void {
    if (this.#stopped) return;
    const now = performance.now();
    for (const p of this.#o.probes) {
      if (!p.on.includes('hang')) continue;
      const last = this.#lastHangStart.get(p.name);
      if (this.#busy.has(p.name) || (last !== undefined && now - last < this.#o.minIntervalMs)) {
        this.#skipped.set(p.name, (this.#skipped.get(p.name) ?? 0) + 1);
        continue;
      }
      this.#lastHangStart.set(p.name, now);
      const r = e.record;
      void this.#launch(p, 'hang', {
        ROUNDLOAD_HANG_T: e.t,
        ROUNDLOAD_HANG_SENT_T: r.t,
        ROUNDLOAD_HANG_PHASE: r.hang?.phase ?? '',
        ROUNDLOAD_HANG_AGENT: String(r.agent),
        ROUNDLOAD_HANG_ROUND: String(r.round),
        ROUNDLOAD_HANG_CONVERSATION: r.conversation,
        // The id the engine logs the request by: `grep "$ROUNDLOAD_REQUEST_ID" engine.log`.
        ...(r.request_id === undefined ? {} : { ROUNDLOAD_REQUEST_ID: r.request_id }),
      });
    }
  }

  /** No more hang probes; resolves when those under way have ended (each is bounded by its timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#inFlight]);
  }

  #launch(p: ProbeCommand, when: ProbeWhen, env: Record<string, string>): Promise<void> {
    const startMs = performance.now();
    const t = new Date().toISOString();
    this.#busy.add(p.name);
    const skipped = when === 'hang' ? (this.#skipped.get(p.name) ?? 0) : 0;
    if (when === 'hang') this.#skipped.set(p.name, 0);
    const job = runCommand(p.command, {
      timeoutMs: p.timeout_s * 1000,
      maxOutputBytes: this.#o.maxOutputBytes,
      env: { ROUNDLOAD_PROBE: p.name, ROUNDLOAD_PROBE_ON: when, ROUNDLOAD_RUN_DIR: this.#o.dir, ...env },
    }).then((outcome) => {
      this.#busy.delete(p.name);
      const requestId = env['ROUNDLOAD_REQUEST_ID'];
      this.#o.emit({
        kind: 'probe',
        t,
        run_ms: Math.round(startMs - this.#o.runStartMs),
        name: p.name,
        on: when,
        command: p.command,
        ...outcome,
        skipped,
        ...(requestId === undefined ? {} : { request_id: requestId }),
      });
    });
    this.#inFlight.add(job);
    void job.finally(() => this.#inFlight.delete(job));
    return job;
  }
}
