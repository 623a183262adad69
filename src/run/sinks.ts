// Writes every event to its results file as it happens (routing fixed by EVENT_FILES), rotating files
// past `results.max_file_mb` so a night's run never grows one file without bound.
import { EVENT_FILES, type EventFile, type RunEvent } from '../types/index.js';
import { RotatingJsonlWriter, resultPath, type RotationOptions } from '../results/index.js';
import type { RunBus } from './bus.js';

export class EventSinks {
  readonly #writers: Record<Exclude<EventFile, null>, RotatingJsonlWriter>;
  readonly #scrub: (line: string) => string;

  /** @param rotation default: never rotate. @param scrub applied to every serialized line before it is
   * written (the run's secret scrubber); default: as is. */
  constructor(dir: string, rotation: RotationOptions = { maxBytes: null, compress: false }, scrub: (line: string) => string = (line) => line) {
    this.#scrub = scrub;
    this.#writers = {
      requests: new RotatingJsonlWriter(resultPath(dir, 'requests'), rotation),
      events: new RotatingJsonlWriter(resultPath(dir, 'events'), rotation),
      gauges: new RotatingJsonlWriter(resultPath(dir, 'gauges'), rotation),
    };
  }

  attach(bus: RunBus): void {
    bus.onAny((event) => this.write(event));
  }

  write(event: RunEvent): void {
    const file = EVENT_FILES[event.kind];
    if (file === null) return;
    // requests.jsonl holds bare records (one per request); other files hold the events themselves.
    this.#writers[file].writeLine(this.#scrub(JSON.stringify(event.kind === 'request' ? event.record : event)));
  }

  close(): void {
    for (const w of Object.values(this.#writers)) w.close();
  }

  /** Waits (bounded) for rotated parts still being gzipped; resolves with how many were left running. */
  async settle(timeoutMs: number): Promise<number> {
    const left = await Promise.all(Object.values(this.#writers).map((w) => w.settle(timeoutMs)));
    return left.reduce((a, b) => a + b, 0);
  }
}
