// The lifecycle of one round's request as an explicit state machine: sent → headers → first token →
// streaming → done | error | hang. Every transition goes through `to`, which allows only the moves below; the
// terminal one happens exactly once. A callback that comes too late or out of order (data after the end, an
// end after a hang verdict, a second terminal outcome) changes nothing, and is never dropped without a trace:
// it is counted process-wide (`outOfOrderCallbacks`) and, with ROUNDLOAD_DEBUG=1, written to stderr. The one
// expected late callback, the error of an abort the request made itself after its terminal state (a hang
// verdict, a stop, a wrong content type), is not counted.

export type RoundState = 'sent' | 'headers' | 'first_token' | 'streaming' | 'done' | 'error' | 'hang';
export type TerminalState = Extract<RoundState, 'done' | 'error' | 'hang'>;

const NEXT: Record<RoundState, readonly RoundState[]> = {
  sent: ['headers', 'error', 'hang'],
  // A stream may end without any token (an error answer, an empty completion).
  headers: ['first_token', 'done', 'error', 'hang'],
  first_token: ['streaming', 'done', 'error', 'hang'],
  streaming: ['done', 'error', 'hang'],
  done: [],
  error: [],
  hang: [],
};

let outOfOrder = 0;
const debug = process.env.ROUNDLOAD_DEBUG === '1';

/** Callbacks that came out of order or after their request's terminal state, in this process so far. */
export function outOfOrderCallbacks(): number {
  return outOfOrder;
}

export class RoundLifecycle {
  readonly #id: string;
  #state: RoundState = 'sent';
  /** The request aborted its own transfer after its terminal state: the abort's error is expected. */
  #aborted = false;

  constructor(requestId: string) {
    this.#id = requestId;
  }

  get state(): RoundState {
    return this.#state;
  }

  get terminal(): boolean {
    return NEXT[this.#state].length === 0;
  }

  /** Moves to `next` when the lifecycle allows it; otherwise counts `callback` as out of order and stays. */
  to(next: RoundState, callback: string): boolean {
    if (!NEXT[this.#state].includes(next)) {
      this.late(callback);
      return false;
    }
    this.#state = next;
    return true;
  }

  /**
   * The terminal transition, once: false (and counted) when the request already ended. From a state the table
   * does not allow it from, it still ends the request (a request must always end) and is counted.
   */
  end(state: TerminalState, callback: string): boolean {
    if (this.terminal) {
      this.late(callback);
      return false;
    }
    if (!NEXT[this.#state].includes(state)) this.late(callback);
    this.#state = state;
    return true;
  }

  /** Notes that the request aborted its own transfer (after its terminal state). */
  aborted(): void {
    this.#aborted = true;
  }

  /** `callback` came when nothing may happen any more (after the terminal state, or out of order). */
  late(callback: string): void {
    if (callback === 'error' && this.#aborted && this.terminal) return;
    outOfOrder += 1;
    if (debug) process.stderr.write(`roundload debug: request ${this.#id}: ${callback} in state ${this.#state}, ignored (${outOfOrder} so far)\n`);
  }
}
