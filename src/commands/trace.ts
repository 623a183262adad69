// `roundload trace show` (what a trace holds) and `roundload trace import` (other formats into a trace).
import { existsSync, rmSync, statSync } from 'node:fs';
import { formatTraceStats, importTrace, readTrace, traceStats } from '../trace/index.js';
import { UsageError } from '../errors.js';
import * as flag from './flags.js';

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

export function traceImportCommand(file: string, opts: TraceImportCommandOptions): void {
  const format = flag.oneOf('--format', opts.format, ['openai', 'mooncake']);
  if (existsSync(opts.out) && statSync(opts.out).size > 0) throw new UsageError(`--out ${opts.out} already exists; write the trace to a new file`);
  if (format === 'mooncake' && opts.content === true) throw new UsageError('--content: a Mooncake trace has no message contents to keep');
  const thinkMs = opts.thinkMs === undefined ? undefined : flag.number('--think-ms', opts.thinkMs, { atLeast: 0 });
  const blockTokens = opts.blockTokens === undefined ? undefined : flag.number('--block-tokens', opts.blockTokens, { atLeast: 0 });
  try {
    const result = importTrace({
      format,
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
