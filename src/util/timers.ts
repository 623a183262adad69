// A timer for delays longer than one Node timer holds (2^31 − 1 ms, about 24.8 days: past it setTimeout fires
// after 1 ms): the wait runs as a chain of shorter timers, each checking the clock again.
import { performance } from 'node:perf_hooks';

/** Longest single setTimeout. */
const MAX_CHUNK_MS = 2_147_483_647;

export interface LongTimer {
  /** Cancels the timer; idempotent. */
  clear(): void;
}

/** Calls `fn` once, `ms` from now, for any finite `ms`. `chunkMs` (for tests) caps each underlying timer. */
export function longTimeout(fn: () => void, ms: number, chunkMs = MAX_CHUNK_MS): LongTimer {
  const dueMs = performance.now() + ms;
  let timer: NodeJS.Timeout | null = null;
  const arm = (): void => {
    const left = dueMs - performance.now();
    if (left <= 0) {
      timer = null;
      fn();
      return;
    }
    timer = setTimeout(arm, Math.min(Math.ceil(left), chunkMs));
  };
  arm();
  return {
    clear() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
