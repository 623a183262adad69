// The unified server's latency model (`topology: single`): a FIFO waiting queue, one prefill worker that batches
// admitted prompts, a per-request KV transfer (this one-process picture's stand-in for PD, shown in
// `num_prefill_inflight_queue_reqs`), and the decode loop.
import type { EngineSettings } from '../config/index.js';
import { DecodeLoop, type DecodeTask } from './decode-loop.js';
import { PrefillStage } from './prefill-stage.js';
import { kvTransferMs } from './kv.js';

/** What the scheduler needs from a request, and how it reports progress back. */
export interface SchedulerJob {
  readonly promptTokens: number;
  /** Called when the job enters a prefill batch; returns the uncached tokens prefill pays for. */
  admit(): number;
  /** Decode steps (output tokens) this job takes. */
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

/** Where the published gauges hook in: stats logging, and the pin fault holding transfers. */
export interface SchedulerHooks {
  onPrefillBatch?(batchSize: number, uncachedTokens: number): void;
  onDecodeStep?(step: number): void;
  holdTransfers?(): boolean;
}

type Stage = 'waiting' | 'prefill' | 'transfer' | 'running' | 'done' | 'cancelled';

interface Task extends DecodeTask {
  readonly job: SchedulerJob;
  admit(): number;
  stage: Stage;
  transferTimer: NodeJS.Timeout | null;
}

export class Scheduler {
  private readonly stage: PrefillStage<Task>;
  private readonly transferring = new Set<Task>();
  private readonly loop: DecodeLoop;
  private closed = false;
  hooks: SchedulerHooks = {};

  constructor(
    private readonly settings: EngineSettings,
    speedFactor: number,
  ) {
    this.loop = new DecodeLoop(settings, speedFactor, {
      onStep: (steps) => this.hooks.onDecodeStep?.(steps),
      afterStep: () => this.stage.kick(),
      onDrop: (task) => this.cancel(task as Task),
    });
    this.stage = new PrefillStage<Task>(settings, speedFactor, {
      canAdmit: () => this.occupied() < this.settings.max_running_requests,
      onBatch: (batch, tokens) => {
        for (const t of batch) t.stage = 'prefill';
        this.hooks.onPrefillBatch?.(batch.length, tokens);
      },
      onDone: (task) => {
        if (task.stage !== 'prefill') return;
        if (!this.call(task, () => task.job.onPrefilled())) return;
        this.transfer(task);
      },
      onDrop: (task) => {
        task.stage = 'cancelled';
      },
    });
  }

  submit(job: SchedulerJob): JobTicket {
    const task: Task = {
      job,
      stage: 'waiting',
      transferTimer: null,
      promptTokens: job.promptTokens,
      outputTokens: job.outputTokens,
      emitted: 0,
      admit: () => job.admit(),
      onToken: (index) => job.onToken(index),
      onFinish: () => {
        task.stage = 'done';
        job.onFinish();
      },
    };
    if (this.closed) task.stage = 'cancelled';
    else this.stage.push(task);
    return { cancel: () => this.cancel(task) };
  }

  gauges(): SchedulerGauges {
    let usedTokens = this.loop.usedTokens();
    for (const t of this.transferring) usedTokens += t.job.promptTokens;
    return {
      waiting: this.stage.waiting.length,
      prefilling: this.stage.batch.length,
      transferring: this.transferring.size,
      running: this.loop.running.size,
      usedTokens,
      decodeSteps: this.loop.steps,
      genTokensPerSec: this.loop.tokensPerSec(),
    };
  }

  /** Stops every timer and drops every job without calling back (the server destroys the sockets). */
  stop(): void {
    this.closed = true;
    for (const t of this.transferring) if (t.transferTimer !== null) clearTimeout(t.transferTimer);
    this.transferring.clear();
    this.stage.stop();
    this.loop.stop();
  }

  private occupied(): number {
    return this.stage.batch.length + this.transferring.size + this.loop.running.size;
  }

  private transfer(task: Task): void {
    task.stage = 'transfer';
    this.transferring.add(task);
    // A pinned transfer never completes (until the client goes away and cancels it).
    if (this.hooks.holdTransfers?.() === true) return;
    task.transferTimer = setTimeout(
      () => {
        task.transferTimer = null;
        this.transferring.delete(task);
        task.stage = 'running';
        this.loop.add(task);
      },
      kvTransferMs(this.settings, task.job.promptTokens),
    );
  }

  private cancel(task: Task): void {
    switch (task.stage) {
      case 'waiting':
      case 'prefill':
        this.stage.remove(task);
        break;
      case 'transfer':
        if (task.transferTimer !== null) clearTimeout(task.transferTimer);
        task.transferTimer = null;
        this.transferring.delete(task);
        break;
      case 'running':
        this.loop.remove(task);
        break;
      default:
        return;
    }
    task.stage = 'cancelled';
    // A freed slot lets the next queued prompt in.
    this.stage.kick();
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
}
