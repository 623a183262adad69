// `npm run bench -- trend [nights] [--step-at N]`: the "done when" on the embedded deployment. Two
// histories of 12 nightly runs each (a few seconds a run: 2 agents × 4 rounds of the smoke workload, through
// the CLI with --history, as a nightly job runs it): one where the decode server is 10% slower from night 8
// on (engine.decode_step_ms and decode_step_ms_per_running × 1.1), one A/A (nothing changes). Then
// `roundload trend --fail-on regression` on each: the first must flag night 8 (or 9) and exit 1, the second
// flag nothing and exit 0. Prints both tables; exit 1 when either claim fails.
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

/** The nights of one history, then its trend; returns the trend's exit code and output. */
async function history(name: string, nights: number, stepAt: number | null): Promise<Cli> {
  const dir = mkdtempSync(join(tmpdir(), `roundload-trend-${name}-`));
  const db = join(dir, 'nightly.db');
  for (let n = 1; n <= nights; n += 1) {
    const slowdown = stepAt !== null && n >= stepAt ? 1.1 : 1;
    const started = Date.now();
    await night(dir, db, n, slowdown);
    process.stderr.write(`${name}: night ${n}/${nights}${slowdown === 1 ? '' : ' (decode 10% slower)'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  const trend = await cli(['trend', db, '--fail-on', 'regression', '--out', join(dir, 'trend.html')]);
  process.stdout.write(`\n== ${name} (${db}) · trend exit ${trend.code}\n${trend.stdout}${trend.stderr}`);
  return trend;
}

/** Runs a flagged history and an A/A one; exit 0 when the step is flagged at night 8 or 9 and A/A is not. */
export async function trendNightlyBench(args: string[]): Promise<number> {
  const nights = args[0] === undefined ? 12 : Number(args[0]);
  const at = args.indexOf('--step-at');
  const stepAt = at === -1 ? 8 : Number(args[at + 1]);
  const stepped = await history('decode-10pct-slower', nights, stepAt);
  const aa = await history('a-a', nights, null);
  const flaggedAt = [...stepped.stdout.matchAll(/run (\d+) \([^)]*\): \+?-?[\d.]+% regression/g)].map((m) => Number(m[1]));
  const ok = stepped.code === 1 && flaggedAt.length > 0 && flaggedAt.every((n) => n >= stepAt && n <= stepAt + 1) && aa.code === 0 && !/regression|improvement/.test(aa.stdout.split('\n\n')[1] ?? '');
  process.stdout.write(
    `\nstep at night ${stepAt}: regressions flagged at run(s) ${flaggedAt.join(', ') || 'none'}, exit ${stepped.code}; A/A: exit ${aa.code} → ${ok ? 'as claimed' : 'NOT as claimed'}\n`,
  );
  return ok ? 0 : 1;
}
