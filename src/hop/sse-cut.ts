// Where the `cut` fault stops forwarding: through the end of the K-th SSE event of a body, wherever the
// upstream's chunk boundaries fall. A pure state machine over bytes; an event ends at a blank line
// (`\n\n`; `\r` is ignored, so `\r\n\r\n` counts too). Comment-only blocks (`: ping`) are not events.

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;

export class SseCutter {
  readonly #limit: number;
  #events = 0;
  #atLineStart = true;
  /** The block being read has a field line (not only comments). */
  #blockHasField = false;
  #done: boolean;

  /** @param events SSE events to let through; 0 lets no body byte through. */
  constructor(events: number) {
    this.#limit = events;
    this.#done = events <= 0;
  }

  /** True once the limit is reached: nothing more is to be forwarded. */
  get done(): boolean {
    return this.#done;
  }

  /** Events seen so far (at most the limit). */
  get events(): number {
    return this.#events;
  }

  /** The part of `chunk` to forward (all of it, a prefix, or nothing). */
  take(chunk: Uint8Array): Uint8Array {
    if (this.#done) return chunk.subarray(0, 0);
    for (let i = 0; i < chunk.length; i += 1) {
      const b = chunk[i];
      if (b === CR) continue;
      if (b === LF) {
        if (this.#atLineStart && this.#blockHasField) {
          this.#events += 1;
          this.#blockHasField = false;
          if (this.#events >= this.#limit) {
            this.#done = true;
            return chunk.subarray(0, i + 1);
          }
        }
        this.#atLineStart = true;
      } else {
        if (this.#atLineStart && b !== COLON) this.#blockHasField = true;
        this.#atLineStart = false;
      }
    }
    return chunk;
  }
}
