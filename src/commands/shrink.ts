// `roundload shrink RUN`: from a failed run's resolved workload, the smallest workload that still fails k of k
// against the same target (fewer agents, rounds, context, no think time, one connection, with or without its
// proxy), written as shrunk.yaml beside shrink.json and every variant's results folders.
import { isAbsolute, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseDurationMs, parseWorkload, workloadToYaml, REDACTED, type Workload } from '../config/index.js';
import { createRunFolder, readManifest, readSummary, resultPath, writeJsonAtomic, writeTextAtomic } from '../results/index.js';
import { answerLine, applyShape, describeFailure, failureOf, realRunner, shapeOf, shrinkLog, shrinkWorkload, shrunkHeader, variantsTable, type Failure } from '../shrink/index.js';
import { UsageError } from '../errors.js';
import { isObject } from '../util/index.js';
import { stopOnSignals } from './signals.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

export interface ShrinkCommandOptions {
  /** `--target URL`: the target's URL instead of run.json's. */
  target?: string;
  /** `--k 3`: tries each variant must fail. */
  k?: string;
  /** `--max-time 10m`. */
  maxTime?: string;
  /** `--out DIR`. @default "<RUN>/shrink" */
  out?: string;
  /** `--no-keep` makes it false: each try's results folder is deleted once judged. @default true */
  keep?: boolean;
  set: string[];
}

const MAX_K = 20;
/** Added to a try's bound for starting and stopping what it runs (the embedded engine, the hop). */
const TRY_SETUP_MS = 15_000;

/** The run's failure, from its summary.json: a hang, or its most frequent error class. */
function originalFailure(runDir: string): { failure: Failure; wallMs: number } {
  const summary = readSummary(runDir, `cannot shrink ${runDir}`);
  const failure = failureOf({ hangs: summary.totals.hangs, errorsByClass: summary.errors_by_class });
  if (failure === null) throw new UsageError(`${runDir} had no hangs and no errors: nothing to shrink`);
  return { failure, wallMs: summary.run.wall_s * 1000 };
}

/** Paths of the values run.json redacted (secret headers), which a variant cannot send as they are. */
function redactedPaths(value: unknown, path: string): string[] {
  if (value === REDACTED) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => redactedPaths(v, `${path}.${i}`));
  if (isObject(value)) return Object.entries(value).flatMap(([key, v]) => redactedPaths(v, path === '' ? key : `${path}.${key}`));
  return [];
}

/** The run's resolved workload (run.json, JSON being YAML) with `--target` and `--set` on top, checked once. */
function originalWorkload(runDir: string, opts: ShrinkCommandOptions): Workload {
  const manifest = readManifest(runDir);
  const workload = parseWorkload(JSON.stringify(manifest.workload, null, 2), `${resultPath(runDir, 'manifest')} (workload)`, {
    set: opts.set,
    ...(opts.target === undefined ? {} : { target: opts.target }),
  });
  const redacted = redactedPaths(workload, '');
  if (redacted.length > 0) throw new UsageError(`run.json redacted ${redacted.join(', ')}: give the value${redacted.length === 1 ? '' : 's'} with --set (e.g. --set ${redacted[0]}=…)`);
  const unsupported =
    workload.replay !== null
      ? 'a replay'
      : workload.sweep !== null
        ? 'a sweep'
        : workload.agents.arrival !== null
          ? 'an open-loop run (agents.arrival)'
          : workload.agents.stages !== null
            ? 'a staged run (agents.stages)'
            : null;
  if (unsupported !== null) throw new UsageError(`cannot shrink ${runDir}: it is ${unsupported}; shrink varies agents.count × agents.rounds of a closed-loop run`);
  return workload;
}

/** `path` relative to the working directory when it is under it, else absolute. */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** Exit 0: a failing workload found (the original's when nothing smaller fails); 1: the original no longer
 * fails k of k; 130: stopped by a signal before the original was confirmed. Bad input throws (exit 2). */
export async function shrinkCommand(runArg: string, opts: ShrinkCommandOptions, write: { out: (text: string) => void; err: (line: string) => void } = defaultWrite): Promise<number> {
  const runDir = resolve(runArg);
  const k = opts.k === undefined ? 3 : flag.wholeNumber('--k', opts.k, 1, MAX_K);
  const maxTimeMs = flag.duration('--max-time', opts.maxTime ?? '10m', 1);
  const base = originalWorkload(runDir, opts);
  const { failure, wallMs } = originalFailure(runDir);
  const out = createRunFolder({ out: opts.out ?? join(runDir, 'shrink'), name: base.name });
  // A try's bound: the variant's own length (a timed run's duration, else the original run's wall time: a
  // variant is never bigger) plus its watchdog total.
  const ownMs = base.duration === null ? wallMs : parseDurationMs(base.duration);
  const tryLimitMs = ownMs + base.watchdog.total_ms + TRY_SETUP_MS;
  const stop = new AbortController();
  const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping the shrink after the running try (its results are kept); ${signal} again to exit at once`);
  write.err(`shrink: ${runArg}: still failing means ${describeFailure(failure)} in each of ${k} tries; at most ${(maxTimeMs / 1000).toFixed(0)} s → ${out}`);
  try {
    const result = await shrinkWorkload({
      base,
      failure,
      k,
      maxTimeMs,
      tryLimitMs,
      runner: realRunner({ outDir: out, keep: opts.keep !== false, signal: stop.signal }),
      clock: () => performance.now(),
      log: write.err,
      signal: stop.signal,
    });
    const shrunkFile = result.best === null ? null : join(out, 'shrunk.yaml');
    if (result.best !== null && shrunkFile !== null) {
      const header = shrunkHeader({ runDir: shortPath(runDir), base, start: shapeOf(base), failure, k, result });
      const shrunk = applyShape(base, result.best.shape);
      const text = workloadToYaml({ ...shrunk, name: `${base.name.slice(0, 57)}-shrunk` }, header);
      parseWorkload(text, shrunkFile); // loadable by `roundload run`, or a bug here
      writeTextAtomic(shrunkFile, text);
    }
    const answer = answerLine(base, result, shrunkFile === null ? '' : shortPath(shrunkFile), k);
    writeJsonAtomic(join(out, 'shrink.json'), shrinkLog({ runDir, failure, k, maxTimeMs, base, result, answer, shrunkFile }));
    write.out(`${variantsTable(result.variants, k)}\n\n${answer}\n`);
    if (!result.originalFails && stop.signal.aborted) return 130;
    return result.originalFails ? 0 : 1;
  } finally {
    removeSignalHandlers();
  }
}

const defaultWrite = {
  out: (text: string): void => void process.stdout.write(text),
  err: logLine,
};
