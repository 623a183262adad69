// `npm run bench -- trend [nights] [--step-at N]`: the "done when" on the embedded deployment. Two
// histories of 12 nightly runs each (a few seconds a run: 2 agents × 4 rounds of the smoke workload, through
// the CLI with --history, as a nightly job runs it): one where the decode server is 10% slower from night 8
// on (engine.decode_step_ms and decode_step_ms_per_running × 1.1), one A/A (nothing changes). Then
// `roundload trend --fail-on regression` on each: on the decode figures the first must exit 1 with every
// change point at night 8 (or 9) and none elsewhere (with the default --drift 0.6 a 10% step on 12 short nights
// is found on some of the four figures, not all: the power the docs state); on every figure the A/A one must
// flag nothing and exit 0. The decode figures under --drift 0 (the permutation test) are printed beside, for
// the power it trades. Prints the tables; exit 1 when a claim fails.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../', import.meta.url).pathname;
/** The smoke workload's decode settings (its engine: section and the schema's default per running request). */
const DECODE_STEP_MS = 6;
const DECODE_STEP_MS_PER_RUNNING = 0.15;

interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Cli> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** One night: a short run appended to `db`, its decode `slowdown` times slower. */
async function night(dir: string, db: string, n: number, slowdown: number): Promise<void> {
  const set = [`engine.decode_step_ms=${DECODE_STEP_MS * slowdown}`, `engine.decode_step_ms_per_running=${DECODE_STEP_MS_PER_RUNNING * slowdown}`];
  const args = ['run', 'workloads/smoke.yaml', '--agents', '2', '--rounds', '4', '--quiet', '--out', join(dir, `night-${n}`), '--history', db, '--label', `night=${n}`];
  const res = await cli([...args, ...set.flatMap((s) => ['--set', s])]);
  if (res.code !== 0) throw new Error(`night ${n} exited ${res.code}: ${res.stderr}`);
}

/** The figures a slower decode moves, as medians (a short run's p99 is its slowest request or two: the
 * machine's load moves it as much as the engine does). */
const DECODE_FIGURES = 'itl_p50,tpot_p50,e2e_p50,stream_tok_s';

/** What the bench reads of `trend --json` (docs/history.md, the contract). */
interface TrendJson {
  workloads: { change_points: { figure: string; run_number: number }[] }[];
}

/** The nights of one history; returns the history file. */
async function history(name: string, nights: number, stepAt: number | null): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `roundload-trend-${name}-`));
  const db = join(dir, 'nightly.db');
  for (let n = 1; n <= nights; n += 1) {
    const slowdown = stepAt !== null && n >= stepAt ? 1.1 : 1;
    const started = Date.now();
    await night(dir, db, n, slowdown);
    process.stderr.write(`${name}: night ${n}/${nights}${slowdown === 1 ? '' : ' (decode 10% slower)'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  return db;
}

/** `trend --fail-on regression` on `db` (the table printed), and the same as JSON: the change points by figure. */
async function trend(title: string, db: string, metrics: string[], extra: string[] = []): Promise<{ code: number | null; changes: Map<string, number[]> }> {
  const args = ['trend', db, '--fail-on', 'regression', '--out', join(db, '..', 'trend.html'), ...metrics.flatMap((m) => ['--metric', m]), ...extra];
  const table = await cli(args);
  process.stdout.write(`\n== ${title} · trend --fail-on regression exit ${table.code}\n${table.stdout}${table.stderr}`);
  const json = JSON.parse((await cli([...args, '--json'])).stdout) as TrendJson;
  const changes = new Map<string, number[]>();
  for (const c of json.workloads.flatMap((w) => w.change_points)) changes.set(c.figure, [...(changes.get(c.figure) ?? []), c.run_number]);
  return { code: table.code, changes };
}

const listed = (changes: Map<string, number[]>): string =>
  [...changes]
    .filter(([, at]) => at.length > 0)
    .map(([name, at]) => `${name} at ${at.join(', ')}`)
    .join('; ') || 'none';

/**
 * Runs a stepped history and an A/A one. The claims: on the decode figures, `--fail-on regression` exits 1
 * and every change point found is at night `stepAt` or the next (at most one a figure); on A/A, every default
 * figure is free of change points and the exit is 0. The stepped history's default figures are printed too
 * (tails included), and its decode figures under `--drift 0`.
 */
export async function trendNightlyBench(args: string[]): Promise<number> {
  const nights = args[0] === undefined ? 12 : Number(args[0]);
  const at = args.indexOf('--step-at');
  const stepAt = at === -1 ? 8 : Number(args[at + 1]);
  const stepped = await history('decode-10pct-slower', nights, stepAt);
  const aa = await history('a-a', nights, null);
  const all = await trend('decode 10% slower from night ' + String(stepAt) + ', every default figure', stepped, []);
  const decode = await trend('decode 10% slower, the decode figures', stepped, [DECODE_FIGURES]);
  const exchangeable = await trend('decode 10% slower, the decode figures, --drift 0 (nights taken as exchangeable)', stepped, [DECODE_FIGURES], ['--drift', '0']);
  const still = await trend('A/A, every default figure', aa, []);
  const onTime = [...decode.changes.values()].every((c) => c.length === 0 || (c.length === 1 && c[0]! >= stepAt && c[0]! <= stepAt + 1));
  const ok = decode.code === 1 && onTime && still.code === 0 && [...still.changes.values()].every((c) => c.length === 0);
  process.stdout.write(
    `\nstep at night ${stepAt}: decode figures flagged ${listed(decode.changes)} (exit ${decode.code}); with --drift 0 ${listed(exchangeable.changes)}; every figure: ${listed(all.changes)} (exit ${all.code})\n` +
      `A/A: ${listed(still.changes)} (exit ${still.code}) → ${ok ? 'as claimed' : 'NOT as claimed'}\n`,
  );
  return ok ? 0 : 1;
}
