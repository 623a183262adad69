// The real runner of a shrink's tries: each try is a whole run in-process (executeRun) in its own results
// folder under <out>/variants/<NN-step-value>/try-<n>/, stopped at its time limit, with no preflight (the
// agents meet the fault, as they did in the original run).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Summary } from '../analysis/index.js';
import { executeRun } from '../run/index.js';
import { longTimeout } from '../util/index.js';
import type { TryFigures } from './predicate.js';
import type { TryRequest, TryResult, VariantRunner } from './search.js';

/** The predicate's figures of a run's summary. */
export function figuresOf(summary: Pick<Summary, 'totals' | 'errors_by_class' | 'phases'>): TryFigures {
  const rounds = summary.phases.flatMap((p) => p.rounds);
  return {
    hangs: summary.totals.hangs,
    errorsByClass: summary.errors_by_class,
    hangRounds: rounds.filter((r) => r.hangs > 0).map((r) => r.round),
    errorRounds: rounds.filter((r) => r.errors > 0).map((r) => r.round),
  };
}

export interface RunnerOptions {
  /** The shrink's folder: tries go under its `variants/`. */
  outDir: string;
  /** Keep each try's results folder (`--no-keep`: deleted once judged). */
  keep: boolean;
  /** Aborting it stops the running try (its results are still written). */
  signal: AbortSignal;
}

/** A runner that runs each try for real, bounded by its time limit and `signal`. */
export function realRunner(options: RunnerOptions): VariantRunner {
  return async (request: TryRequest): Promise<TryResult> => {
    const dir = join(options.outDir, 'variants', request.slug, `try-${request.attempt}`);
    const stop = new AbortController();
    const timer = longTimeout(() => stop.abort(), request.timeLimitMs);
    const onAbort = (): void => stop.abort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    const workload = { ...request.workload, labels: { ...request.workload.labels, shrink_variant: request.slug } };
    const startMs = performance.now();
    try {
      // The run's own notices (engine and hop start lines) would drown the one line per variant.
      const result = await executeRun({ workload, out: dir, signal: stop.signal, preflight: false, log: () => undefined });
      const figures = figuresOf(result.summary);
      if (!options.keep) rmSync(dir, { recursive: true, force: true });
      return { figures, durationMs: performance.now() - startMs, dir: options.keep ? dir : null, status: result.status };
    } finally {
      timer.clear();
      options.signal.removeEventListener('abort', onAbort);
    }
  };
}
