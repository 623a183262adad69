// The latency model, a batch scheduler: a FIFO waiting queue, one prefill worker that batches admitted prompts,
// a per-request KV transfer, and ONE decode loop whose every step emits one token to every running stream,
// so each step gets slower as the batch grows, as on a real GPU.
import { performance } from 'node:perf_hooks';
import type { EngineSettings } from '../config/schema.js';

/** What the scheduler needs from a request, and how it reports progress back. */
export interface SchedulerJob {
  readonly promptTokens: number;
  /** Called when the job enters a prefill batch (as SGLang matches prefixes when it schedules, not on arrival,
   * so a request queued behind one with the same prefix hits it); returns the uncached tokens prefill pays for. */
  admit(): number;
  /** Decode steps (output tokens) this job takes; at least 1. */
  readonly outputTokens: number;
  /** The prompt's KV now exists (the server caches its prefix here). */
  onPrefilled(): void;
  /** One output token was produced; `index` counts from 0. */
  onToken(index: number): void;
  /** Called right after the last onToken. */
  onFinish(): void;
}

export interface JobTicket {
  /** Drops the job from whatever stage it is in; idempotent, and no callback runs after it. */
  cancel(): void;
}

export interface SchedulerGauges {
  readonly waiting: number;
  readonly prefilling: number;
  readonly transferring: number;
  readonly running: number;
  /** KV tokens held by transferring and running streams (prompt plus tokens generated so far). */
  readonly usedTokens: number;
  readonly decodeSteps: number;
  /** Output tokens per second over the last few seconds. */
  readonly genTokensPerSec: number;
}

/** Where the published gauges (gauges.ts) hook in: stats logging, and the pin fault holding transfers. */
export interface SchedulerHooks {
  onPrefillBatch?(): void;
  onDecodeStep?(step: number): void;
  holdTransfers?(): boolean;
}

type Stage = 'waiting' | 'prefill' | 'transfer' | 'running' | 'done' | 'cancelled';

interface Task {
  readonly job: SchedulerJob;
  stage: Stage;
  /** Set by admit() when the task enters prefill. */
  uncachedTokens: number;
  emitted: number;
  transferTimer: NodeJS.Timeout | null;
}

/** Most uncached tokens one prefill batch takes (chunked-prefill budget); a bigger prompt goes alone. */
const PREFILL_BATCH_TOKENS = 16_384;
const RATE_BUCKET_MS = 500;
const RATE_BUCKETS = 10;

/** Output tokens per second over a sliding window of fixed buckets (no per-token allocation). */
class TokenRate {
  private readonly counts = new Array<number>(RATE_BUCKETS).fill(0);
  private readonly epochs = new Array<number>(RATE_BUCKETS).fill(-1);

  add(tokens: number, nowMs: number): void {
    const epoch = Math.floor(nowMs / RATE_BUCKET_MS);
    const slot = epoch % RATE_BUCKETS;
    if (this.epochs[slot] !== epoch) {
      this.epochs[slot] = epoch;
      this.counts[slot] = 0;
    }
    this.counts[slot] = (this.counts[slot] ?? 0) + tokens;
  }

  perSecond(nowMs: number): number {
    const epoch = Math.floor(nowMs / RATE_BUCKET_MS);
    let total = 0;
    for (let i = 0; i < RATE_BUCKETS; i += 1) {
      const e = this.epochs[i] ?? -1;
      if (e > epoch - RATE_BUCKETS && e <= epoch) total += this.counts[i] ?? 0;
    }
    return total / ((RATE_BUCKETS * RATE_BUCKET_MS) / 1000);
  }
}

export class Scheduler {
  private readonly waiting: Task[] = [];
  private prefillBatch: Task[] = [];
  private prefillBusy = false;
  private cancelPrefillTimer: (() => void) | null = null;
  private readonly transferring = new Set<Task>();
  private readonly running = new Set<Task>();
  private cancelStepTimer: (() => void) | null = null;
  /** Ideal time of the last decode step, so timer rounding does not accumulate into a slower loop. */
  private lastStepAtMs = 0;
  private steps = 0;
  private readonly rate = new TokenRate();
  private closed = false;
  hooks: SchedulerHooks = {};

  constructor(private readonly settings: EngineSettings) {}

  submit(job: SchedulerJob): JobTicket {
    const task: Task = { job, stage: 'waiting', uncachedTokens: 0, emitted: 0, transferTimer: null };
    if (this.closed) {
      task.stage = 'cancelled';
    } else {
      this.waiting.push(task);
      this.startPrefill();
    }
    return { cancel: () => this.cancel(task) };
  }

  gauges(): SchedulerGauges {
    let usedTokens = 0;
    for (const t of this.transferring) usedTokens += t.job.promptTokens;
    for (const t of this.running) usedTokens += t.job.promptTokens + t.emitted;
    return {
      waiting: this.waiting.length,
      prefilling: this.prefillBatch.length,
      transferring: this.transferring.size,
      running: this.running.size,
      usedTokens,
      decodeSteps: this.steps,
      genTokensPerSec: this.rate.perSecond(performance.now()),
    };
  }

  /** Stops every timer and drops every job without calling back (the server destroys the sockets). */
  stop(): void {
    this.closed = true;
    for (const t of [...this.waiting, ...this.prefillBatch, ...this.transferring, ...this.running]) this.cancel(t);
    this.cancelPrefillTimer?.();
    this.cancelStepTimer?.();
    this.cancelPrefillTimer = null;
    this.cancelStepTimer = null;
  }

  private occupied(): number {
    return this.prefillBatch.length + this.transferring.size + this.running.size;
  }

  /** Takes queued prompts into one prefill batch while decode slots and the batch token budget allow. */
  private startPrefill(): void {
    if (this.prefillBusy || this.closed) return;
    const max = this.settings.max_running_requests;
    let tokens = 0;
    while (this.waiting.length > 0 && this.occupied() < max && tokens < PREFILL_BATCH_TOKENS) {
      const next = this.waiting.shift();
      if (next === undefined) break;
      try {
        next.uncachedTokens = Math.max(0, next.job.admit());
      } catch {
        next.stage = 'cancelled';
        continue;
      }
      // A prompt over the budget still goes (alone or last): the budget bounds a batch, it never blocks one.
      next.stage = 'prefill';
      tokens += next.uncachedTokens;
      this.prefillBatch.push(next);
    }
    if (this.prefillBatch.length === 0) return;
    this.prefillBusy = true;
    this.hooks.onPrefillBatch?.();
    const ms = (tokens / 1000) * this.settings.prefill_ms_per_1k_tokens;
    this.cancelPrefillTimer = this.after(ms, () => this.finishPrefill());
  }

  private finishPrefill(): void {
    this.cancelPrefillTimer = null;
    const batch = this.prefillBatch;
    this.prefillBatch = [];
    this.prefillBusy = false;
    for (const task of batch) {
      if (task.stage !== 'prefill') continue;
      if (!this.call(task, () => task.job.onPrefilled())) continue;
      this.transfer(task);
    }
    this.startPrefill();
  }

  private transfer(task: Task): void {
    if (this.hooks.holdTransfers?.() === true) {
      // A pinned transfer: it never completes (until the client goes away and cancels it).
      task.stage = 'transfer';
      this.transferring.add(task);
      return;
    }
    if (this.settings.kv_transfer_ms <= 0) {
      this.join(task);
      return;
    }
    task.stage = 'transfer';
    this.transferring.add(task);
    task.transferTimer = setTimeout(() => {
      task.transferTimer = null;
      this.transferring.delete(task);
      this.join(task);
    }, this.settings.kv_transfer_ms);
  }

  private join(task: Task): void {
    task.stage = 'running';
    this.running.add(task);
    this.scheduleStep(false);
  }

  private scheduleStep(continuing: boolean): void {
    if (this.cancelStepTimer !== null || this.running.size === 0 || this.closed) return;
    const s = this.settings;
    const stepMs = (s.decode_step_ms + s.decode_step_ms_per_running * this.running.size) / s.decode_speedup;
    const now = performance.now();
    let due = continuing ? this.lastStepAtMs + stepMs : now + stepMs;
    // More than a step late (a blocked event loop): drop the debt instead of bursting tokens to catch up.
    if (due < now - stepMs) due = now;
    this.lastStepAtMs = due;
    this.cancelStepTimer = this.after(due - now, () => this.step());
  }

  private step(): void {
    this.cancelStepTimer = null;
    this.steps += 1;
    let tokens = 0;
    for (const task of [...this.running]) {
      // An earlier callback in this step may have cancelled it (e.g. a socket closed).
      if (task.stage !== 'running') continue;
      const index = task.emitted;
      task.emitted += 1;
      tokens += 1;
      if (!this.call(task, () => task.job.onToken(index))) continue;
      if (task.emitted >= task.job.outputTokens) {
        this.running.delete(task);
        task.stage = 'done';
        this.call(task, () => task.job.onFinish());
      }
    }
    this.rate.add(tokens, performance.now());
    this.hooks.onDecodeStep?.(this.steps);
    this.startPrefill();
    this.scheduleStep(true);
  }

  private cancel(task: Task): void {
    switch (task.stage) {
      case 'waiting': {
        const at = this.waiting.indexOf(task);
        if (at >= 0) this.waiting.splice(at, 1);
        break;
      }
      case 'prefill':
        this.prefillBatch = this.prefillBatch.filter((t) => t !== task);
        break;
      case 'transfer':
        if (task.transferTimer !== null) clearTimeout(task.transferTimer);
        task.transferTimer = null;
        this.transferring.delete(task);
        break;
      case 'running':
        this.running.delete(task);
        break;
      default:
        return;
    }
    task.stage = 'cancelled';
    // A freed slot lets the next queued prompt in.
    this.startPrefill();
  }

  /** Runs a job callback; a throwing job is dropped so one bad response never stops the loop. */
  private call(task: Task, fn: () => void): boolean {
    try {
      fn();
      return task.stage !== 'cancelled';
    } catch {
      this.cancel(task);
      return false;
    }
  }

  /** A zero wait uses setImmediate: steps then run back to back and their writes share TCP reads.
   * Returns the function that cancels the wait. */
  private after(ms: number, fn: () => void): () => void {
    if (ms <= 0) {
      const immediate = setImmediate(fn);
      return () => clearImmediate(immediate);
    }
    const timeout = setTimeout(fn, ms);
    return () => clearTimeout(timeout);
  }
}
