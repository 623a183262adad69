// JSONL files that stay a manageable size over a night: past `maxBytes` the live file is closed as the
// next numbered part (requests.jsonl → requests.1.jsonl, then requests.2.jsonl…) and, optionally, gzipped
// in the background. Readers see the parts oldest first, then the live file: one stream of lines.
import { closeSync, createReadStream, createWriteStream, existsSync, fstatSync, ftruncateSync, openSync, readdirSync, renameSync, unlinkSync, writeSync, type ReadStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { onResultsFs, rethrowFs } from './fs-error.js';
import { resultsLine } from './line.js';

/** `requests.jsonl` → `requests.<n>.jsonl` (or `.jsonl.gz`). */
export function partPath(path: string, n: number, gzip = false): string {
  const name = basename(path);
  const stem = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : name;
  return join(dirname(path), `${stem}.${n}.jsonl${gzip ? '.gz' : ''}`);
}

/** Existing numbered parts of `path`, oldest first, each once: its plain file while that exists (its gzip
 * may still be in the making), else its `.gz`. */
function numberedParts(path: string): { n: number; file: string }[] {
  const dir = dirname(path);
  const name = basename(path);
  const stem = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : name;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const pattern = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.jsonl(\\.gz)?$`);
  const byN = new Map<number, string>();
  for (const entry of entries) {
    const m = pattern.exec(entry);
    if (m === null) continue;
    const n = Number(m[1]);
    if (m[2] === undefined || !byN.has(n)) byN.set(n, join(dir, entry));
  }
  return [...byN.entries()].sort(([a], [b]) => a - b).map(([n, file]) => ({ n, file }));
}

/** Every file holding lines of `path`, in order: its numbered parts, then `path` itself (when they exist). */
export function jsonlParts(path: string): string[] {
  const parts = numberedParts(path).map((p) => p.file);
  if (existsSync(path)) parts.push(path);
  return parts;
}

/** Opens one part of {@link jsonlParts}. A plain part whose gzip finished between the listing and now is
 * gone: its `.gz` is opened instead (the writer removes the plain file only once the gzip is complete). */
export function openPart(part: string): { raw: ReadStream; gz: boolean; file: string } {
  let fd: number;
  let file = part;
  try {
    fd = openSync(part, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || part.endsWith('.gz')) throw error;
    file = `${part}.gz`;
    fd = openSync(file, 'r');
  }
  return { raw: createReadStream(file, { fd }), gz: file.endsWith('.gz'), file };
}

export interface RotationOptions {
  /** Rotate once the live file reaches this many bytes; `null`: never. */
  maxBytes: number | null;
  /** Gzip closed parts in the background. */
  compress: boolean;
  /** Problems worth a notice (a part that could not be compressed stays plain; nothing is lost). */
  log?: (line: string) => void;
}

/**
 * A line-atomic JSONL writer that rotates past a size. Synchronous: the run uses it inside the writer
 * thread (writer.ts), `merge` directly. Lines go out whole: a batch is one write(2) (more only if the kernel
 * takes part of it), and a write that fails half-way is cut back to its last whole line.
 * @throws ResultsError when the file system refuses (open, write, rotate).
 */
export class RotatingJsonlWriter {
  readonly path: string;
  readonly #options: RotationOptions;
  #fd: number | null;
  #bytes: number;
  #lines = 0;
  #part: number;
  readonly #compressing = new Set<Promise<void>>();

  constructor(path: string, options: RotationOptions) {
    this.path = path;
    this.#options = options;
    this.#fd = onResultsFs(path, 'open', () => openSync(path, 'a'));
    this.#bytes = fstatSync(this.#fd).size;
    // Appending to a folder that already has parts (a re-used --out): continue their numbering.
    this.#part = numberedParts(path).at(-1)?.n ?? 0;
  }

  get lines(): number {
    return this.#lines;
  }

  /** Parts closed so far by this writer or before it. */
  get parts(): number {
    return this.#part;
  }

  write(value: object): void {
    this.writeLines([`${resultsLine(value)}\n`]);
  }

  /** Appends whole lines (each ending in `\n`), rotating after the line that reaches `maxBytes`. */
  writeLines(lines: readonly string[]): void {
    if (this.#fd === null) return; // closed: late events after the run ended are dropped on purpose
    const max = this.#options.maxBytes;
    if (max === null) {
      this.#append(lines.join(''), lines.length);
      return;
    }
    let from = 0;
    let bytes = this.#bytes;
    for (let i = 0; i < lines.length; i += 1) {
      bytes += Buffer.byteLength(lines[i]!);
      if (bytes < max) continue;
      this.#append(lines.slice(from, i + 1).join(''), i + 1 - from);
      this.#rotate();
      from = i + 1;
      bytes = 0;
    }
    if (from < lines.length) this.#append(lines.slice(from).join(''), lines.length - from);
  }

  #append(text: string, lines: number): void {
    const fd = this.#fd!;
    const data = Buffer.from(text);
    let done = 0;
    try {
      while (done < data.length) done += writeSync(fd, data, done, data.length - done);
    } catch (error) {
      // Keep the file whole-line: what the kernel took of a torn line is cut off again (best effort).
      const whole = done === 0 ? 0 : data.lastIndexOf(0x0a, done - 1) + 1;
      if (whole < done) {
        try {
          ftruncateSync(fd, this.#bytes + whole);
        } catch {
          // the reader reports a torn last line as truncated: nothing worse
        }
      }
      this.#bytes += whole;
      for (let at = data.indexOf(0x0a); at !== -1 && at < whole; at = data.indexOf(0x0a, at + 1)) this.#lines += 1;
      rethrowFs(error, this.path, 'write');
    }
    this.#bytes += data.length;
    this.#lines += lines;
  }

  #rotate(): void {
    const part = partPath(this.path, this.#part + 1);
    onResultsFs(this.path, 'rotate', () => {
      closeSync(this.#fd!);
      this.#fd = null;
      renameSync(this.path, part);
      this.#fd = openSync(this.path, 'a');
    });
    this.#part += 1;
    this.#bytes = 0;
    if (this.#options.compress) {
      const job = this.#gzip(part).finally(() => this.#compressing.delete(job));
      this.#compressing.add(job);
    }
  }

  /** part → part.gz through a temporary name; the plain part is removed only once the gzip is complete. */
  async #gzip(part: string): Promise<void> {
    const gz = `${part}.gz`;
    const tmp = `${gz}.tmp-${process.pid}`;
    try {
      await pipeline(createReadStream(part), createGzip({ level: 6 }), createWriteStream(tmp));
      renameSync(tmp, gz);
      unlinkSync(part);
    } catch (error) {
      this.#options.log?.(`could not gzip ${basename(part)} (kept as is): ${error instanceof Error ? error.message : String(error)}`);
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    }
  }

  /** @throws ResultsError when closing reports a failed write (a network volume reports them at close). */
  close(): void {
    const fd = this.#fd;
    if (fd === null) return;
    this.#fd = null;
    onResultsFs(this.path, 'write', () => closeSync(fd));
  }

  /** Waits for background compressions, at most `timeoutMs`; one still running is left to finish or die with
   * the process (its plain part stays, so readers lose nothing). Resolves with how many were still running. */
  async settle(timeoutMs: number): Promise<number> {
    if (this.#compressing.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.all([...this.#compressing]), timeout]);
    clearTimeout(timer);
    return this.#compressing.size;
  }
}
