// The router's admission control, as sgl-router's middleware does it: a token bucket of
// `max_concurrent_requests` tokens refilled at that many per second, a request taking one and giving it back
// when done; with none free a request waits in a queue of `queue_size` (408 after `queue_timeout_s`), and with
// the queue full — or no queue at all (`--queue-size 0`) — it gets 429 at once.
import { performance } from 'node:perf_hooks';

export type Admission = 'admitted' | 'queue_disabled' | 'queue_full' | 'queue_timeout' | 'closed';

interface Waiter {
  resolve(outcome: Admission): void;
  timer: NodeJS.Timeout;
}

export class TokenBucketLimiter {
  #tokens: number;
  #lastRefillMs = performance.now();
  readonly #queue: Waiter[] = [];
  #refillTimer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly capacity: number,
    private readonly queueSize: number,
    private readonly queueTimeoutMs: number,
    private readonly refillPerSec = capacity,
  ) {
    this.#tokens = capacity;
  }

  /** Waits (bounded by the queue timeout) for a token. */
  acquire(): Promise<Admission> {
    if (this.#closed) return Promise.resolve('closed');
    this.#refill();
    if (this.#queue.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve('admitted');
    }
    if (this.queueSize === 0) return Promise.resolve('queue_disabled');
    if (this.#queue.length >= this.queueSize) return Promise.resolve('queue_full');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          resolve('queue_timeout');
        }, this.queueTimeoutMs),
      };
      this.#queue.push(waiter);
      this.#scheduleRefill();
    });
  }

  /** A finished request gives its token back. */
  release(): void {
    this.#tokens = Math.min(this.capacity, this.#tokens + 1);
    this.#serve();
  }

  close(): void {
    this.#closed = true;
    if (this.#refillTimer !== null) clearTimeout(this.#refillTimer);
    this.#refillTimer = null;
    for (const w of this.#queue.splice(0)) {
      clearTimeout(w.timer);
      w.resolve('closed');
    }
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.capacity, this.#tokens + ((now - this.#lastRefillMs) / 1000) * this.refillPerSec);
    this.#lastRefillMs = now;
  }

  #serve(): void {
    this.#refill();
    while (this.#queue.length > 0 && this.#tokens >= 1) {
      const w = this.#queue.shift()!;
      clearTimeout(w.timer);
      this.#tokens -= 1;
      w.resolve('admitted');
    }
    this.#scheduleRefill();
  }

  /** While requests wait, wake up when the next token has dripped in. */
  #scheduleRefill(): void {
    if (this.#refillTimer !== null || this.#queue.length === 0 || this.#closed) return;
    const waitMs = Math.max(1, ((1 - this.#tokens) / this.refillPerSec) * 1000);
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = null;
      this.#serve();
    }, waitMs);
  }
}
