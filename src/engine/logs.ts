// Each embedded server's log file, in the format its real counterpart writes, so `monitor.probes` grep the
// demo exactly as they grep a deployment: SGLang's `[2026-05-20 10:11:12 TP0] message` (no level name: SGLang's
// formatter prints none), uvicorn's access lines, and the Rust router's `2026-05-20 10:11:12  WARN target: message`.
// Appended asynchronously; past `maxBytes` the file rolls over to `<file>.1` (one kept), so a soak stays bounded.
import { createWriteStream, mkdirSync, renameSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';

/** Size at which a log file rolls over. */
export const LOG_MAX_BYTES = 64 * 1024 * 1024;
/** Lines kept in memory (for `recent()`), whatever the file does. */
const RECENT_LINES = 200;

export type RouterLevel = 'INFO' | 'WARN' | 'ERROR';

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local time as Python's and the Rust router's loggers print it: `2026-05-20 10:11:12`. */
export function logTime(date = new Date()): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

const STATUS_PHRASES: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export class ServerLog {
  /** The file written, or null when this log is kept in memory only. */
  readonly file: string | null;
  readonly #maxBytes: number;
  #stream: WriteStream | null = null;
  #bytes = 0;
  #recent: string[] = [];
  #closed = false;

  constructor(file: string | null, maxBytes = LOG_MAX_BYTES) {
    this.file = file;
    this.#maxBytes = maxBytes;
    if (file !== null) {
      mkdirSync(dirname(file), { recursive: true });
      this.#open();
    }
  }

  /** A scheduler line (`[time TP0] …`). */
  scheduler(message: string): void {
    this.#write(`[${logTime()} TP0] ${message}`);
  }

  /** A tokenizer-manager or HTTP-server line (`[time] …`). */
  server(message: string): void {
    this.#write(`[${logTime()}] ${message}`);
  }

  /** uvicorn's access line, as SGLang configures it. */
  access(client: string, method: string, path: string, status: number): void {
    this.#write(`[${logTime()}] INFO:     ${client} - "${method} ${path} HTTP/1.1" ${status} ${STATUS_PHRASES[status] ?? ''}`.trimEnd());
  }

  /** A line of the Rust router (tracing's format: two spaces, a padded level, the module). */
  router(level: RouterLevel, target: string, message: string): void {
    this.#write(`${logTime()} ${level.padStart(5)} ${target}: ${message}`);
  }

  /** The last lines written (for tests and error messages). */
  recent(): readonly string[] {
    return this.#recent;
  }

  /** Flushes and closes the file; later lines are dropped. */
  close(): Promise<void> {
    this.#closed = true;
    const stream = this.#stream;
    this.#stream = null;
    if (stream === null) return Promise.resolve();
    return new Promise((resolve) => stream.end(() => resolve()));
  }

  #open(): void {
    if (this.file === null) return;
    const stream = createWriteStream(this.file, { flags: 'a' });
    // A log that cannot be written (disk full, folder gone) never takes the server down: it goes quiet.
    stream.on('error', () => {
      if (this.#stream === stream) this.#stream = null;
    });
    this.#stream = stream;
    this.#bytes = 0;
  }

  #write(line: string): void {
    if (this.#closed) return;
    this.#recent.push(line);
    if (this.#recent.length > RECENT_LINES) this.#recent = this.#recent.slice(-RECENT_LINES / 2);
    const stream = this.#stream;
    if (stream === null || this.file === null) return;
    const text = `${line}\n`;
    stream.write(text);
    this.#bytes += Buffer.byteLength(text);
    if (this.#bytes < this.#maxBytes) return;
    // Roll over like Python's RotatingFileHandler with one backup: the old stream finishes into `.1`.
    stream.end();
    try {
      renameSync(this.file, `${this.file}.1`);
    } catch {
      // Keep writing to a fresh file either way.
    }
    this.#open();
  }
}
