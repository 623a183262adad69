// ONE decode loop for a server's running batch: every step emits one token to every running stream, and a
// step takes longer as the batch grows, as on a real GPU. Shared by the unified server and the PD decode
// server; a `decode_stall` fault stops it for a while (streams go silent, nothing else notices).
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/index.js';
import { decodeStepMs } from './latency.js';
import { after, TokenRate } from './timing.js';

/** A stream in the running batch. */
export interface DecodeTask {
  /** KV held besides the generated tokens (for `num_used_tokens`). */
  readonly promptTokens: number;
  /** Tokens to emit; 0 finishes at the next step with none. */
  readonly outputTokens: number;
  emitted: number;
  /** One token out; `index` counts from 0. A throw drops the task. */
  onToken(index: number): void;
  /** Right after the last token. */
  onFinish(): void;
}

export interface DecodeLoopHooks {
  /** After each step (`steps` counts from 1): stats logging. */
  onStep?(steps: number): void;
  /** After each step, once the batch is settled: admit more work. */
  afterStep?(): void;
  /** A task whose callback threw was dropped. */
  onDrop?(task: DecodeTask): void;
}

export class DecodeLoop {
  readonly running = new Set<DecodeTask>();
  readonly #settings: EngineSettings;
  /** The start's run speed factor (run-speed.ts): steps are this many times shorter. */
  readonly #speedFactor: number;
  readonly #hooks: DecodeLoopHooks;
  readonly #rate = new TokenRate();
  #cancelStep: (() => void) | null = null;
  /** Ideal time of the last step, so timer rounding does not accumulate into a slower loop. */
  #lastStepAtMs = 0;
  #steps = 0;
  #closed = false;
  #stalled = false;
  #cancelResume: (() => void) | null = null;

  constructor(settings: EngineSettings, speedFactor: number, hooks: DecodeLoopHooks = {}) {
    this.#settings = settings;
    this.#speedFactor = speedFactor;
    this.#hooks = hooks;
  }

  get steps(): number {
    return this.#steps;
  }

  get stalled(): boolean {
    return this.#stalled;
  }

  tokensPerSec(): number {
    return this.#rate.perSecond(performance.now());
  }

  /** KV tokens the batch holds (prompts plus tokens generated so far). */
  usedTokens(): number {
    let used = 0;
    for (const t of this.running) used += t.promptTokens + t.emitted;
    return used;
  }

  add(task: DecodeTask): void {
    if (this.#closed) return;
    this.running.add(task);
    this.#schedule(false);
  }

  /** Takes a task out of the batch; false when it was not in it. */
  remove(task: DecodeTask): boolean {
    return this.running.delete(task);
  }

  /** Stops stepping for `ms` (null: until stop()). Streams keep their sockets and go silent. */
  stall(ms: number | null): void {
    if (this.#closed) return;
    this.#stalled = true;
    this.#cancelStep?.();
    this.#cancelStep = null;
    this.#cancelResume?.();
    this.#cancelResume = ms === null ? null : after(ms, () => this.#resume());
  }

  stop(): void {
    this.#closed = true;
    this.running.clear();
    this.#cancelStep?.();
    this.#cancelResume?.();
    this.#cancelStep = null;
    this.#cancelResume = null;
  }

  #resume(): void {
    this.#cancelResume = null;
    this.#stalled = false;
    this.#schedule(false);
  }

  #schedule(continuing: boolean): void {
    if (this.#cancelStep !== null || this.running.size === 0 || this.#closed || this.#stalled) return;
    const stepMs = decodeStepMs(this.#settings, this.running.size, this.#speedFactor);
    const now = performance.now();
    let due = continuing ? this.#lastStepAtMs + stepMs : now + stepMs;
    // More than a step late (a blocked event loop): drop the debt instead of bursting tokens to catch up.
    if (due < now - stepMs) due = now;
    this.#lastStepAtMs = due;
    this.#cancelStep = after(due - now, () => this.#step());
  }

  #step(): void {
    this.#cancelStep = null;
    this.#steps += 1;
    let tokens = 0;
    for (const task of [...this.running]) {
      // An earlier callback in this step may have taken it out (e.g. a socket closed).
      if (!this.running.has(task)) continue;
      if (task.emitted < task.outputTokens) {
        const index = task.emitted;
        task.emitted += 1;
        tokens += 1;
        if (!this.#call(task, () => task.onToken(index))) continue;
      }
      if (task.emitted >= task.outputTokens) {
        this.running.delete(task);
        this.#call(task, () => task.onFinish());
      }
    }
    this.#rate.add(tokens, performance.now());
    this.#hooks.onStep?.(this.#steps);
    this.#hooks.afterStep?.();
    this.#schedule(true);
  }

  /** Runs a task callback; a throwing task is dropped so one bad response never stops the loop. */
  #call(task: DecodeTask, fn: () => void): boolean {
    try {
      fn();
      return this.running.has(task) || task.emitted >= task.outputTokens;
    } catch {
      this.running.delete(task);
      this.#hooks.onDrop?.(task);
      return false;
    }
  }
}
