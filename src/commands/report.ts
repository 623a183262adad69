// `roundload report <run>`: rebuild summary.json, report.html and junit.xml from a results folder alone —
// a finished run, or one that was killed (no summary.json, run.json still `running`, a torn last line).
import { resolve } from 'node:path';
import { rebuildSummary, writeSummary } from '../results/index.js';
import { ReportCollector, writeReports } from '../report/index.js';
import type { Summary } from '../analysis/index.js';
import { ResultsError, UsageError } from '../errors.js';
import { traceLink } from '../util/index.js';
import { logLine } from './output.js';

export interface ReportCommandOptions {
  /** Print the rebuilt summary.json to stdout instead of the file list. */
  json?: boolean | undefined;
  /** `--trace-url T`: the link template for trace ids in report.html, over the run's `tracing.trace_url`. */
  traceUrl?: string | undefined;
}

export interface ReportOutcome {
  dir: string;
  summary: Summary;
  notes: string[];
  written: string[];
  problems: string[];
}

/** The programmatic API behind the command (tests call it): rebuild, then write the three files. */
export async function rebuildReports(dir: string, log: (line: string) => void = () => {}, options: { traceUrl?: string } = {}): Promise<ReportOutcome> {
  const abs = resolve(dir);
  // report.html's rows and charts are gathered in the rebuild's own pass over events.jsonl and gauges.jsonl.
  const collector = new ReportCollector();
  const rebuilt = await rebuildSummary(abs, collector);
  const summaryPath = writeSummary(abs, rebuilt.summary);
  const reports = await writeReports(abs, rebuilt.summary, { notes: rebuilt.notes, log, collected: { collector, manifest: rebuilt.manifest }, ...options });
  // The disk refusing a file (full, read-only) is ERR_RESULTS, exit 4, not a report that failed to build.
  const refused = reports.errors.find((e): e is ResultsError => e instanceof ResultsError);
  if (refused !== undefined) throw refused;
  const written = [summaryPath, reports.report, reports.junit].filter((p): p is string => p !== null);
  return { dir: abs, summary: rebuilt.summary, notes: rebuilt.notes, written, problems: reports.problems };
}

/** Exit code: 0 when the files were written (the run's own verdict is in them), 1 if a report failed.
 * @throws NotARunError (exit 2) for a folder that is not a run, ResultsError (exit 4) when the disk refuses. */
export async function reportCommand(dir: string, opts: ReportCommandOptions): Promise<number> {
  const log = logLine;
  const traceUrl = opts.traceUrl === undefined ? undefined : traceUrlFlag(opts.traceUrl);
  const out = await rebuildReports(dir, log, traceUrl === undefined ? {} : { traceUrl });
  const s = out.summary;
  log(`roundload report: ${s.run.name} · ${s.run.status} · ${s.totals.requests} requests (${s.totals.ok} ok, ${s.totals.errors} errors, ${s.totals.hangs} hangs)`);
  for (const note of out.notes) log(`  note: ${note}`);
  if (opts.json === true) process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
  else for (const file of out.written) process.stdout.write(`${file}\n`);
  return out.problems.length > 0 ? 1 : 0;
}

/** `--trace-url`: a template that makes an http(s) URL once `{trace_id}` is filled in; else a usage error. */
function traceUrlFlag(value: string): string {
  const template = value.trim();
  if (traceLink(template, '0af7651916cd43dd8448eb211c80319c') === null) {
    throw new UsageError(`--trace-url must be an http:// or https:// URL with {trace_id} in it, e.g. https://tempo.example/trace/{trace_id}; got ${JSON.stringify(template.slice(0, 200))}`);
  }
  return template;
}
