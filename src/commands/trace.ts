// `roundload trace show` (what a trace holds) and `roundload trace import` (other formats into a trace).
import { existsSync, rmSync, statSync } from 'node:fs';
import { formatTraceStats, importTrace, readTrace, traceStats } from '../trace/index.js';
import { UsageError } from '../errors.js';

export function traceShowCommand(file: string, opts: { json?: boolean }): void {
  const stats = traceStats(readTrace(file));
  process.stdout.write(opts.json === true ? `${JSON.stringify(stats, null, 2)}\n` : `${formatTraceStats(stats)}\n`);
}

export interface TraceImportCommandOptions {
  format: string;
  out: string;
  content?: boolean;
  thinkMs?: string;
  blockTokens?: string;
}

function positiveNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag} must be a number ≥ 0, got "${value}"`);
  return n;
}

export function traceImportCommand(file: string, opts: TraceImportCommandOptions): void {
  if (opts.format !== 'openai' && opts.format !== 'mooncake') throw new UsageError(`--format must be openai or mooncake, got "${opts.format}"`);
  if (existsSync(opts.out) && statSync(opts.out).size > 0) throw new UsageError(`--out ${opts.out} already exists; write the trace to a new file`);
  if (opts.format === 'mooncake' && opts.content === true) throw new UsageError('--content: a Mooncake trace has no message contents to keep');
  const thinkMs = positiveNumber('--think-ms', opts.thinkMs);
  const blockTokens = positiveNumber('--block-tokens', opts.blockTokens);
  try {
    const result = importTrace({
      format: opts.format,
      file,
      out: opts.out,
      content: opts.content === true,
      ...(thinkMs === undefined ? {} : { thinkMs }),
      ...(blockTokens === undefined ? {} : { blockTokens }),
    });
    process.stderr.write(`imported ${result.requests} requests in ${result.conversations} conversations from ${file} (${opts.format}) to ${opts.out}\n`);
  } catch (error) {
    // Never leave half a trace behind.
    rmSync(opts.out, { force: true });
    throw error;
  }
}
