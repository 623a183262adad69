// Writes every event to its results file as it happens (routing fixed by EVENT_FILES).
import { EVENT_FILES, type EventFile, type RunEvent } from '../types/index.js';
import { JsonlWriter, resultPath } from '../results/index.js';
import type { RunBus } from './bus.js';

export class EventSinks {
  readonly #writers: Record<Exclude<EventFile, null>, JsonlWriter>;

  constructor(dir: string) {
    this.#writers = {
      requests: new JsonlWriter(resultPath(dir, 'requests')),
      events: new JsonlWriter(resultPath(dir, 'events')),
      gauges: new JsonlWriter(resultPath(dir, 'gauges')),
    };
  }

  attach(bus: RunBus): void {
    bus.onAny((event) => this.write(event));
  }

  write(event: RunEvent): void {
    const file = EVENT_FILES[event.kind];
    if (file === null) return;
    // requests.jsonl holds bare records (one per request); other files hold the events themselves.
    this.#writers[file].write(event.kind === 'request' ? event.record : event);
  }

  close(): void {
    for (const w of Object.values(this.#writers)) w.close();
  }
}
