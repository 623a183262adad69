// `npm run bench` runs the benchmark suite (client cost, timing fidelity, monitor cost, growth: about five
// minutes); `npm run bench -- <name> [args…]` runs one benchmark by name; `npm run bench -- list` lists them.
// Benchmarks print their figures; the ones with a pass/fail claim (soak: flat memory) also set the exit code.
import { soakBench } from './soak.js';
import { suite } from './suite.js';
import { clientCostBench, DEFAULT_REPEAT } from './client-cost.js';
import { monitorCostBench } from './monitor-cost.js';
import { growthBench } from './growth.js';
import { writerKillBench } from './writer-kill.js';
import { validateBench } from './validate.js';
import { recordOverheadBench } from './record-overhead.js';
import { profileBench } from './profile.js';
import { abSequentialBench } from './ab-sequential.js';
import { abPlanBench } from './ab-plan.js';
import { startupBench } from './startup.js';
import { otelCostBench } from './otel-cost.js';
import { trendNightlyBench } from './trend-nightly.js';
import { trendPowerBench } from './trend-power.js';
import { diagnosisBench } from './diagnosis.js';

/** `client [agents…] [--repeat N]`. */
async function clientCommand(args: string[]): Promise<number> {
  const at = args.indexOf('--repeat');
  const repeat = at === -1 ? DEFAULT_REPEAT : Number(args[at + 1]);
  const levels = (at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)]).map(Number);
  if (!Number.isInteger(repeat) || repeat < 1 || levels.some((n) => !Number.isInteger(n) || n < 1)) {
    process.stderr.write('usage: npm run bench -- client [agents…] [--repeat N]\n');
    return 2;
  }
  await clientCostBench(levels.length > 0 ? levels : [1, 16, 96, 1024], repeat);
  return 0;
}

const BENCHES: Record<string, { about: string; run: (args: string[]) => Promise<number> }> = {
  suite: { about: 'client, monitor and growth, about 5 minutes (`--quick`: fewer agent levels)', run: async (args) => (await suite(args), 0) },
  client: {
    about: 'SSE events per CPU-second vs a bare undici+SSE loop at 1/16/96/1024 agents, batched and paced, N alternated rounds a level (`client [agents…] [--repeat N]`, default 5); TTFT fidelity',
    run: clientCommand,
  },
  monitor: { about: 'CPU share and start jitter of scraping 3 targets every 100 ms', run: async () => (await monitorCostBench(), 0) },
  growth: { about: 'request body cost per round as the conversation grows to 32k tokens', run: () => Promise.resolve((growthBench(), 0)) },
  kill: { about: 'SIGKILL a run mid-way N times (default 10): answers the server completed vs records on disk, the lost window in ms', run: writerKillBench },
  validate: { about: 'validation time of large workload files (40k keys, 1 MiB) beside tokenizing them', run: () => Promise.resolve((validateBench(), 0)) },
  record: {
    about: 'latency roundload record adds: streaming requests alternately direct and through the recorder (TTFT, e2e)',
    run: async (args) => (await recordOverheadBench(args[0] === undefined ? undefined : Number(args[0])), 0),
  },
  profile: {
    about: "CPU profiles of roundload and the bare loop over the client bench's measured span (`profile [agents] [batched|paced]`): busy time per event by where it went",
    run: profileBench,
  },
  otel: {
    about: "what exporting roundload's spans over OTLP costs: 1,000 paced agents (`otel [agents] [--repeat N]`) with the export off and on, alternated; CPU per SSE event, on/off at most 1.05",
    run: otelCostBench,
  },
  startup: {
    about: 'what a 1-agent, 1-round run against an external engine costs from the built CLI (CPU and wall, median of 7), beside node -e 0 and --version; needs `npm run build` first',
    run: startupBench,
  },
  ab: {
    about: "sequential A/B on the embedded deployment (c64, c96), B faster at decode by --effect PCT (default 5.7), --runs N ab runs (default 5): each phase's decode call, pairs and minutes",
    run: abSequentialBench,
  },
  'ab-plan': {
    about:
      "ab --plan's forecast of the pairs a figure needs against the stopping rule run on simulated pairs (A/A → equivalent, +2×min_effect → better; σ 1-5%): within a factor of 1.5, about 30 s (`ab-plan [--sequences N]`)",
    run: (args) => Promise.resolve(abPlanBench(args)),
  },
  trend: {
    about:
      '12 nightly runs on the embedded deployment, decode 10% slower from night 8, and 12 A/A nights: trend --fail-on regression must flag night 8 (exit 1) and nothing in A/A (exit 0); about 2 minutes (`trend [nights] [--step-at N]`)',
    run: trendNightlyBench,
  },
  'trend-power': {
    about:
      "trend's power and false alarms on simulated nightly histories (10% worse at 3% noise, independent and AR(1) ρ 0.6 nights, A/A, 5% at 2%): issue 43's targets, the target cells again through the CLI on a CSV, and the first target's Neyman–Pearson ceiling; under a minute (`trend-power [--histories N]`, default 2,000 a cell)",
    run: (args) => Promise.resolve(trendPowerBench(args)),
  },
  diagnosis: {
    about:
      'the diagnosis scored on real parts: ≥ 30 fault scenarios (PD queues pinned, engine and proxy faults, nginx/HAProxy/hop/CONNECT, netns blackholes, a starved client, healthy runs) × 3 runs; bench/diagnosis-matrix.json and a confusion matrix (`diagnosis [--quick] [--runs N] [--only SUBSTRING]`; --quick: 1 run each, under 10 minutes)',
    run: diagnosisBench,
  },
  soak: { about: '≥ 200k requests on the embedded engine with zero delays; RSS at start, middle and end (end within 10% of middle); about 5 minutes', run: soakBench },
};

const [name = 'suite', ...args] = process.argv.slice(2);
const bench = BENCHES[name];
if (bench === undefined) {
  process.stderr.write(
    `${name === 'list' ? '' : `unknown benchmark "${name}"\n`}usage: npm run bench [-- <name> [args]]\n${Object.entries(BENCHES)
      .map(([n, b]) => `  ${n.padEnd(8)} ${b.about}`)
      .join('\n')}\n`,
  );
  process.exitCode = name === 'list' ? 0 : 2;
} else {
  process.exitCode = await bench.run(args);
}
