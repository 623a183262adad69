// The start-up benchmark (issues 26, 35): what a 1-agent, 1-round run against an external engine costs, from
// the shipped CLI (`node dist/bin/cli.js`, the bundle `npm start` and the bin run), beside `node -e 0` and
// `roundload --version`. Each command runs `--repeat` times (default 7) in a fresh process; the process's own
// CPU time (every thread: user + system, process.cpuUsage at exit) and wall time since Node started are
// read at its exit (bench/cpu-at-exit.mjs). `--cli PATH`, given more than once, alternates the CLIs run by
// run (A B A B …: another build, say a tree before a change). Prints medians and the spread. Asserts nothing.
//
//   npm run build && npm run bench -- startup [--repeat N] [--cli dist/bin/cli.js --cli ../before/dist/src/cli.js]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { percentile, printTable, startEngineProcess } from './lib.js';

const ROOT = new URL('../', import.meta.url).pathname;

interface Cost {
  cpu_ms: number;
  wall_ms: number;
}

function measure(args: string[]): Promise<Cost> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(ROOT, 'bench/cpu-at-exit.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /CPU-AT-EXIT (\{.*\})/.exec(stderr);
      if (m === null || code !== 0) reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`));
      else resolve(JSON.parse(m[1]!) as Cost);
    });
  });
}

export async function startupBench(args: string[]): Promise<number> {
  const at = args.indexOf('--repeat');
  const repeat = at === -1 ? 7 : Number(args[at + 1]);
  const given = args.flatMap((a, i) => (a === '--cli' && args[i + 1] !== undefined ? [args[i + 1]!] : []));
  const clis = given.length > 0 ? given : ['dist/bin/cli.js'];
  const missing = clis.find((cli) => !existsSync(resolve(ROOT, cli)));
  if (missing !== undefined) {
    process.stderr.write(`startup: ${missing} is missing; run \`npm run build\` first\n`);
    return 2;
  }
  const engine = await startEngineProcess({ decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 8 });
  const dir = mkdtempSync(join(tmpdir(), 'roundload-startup-'));
  const workload = join(dir, 'one.yaml');
  writeFileSync(workload, `name: one\ntarget: {url: "${engine.url}"}\nagents: {count: 1, rounds: 1, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 8}\n`);
  const named = (cli: string, name: string): string => (clis.length > 1 ? `${name} [${cli}]` : name);
  const cases: [string, (i: number) => string[]][] = [['node -e 0', () => ['-e', '0']]];
  for (const [name, argv] of commands(workload, dir)) for (const [k, cli] of clis.entries()) cases.push([named(cli, name), (i) => [resolve(ROOT, cli), ...argv(`${k}-${i}`)]]);
  const costs = new Map<string, Cost[]>(cases.map(([name]) => [name, []]));
  try {
    // Run by run across the CLIs (A B, then B A, …), so a change in the machine's load falls on both alike.
    for (let i = 0; i < repeat; i += 1) for (const [name, argv] of i % 2 === 0 ? cases : [...cases].reverse()) costs.get(name)!.push(await measure(argv(i)));
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = cases.map(([name]) => row(name, costs.get(name)!));
  printTable(`start-up, ${repeat} runs each (median; range)`, ['command', 'CPU s', 'range', 'wall s', 'range'], rows);
  return 0;
}

function commands(workload: string, dir: string): [string, (i: string) => string[]][] {
  return [
    ['roundload --version', () => ['--version']],
    ['roundload validate one.yaml', () => ['validate', workload]],
    ['run: 1 agent × 1 round', (i) => ['run', workload, '--quiet', '--out', join(dir, `run-${i}`)]],
    ['run, no preflight', (i) => ['run', workload, '--quiet', '--no-preflight', '--out', join(dir, `np-${i}`)]],
  ];
}

function row(name: string, costs: Cost[]): (string | number)[] {
  const cpu = costs.map((c) => c.cpu_ms);
  const wall = costs.map((c) => c.wall_ms);
  const range = (values: number[]): string => `${(Math.min(...values) / 1000).toFixed(2)}–${(Math.max(...values) / 1000).toFixed(2)}`;
  return [name, percentile(cpu, 50) / 1000, range(cpu), percentile(wall, 50) / 1000, range(wall)];
}
