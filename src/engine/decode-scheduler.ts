// The PD decode server's scheduler: a request waits in the prealloc queue for a KV slot
// (`num_decode_prealloc_queue_reqs`), tells the prefill side it is ready, waits in the transfer queue for its KV
// (`num_decode_transfer_queue_reqs`), then in the waiting queue for the next step (`num_queue_reqs`), and decodes
// in the running batch (`num_running_reqs`), one stream per choice. A transfer that never comes fails after
// `decode.waiting_timeout_s`, logged as SGLang logs `SGLANG_DISAGGREGATION_WAITING_TIMEOUT`.
import type { EngineSettings } from '../config/index.js';
import { DecodeLoop, type DecodeTask } from './decode-loop.js';
import { kvTransferError, type KvRoom } from './kv.js';
import type { JobTicket } from './scheduler.js';
import type { ServerLog } from './logs.js';

export interface DecodeJob {
  readonly rid: string;
  readonly promptTokens: number;
  /** The rendezvous with the prefill side; null for a health request (SGLang's fake bootstrap). */
  readonly room: KvRoom | null;
  /** `bootstrap_stall`: this server never preallocates for the request. */
  readonly stallBootstrap: boolean;
  /** Output tokens of each choice. */
  readonly outputTokens: readonly number[];
  /** The KV arrived (the request is about to join the batch). */
  onTransferred(): void;
  onToken(choice: number, index: number): void;
  onChoiceFinish(choice: number): void;
  /** Every choice finished. */
  onFinish(): void;
  onFailed(message: string): void;
}

export interface DecodeHooks {
  onDecodeStep?(step: number): void;
  onFailure?(): void;
}

export interface DecodeGauges {
  readonly prealloc: number;
  readonly transfer: number;
  readonly waiting: number;
  readonly running: number;
  readonly usedTokens: number;
  readonly genTokensPerSec: number;
  readonly decodeSteps: number;
}

type Stage = 'prealloc' | 'transfer' | 'waiting' | 'running' | 'done' | 'cancelled';

interface Task {
  readonly job: DecodeJob;
  stage: Stage;
  timer: NodeJS.Timeout | null;
  streams: DecodeTask[];
  remaining: number;
}

export class DecodeScheduler {
  private readonly prealloc: Task[] = [];
  private readonly transfer = new Set<Task>();
  private readonly waiting: Task[] = [];
  private readonly runningJobs = new Set<Task>();
  private readonly owners = new WeakMap<DecodeTask, Task>();
  readonly loop: DecodeLoop;
  private warnedWaiting = false;
  private closed = false;
  hooks: DecodeHooks = {};

  constructor(
    private readonly settings: EngineSettings,
    private readonly log: ServerLog,
    speedFactor: number,
  ) {
    this.loop = new DecodeLoop(settings, speedFactor, {
      onStep: (steps) => this.hooks.onDecodeStep?.(steps),
      afterStep: () => this.drainWaiting(),
      onDrop: (stream) => {
        const task = this.owners.get(stream);
        if (task !== undefined) this.cancel(task);
      },
    });
  }

  submit(job: DecodeJob): JobTicket {
    const task: Task = { job, stage: 'prealloc', timer: null, streams: [], remaining: job.outputTokens.length };
    if (this.closed) {
      task.stage = 'cancelled';
      return { cancel: () => {} };
    }
    this.prealloc.push(task);
    job.room?.whenFailed((reason) => this.failFromPeer(task, reason));
    this.admit();
    return { cancel: () => this.cancel(task) };
  }

  /** `decode_stall`: the loop stops for `ms` (null: for good). */
  stall(ms: number | null): void {
    this.loop.stall(ms);
  }

  gauges(): DecodeGauges {
    return {
      prealloc: this.prealloc.length,
      transfer: this.transfer.size,
      waiting: this.waiting.length,
      running: this.loop.running.size,
      usedTokens: this.loop.usedTokens(),
      genTokensPerSec: this.loop.tokensPerSec(),
      decodeSteps: this.loop.steps,
    };
  }

  stop(): void {
    this.closed = true;
    for (const t of this.transfer) this.clearTimer(t);
    this.prealloc.length = 0;
    this.transfer.clear();
    this.waiting.length = 0;
    this.runningJobs.clear();
    this.loop.stop();
  }

  /** Requests holding a decode slot: preallocated, waiting, or running. */
  private occupied(): number {
    return this.transfer.size + this.waiting.length + this.runningJobs.size;
  }

  /** Preallocates KV for queued requests while slots are free (a stalled bootstrap is passed over). */
  private admit(): void {
    for (let i = 0; i < this.prealloc.length && this.occupied() < this.settings.max_running_requests;) {
      const task = this.prealloc[i]!;
      if (task.job.stallBootstrap) {
        i += 1;
        continue;
      }
      this.prealloc.splice(i, 1);
      const room = task.job.room;
      if (room === null) {
        this.toWaiting(task);
        continue;
      }
      task.stage = 'transfer';
      this.transfer.add(task);
      const limitS = this.settings.decode.waiting_timeout_s;
      task.timer = setTimeout(() => this.waitingTimeout(task, limitS), limitS * 1000);
      task.timer.unref();
      room.whenTransferred(() => {
        if (task.stage !== 'transfer') return;
        this.clearTimer(task);
        this.transfer.delete(task);
        this.toWaiting(task);
      });
      room.decodeReady();
    }
  }

  private toWaiting(task: Task): void {
    task.stage = 'waiting';
    this.waiting.push(task);
    try {
      task.job.onTransferred();
    } catch {
      this.cancel(task);
      return;
    }
    // An idle loop takes it at once; a running one at its next step.
    if (this.loop.running.size === 0) this.drainWaiting();
  }

  private drainWaiting(): void {
    if (this.loop.stalled) return;
    for (const task of this.waiting.splice(0)) {
      if (task.stage !== 'waiting') continue;
      task.stage = 'running';
      this.runningJobs.add(task);
      task.streams = task.job.outputTokens.map((outputTokens, choice): DecodeTask => ({
        promptTokens: choice === 0 ? task.job.promptTokens : 0,
        outputTokens,
        emitted: 0,
        onToken: (index) => task.job.onToken(choice, index),
        onFinish: () => {
          task.job.onChoiceFinish(choice);
          task.remaining -= 1;
          if (task.remaining > 0) return;
          task.stage = 'done';
          this.runningJobs.delete(task);
          task.job.onFinish();
          this.admit();
        },
      }));
      for (const s of task.streams) {
        this.owners.set(s, task);
        this.loop.add(s);
      }
    }
  }

  private waitingTimeout(task: Task, limitS: number): void {
    task.timer = null;
    if (task.stage !== 'transfer') return;
    if (!this.warnedWaiting) {
      this.warnedWaiting = true;
      this.log.scheduler(
        "Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' (10 minutes) to relax the timeout condition. ",
      );
    }
    const room = task.job.room;
    const reason = kvTransferError(room?.id ?? 0, `Request ${room?.id ?? 0} timed out after ${limitS.toFixed(1)}s in KVPoll.WaitingForInput`);
    this.fail(task, reason);
    room?.fail(reason);
  }

  private failFromPeer(task: Task, reason: string): void {
    if (task.stage === 'prealloc' || task.stage === 'transfer') this.fail(task, reason);
  }

  private fail(task: Task, reason: string): void {
    const phase = task.stage === 'prealloc' ? 'bootstrap' : 'transfer';
    if (!this.remove(task)) return;
    task.stage = 'done';
    const message = `Decode ${phase} failed for request rank=0 req.rid='${task.job.rid}' req.bootstrap_room=${task.job.room?.id ?? 0} with exception ${reason}`;
    this.log.scheduler(message);
    this.hooks.onFailure?.();
    task.job.onFailed(message);
    this.admit();
  }

  /** Takes a task out of its queue or the batch; false when it was in none. */
  private remove(task: Task): boolean {
    switch (task.stage) {
      case 'prealloc': {
        const at = this.prealloc.indexOf(task);
        if (at >= 0) this.prealloc.splice(at, 1);
        return true;
      }
      case 'transfer':
        this.clearTimer(task);
        this.transfer.delete(task);
        return true;
      case 'waiting': {
        const at = this.waiting.indexOf(task);
        if (at >= 0) this.waiting.splice(at, 1);
        return true;
      }
      case 'running':
        for (const s of task.streams) this.loop.remove(s);
        this.runningJobs.delete(task);
        return true;
      default:
        return false;
    }
  }

  private cancel(task: Task): void {
    if (!this.remove(task)) return;
    task.stage = 'cancelled';
    this.admit();
  }

  private clearTimer(task: Task): void {
    if (task.timer !== null) clearTimeout(task.timer);
    task.timer = null;
  }
}
