// The prefill worker: a FIFO waiting queue (`num_queue_reqs`) and one prefill batch at a time, taking queued
// prompts while the server has room and the chunked-prefill token budget allows; a batch costs
// `prefill_ms_per_1k_tokens` per 1000 uncached tokens. Shared by the unified server and the PD prefill server.
import type { EngineSettings } from '../config/index.js';
import { prefillBatchMs } from './latency.js';
import { after } from './timing.js';

/** Most uncached tokens one prefill batch takes (chunked-prefill budget); a bigger prompt goes alone. */
export const PREFILL_BATCH_TOKENS = 16_384;

export interface PrefillTask {
  readonly promptTokens: number;
  /** Called when the task enters a batch (SGLang matches prefixes when it schedules, not on arrival, so a
   * request queued behind one with the same prefix hits it); returns the uncached tokens prefill pays for. */
  admit(): number;
}

export interface PrefillStageOptions<T> {
  /** Whether the server has room for `task` now (decode slots, KV). */
  canAdmit(task: T): boolean;
  /** A batch formed (SGLang logs prefill stats then): its tasks and their uncached tokens. */
  onBatch?(batch: readonly T[], uncachedTokens: number): void;
  /** A task's prefill is done. */
  onDone(task: T): void;
  /** admit() threw: the task is gone. */
  onDrop(task: T): void;
}

export class PrefillStage<T extends PrefillTask> {
  readonly waiting: T[] = [];
  batch: T[] = [];
  readonly #settings: EngineSettings;
  /** The start's run speed factor (run-speed.ts): batches take this many times less. */
  readonly #speedFactor: number;
  readonly #opts: PrefillStageOptions<T>;
  #busy = false;
  #cancelTimer: (() => void) | null = null;
  #closed = false;

  constructor(settings: EngineSettings, speedFactor: number, opts: PrefillStageOptions<T>) {
    this.#settings = settings;
    this.#speedFactor = speedFactor;
    this.#opts = opts;
  }

  push(task: T): void {
    if (this.#closed) return;
    this.waiting.push(task);
    this.kick();
  }

  /** Takes a task out of the queue or the running batch; false when it was in neither. */
  remove(task: T): boolean {
    const at = this.waiting.indexOf(task);
    if (at >= 0) {
      this.waiting.splice(at, 1);
      return true;
    }
    const before = this.batch.length;
    this.batch = this.batch.filter((t) => t !== task);
    return this.batch.length < before;
  }

  /** Starts a batch if none runs and something fits. */
  kick(): void {
    if (this.#busy || this.#closed) return;
    let tokens = 0;
    while (this.waiting.length > 0 && tokens < PREFILL_BATCH_TOKENS) {
      const next = this.waiting[0];
      if (next === undefined || !this.#opts.canAdmit(next)) break;
      this.waiting.shift();
      let uncached: number;
      try {
        uncached = Math.max(0, next.admit());
      } catch {
        this.#opts.onDrop(next);
        continue;
      }
      // A prompt over the budget still goes (alone or last): the budget bounds a batch, it never blocks one.
      tokens += uncached;
      this.batch.push(next);
    }
    if (this.batch.length === 0) return;
    this.#busy = true;
    this.#opts.onBatch?.(this.batch, tokens);
    this.#cancelTimer = after(prefillBatchMs(this.#settings, tokens, this.#speedFactor), () => this.#finish());
  }

  stop(): void {
    this.#closed = true;
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    this.waiting.length = 0;
    this.batch = [];
  }

  #finish(): void {
    this.#cancelTimer = null;
    const batch = this.batch;
    this.batch = [];
    this.#busy = false;
    for (const task of batch) this.#opts.onDone(task);
    this.kick();
  }
}
