// Writes report.html and junit.xml for a results folder. Never throws: a report that cannot be made is
// logged, and the run (whose data is already on disk) is not failed by it.
import type { Summary } from '../analysis/index.js';
import { resultPath, writeTextAtomic, type RunManifest } from '../results/index.js';
import { redactUrlCredentials } from '../util/index.js';
import { collectReportData, type ReportCollector } from './data.js';
import { renderReportHtml } from './html.js';
import { renderJunit } from './junit.js';

export interface WrittenReports {
  /** Paths written (absent when that file failed). */
  report: string | null;
  junit: string | null;
  /** What went wrong, one sentence per file that failed. */
  problems: string[];
  /** The errors behind `problems` (a ResultsError when the disk refused: the caller exits 4). */
  errors: unknown[];
}

/** @param options.scrub applied to each file's text before it is written (the run's secret scrubber);
 * default: URL credentials redacted.
 * @param options.collected what a pass over the folder's events and scrapes already gathered (a rebuild's), with
 * the run.json it read; without it, the files are read here.
 * @param options.traceUrl the link template for trace ids (`--trace-url`), over run.json's `tracing.trace_url`. */
export async function writeReports(
  dir: string,
  summary: Summary,
  options: { notes?: readonly string[]; log?: (line: string) => void; scrub?: (text: string) => string; collected?: { collector: ReportCollector; manifest: RunManifest }; traceUrl?: string } = {},
): Promise<WrittenReports> {
  const out: WrittenReports = { report: null, junit: null, problems: [], errors: [] };
  const scrub = options.scrub ?? redactUrlCredentials;
  const fail = (file: string, error: unknown): void => {
    const line = `${file} not written: ${error instanceof Error ? error.message : String(error)}`;
    out.problems.push(line);
    out.errors.push(error);
    options.log?.(line);
  };
  // JUnit first: it needs only the summary, so CI gets its verdict even if the HTML cannot be built.
  try {
    const path = resultPath(dir, 'junit');
    writeTextAtomic(path, scrub(renderJunit(summary)));
    out.junit = path;
  } catch (error) {
    fail('junit.xml', error);
  }
  try {
    const notes = options.notes ?? [];
    const data = options.collected === undefined ? await collectReportData(dir, summary, { notes }) : options.collected.collector.data(summary, options.collected.manifest, [...notes], new Date());
    const path = resultPath(dir, 'report');
    writeTextAtomic(path, scrub(renderReportHtml(options.traceUrl === undefined ? data : { ...data, trace_url: options.traceUrl })));
    out.report = path;
  } catch (error) {
    fail('report.html', error);
  }
  return out;
}
