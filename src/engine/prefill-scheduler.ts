// The PD prefill server's scheduler: a request waits in the bootstrap queue until the decode side has
// preallocated its KV (`num_prefill_bootstrap_queue_reqs`), then in the waiting queue (`num_queue_reqs`), is
// prefilled in a batch (`num_running_reqs`), and sits in the inflight queue while its KV transfers
// (`num_prefill_inflight_queue_reqs`). Timeouts and faults fail requests as SGLang does, in its words.
import type { EngineSettings } from '../config/index.js';
import { KV_CAPACITY_TOKENS, kvTransferError, kvTransferMs, type KvRoom } from './kv.js';
import { PrefillStage } from './prefill-stage.js';
import type { JobTicket } from './scheduler.js';
import type { ServerLog } from './logs.js';

export interface PrefillJob {
  /** SGLang's request id (for log lines). */
  readonly rid: string;
  readonly promptTokens: number;
  /** The rendezvous with the decode side; null for a health request (SGLang's fake bootstrap). */
  readonly room: KvRoom | null;
  /** `inflight_pin`: this request's transfer never finishes. */
  readonly pinned: boolean;
  /** Cache lookup when the request enters a batch; returns the uncached tokens. */
  admit(): number;
  onPrefilled(): void;
  /** The KV reached decode: the prefill request is done. */
  onTransferred(): void;
  /** Bootstrap or transfer failed (SGLang's message). */
  onFailed(message: string): void;
}

export interface PrefillHooks {
  onPrefillBatch?(batch: readonly PrefillJob[], uncachedTokens: number): void;
  /** A request failed at bootstrap (`num_bootstrap_failed_reqs_total`) or in transfer (`num_transfer_failed_reqs_total`). */
  onFailure?(kind: 'bootstrap' | 'transfer'): void;
  /** The pin gauge fault holds every transfer. */
  holdTransfers?(): boolean;
}

export interface PrefillTicket extends JobTicket {
  /** Its transfer is stuck (pinned or wedged): a client leaving does not end it. */
  stuck(): boolean;
}

export interface PrefillGauges {
  readonly bootstrap: number;
  readonly waiting: number;
  readonly prefilling: number;
  readonly inflight: number;
  readonly usedTokens: number;
}

type Stage = 'bootstrap' | 'waiting' | 'inflight' | 'done' | 'cancelled';

interface Task {
  readonly job: PrefillJob;
  readonly promptTokens: number;
  stage: Stage;
  timer: NodeJS.Timeout | null;
  /** Its transfer is stuck (pinned, wedged): a client leaving does not free it. */
  stuck: boolean;
  admit(): number;
}

export class PrefillScheduler {
  private readonly bootstrap = new Set<Task>();
  private readonly inflight = new Set<Task>();
  private readonly stage: PrefillStage<Task>;
  private wedged = false;
  private warnedBootstrap = false;
  private closed = false;
  hooks: PrefillHooks = {};

  constructor(
    private readonly settings: EngineSettings,
    private readonly log: ServerLog,
    speedFactor: number,
  ) {
    this.stage = new PrefillStage<Task>(settings, speedFactor, {
      canAdmit: (task) => this.usedTokens() + task.promptTokens <= KV_CAPACITY_TOKENS || this.usedTokens() === 0,
      onBatch: (batch, tokens) =>
        this.hooks.onPrefillBatch?.(
          batch.map((t) => t.job),
          tokens,
        ),
      onDone: (task) => this.prefilled(task),
      onDrop: (task) => {
        task.stage = 'cancelled';
      },
    });
  }

  submit(job: PrefillJob): PrefillTicket {
    const task: Task = { job, promptTokens: job.promptTokens, stage: 'bootstrap', timer: null, stuck: false, admit: () => job.admit() };
    const ticket: PrefillTicket = { cancel: () => this.cancel(task), stuck: () => task.stuck && task.stage === 'inflight' };
    if (this.closed) {
      task.stage = 'cancelled';
      return ticket;
    }
    const room = job.room;
    if (room === null) {
      task.stage = 'waiting';
      this.stage.push(task);
      return ticket;
    }
    this.bootstrap.add(task);
    // The decode side gave up (its own timeout, a client gone): a transfer stuck in our engine does not hear it.
    room.whenFailed((reason) => {
      if (!task.stuck) this.fail(task, reason, false);
    });
    room.whenDecodeReady(() => {
      if (task.stage !== 'bootstrap') return;
      this.clearTimer(task);
      this.bootstrap.delete(task);
      task.stage = 'waiting';
      this.stage.push(task);
    });
    if (task.stage === 'bootstrap') {
      task.timer = setTimeout(() => this.bootstrapTimeout(task), this.settings.prefill.bootstrap_timeout_s * 1000);
      task.timer.unref();
    }
    return ticket;
  }

  /** The wedge: every transfer stalls from now on, those in flight included. */
  wedge(): void {
    this.wedged = true;
    for (const t of this.inflight) {
      if (t.stuck) continue;
      this.clearTimer(t);
      t.stuck = true;
    }
  }

  get isWedged(): boolean {
    return this.wedged;
  }

  gauges(): PrefillGauges {
    return { bootstrap: this.bootstrap.size, waiting: this.stage.waiting.length, prefilling: this.stage.batch.length, inflight: this.inflight.size, usedTokens: this.usedTokens() };
  }

  stop(): void {
    this.closed = true;
    for (const t of [...this.bootstrap, ...this.inflight]) this.clearTimer(t);
    this.bootstrap.clear();
    this.inflight.clear();
    this.stage.stop();
  }

  private usedTokens(): number {
    let used = 0;
    for (const t of this.inflight) used += t.promptTokens;
    for (const t of this.stage.batch) used += t.promptTokens;
    return used;
  }

  private prefilled(task: Task): void {
    if (task.stage !== 'waiting') return;
    try {
      task.job.onPrefilled();
    } catch {
      task.stage = 'cancelled';
      return;
    }
    task.stage = 'inflight';
    this.inflight.add(task);
    const room = task.job.room;
    const held = this.wedged || this.hooks.holdTransfers?.() === true;
    if (held || (room !== null && task.job.pinned)) {
      task.stuck = true;
      const limit = this.settings.prefill.inflight_timeout_s;
      if (limit !== null && room !== null) {
        task.timer = setTimeout(() => this.inflightTimeout(task, limit), limit * 1000);
        task.timer.unref();
      }
      return;
    }
    // A health request's fake sender reports success at once; a real one waits for its KV to arrive.
    const ms = room === null ? 0 : kvTransferMs(this.settings, task.promptTokens);
    task.timer = setTimeout(() => {
      task.timer = null;
      if (task.stage !== 'inflight') return;
      this.inflight.delete(task);
      task.stage = 'done';
      room?.transferred();
      task.job.onTransferred();
      this.stage.kick();
    }, ms);
  }

  private bootstrapTimeout(task: Task): void {
    task.timer = null;
    if (task.stage !== 'bootstrap') return;
    const room = task.job.room;
    const waitedS = this.settings.prefill.bootstrap_timeout_s;
    if (!this.warnedBootstrap) {
      this.warnedBootstrap = true;
      this.log.scheduler(
        "Some requests timed out when bootstrapping, which means prefill instances fail to receive the KV indices from the decode instance of this request. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=600' (10 minutes) to relax the timeout condition. ",
      );
    }
    const reason = kvTransferError(room?.id ?? 0, `Request ${room?.id ?? 0} timed out after ${waitedS.toFixed(1)}s in KVPoll.Bootstrapping`);
    this.fail(task, reason, true);
  }

  private inflightTimeout(task: Task, limitS: number): void {
    task.timer = null;
    if (task.stage !== 'inflight') return;
    const room = task.job.room;
    this.log.scheduler(
      `WARNING: Prefill inflight request timed out: req.rid='${task.job.rid}' req.bootstrap_room=${room?.id ?? 0} has been in KVPoll.Transferring for ${limitS.toFixed(1)}s; force-failing it (SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT=${limitS})`,
    );
    const reason = kvTransferError(room?.id ?? 0, `Request ${room?.id ?? 0} timed out after ${limitS.toFixed(1)}s in KVPoll.Transferring`);
    this.fail(task, reason, true);
  }

  /**
   * Fails a task: logs SGLang's line for it, tells the decode side when the failure is ours (`ours`), and
   * answers the request with the message.
   */
  private fail(task: Task, reason: string, ours: boolean): void {
    if (task.stage === 'done' || task.stage === 'cancelled') return;
    this.clearTimer(task);
    this.bootstrap.delete(task);
    this.inflight.delete(task);
    this.stage.remove(task);
    const wasBootstrap = task.stage === 'bootstrap';
    task.stage = 'done';
    const room = task.job.room;
    const phase = wasBootstrap ? ('bootstrap' as const) : ('transfer' as const);
    const message = `Prefill ${phase} failed for request rank=0 req.rid='${task.job.rid}' req.bootstrap_room=${room?.id ?? 0} with exception ${reason}`;
    this.log.scheduler(message);
    this.hooks.onFailure?.(phase);
    if (ours) room?.fail(reason);
    task.job.onFailed(message);
    this.stage.kick();
  }

  private cancel(task: Task): void {
    switch (task.stage) {
      case 'bootstrap':
        this.clearTimer(task);
        this.bootstrap.delete(task);
        break;
      case 'waiting':
        this.stage.remove(task);
        break;
      case 'inflight':
        // A stuck transfer outlives its client (the incident's pinned gauge): only a health request leaves.
        if (task.stuck && task.job.room === null) {
          this.clearTimer(task);
          this.inflight.delete(task);
          break;
        }
        // A transfer under way finishes on its own.
        return;
      default:
        return;
    }
    task.stage = 'cancelled';
    this.stage.kick();
  }

  private clearTimer(task: Task): void {
    if (task.timer !== null) clearTimeout(task.timer);
    task.timer = null;
  }
}
