// The progress display during a run, on stderr. It only subscribes to the run's events (convention 7, docs/development.md).
// Not a terminal (CI logs, `| tee`, cron, a pod): one line every interval (10 s by default). A terminal: one
// live line redrawn every interval (1 s), cut to the width by dropping whole fields, in colour unless NO_COLOR.
// Both: a hang, a first error of a class, a monitor target down or back, a saturated client on its own line
// the moment it happens.
import { performance } from 'node:perf_hooks';
import { clearLine, cursorTo } from 'node:readline';
import { ProgressTracker, type ProgressPlan } from './progress-state.js';
import { colorWanted, colors, fitFields, noticeLine, progressFields, render } from './progress-line.js';
import type { RunEvent } from '../types/index.js';
import { oneLine } from '../util/index.js';

/** Where the display writes (stderr, or a test's fake). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** Terminal width; read at every redraw, so a resize is followed. */
  columns?: number;
}

/** A repeating timer; tests pass their own to step time by hand. */
export type Ticker = (intervalMs: number, tick: () => void) => { stop(): void };

export interface ProgressOptions {
  plan: ProgressPlan;
  /** Time between two lines (or two redraws of the live line). @default 1000 on a terminal, 10000 otherwise */
  intervalMs?: number | undefined;
  /** @default a terminal and NO_COLOR unset */
  color?: boolean;
  /** Milliseconds, monotonic. @default performance.now */
  clock?: () => number;
  ticker?: Ticker;
}

export interface ProgressDisplay {
  onEvent(event: RunEvent): void;
  /** Writes a line of its own (a notice of the run) above the live line, which is then redrawn. */
  print(line: string): void;
  /** Stops the timer and clears the live line, so what follows starts on a clean line. */
  stop(): void;
}

/** Lines every 10 s when nobody watches a terminal (a CI log stays readable); 1 s on a terminal. */
export const DEFAULT_PROGRESS_MS = { tty: 1000, plain: 10_000 } as const;

const intervalTicker: Ticker = (intervalMs, tick) => {
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
};

export function progressDisplay(stream: ProgressStream, options: ProgressOptions): ProgressDisplay {
  const tty = stream.isTTY === true;
  const c = colors(options.color ?? colorWanted(stream));
  const tracker = new ProgressTracker(options.plan, options.clock ?? (() => performance.now()));
  const out = stream as NodeJS.WritableStream;
  let live = false;
  const clear = (): void => {
    cursorTo(out, 0);
    clearLine(out, 0);
  };
  const draw = (advance: boolean): void => {
    const fields = progressFields(tracker.figures(advance));
    if (!tty) {
      stream.write(`${render(fields, c)}\n`);
      return;
    }
    // One column short of the width: a line that fills the last column wraps on some terminals.
    const width = Math.max(0, (stream.columns ?? 80) - 1);
    cursorTo(out, 0);
    stream.write(render(fitFields(fields, width), c));
    clearLine(out, 1);
    live = true;
  };
  const intervalMs = options.intervalMs ?? (tty ? DEFAULT_PROGRESS_MS.tty : DEFAULT_PROGRESS_MS.plain);
  // Lines count from the run's start (its `run_start`, after the engine and the preflight).
  let ticker: { stop(): void } | null = null;
  const startTicking = (): void => {
    ticker ??= (options.ticker ?? intervalTicker)(intervalMs, () => draw(true));
  };
  const above = (lines: readonly string[]): void => {
    if (live) clear();
    for (const line of lines) stream.write(`${line}\n`);
    if (live) draw(false);
  };
  return {
    onEvent(event) {
      const notices = tracker.onEvent(event);
      if (event.kind === 'run_start') startTicking();
      if (notices.length > 0) above(notices.map((n) => noticeLine(n, c)));
    },
    print(line) {
      // A notice of the run is one line: what it quotes (a server's message, a folder's name) cannot start another.
      above([oneLine(line)]);
    },
    stop() {
      ticker?.stop();
      ticker = null;
      if (live) clear();
      live = false;
    },
  };
}
