// `roundload merge <run>… --out DIR`: combines the shards of one run (from several machines) into one
// results folder with its summary, report.html and junit.xml; the exit code is the merged verdict.
import { mergeRuns } from '../results/index.js';
import { colorWanted, formatSummary, runVerdict, writeReports, type RunVerdict } from '../report/index.js';
import { logLine } from './output.js';

export interface MergeCommandOptions {
  out: string;
  json?: boolean | undefined;
  /** Append the merged run to this history database (a failure is a warning: the merge stands). */
  history?: string | undefined;
}

/** 0: every shard there and completed, thresholds pass; 1: a threshold failed, or a shard is missing or did not complete. */
export async function mergeCommand(dirs: readonly string[], opts: MergeCommandOptions): Promise<number> {
  const log = logLine;
  const result = await mergeRuns(dirs, { out: opts.out, log });
  for (const note of result.notes) log(`note: ${note}`);
  await writeReports(result.dir, result.summary, { notes: result.notes, log });
  const shards = result.manifest.shards as { count: number; merged: number };
  const complete = shards.merged === shards.count && result.summary.run.status === 'completed';
  // A merge is whole or it fails: a missing or unfinished shard is exit 1 (not 130), whatever the figures say.
  const failed = result.summary.thresholds.results.filter((r) => !r.ok).map((r) => r.message);
  const verdict: RunVerdict = complete
    ? runVerdict(result.summary)
    : { word: 'FAIL', exitCode: 1, reasons: [`merged ${shards.merged} of ${shards.count} shards, status ${result.summary.run.status}`, ...failed] };
  if (opts.json === true) process.stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
  else process.stdout.write(`${formatSummary(result.summary, result.dir, { verdict, color: colorWanted(process.stdout) })}\n`);
  if (!complete) log(`merged ${shards.merged} of ${shards.count} shards, status ${result.summary.run.status}: exit 1`);
  // The night is one run in the history: the merged folder, as `run --history` appends a single run.
  if (opts.history !== undefined) await (await import('./history.js')).appendToHistory(opts.history, result.dir, log);
  return verdict.exitCode;
}
