// The live terminal line during a run (TTY only, on stderr): rounds done, in flight, errors, hangs, and
// the latest values of key gauges when the monitor reports them. It only subscribes to run events.
import { keyGaugeValues } from '../monitor/index.js';
import type { RunEvent } from '../types/index.js';

export interface ProgressLine {
  onEvent(event: RunEvent): void;
  /** Latest value of a gauge to show (the monitor calls this). */
  gauge(name: string, value: number): void;
  stop(): void;
}

const REDRAW_MS = 250;

export function progressLine(stream: NodeJS.WriteStream, totalRequests: number | null): ProgressLine {
  let done = 0;
  let inFlight = 0;
  let errors = 0;
  let hangs = 0;
  let lastLength = 0;
  const gauges = new Map<string, number>();
  const targets = new Set<string>();
  const started = Date.now();
  const draw = (): void => {
    const secs = ((Date.now() - started) / 1000).toFixed(0);
    const g = [...gauges].map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(2)}`).join(' ');
    const total = totalRequests === null ? '' : `/${totalRequests}`;
    const line = `  ${secs}s  rounds ${done}${total}  in flight ${inFlight}  errors ${errors}  hangs ${hangs}${g === '' ? '' : `  ${g}`}`;
    const cols = stream.columns ?? 120;
    const shown = line.length > cols - 1 ? line.slice(0, cols - 1) : line;
    stream.write(`\r${shown}${' '.repeat(Math.max(0, lastLength - shown.length))}`);
    lastLength = shown.length;
  };
  const timer = setInterval(draw, REDRAW_MS);
  timer.unref();
  return {
    onEvent(event) {
      if (event.kind === 'request_start') inFlight += 1;
      else if (event.kind === 'request') {
        inFlight -= 1;
        done += 1;
        if (event.record.status === 'error') errors += 1;
        if (event.record.status === 'hang') hangs += 1;
      } else if (event.kind === 'scrape' && event.ok) {
        // Key gauges of each monitored target (prefixed by the target once there are several).
        targets.add(event.target);
        for (const [name, value] of keyGaugeValues(event.samples)) gauges.set(targets.size > 1 ? `${event.target}.${name}` : name, value);
      }
    },
    gauge(name, value) {
      gauges.set(name, value);
    },
    stop() {
      clearInterval(timer);
      if (lastLength > 0) stream.write(`\r${' '.repeat(lastLength)}\r`);
    },
  };
}
