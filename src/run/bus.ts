// The run's typed event stream: synchronous fan-out to subscribers by kind, or to all.
import type { RunEvent, RunEventKind, RunEventOf } from '../types/index.js';

type Listener<K extends RunEventKind> = (event: RunEventOf<K>) => void;

export class RunBus {
  readonly #byKind = new Map<RunEventKind, ((event: RunEvent) => void)[]>();
  readonly #all: ((event: RunEvent) => void)[] = [];

  on<K extends RunEventKind>(kind: K, listener: Listener<K>): void {
    const list = this.#byKind.get(kind) ?? [];
    list.push(listener as (event: RunEvent) => void);
    this.#byKind.set(kind, list);
  }

  onAny(listener: (event: RunEvent) => void): void {
    this.#all.push(listener);
  }

  emit(event: RunEvent): void {
    const list = this.#byKind.get(event.kind);
    if (list !== undefined) for (const l of list) l(event);
    for (const l of this.#all) l(event);
  }
}
