// The deadlines of one request: connect, headers, first token, stall (silence mid-stream) and total.
// One timer per request, re-armed only when the request changes phase to an earlier deadline than the timer
// already set (a later one is found when that timer fires: it re-checks the real deadline before calling
// anything a hang, and re-arms): bytes just move a timestamp, and most requests set one timer in all. Under `on_hang: wait` the
// watch goes on after a verdict, to the total deadline only.
import type { HangInfo, HangPhase } from '../types/index.js';
import type { Clock } from './clock.js';

export interface Deadlines {
  connectMs: number;
  headersMs: number;
  firstTokenMs: number;
  stallMs: number;
  totalMs: number;
}

/** What the watch itself knows when a deadline passes; the request adds bytes, chunks and its policy. */
export type HangVerdict = Pick<HangInfo, 'phase' | 'deadline' | 'deadline_ms' | 'last_byte_age_ms'>;

type State = 'idle' | 'sent' | 'connected' | 'headers' | 'streaming' | 'waiting' | 'stopped';

export class RequestWatch {
  readonly #deadlines: Deadlines;
  readonly #clock: Clock;
  readonly #onHang: (hang: HangVerdict) => void;
  #state: State = 'idle';
  #sentAt = 0;
  #lastByteAt = 0;
  #timer: unknown = null;
  /** When the pending timer fires (clock ms). */
  #timerAt = 0;

  constructor(deadlines: Deadlines, clock: Clock, onHang: (hang: HangVerdict) => void) {
    this.#deadlines = deadlines;
    this.#clock = clock;
    this.#onHang = onHang;
  }

  start(): void {
    this.#state = 'sent';
    this.#sentAt = this.#clock.now();
    this.#lastByteAt = this.#sentAt;
    this.#arm();
  }

  connected(): void {
    if (this.#state !== 'sent') return;
    this.#state = 'connected';
    this.#arm();
  }

  /** `now`: the caller's reading of this watch's clock, when it has one (one clock read per event). */
  headers(now = this.#clock.now()): void {
    if (this.#state !== 'sent' && this.#state !== 'connected') return;
    this.#state = 'headers';
    this.#lastByteAt = now;
    this.#arm();
  }

  /** Any bytes arrived, at `now` on this watch's clock (the caller's one reading per socket read): cheap on
   * purpose (called per read), no timer work. */
  bytes(now = this.#clock.now()): void {
    this.#lastByteAt = now;
  }

  firstToken(now = this.#clock.now()): void {
    if (this.#state === 'stopped' || this.#state === 'streaming' || this.#state === 'waiting' || this.#state === 'idle') return;
    this.#state = 'streaming';
    this.#lastByteAt = now;
    this.#arm();
  }

  /**
   * Called from the hang callback (`on_hang: wait`): keep the request, and call back once more, with phase
   * `total`, when `total_ms` since send has passed. Nothing else is judged from now on.
   */
  waitForTotal(): void {
    if (this.#state !== 'stopped') return;
    this.#state = 'waiting';
    this.#arm();
  }

  stop(): void {
    this.#state = 'stopped';
    if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
    this.#timer = null;
  }

  /** The earliest deadline for the current state, and what it would mean. */
  #next(): { at: number; phase: HangPhase; deadline: keyof Deadlines } {
    const d = this.#deadlines;
    const total = { at: this.#sentAt + d.totalMs, phase: 'total' as HangPhase, deadline: 'totalMs' as keyof Deadlines };
    let own: { at: number; phase: HangPhase; deadline: keyof Deadlines };
    switch (this.#state) {
      case 'waiting':
        return total;
      case 'sent':
        own = { at: this.#sentAt + d.connectMs, phase: 'connect', deadline: 'connectMs' };
        break;
      case 'connected':
        own = { at: this.#sentAt + d.headersMs, phase: 'headers', deadline: 'headersMs' };
        break;
      case 'headers':
        // Before the first token a server may legitimately say nothing (a long prefill): only first_token_ms applies.
        own = { at: this.#sentAt + d.firstTokenMs, phase: 'first_token', deadline: 'firstTokenMs' };
        break;
      default:
        own = { at: this.#lastByteAt + d.stallMs, phase: 'mid_stream', deadline: 'stallMs' };
    }
    if (this.#state === 'sent' || this.#state === 'connected') {
      // first_token_ms runs from send, so it binds before the headers too (a blackholed request hangs at
      // first_token_ms even when headers_ms is longer); the phase still says where the request was.
      const firstToken = this.#sentAt + d.firstTokenMs;
      if (firstToken < own.at) own = { at: firstToken, phase: own.phase, deadline: 'firstTokenMs' };
    }
    return own.at <= total.at ? own : total;
  }

  #arm(): void {
    if (this.#state === 'stopped' || this.#state === 'idle') {
      if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
      this.#timer = null;
      return;
    }
    // +1 ms: a timer may fire a hair early; the check below decides, never the timer alone.
    const at = this.#next().at + 1;
    // A pending timer that fires no later keeps its place: it will re-check, and re-arm for this deadline.
    if (this.#timer !== null && this.#timerAt <= at) return;
    if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#clock.setTimer(() => this.#check(), Math.max(0, at - this.#clock.now()));
  }

  #check(): void {
    this.#timer = null;
    if (this.#state === 'stopped') return;
    const now = this.#clock.now();
    const next = this.#next();
    if (now < next.at) {
      this.#arm();
      return;
    }
    this.stop();
    this.#onHang({
      phase: next.phase,
      deadline: toFieldName(next.deadline),
      deadline_ms: this.#deadlines[next.deadline],
      last_byte_age_ms: Math.round(now - this.#lastByteAt),
    });
  }
}

function toFieldName(key: keyof Deadlines): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
