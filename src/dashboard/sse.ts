// Server-sent events to one page, never blocking the run: a bounded queue in front of the socket.

/** What a client writes to: an HTTP response (or a fake one in tests). */
export interface SseSink {
  write(chunk: string): boolean;
  end(): void;
  on(event: 'drain' | 'close', listener: () => void): unknown;
}

/** One watching page: messages go out as fast as its socket takes them, and wait in a bounded queue when
 * it does not (the oldest dropped first, the count told to the page before the next message). */
export class SseClient {
  readonly #res: SseSink;
  readonly #max: number;
  readonly #queue: string[] = [];
  #blocked = false;
  #dropped = 0;
  #droppedSaid = 0;
  #closed = false;

  constructor(res: SseSink, max: number) {
    this.#res = res;
    this.#max = max;
    res.on('drain', () => {
      this.#blocked = false;
      this.#flush();
    });
    res.on('close', () => {
      this.#closed = true;
      this.#queue.length = 0;
    });
  }

  /** Messages dropped so far because the page did not keep up. */
  get dropped(): number {
    return this.#dropped;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Queues one message (the oldest waiting one goes when the queue is full) and writes what the socket takes. */
  send(message: string): void {
    if (this.#closed) return;
    this.#queue.push(message);
    while (this.#queue.length > this.#max) {
      this.#queue.shift();
      this.#dropped += 1;
    }
    this.#flush();
  }

  #flush(): void {
    while (!this.#blocked && !this.#closed && this.#queue.length > 0) {
      if (this.#dropped > this.#droppedSaid) {
        this.#droppedSaid = this.#dropped;
        this.#write(sse('dropped', { dropped: this.#dropped }));
        continue;
      }
      this.#write(this.#queue.shift()!);
    }
  }

  #write(message: string): void {
    // false: the socket's buffer is full; the rest waits in the (bounded) queue for 'drain'.
    if (!this.#res.write(message)) this.#blocked = true;
  }

  end(): void {
    if (!this.#closed) this.#res.end();
  }
}

/** One server-sent event (the data is JSON: one line). */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
