// JSONL files that stay a manageable size over a night: past `maxBytes` the live file is closed as the
// next numbered part (requests.jsonl → requests.1.jsonl, then requests.2.jsonl…) and, optionally, gzipped
// in the background. Readers see the parts oldest first, then the live file: one stream of lines.
import { closeSync, createReadStream, createWriteStream, existsSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync, type ReadStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

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

/** Lines of `path` across its rotated parts, in order (gzipped parts decompressed on the fly). Constant memory. */
export async function* jsonlLines(path: string): AsyncGenerator<string> {
  for (const part of jsonlParts(path)) {
    const { raw, gz } = openPart(part);
    const input = gz ? raw.pipe(createGunzip()) : raw;
    raw.on('error', (error) => input.destroy(error));
    const rl = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of rl) yield line;
    } finally {
      rl.close();
      raw.destroy();
    }
  }
}

export interface RotationOptions {
  /** Rotate once the live file reaches this many bytes; `null`: never. */
  maxBytes: number | null;
  /** Gzip closed parts in the background. */
  compress: boolean;
  /** Problems worth a notice (a part that could not be compressed stays plain; nothing is lost). */
  log?: (line: string) => void;
}

/** A line-atomic JSONL writer (one write(2) per record) that rotates past a size. */
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
    this.#fd = openSync(path, 'a');
    this.#bytes = statSync(path).size;
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

  write(value: unknown): void {
    this.writeLine(JSON.stringify(value));
  }

  /** Writes one already serialized JSON value (no line end) as a line. */
  writeLine(json: string): void {
    if (this.#fd === null) return; // closed: late events after the run ended are dropped on purpose
    const line = `${json}\n`;
    this.#bytes += writeSync(this.#fd, line);
    this.#lines += 1;
    if (this.#options.maxBytes !== null && this.#bytes >= this.#options.maxBytes) this.#rotate();
  }

  #rotate(): void {
    closeSync(this.#fd!);
    this.#part += 1;
    const part = partPath(this.path, this.#part);
    renameSync(this.path, part);
    this.#fd = openSync(this.path, 'a');
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

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
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
