// The shrink's loop: confirm the original still fails k of k, then the steps in order, each variant run up to
// k times (stopping at its first pass) by an injected runner, all within one time budget on an injected clock.
// Every variant and try is recorded for shrink.json.
import type { Workload } from '../config/index.js';
import { judgeTry, type Failure, type TryFigures } from './predicate.js';
import { applyShape, shapeOf, shapeSettings } from './shape.js';
import { directPath, fewerAgents, fewerRounds, noThinkTime, oneConnection, smallerContext, type Best, type Proposal, type Trial, type TrialResult } from './steps.js';
import { progressLine } from './report.js';
import type { ShrinkResult, TryRecord, VariantRecord } from './records.js';

/** One try to run: the variant's workload, where it stands in the shrink, and how long it may take. */
export interface TryRequest {
  workload: Workload;
  /** The variant's number (0: the original) and name, e.g. `03-agents-1`: its folder under variants/. */
  variant: number;
  slug: string;
  /** 1 … k. */
  attempt: number;
  /** Stop the try after this long (its own bound, or what is left of the shrink's time). */
  timeLimitMs: number;
}

/** What a try recorded. `dir`: its results folder (null once deleted). `status`: the run's (`completed`,
 * `interrupted` when its time limit stopped it). */
export interface TryResult {
  figures: TryFigures;
  durationMs: number;
  dir: string | null;
  status: string;
}

export type VariantRunner = (request: TryRequest) => Promise<TryResult>;

export interface ShrinkOptions {
  base: Workload;
  failure: Failure;
  /** Tries a variant must fail, all of them. @default 3 */
  k: number;
  maxTimeMs: number;
  /** The longest one try may take (its own length plus its watchdog total). */
  tryLimitMs: number;
  runner: VariantRunner;
  /** Milliseconds, monotonic. */
  clock: () => number;
  /** One line per variant tried, and notes. */
  log: (line: string) => void;
  /** Aborted: no more tries (Ctrl-C). */
  signal?: AbortSignal;
}

/** Runs proposals k times each, recording them; the steps' Trial. */
class Trials implements Trial {
  readonly variants: VariantRecord[] = [];
  readonly #o: ShrinkOptions;
  readonly #startMs: number;
  #stoppedEarly = false;

  constructor(options: ShrinkOptions) {
    this.#o = options;
    this.#startMs = options.clock();
  }

  get stoppedEarly(): boolean {
    return this.#stoppedEarly;
  }

  elapsedMs(): number {
    return this.#o.clock() - this.#startMs;
  }

  timeUp(): boolean {
    const up = this.elapsedMs() >= this.#o.maxTimeMs || this.#o.signal?.aborted === true;
    if (up) this.#stoppedEarly = true;
    return up;
  }

  note(line: string): void {
    this.#o.log(`shrink: ${line}`);
  }

  async run(proposal: Proposal): Promise<TrialResult> {
    const { k, base, failure } = this.#o;
    const n = this.variants.length;
    const slug = `${String(n).padStart(2, '0')}-${proposal.step}${proposal.step === 'original' ? '' : `-${proposal.to.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`}`;
    const workload = applyShape(base, proposal.shape);
    const startMs = this.#o.clock();
    const tries: TryRecord[] = [];
    let verdict: TrialResult['verdict'] = 'fails';
    for (let attempt = 1; attempt <= k; attempt++) {
      if (this.timeUp()) {
        verdict = 'cut';
        break;
      }
      const timeLimitMs = Math.max(1, Math.min(this.#o.tryLimitMs, this.#o.maxTimeMs - this.elapsedMs()));
      const result = await this.#o.runner({ workload, variant: n, slug, attempt, timeLimitMs });
      const judged = judgeTry(failure, result.figures);
      tries.push({
        attempt,
        fails: judged.fails,
        first_failure_round: judged.firstRound,
        hangs: result.figures.hangs,
        errors_by_class: result.figures.errorsByClass,
        duration_ms: Math.round(result.durationMs),
        status: result.status,
        dir: result.dir,
      });
      if (judged.fails) continue;
      // A try stopped by the shrink's own time (or Ctrl-C) that had not failed yet says nothing: cut, not passed.
      verdict = result.status === 'interrupted' && this.timeUp() ? 'cut' : 'passes';
      break;
    }
    const label = proposal.step === 'original' ? 'original' : `${proposal.step} ${proposal.from} → ${proposal.to}`;
    const record: VariantRecord = {
      n,
      slug,
      step: proposal.step,
      label,
      settings: shapeSettings(base, proposal.shape),
      verdict,
      kept: verdict === 'fails',
      tries,
      duration_ms: Math.round(this.#o.clock() - startMs),
    };
    this.variants.push(record);
    this.#o.log(progressLine(record, k, proposal.from));
    const firstRounds = tries.map((t) => t.first_failure_round).filter((r): r is number => r !== null);
    return { verdict, firstRounds };
  }
}

/** The shrink: the original k times, then each step in order on the smallest failing shape so far. */
export async function shrinkWorkload(options: ShrinkOptions): Promise<ShrinkResult> {
  const trials = new Trials(options);
  const { base } = options;
  const start = shapeOf(base);
  const original = await trials.run({ step: 'original', from: '', to: '', shape: start });
  const done = (best: Best | null, pathNeeded: boolean | null): ShrinkResult => ({
    originalFails: original.verdict === 'fails',
    best,
    pathNeeded,
    variants: trials.variants,
    stoppedEarly: trials.stoppedEarly,
    elapsedMs: trials.elapsedMs(),
  });
  if (original.verdict !== 'fails') return done(null, null);
  let best: Best = { shape: start, firstRounds: original.firstRounds };
  best = await fewerAgents(best, trials);
  best = await fewerRounds(best, trials);
  best = await smallerContext(best, trials, base.conversation);
  best = await noThinkTime(best, trials);
  best = await oneConnection(best, trials);
  const path = await directPath(best, trials, base.target.via?.kind ?? null);
  return done(path.best, path.needed);
}
