// The start-up benchmark (issue 26): what a 1-agent, 1-round run against an external engine costs, from the
// built CLI (`node dist/src/cli.js`, as `npm start` and a CI job run it), beside `node -e 0` and
// `roundload --version`. Each command runs `--repeat` times (default 7) in a fresh process; the process's own
// CPU time (every thread: user + system, process.cpuUsage at exit) and wall time since Node started are
// read at its exit (bench/cpu-at-exit.mjs). Prints medians and the spread. Asserts nothing.
//
//   npm run build && npm run bench -- startup [--repeat N]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  if (!existsSync(join(ROOT, 'dist/src/cli.js'))) {
    process.stderr.write('startup: dist/src/cli.js is missing; run `npm run build` first\n');
    return 2;
  }
  const engine = await startEngineProcess({ decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 8 });
  const dir = mkdtempSync(join(tmpdir(), 'roundload-startup-'));
  const workload = join(dir, 'one.yaml');
  writeFileSync(workload, `name: one\ntarget: {url: "${engine.url}"}\nagents: {count: 1, rounds: 1, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 8}\n`);
  const cases: [string, (i: number) => string[]][] = [
    ['node -e 0', () => ['-e', '0']],
    ['roundload --version', () => ['dist/src/cli.js', '--version']],
    ['roundload validate one.yaml', () => ['dist/src/cli.js', 'validate', workload]],
    ['run: 1 agent × 1 round', (i) => ['dist/src/cli.js', 'run', workload, '--quiet', '--out', join(dir, `run-${i}`)]],
    ['run, no preflight', (i) => ['dist/src/cli.js', 'run', workload, '--quiet', '--no-preflight', '--out', join(dir, `np-${i}`)]],
  ];
  const rows: (string | number)[][] = [];
  try {
    for (const [name, argv] of cases) {
      const costs: Cost[] = [];
      for (let i = 0; i < repeat; i += 1) costs.push(await measure(argv(i)));
      const cpu = costs.map((c) => c.cpu_ms);
      const wall = costs.map((c) => c.wall_ms);
      rows.push([
        name,
        percentile(cpu, 50) / 1000,
        `${(Math.min(...cpu) / 1000).toFixed(2)}–${(Math.max(...cpu) / 1000).toFixed(2)}`,
        percentile(wall, 50) / 1000,
        `${(Math.min(...wall) / 1000).toFixed(2)}–${(Math.max(...wall) / 1000).toFixed(2)}`,
      ]);
    }
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(`start-up, ${repeat} runs each (median; range)`, ['command', 'CPU s', 'range', 'wall s', 'range'], rows);
  return 0;
}
