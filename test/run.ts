// The suite's runner (`npm test`): every test file in its own process, in two groups.
// The parallel group runs `--jobs` files at a time (they share no port, file or global state: port 0 and
// temp folders throughout); the serial group runs alone afterwards, one file at a time: files that drive real
// nginx, HAProxy, Prometheus or Chromium, stop processes with SIGSTOP, or judge how starved the host is, whose verdicts
// are only fair when nothing else of ours competes for the two cores. Each file's output is printed whole when
// it ends (no interleaving), then the failures and the slowest files.
//
//   npm run build:test && node dist/test/run.js [--group parallel|serial|all] [--jobs N] [--timeout-s S] [--load N] [--repeat K] [file-or-folder…]
//
// Compiled (as `npm test` runs it), every file runs as the JavaScript tsc emitted into dist/ and the tests start
// the built CLI (test/helpers/root.ts): loading ~300 modules through tsx's hooks cost each test process and each
// CLI it starts about 0.7 CPU-s more. `node --import tsx test/run.ts …` still runs everything from source.
//
// `--load N` keeps N busy loops (other processes, one core each) spinning the whole time and `--repeat K` runs
// the selection K times in a row, each run's result and duration listed at the end: `npm run test:stress`
// (`--load 2 --repeat 5`) is the check that the suite is not flaky on a loaded 2-core machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { COMPILED, ROOT as ROOT_SLASH } from './helpers/root.js';
import { pool, runWhole } from './helpers/whole.js';

const ROOT = resolve(ROOT_SLASH);
/** How long each file took last time, so the longest start first and the group does not end on one running alone. */
const TIMES_FILE = join(ROOT, 'node_modules', '.cache', 'roundload-test-times.json');

/** Run alone, after the parallel group: real proxies, Prometheus and browsers, SIGSTOP'd processes, CPU-starvation verdicts. */
const SERIAL = new Set([
  'test/e2e/diagnosis-real.test.ts',
  'test/e2e/diagnosis-classes.test.ts',
  'test/e2e/diagnosis-stories.test.ts',
  'test/e2e/diagnosis-class4.test.ts',
  'test/e2e/nginx.test.ts',
  'test/e2e/path-timeout.test.ts',
  'test/e2e/probe-path.test.ts',
  'test/e2e/report-browser.test.ts',
  'test/e2e/dashboard-browser.test.ts',
  'test/e2e/prometheus.test.ts',
]);

interface Options {
  group: 'parallel' | 'serial' | 'all';
  jobs: number;
  timeoutMs: number;
  load: number;
  repeat: number;
  only: string[];
}

interface FileResult {
  file: string;
  ms: number;
  code: number | null;
  timedOut: boolean;
  pass: number;
  fail: number;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { group: 'all', jobs: availableParallelism() * 2 + 1, timeoutMs: 600_000, load: 0, repeat: 1, only: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[(i += 1)];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--group') {
      const g = value();
      if (g !== 'parallel' && g !== 'serial' && g !== 'all') throw new Error(`--group: parallel, serial or all, not ${g}`);
      options.group = g;
    } else if (arg === '--jobs') options.jobs = Math.max(1, Number.parseInt(value(), 10) || 1);
    else if (arg === '--timeout-s') options.timeoutMs = Math.max(1, Number(value())) * 1000;
    else if (arg === '--load') options.load = Math.max(0, Number.parseInt(value(), 10) || 0);
    else if (arg === '--repeat') options.repeat = Math.max(1, Number.parseInt(value(), 10) || 1);
    else options.only.push(arg);
  }
  return options;
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(relative(ROOT, path));
  }
  return out;
}

/** The files named (or under the folders named), else every test file. */
function selected(only: string[]): string[] {
  if (only.length === 0) return testFiles(join(ROOT, 'test'));
  return only.flatMap((p) => {
    const abs = resolve(p);
    return statSync(abs).isDirectory() ? testFiles(abs) : [relative(ROOT, abs)];
  });
}

function lastTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function saveTimes(results: readonly FileResult[]): void {
  const times = lastTimes();
  for (const r of results) if (!r.timedOut) times[r.file] = Math.round(r.ms);
  try {
    mkdirSync(dirname(TIMES_FILE), { recursive: true });
    writeFileSync(TIMES_FILE, `${JSON.stringify(times, null, 1)}\n`);
  } catch {
    // Only an ordering hint.
  }
}

function count(output: string, word: 'pass' | 'fail'): number {
  const m = new RegExp(`^ℹ ${word} (\\d+)$`, 'm').exec(output);
  return m === null ? 0 : Number(m[1]);
}

async function runFile(file: string, timeoutMs: number): Promise<FileResult> {
  // Compiled (npm test), a file runs as the JavaScript tsc emitted beside src's in dist/; from source, through tsx.
  const entry = COMPILED ? ['dist/' + file.replace(/\.ts$/, '.js')] : ['--import', 'tsx', file];
  // The file itself, not `node --test file` (which runs it in a second process): one Node start less a file,
  // the same spec output and exit code (1 when a test failed).
  const { code, timedOut, ms, output } = await runWhole(file, process.execPath, ['--test-reporter=spec', ...entry], timeoutMs);
  return { file, ms, code, timedOut, pass: count(output, 'pass'), fail: count(output, 'fail') };
}

/** One pass over the selection: the parallel group, then the serial one. True when every file passed. */
async function suite(options: Options, files: readonly string[]): Promise<{ ok: boolean; summary: string }> {
  // The longest files first (last run's times; without them, the end-to-end ones), so the group does not end
  // on one of them running alone.
  const times = lastTimes();
  const guess = (f: string): number => times[f] ?? (f.startsWith('test/e2e/') ? 30_000 : 5_000);
  const parallel = files.filter((f) => !SERIAL.has(f)).sort((a, b) => guess(b) - guess(a));
  const serial = files.filter((f) => SERIAL.has(f));
  const started = performance.now();
  const results: FileResult[] = [];
  const groups: [string, string[], number][] = [];
  if (options.group !== 'serial') groups.push(['parallel', parallel, options.jobs]);
  if (options.group !== 'parallel') groups.push(['serial', serial, 1]);
  const lines: string[] = [];
  for (const [name, group, jobs] of groups) {
    if (group.length === 0) continue;
    const t0 = performance.now();
    results.push(...(await pool(group, jobs, (file) => runFile(file, options.timeoutMs))));
    lines.push(`${name} group: ${group.length} files, ${jobs} at a time, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  saveTimes(results);
  const failed = results.filter((r) => r.code !== 0);
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 8);
  const pass = results.reduce((n, r) => n + r.pass, 0);
  const fail = results.reduce((n, r) => n + r.fail, 0);
  process.stdout.write(`\n══ ${lines.join('; ')}\n`);
  process.stdout.write(`══ slowest: ${slowest.map((r) => `${r.file} ${(r.ms / 1000).toFixed(1)} s`).join(', ')}\n`);
  for (const r of failed) process.stdout.write(`══ FAILED ${r.file}${r.timedOut ? ' (timed out)' : ''}: ${r.fail} failing test(s)\n`);
  const summary = `${results.length} files, ${pass} tests passed, ${fail} failed${failed.length > 0 ? ` (${failed.map((r) => r.file).join(', ')})` : ''}, in ${((performance.now() - started) / 1000).toFixed(1)} s`;
  process.stdout.write(`══ ${summary}\n`);
  return { ok: failed.length === 0, summary };
}

/** `n` busy loops, each its own process, until the returned function stops them. */
function busyLoops(n: number): () => void {
  const loops: ChildProcess[] = Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  const stop = (): void => {
    for (const p of loops) p.kill('SIGKILL');
  };
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }
  return stop;
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const files = selected(options.only);
  const stopLoad = busyLoops(options.load);
  const runs: string[] = [];
  let ok = true;
  try {
    for (let i = 1; i <= options.repeat; i += 1) {
      if (options.repeat > 1) process.stdout.write(`\n══ run ${i} of ${options.repeat}${options.load > 0 ? `, ${options.load} busy loops beside it` : ''}\n`);
      const result = await suite(options, files);
      ok &&= result.ok;
      runs.push(`run ${i}: ${result.ok ? 'passed' : 'FAILED'}: ${result.summary}`);
    }
  } finally {
    stopLoad();
  }
  if (options.repeat > 1) process.stdout.write(`\n${runs.map((r) => `══ ${r}`).join('\n')}\n`);
  return ok ? 0 : 1;
}

process.exitCode = await main();
