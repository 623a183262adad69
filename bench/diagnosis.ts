// `npm run bench -- diagnosis [--quick] [--probe] [--runs N] [--only SUBSTRING] [--out FILE] [--check] [--report FILE]`:
// the diagnosis scored on real parts.
// Every scenario of bench/diagnosis-scenarios.ts runs N times (3; `--quick`: 1), each bounded by a time limit,
// everything it started stopped when it ends; the verdicts go to bench/diagnosis-matrix.json and the terminal
// prints the confusion matrix (expected × verdict), top-1 right, confidently wrong and unknown counts, the
// reliability table and the leave-one-family-out scores (bench/diagnosis-score.ts). `--report FILE` prints
// them for a results file already written, running nothing. A scenario whose parts are missing on this machine
// (llama-server never built: scripts/build-llama-server.sh; squid) is skipped and said, never scored. `--check`
// exits 1 when the goal (top-1 right >= 95%, none confidently wrong, every scenario that could run ran, no
// reliability bin of 5 calls or more off by over 10 points from its hit rate's 95% interval) is not met.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Summary } from '../src/analysis/index.js';
import type { Diagnosis } from '../src/types/index.js';
import { ROOT } from '../test/helpers/root.js';
import { Scope } from './diagnosis-parts.js';
import { printCalibration, type ScoredRun } from './diagnosis-score.js';
import { SCENARIOS, type Scenario } from './diagnosis-scenarios.js';
import { PROBES } from './diagnosis-probe.js';
import { printTable } from './lib.js';

/** A run past this is aborted (the run stops and writes its summary); 20 s later it is given up on. */
const LIMIT_MS = 60_000;
const GIVE_UP_MS = 20_000;
/** A wrong verdict at this confidence or more is confidently wrong. */
const CONFIDENT = 0.6;

interface RunResult {
  /** The diagnosis's verdict, or `failed` when the scenario could not run (the error in `note`). */
  verdict: string;
  confidence: number | null;
  seconds: number;
  hangs?: number;
  errors?: number;
  ok?: number;
  /** Errors by class (`http_5xx: 3, connection_reset: 1`). */
  error_classes?: string;
  /** Where the diagnosis says the failed requests were held, when it says. */
  held_in?: readonly string[];
  /** Gauges the monitor judged pinned (`decode sglang:num_queue_reqs: pinned`): where the fault held requests. */
  pinned?: readonly string[];
  /** The diagnosis's first sentences, kept for a wrong verdict (why it said what it said). */
  evidence?: readonly string[];
  /** The main episode's summed bits per verdict: what its confidence was computed from. */
  scores?: Readonly<Record<string, number>>;
  note?: string;
}

interface ScenarioResult {
  name: string;
  /** Absent in files written before families. */
  family?: string;
  expected: readonly string[];
  fault: string;
  runs: RunResult[];
}

/** Sentences of a wrong verdict's evidence kept in the results file. */
const EVIDENCE_KEPT = 4;

async function runOnce(scenario: Scenario): Promise<RunResult> {
  const scope = new Scope();
  const abort = new AbortController();
  const startedMs = performance.now();
  const limit = setTimeout(() => abort.abort(), LIMIT_MS);
  let giveUp: NodeJS.Timeout | undefined;
  try {
    const lost = new Promise<never>((_, reject) => {
      abort.signal.addEventListener('abort', () => (giveUp = setTimeout(() => reject(new Error(`still running ${GIVE_UP_MS / 1000} s after its ${LIMIT_MS / 1000} s limit`)), GIVE_UP_MS)));
    });
    const running = scenario.run(scope, abort.signal);
    // Given up on, it may still fail later (its parts stopped under it): that failure is already reported.
    running.catch(() => undefined);
    const summary = await Promise.race([running, lost]);
    const { diagnosis, totals } = summary;
    return {
      verdict: diagnosis.verdict,
      confidence: diagnosis.confidence ?? null,
      seconds: seconds(startedMs),
      hangs: totals.hangs,
      errors: totals.errors,
      ok: totals.ok,
      error_classes: Object.entries(summary.errors_by_class)
        .map(([k, n]) => `${k}: ${n}`)
        .join(', '),
      ...(diagnosis.held_in === undefined ? {} : { held_in: diagnosis.held_in }),
      ...mainScores(diagnosis),
      ...pinnedGauges(summary),
      ...(scenario.expected.includes(diagnosis.verdict) ? {} : { evidence: diagnosis.evidence.slice(0, EVIDENCE_KEPT) }),
      ...(abort.signal.aborted ? { note: `aborted at its ${LIMIT_MS / 1000} s limit` } : {}),
    };
  } catch (error) {
    return { verdict: 'failed', confidence: null, seconds: seconds(startedMs), note: error instanceof Error ? error.message.slice(0, 400) : String(error) };
  } finally {
    clearTimeout(limit);
    clearTimeout(giveUp);
    await scope.close();
  }
}

/** The scores of the episode the run's verdict tells the story of: the longest with that verdict (judge.ts's main). */
function mainScores(d: Diagnosis): { scores?: Record<string, number> } {
  const main = (d.episodes ?? []).filter((e) => e.verdict === d.verdict || d.verdict === 'unknown').sort((a, b) => b.end_ms - b.start_ms - (a.end_ms - a.start_ms))[0];
  return main === undefined ? {} : { scores: { ...main.scores } };
}

function pinnedGauges(summary: Summary): { pinned?: string[] } {
  const pinned = summary.gauges.filter((g) => g.verdict === 'pinned' || g.verdict === 'pinned_under_load').map((g) => `${g.target} ${g.name}: ${g.verdict}`);
  return pinned.length === 0 ? {} : { pinned };
}

const seconds = (fromMs: number): number => Math.round((performance.now() - fromMs) / 100) / 10;

function right(expected: readonly string[], run: RunResult): boolean {
  return expected.includes(run.verdict);
}

/** The issue's goal: top-1 right in 95% of runs or more, none confidently wrong, every scenario ran. */
const GOAL_RIGHT = 0.95;

/** Prints the figures; returns whether the goal is met. */
function report(results: readonly ScenarioResult[]): boolean {
  printTable(
    'per scenario',
    ['scenario', 'expected', 'verdicts', 'right', 'mean conf'],
    results.map((s) => {
      const conf = s.runs.map((r) => r.confidence).filter((c): c is number => c !== null);
      return [
        s.name,
        s.expected.join('|'),
        s.runs.map((r) => `${r.verdict}${r.confidence === null ? '' : ` ${r.confidence.toFixed(2)}`}`).join(', '),
        `${s.runs.filter((r) => right(s.expected, r)).length}/${s.runs.length}`,
        conf.length === 0 ? '-' : (conf.reduce((a, b) => a + b, 0) / conf.length).toFixed(2),
      ];
    }),
  );
  // The confusion matrix: a run's row is the expected verdict it matched (a scenario with two right answers
  // counts a right run under the one given), else the first expected; its column is the verdict given.
  const cells = results.flatMap((s) => s.runs.map((r) => ({ row: right(s.expected, r) ? r.verdict : s.expected[0]!, col: r.verdict })));
  const rows = [...new Set(cells.map((c) => c.row))];
  const columns = [...new Set([...rows, ...cells.map((c) => c.col)])];
  printTable(
    'confusion matrix (rows: expected; columns: verdict given; counts of runs)',
    ['expected \\ verdict', ...columns],
    rows.map((row) => [row, ...columns.map((col) => cells.filter((c) => c.row === row && c.col === col).length)]),
  );
  const runs = results.flatMap((s) => s.runs.map((r) => ({ s, r })));
  const good = runs.filter(({ s, r }) => right(s.expected, r)).length;
  const confidentlyWrong = runs.filter(({ s, r }) => !right(s.expected, r) && (r.confidence ?? 0) >= CONFIDENT);
  const unknown = runs.filter(({ r }) => r.verdict === 'unknown');
  const failed = runs.filter(({ r }) => r.verdict === 'failed');
  process.stdout.write(
    `\ntop-1 right: ${good}/${runs.length} runs (${runs.length === 0 ? 0 : ((100 * good) / runs.length).toFixed(1)}%)\n` +
      `confidently wrong (a wrong verdict at confidence >= ${CONFIDENT}): ${confidentlyWrong.length}${confidentlyWrong.length === 0 ? '' : ` — ${confidentlyWrong.map(({ s, r }) => `${s.name}: ${r.verdict} ${r.confidence}`).join('; ')}`}\n` +
      `unknown: ${unknown.length}${unknown.length === 0 ? '' : ` — ${[...new Set(unknown.map(({ s }) => s.name))].join(', ')}`}\n` +
      `could not run: ${failed.length}${failed.length === 0 ? '' : ` — ${failed.map(({ s, r }) => `${s.name}: ${r.note}`).join('; ')}`}\n`,
  );
  const familyOf = new Map(SCENARIOS.map((s) => [s.name, s.family]));
  const scored = runs.map(({ s, r }): ScoredRun => ({
    family: s.family ?? familyOf.get(s.name) ?? 'unnamed',
    right: right(s.expected, r),
    verdict: r.verdict,
    confidence: r.confidence,
    ...(r.scores === undefined ? {} : { scores: r.scores }),
  }));
  const drift = printCalibration(scored);
  process.stdout.write(
    drift.length === 0
      ? 'reliability: every bin of 5 calls or more within 10 points of its hit rate (95% interval)\n'
      : `reliability: ${drift.length} bin(s) of 5 calls or more off by over 10 points from their hit rate's 95% interval — ${drift.map((b) => `${b.from.toFixed(1)}-${b.to.toFixed(1)}: ${b.right}/${b.count} right at ${b.meanConfidence.toFixed(2)}`).join('; ')}\n`,
  );
  return runs.length > 0 && good >= GOAL_RIGHT * runs.length && confidentlyWrong.length === 0 && failed.length === 0 && drift.length === 0;
}

function commit(): string {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

export async function diagnosisBench(args: string[]): Promise<number> {
  const quick = args.includes('--quick');
  const check = args.includes('--check');
  const at = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const runs = Number(at('--runs') ?? (quick ? 1 : 3));
  const only = at('--only');
  const reported = at('--report');
  if (reported !== undefined) {
    const file = JSON.parse(readFileSync(reported, 'utf8')) as { scenarios: ScenarioResult[] };
    const met = report(file.scenarios);
    return check && !met ? 1 : 0;
  }
  const out = at('--out') ?? join(ROOT, args.includes('--probe') ? 'results/diagnosis-probes.json' : 'bench/diagnosis-matrix.json');
  if (!Number.isInteger(runs) || runs < 1 || (args.includes('--only') && only === undefined)) {
    process.stderr.write('usage: npm run bench -- diagnosis [--quick] [--probe] [--runs N] [--only SUBSTRING] [--out FILE] [--check] [--report FILE]\n');
    return 2;
  }
  if (process.getuid?.() !== 0) process.stderr.write('not root: the network-namespace scenarios will fail (ip netns needs root)\n');
  // `--probe`: the probes of bench/diagnosis-probe.ts instead of the matrix (written to --out, never the matrix file).
  const pool = args.includes('--probe') ? PROBES : SCENARIOS;
  const named = pool.filter((s) => only === undefined || s.name.includes(only));
  // A scenario whose parts are missing here (llama-server not built, squid not installed) is skipped and said.
  const skipped = named.map((s) => ({ s, why: s.needs?.() ?? null })).filter((x): x is { s: Scenario; why: string } => x.why !== null);
  const chosen = named.filter((s) => !skipped.some((x) => x.s === s));
  for (const { s, why } of skipped) process.stderr.write(`${s.name}: skipped, ${why}\n`);
  const startedMs = performance.now();
  const results: ScenarioResult[] = [];
  for (const scenario of chosen) {
    const result: ScenarioResult = { name: scenario.name, family: scenario.family, expected: scenario.expected, fault: scenario.fault, runs: [] };
    results.push(result);
    for (let i = 0; i < runs; i += 1) {
      const run = await runOnce(scenario);
      result.runs.push(run);
      const mark = right(scenario.expected, run) ? 'right' : 'WRONG';
      process.stderr.write(
        `${scenario.name} ${i + 1}/${runs}: ${run.verdict}${run.confidence === null ? '' : ` ${run.confidence}`} (expected ${scenario.expected.join('|')}: ${mark}) in ${run.seconds} s${run.hangs === undefined ? '' : `; ${run.ok} ok, ${run.hangs} hangs, ${run.errors} errors${run.error_classes === '' ? '' : ` (${run.error_classes})`}`}${run.note === undefined ? '' : `; ${run.note}`}\n`,
      );
      // The parts' ports and sockets settle before the next run's start.
      await sleep(200);
    }
  }
  const file = { commit: commit(), date: new Date().toISOString(), runs_per_scenario: runs, minutes: Math.round((performance.now() - startedMs) / 6000) / 10, scenarios: results };
  writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`);
  const met = report(results);
  process.stdout.write(`\n${chosen.length} scenarios × ${runs} in ${file.minutes} min on ${file.commit}; written to ${out}\n`);
  if (skipped.length > 0) process.stdout.write(`skipped: ${skipped.length} scenario(s) whose parts are missing here, not scored — ${[...new Set(skipped.map((x) => x.why))].join('; ')}\n`);
  if (check) process.stdout.write(`goal (top-1 right >= ${GOAL_RIGHT * 100}%, none confidently wrong, every scenario ran, every reliability bin within 10 points): ${met ? 'met' : 'NOT met'}\n`);
  return check && !met ? 1 : 0;
}
