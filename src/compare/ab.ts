// `roundload ab`: runs the arms of an ab file alternately (A B, B A, A B … for `repeats` rounds) so drift of the
// server or the machine hits every arm alike, each run in its own results folder with the arm's setup,
// health wait and teardown around it; then compares every arm with the first, repeats pooled.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { workloadSecrets, type AbArm, type AbPlan, type AbStoppingRule } from '../config/index.js';
import { SecretScrubber, urlSecrets } from '../util/index.js';
import { executeRun, type RunStatus } from '../run/index.js';
import type { Summary } from '../analysis/index.js';
import { boundedGet, GetTimeoutError } from '../transport/index.js';
import { createRunFolder, onResultsFs, writeJsonAtomic } from '../results/index.js';
import { ArmError, DifferentWorkloadsError } from '../errors.js';
import type { ArmPair } from './charts.js';
import { compareArms, type Comparison } from './compare.js';
import { identityDifferences, workloadHash } from './identity.js';
import { loadRun } from './load.js';
import { runShell } from './shell.js';
import { allDecided, headlineFigures, judgePairs, sequentialLines, type FigureCalls, type FigureSpec } from './ab-sequential.js';

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
}

export interface AbResult {
  dir: string;
  status: 'completed' | 'interrupted';
  runs: AbRun[];
  comparisons: Comparison[];
  /** The arms each comparison was made of (same order), for compare.html's time series. */
  arms: ArmPair[];
  /** With a stopping rule (`until:`): each headline figure's call after every pair; null without one. */
  sequential: FigureCalls[] | null;
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
    schema_version: 1,
    file: plan.file,
    status,
    arms: plan.arms.map((a) => a.name),
    repeats: plan.repeats,
    runs: runs.filter((r) => r.status !== 'not run' || plan.until === null),
  });
  writeJsonAtomic(join(dir, 'ab.json'), manifest('running'));
  log(`ab: ${plan.arms.length} arms × ${plan.repeats} repeats, order ${runs.map((r) => r.arm).join(' ')} → ${dir}`);

  let status: AbResult['status'] = 'completed';
  const judge = plan.until === null ? null : new PairJudge(plan.until, plan.arms[0]!.name, dir, log);
  for (const [i, step] of order.entries()) {
    if (options.signal?.aborted) {
      status = 'interrupted';
      break;
    }
    if (i > 0 && plan.pauseMs > 0) await sleep(plan.pauseMs, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch(() => {});
    const run = runs[i]!;
    try {
      const summary = await runArm(plan, plan.arms[step.arm]!, run, runs.length, log, options.signal);
      if (summary !== null) judge?.add(run.seq, summary);
      if (run.status === 'interrupted') status = 'interrupted';
    } catch (failure) {
      writeJsonAtomic(join(dir, 'ab.json'), manifest('failed'));
      log(`ab: stopped at run ${run.seq}: ${failure instanceof Error ? failure.message : String(failure)}`);
      throw failure;
    }
    writeJsonAtomic(join(dir, 'ab.json'), manifest('running'));
    if (status === 'interrupted') break;
    // A pair is done: the stopping rule judges the pairs so far.
    if (judge !== null && i % 2 === 1 && judge.afterPair(runs.slice(0, i + 1), i === order.length - 1) === 'stop') break;
  }

  const { comparisons, arms } = await compareCompleted(plan, runs, options.force === true);
  writeJsonAtomic(join(dir, 'ab.json'), manifest(status));
  return { dir, status, runs, comparisons, arms, sequential: judge?.figures ?? null };
}

/** The A/B's log: each line scrubbed of the arms' secrets (command output and run notices may carry them),
 * appended to ab.log with its time and passed to `sink` (stderr). */
function abLog(dir: string, plan: AbPlan, sink: ((line: string) => void) | undefined): (line: string) => void {
  const logFile = join(dir, 'ab.log');
  const scrubber = new SecretScrubber(abSecrets(plan));
  return (raw) => {
    const line = scrubber.text(raw);
    onResultsFs(logFile, 'write', () => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`));
    sink?.(line);
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
    });
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

/** The stopping rule at work: the completed runs' summaries, and after every pair each headline figure's call
 * (written to sequential.json and the log); says when every figure waited for is decided or a limit came. */
class PairJudge {
  readonly #rule: AbStoppingRule;
  readonly #baseline: string;
  readonly #dir: string;
  readonly #log: (line: string) => void;
  readonly #startedMs = performance.now();
  readonly #summaries = new Map<number, Summary>();
  #specs: FigureSpec[] | null = null;
  figures: FigureCalls[] | null = null;

  constructor(rule: AbStoppingRule, baseline: string, dir: string, log: (line: string) => void) {
    this.#rule = rule;
    this.#baseline = baseline;
    this.#dir = dir;
    this.#log = log;
  }

  add(seq: number, summary: Summary): void {
    this.#summaries.set(seq, summary);
  }

  /** After the pair ending `runs`: `stop` when every figure waited for is decided or a limit is hit. */
  afterPair(runs: readonly AbRun[], last: boolean): 'go on' | 'stop' {
    const rule = this.#rule;
    const pairs = pairsOf(runs, this.#summaries, this.#baseline);
    this.#specs ??= pairs[0] === undefined ? null : headlineFigures(pairs[0].a);
    if (this.#specs === null) return 'go on';
    const outOfTime = rule.maxTimeMs !== null && performance.now() - this.#startedMs >= rule.maxTimeMs;
    this.figures = judgePairs(this.#specs, pairs, rule, outOfTime || last);
    writeJsonAtomic(join(this.#dir, 'sequential.json'), { schema_version: 1, rule, pairs: pairs.length, figures: this.figures });
    this.#log(`ab: after ${pairs.length} pair${pairs.length === 1 ? '' : 's'}:`);
    for (const line of sequentialLines(this.figures)) this.#log(line);
    if (allDecided(this.figures, rule.waitFor)) {
      this.#log(`ab: every figure ${rule.waitFor.length === 5 ? '' : `of ${rule.waitFor.join(', ')} `}decided after ${pairs.length} pairs: stopping`);
      return 'stop';
    }
    if (outOfTime) {
      this.#log(`ab: max_time_s reached after ${pairs.length} pairs: stopping, undecided figures inconclusive`);
      return 'stop';
    }
    return 'go on';
  }
}

/** Every arm's completed runs compared with the baseline's, repeats pooled. */
async function compareCompleted(plan: AbPlan, runs: readonly AbRun[], force: boolean): Promise<{ comparisons: Comparison[]; arms: ArmPair[] }> {
  const comparisons: Comparison[] = [];
  const arms: ArmPair[] = [];
  const byArm = new Map<string, string[]>();
  for (const run of runs) if (run.status === 'completed') byArm.set(run.arm, [...(byArm.get(run.arm) ?? []), run.dir]);
  const base = plan.arms[0]!;
  const baseDirs = byArm.get(base.name) ?? [];
  if (baseDirs.length === 0) return { comparisons, arms };
  const baseArm = { name: base.name, runs: await Promise.all(baseDirs.map((d) => loadRun(d))) };
  for (const arm of plan.arms.slice(1)) {
    const dirs = byArm.get(arm.name) ?? [];
    if (dirs.length === 0) continue;
    const other = { name: arm.name, runs: await Promise.all(dirs.map((d) => loadRun(d))) };
    comparisons.push(compareArms(baseArm, other, { seed: plan.seed, force }));
    arms.push({ a: baseArm, b: other });
  }
  return { comparisons, arms };
}

/** The completed pairs (both runs of a repeat completed), as A's and B's summaries. */
function pairsOf(runs: readonly AbRun[], summaries: ReadonlyMap<number, Summary>, baseline: string): { a: Summary; b: Summary }[] {
  const out: { a: Summary; b: Summary }[] = [];
  for (let k = 0; k + 1 < runs.length; k += 2) {
    const [x, y] = [runs[k]!, runs[k + 1]!];
    const [ra, rb] = x.arm === baseline ? [x, y] : [y, x];
    const a = summaries.get(ra.seq);
    const b = summaries.get(rb.seq);
    if (a !== undefined && b !== undefined) out.push({ a, b });
  }
  return out;
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
