// Time as the watchdog sees it, injectable so tests drive deadlines with fake time.
import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A clock whose time moves only when a test calls `advance`. */
export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): unknown {
    this.#seq += 1;
    this.#timers.set(this.#seq, { at: this.#now + Math.max(0, ms), fn });
    return this.#seq;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward, firing due timers in order (a bounded number of them). */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let fired = 0; fired < 100_000; fired += 1) {
      let nextId: number | null = null;
      let nextAt = Infinity;
      for (const [id, t] of this.#timers) {
        if (t.at <= target && t.at < nextAt) {
          nextAt = t.at;
          nextId = id;
        }
      }
      if (nextId === null) break;
      const timer = this.#timers.get(nextId)!;
      this.#timers.delete(nextId);
      this.#now = timer.at;
      timer.fn();
    }
    this.#now = target;
  }
}
