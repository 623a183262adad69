// `roundload ab`: runs the arms of an ab file alternately (A B, B A, A B …) so drift of the server or the
// machine hits every arm alike, each run in its own results folder with the arm's setup, health wait and
// teardown around it, and judges every arm against the first with runs as the unit: after every round by the
// stopping rule (the default), or once after `repeats` rounds. One rule, one verdict per figure.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { workloadSecrets, type AbArm, type AbPlan } from '../config/index.js';
import { SecretScrubber, urlSecrets } from '../util/index.js';
import { executeRun, type RunStatus } from '../run/index.js';
import type { Summary } from '../analysis/index.js';
import type { AbFamily } from '../types/index.js';
import { boundedGet, GetTimeoutError } from '../transport/index.js';
import { createRunFolder, onResultsFs, writeJsonAtomic } from '../results/index.js';
import { ArmError, DifferentWorkloadsError, PreflightError, ResultsError, ServerStartError, TargetUnreachableError } from '../errors.js';
import type { ArmPair } from './charts.js';
import { compareArms, type Comparison } from './compare.js';
import { identityDifferences, workloadHash } from './identity.js';
import { loadRun } from './load.js';
import { runShell } from './shell.js';
import { callLines } from './ab-output.js';
import { formatComparison } from './format.js';
import type { RunData } from './load.js';

export interface AbOptions {
  plan: AbPlan;
  /** Parent folder of the arm runs; default `results/<stamp>-ab-<workload name>/`. */
  out?: string | undefined;
  /** Run even when arms change the load itself (their `set` touches more than engine/target/labels). */
  force?: boolean;
  /** Aborting it stops the running arm run (its teardown still runs) and starts no other. */
  signal?: AbortSignal;
  /** Progress and command output, for stderr (also written to <out>/ab.log). */
  log?: (line: string) => void;
}

export interface AbRun {
  seq: number;
  arm: string;
  repeat: number;
  dir: string;
  status: RunStatus | 'not run';
  hangs: number;
  /** Why a failed run failed (preflight, a results disk…); it stays in the A/B and counts against its arm. */
  reason?: string;
}

export interface AbResult {
  dir: string;
  status: 'completed' | 'interrupted';
  runs: AbRun[];
  /** Every other arm against the first, judged by the A/B's one rule (its last look). */
  comparisons: Comparison[];
  /** The arms each comparison was made of (same order), for compare.html's time series. */
  arms: ArmPair[];
  /** The rule the calls were made by, for the outputs. */
  rule: AbRuleShown;
  /** Pairs (rounds of every arm) judged. */
  pairs: number;
  /** Why the A/B ended: every figure waited for decided, a limit, `repeats` done, an arm failing twice… */
  ended: string;
  /** An arm whose runs failed twice: the A/B stopped there with it `worse` (null when none). */
  failedArm: string | null;
}

/** The rule as the outputs name it. */
export interface AbRuleShown {
  looks: 'sequential' | 'fixed';
  minEffectPct: number;
  minEffectPoints: number;
  /** Sequential: the most pairs; fixed: the pairs run. */
  maxPairs: number;
  /** Per comparison (0.05 split over the arms compared with the baseline). */
  alpha: number;
  waitFor: readonly AbFamily[];
}

/** Run order: every arm once per repeat, each repeat starting one arm later (A B, B A, A B … for two arms;
 * A B C, B C A, C A B for three), so every arm runs in every position equally often and no arm always runs
 * second, after another has warmed (or worn) the server. */
export function abOrder(arms: readonly { name: string }[], repeats: number): { arm: number; repeat: number }[] {
  const order: { arm: number; repeat: number }[] = [];
  const n = arms.length;
  for (let repeat = 1; repeat <= repeats; repeat += 1) {
    for (let k = 0; k < n; k += 1) order.push({ arm: (repeat - 1 + k) % n, repeat });
  }
  return order;
}

/** Output tokens/s of a run as `compare` takes it: the mean over its steady windows (a run's whole-span
 * figure counts its ramp-up and tail); null when it has no steady window. */
export function steadyTokensPerS(summary: Pick<Summary, 'windows'>): { tokensPerS: number; windows: number } | null {
  const steady = summary.windows.filter((w) => w.steady === true);
  if (steady.length === 0) return null;
  return { tokensPerS: steady.reduce((sum, w) => sum + w.output_tokens_per_s, 0) / steady.length, windows: steady.length };
}

/** What an A/B must never write or print: each arm's workload secrets and its health URL's credentials. */
export function abSecrets(plan: Pick<AbPlan, 'arms'>): string[] {
  return plan.arms.flatMap((arm) => [...workloadSecrets(arm.workload), ...(arm.health === null ? [] : urlSecrets(arm.health.url))]);
}

/** Polls `url` with bounded GETs until it answers 200, or throws ArmError at the deadline. */
export async function waitHealthy(url: string, timeoutMs: number, intervalMs: number, signal?: AbortSignal): Promise<number> {
  const started = performance.now();
  const left = () => timeoutMs - (performance.now() - started);
  let last = 'no answer yet';
  for (let attempt = 1; ; attempt += 1) {
    const remaining = left();
    if (remaining <= 0) break;
    const pollMs = Math.max(1, Math.min(5000, remaining));
    try {
      const res = await boundedGet(url, { timeoutMs: pollMs, maxBytes: 64 * 1024 });
      if (res.status === 200) return attempt;
      last = `HTTP ${res.status}`;
    } catch (error) {
      // A poll cut short only because the wait's own deadline came says nothing about the server:
      // the message keeps the last real answer when there was one.
      const cutByDeadline = error instanceof GetTimeoutError && pollMs < 5000;
      if (!cutByDeadline || last === 'no answer yet') last = error instanceof Error ? error.message : String(error);
    }
    if (signal?.aborted) throw new ArmError(`health wait for ${url} stopped by signal`);
    const pause = Math.min(intervalMs, left());
    if (pause > 0) await sleep(pause, undefined, signal === undefined ? {} : { signal }).catch(() => {});
  }
  throw new ArmError(`${url} did not answer 200 within ${seconds(timeoutMs)} s (last: ${last})`, { context: { url } });
}

/** The arms must differ only in what an A/B varies (engine, target, labels…), or the comparison is void. */
function checkArms(plan: AbPlan, force: boolean): void {
  const [first, ...rest] = plan.arms;
  for (const arm of rest) {
    if (workloadHash(arm.workload) === workloadHash(first!.workload)) continue;
    const differences = identityDifferences(first!.workload, arm.workload);
    if (force) continue;
    throw new DifferentWorkloadsError(
      `${plan.file}: arm ${arm.name} changes the load itself, not only the server (${differences.join('; ')}); ` +
        'an A/B varies engine, target or labels with the same load. Pass --force to run it anyway.',
      differences,
    );
  }
}

export async function runAb(options: AbOptions): Promise<AbResult> {
  const { plan } = options;
  checkArms(plan, options.force === true);
  const dir = createRunFolder({ out: options.out, root: 'results', name: `ab-${plan.arms[0]!.workload.name}` });
  const log = abLog(dir, plan, options.log);
  const order = abOrder(plan.arms, plan.repeats);
  const runs: AbRun[] = order.map(({ arm, repeat }, i) => ({
    seq: i + 1,
    arm: plan.arms[arm]!.name,
    repeat,
    dir: join(dir, `${String(i + 1).padStart(2, '0')}-${plan.arms[arm]!.name}-r${repeat}`),
    status: 'not run',
    hangs: 0,
  }));
  const manifest = (status: string) => ({
    schema_version: 2,
    file: plan.file,
    status,
    arms: plan.arms.map((a) => a.name),
    repeats: plan.repeats,
    until: plan.until,
    runs: runs.filter((r) => r.status !== 'not run' || plan.until === null),
  });
  writeJsonAtomic(join(dir, 'ab.json'), manifest('running'));
  const rule = ruleShown(plan);
  log(
    `ab: ${plan.arms.length} arms, ${rule.looks === 'sequential' ? `up to ${plan.repeats} pairs until every figure is decided (min_effect ±${rule.minEffectPct}%, ±${rule.minEffectPoints} pt for rates)` : `${plan.repeats} pairs`}, order ${runs
      .slice(0, plan.arms.length * 2)
      .map((r) => r.arm)
      .join(' ')} … → ${dir}`,
  );

  let status: AbResult['status'] = 'completed';
  const judge = new RoundJudge(plan, rule, dir, options.force === true, log);
  let ended = rule.looks === 'sequential' ? `max_pairs (${plan.repeats}) reached` : `${plan.repeats} pairs run`;
  for (const [i, step] of order.entries()) {
    if (options.signal?.aborted) {
      status = 'interrupted';
      break;
    }
    if (i > 0 && plan.pauseMs > 0) await sleep(plan.pauseMs, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch(() => {});
    const run = runs[i]!;
    try {
      await runArm(plan, plan.arms[step.arm]!, run, runs.length, log, options.signal);
      if (run.status === 'interrupted') status = 'interrupted';
    } catch (failure) {
      writeJsonAtomic(join(dir, 'ab.json'), manifest('failed'));
      log(`ab: stopped at run ${run.seq}: ${failure instanceof Error ? failure.message : String(failure)}`);
      throw failure;
    }
    writeJsonAtomic(join(dir, 'ab.json'), manifest('running'));
    if (status === 'interrupted') break;
    const failing = twiceFailed(runs);
    if (failing !== null) {
      ended = `arm ${failing} failed in 2 runs (${runs
        .filter((r) => r.arm === failing && r.status === 'failed')
        .map((r) => `run ${r.seq}: ${r.reason ?? 'failed'}`)
        .join('; ')})`;
      log(`ab: ${ended}: stopping, ${failing} worse`);
      judge.failedArm = failing;
      break;
    }
    // A round (every arm once) is done: the stopping rule judges the pairs so far.
    const roundDone = (i + 1) % plan.arms.length === 0;
    if (roundDone && rule.looks === 'sequential') {
      const last = i === order.length - 1;
      const outOfTime = plan.until!.maxTimeMs !== null && performance.now() - judge.startedMs >= plan.until!.maxTimeMs;
      if ((await judge.look(runs.slice(0, i + 1), last || outOfTime)) === 'stop') {
        ended = judge.decided ? `every figure waited for decided after ${judge.pairs} pairs` : outOfTime ? `max_time_s reached after ${judge.pairs} pairs` : ended;
        break;
      }
    }
  }
  // The final calls: the last look of a sequential rule (made again on what ran, so an interrupted or failed
  // A/B still has them), or the one fixed-sample look of `repeats`.
  const done = runs.filter((r) => r.status !== 'not run');
  if (status === 'interrupted') ended = 'interrupted';
  await judge.look(done, true, judge.lookedAt !== done.length);
  // ab.log keeps the final call of every figure too (the terminal prints the same tables on stdout).
  log(`ab: ended after ${judge.pairs} pairs: ${ended}`, true);
  for (const c of judge.comparisons) for (const line of formatComparison(c).split('\n')) log(line, true);
  writeJsonAtomic(join(dir, 'ab.json'), { ...manifest(status), ended, failed_arm: judge.failedArm });
  return { dir, status, runs, comparisons: judge.comparisons, arms: judge.arms, rule, pairs: judge.pairs, ended, failedArm: judge.failedArm };
}

/** An arm with two failed runs, or null. */
function twiceFailed(runs: readonly AbRun[]): string | null {
  const failed = new Map<string, number>();
  for (const r of runs) if (r.status === 'failed') failed.set(r.arm, (failed.get(r.arm) ?? 0) + 1);
  for (const [arm, n] of failed) if (n >= 2) return arm;
  return null;
}

/** The rule every figure of the A/B is judged by: the stopping rule (`until`, the default) or `repeats` pairs
 * at a fixed-sample level; alpha split over the arms compared with the baseline (Bonferroni: family-wise
 * error kept at every look). */
function ruleShown(plan: AbPlan): AbRuleShown {
  const alpha = 0.05 / (plan.arms.length - 1);
  if (plan.until === null) return { looks: 'fixed', minEffectPct: plan.minEffectPct, minEffectPoints: plan.minEffectPoints, maxPairs: plan.repeats, alpha, waitFor: [] };
  return { looks: 'sequential', minEffectPct: plan.until.minEffectPct, minEffectPoints: plan.until.minEffectPoints, maxPairs: plan.until.maxPairs, alpha, waitFor: plan.until.waitFor };
}

/** The A/B's log: each line scrubbed of the arms' secrets (command output and run notices may carry them),
 * appended to ab.log with its time and passed to `sink` (stderr). */
function abLog(dir: string, plan: AbPlan, sink: ((line: string) => void) | undefined): (line: string, fileOnly?: boolean) => void {
  const logFile = join(dir, 'ab.log');
  const scrubber = new SecretScrubber(abSecrets(plan));
  return (raw, fileOnly = false) => {
    const line = scrubber.text(raw);
    onResultsFs(logFile, 'write', () => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`));
    if (!fileOnly) sink?.(line);
  };
}

/** One run of an arm: setup, health wait, the run, teardown (whatever happened). Sets `run`'s status and
 * hangs; resolves with its summary when it completed. @throws the setup, health or teardown failure. */
async function runArm(plan: AbPlan, arm: AbArm, run: AbRun, total: number, log: (line: string) => void, signal: AbortSignal | undefined): Promise<Summary | null> {
  log(`ab: run ${run.seq}/${total}: arm ${arm.name}, repeat ${run.repeat}`);
  const env = { ROUNDLOAD_ARM: arm.name, ROUNDLOAD_REPEAT: String(run.repeat), ROUNDLOAD_RUN_DIR: run.dir };
  let failure: Error | null = null;
  let completed: Summary | null = null;
  try {
    if (arm.setup !== null) await command(arm, 'setup', arm.setup, plan.commandTimeoutMs, env, log);
    if (arm.health !== null) {
      const attempts = await waitHealthy(arm.health.url, arm.health.timeout_s * 1000, arm.health.interval_ms, signal).catch((error: unknown) => {
        throw new ArmError(`arm ${arm.name} (run ${run.seq}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
      log(`ab: arm ${arm.name}: ${arm.health.url} healthy after ${attempts} ${attempts === 1 ? 'poll' : 'polls'}`);
    }
    const workload = { ...arm.workload, labels: { ...arm.workload.labels, repeat: String(run.repeat) } };
    const result = await executeRun({
      workload,
      out: run.dir,
      argv: ['ab', plan.file, `arm=${arm.name}`, `repeat=${run.repeat}`],
      log: (line) => log(`  ${line}`),
      ...(signal === undefined ? {} : { signal }),
    }).catch((error: unknown) => {
      // The arm's own failure (its target refused the preflight, a results disk gave out): the run stays in
      // the A/B as failed and counts against the arm. Anything else stops the A/B.
      if (!RUN_FAILURES.some((kind) => error instanceof kind)) throw error;
      run.status = 'failed';
      run.reason = (error as Error).message;
      log(`ab: arm ${arm.name} r${run.repeat}: failed: ${run.reason}`);
      return null;
    });
    if (result === null) return null;
    run.status = result.status;
    run.hangs = result.summary.totals.hangs;
    if (result.status === 'completed') completed = result.summary;
    const t = result.summary.totals;
    const steady = steadyTokensPerS(result.summary);
    const rate = steady === null ? 'no steady window for output tok/s' : `${steady.tokensPerS.toFixed(1)} output tok/s (mean of ${steady.windows} steady windows)`;
    log(`ab: arm ${arm.name} r${run.repeat}: ${result.status}, ${t.requests} requests (${t.errors} errors, ${t.hangs} hangs), ${rate}`);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  // Teardown runs whatever happened, so the next arm starts from a clean server.
  if (arm.teardown !== null) {
    await command(arm, 'teardown', arm.teardown, plan.commandTimeoutMs, env, log).catch((error: unknown) => {
      if (failure === null) failure = error instanceof Error ? error : new Error(String(error));
      else log(`ab: arm ${arm.name} teardown failed too: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
  if (failure !== null) {
    if (run.status === 'not run') run.status = 'failed';
    throw failure;
  }
  return completed;
}

/** Failures of a run that are the arm's, not the A/B's: they count against the arm. */
const RUN_FAILURES = [PreflightError, TargetUnreachableError, ResultsError, ServerStartError];

/** The A/B's rule at work: after every round (each arm once) every arm is compared with the baseline, round
 * by round as pairs, each figure called by the rule (across-runs.ts); the calls go to sequential.json and the
 * log; says when every figure waited for is decided. The last look's comparisons are the A/B's answer. */
class RoundJudge {
  readonly #plan: AbPlan;
  readonly #rule: AbRuleShown;
  readonly #dir: string;
  readonly #force: boolean;
  readonly #log: (line: string) => void;
  readonly #loaded = new Map<number, RunData>();
  readonly startedMs = performance.now();
  comparisons: Comparison[] = [];
  arms: ArmPair[] = [];
  pairs = 0;
  decided = false;
  failedArm: string | null = null;

  constructor(plan: AbPlan, rule: AbRuleShown, dir: string, force: boolean, log: (line: string) => void) {
    this.#plan = plan;
    this.#rule = rule;
    this.#dir = dir;
    this.#force = force;
    this.#log = log;
  }

  /** How many runs the last look judged (the final look of the same runs logs nothing again). */
  lookedAt = 0;

  /** Judges the runs so far; `final`: a limit ends the A/B now. `stop` when every figure waited for is decided. */
  async look(runs: readonly AbRun[], final: boolean, log = true): Promise<'go on' | 'stop'> {
    this.lookedAt = runs.length;
    const base = this.#plan.arms[0]!.name;
    const rounds = Math.max(0, ...runs.map((r) => r.repeat));
    const comparisons: Comparison[] = [];
    const arms: ArmPair[] = [];
    for (const arm of this.#plan.arms.slice(1)) {
      const a: RunData[] = [];
      const b: RunData[] = [];
      const pairs: [number, number][] = [];
      for (let repeat = 1; repeat <= rounds; repeat += 1) {
        const ra = runs.find((r) => r.arm === base && r.repeat === repeat);
        const rb = runs.find((r) => r.arm === arm.name && r.repeat === repeat);
        if (ra === undefined || rb === undefined) continue;
        const [da, db] = [await this.#load(ra), await this.#load(rb)];
        if (da === null || db === null) continue;
        pairs.push([a.push(da) - 1, b.push(db) - 1]);
      }
      if (pairs.length === 0) continue;
      const looks = this.#rule.looks === 'fixed' ? ({ kind: 'fixed' } as const) : ({ kind: 'sequential', maxPairs: this.#rule.maxPairs, final } as const);
      const rule = { minEffectPct: this.#rule.minEffectPct, minEffectPoints: this.#rule.minEffectPoints, alpha: this.#rule.alpha, looks };
      const armA = { name: base, runs: a };
      const armB = { name: arm.name, runs: b };
      comparisons.push(failedWorse(compareArms(armA, armB, { force: this.#force, pairs, rule }), this.failedArm, base));
      arms.push({ a: armA, b: armB });
      this.pairs = Math.max(this.pairs, pairs.length);
    }
    if (comparisons.length === 0) return 'go on';
    this.comparisons = comparisons;
    this.arms = arms;
    writeJsonAtomic(join(this.#dir, 'sequential.json'), { schema_version: 2, rule: this.#rule, pairs: this.pairs, comparisons: comparisons.map(callsOf) });
    if (log) {
      this.#log(`ab: after ${this.pairs} pair${this.pairs === 1 ? '' : 's'}:`);
      for (const line of callLines(comparisons)) this.#log(line);
    }
    this.decided = comparisons.length === this.#plan.arms.length - 1 && comparisons.every((c) => waitedDecided(c, this.#rule.waitFor));
    return this.decided || final ? 'stop' : 'go on';
  }

  /** A run's data; a failed run that left no summary stands as a failed run with no phase (errors 100%). */
  async #load(run: AbRun): Promise<RunData | null> {
    const known = this.#loaded.get(run.seq);
    if (known !== undefined) return known;
    // An interrupted run is cut short: not a value of its arm (its pair is left out).
    if (run.status === 'not run' || run.status === 'interrupted') return null;
    let data: RunData;
    try {
      data = await loadRun(run.dir);
    } catch (error) {
      if (run.status !== 'failed') throw error;
      data = { dir: run.dir, name: run.arm, status: 'failed', startedAt: null, labels: {}, workload: null, hash: '', windowS: 0, wallS: NaN, phases: new Map(), badLines: 0 };
    }
    if (run.status === 'failed') data = { ...data, status: 'failed' };
    this.#loaded.set(run.seq, data);
    return data;
  }
}

/** An arm that failed twice is `worse` on errors (and the baseline failing twice makes the other arm `better`). */
function failedWorse(c: Comparison, failedArm: string | null, base: string): Comparison {
  if (failedArm === null || (failedArm !== base && failedArm !== c.b.name)) return c;
  const verdict = failedArm === base ? 'better' : 'worse';
  const text = `${verdict}: arm ${failedArm}${failedArm === base ? ' (the baseline)' : ''} failed in 2 runs: the A/B stopped there`;
  for (const p of c.phases) for (const row of p.rows) if (row.figure === 'error_rate') Object.assign(row, { verdict, text });
  return c;
}

/** Every figure of the families waited for, in every phase, is better, worse or equivalent. */
function waitedDecided(c: Comparison, waitFor: readonly AbFamily[]): boolean {
  return (
    c.phases.length > 0 && c.phases.every((p) => p.rows.every((r) => r.family === null || !waitFor.includes(r.family) || r.verdict === 'better' || r.verdict === 'worse' || r.verdict === 'equivalent'))
  );
}

/** sequential.json's entry of a comparison: each figure's calls after every pair. */
function callsOf(c: Comparison): { arm: string; figures: { phase: string; figure: string; calls: Comparison['phases'][number]['rows'][number]['calls'] }[] } {
  return { arm: c.b.name, figures: c.phases.flatMap((p) => p.rows.map((r) => ({ phase: p.phase, figure: r.label, calls: r.calls }))) };
}

async function command(arm: AbArm, what: 'setup' | 'teardown', text: string, timeoutMs: number, env: Record<string, string>, log: (line: string) => void): Promise<void> {
  log(`ab: arm ${arm.name} ${what}: $ ${text}`);
  const result = await runShell(text, { timeoutMs, env, onLine: (line) => log(`  [${arm.name} ${what}] ${line}`) });
  const how = result.timedOut ? `killed after ${seconds(timeoutMs)} s (command_timeout_s)` : result.code === 0 ? 'ok' : result.code === null ? `killed by ${result.signal}` : `exit ${result.code}`;
  log(`ab: arm ${arm.name} ${what}: ${how} in ${(result.durationMs / 1000).toFixed(1)} s`);
  if (result.timedOut || result.code !== 0) {
    throw new ArmError(`arm ${arm.name} ${what} failed (${how}): $ ${text}${result.tail.length > 0 ? `\n  last output:\n    ${result.tail.slice(-5).join('\n    ')}` : ''}`, {
      context: { arm: arm.name, what, code: result.code },
    });
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1);
}
