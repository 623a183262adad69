// One run of a fault-matrix scenario: a short multi-agent run against real parts (in this process, the
// client's own health pinned quiet as the e2e tests pin it, so a loaded machine is not the verdict), or the CLI
// as its own process (the starved-client scenario, whose verdict is the client's health); faults acted on the
// parts at set times after the first completed request. Bounded by the scenario's abort signal.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseWorkload } from '../src/config/index.js';
import { readSummary } from '../src/results/index.js';
import { executeRun } from '../src/run/index.js';
import type { Summary } from '../src/analysis/index.js';
import type { RunEvent } from '../src/types/index.js';
import { quietClient } from '../test/helpers/quiet-client.js';
import { spawnCli, type MonitorTarget, type Proc } from '../test/helpers/procs.js';
import type { Scope } from './diagnosis-parts.js';

/** What to do to the parts, in ms after the run's first completed request. */
export type Acts = [number, () => void | Promise<void>][];

export interface RunSpec {
  /** The engine as the client reaches it (canaries' direct leg), and what to scrape. */
  engine: { url: string; targets: readonly MonitorTarget[] };
  /** `target.via` as YAML flow text (`{kind: tls-proxy, url: "…"}`), or null: straight to the engine. */
  via?: string | null;
  caFile?: string | null;
  /** `--set` overrides of the base workload below. */
  set?: readonly string[];
  acts?: Acts;
}

/** Four agents for 4 s with tight deadlines (a stuck request is a hang within a second), scrapes every 200 ms
 * and a canary on each leg every 250 ms: the e2e tests' real-parts workload. */
function workloadYaml(spec: RunSpec): string {
  const targets = spec.engine.targets.map((x) => `{name: ${x.name}, url: "${x.url}"}`).join(', ');
  const via = spec.via === undefined || spec.via === null ? '' : `, via: ${spec.via}`;
  const tls = spec.caFile === undefined || spec.caFile === null ? '' : `, tls: {ca: "${spec.caFile}"}`;
  return `name: matrix
target: {url: "${spec.engine.url}"${via}${tls}}
agents: {count: 4, rounds: 1000, think_time_ms: 50}
duration: 4s
conversation: {max_tokens: 24, system_prompt_tokens: 200, first_user_tokens: 50, tool_result_tokens: 50, tool_result_growth_tokens: 10}
watchdog: {connect_ms: 1000, headers_ms: 800, first_token_ms: 1000, stall_ms: 800, total_ms: 4000}
monitor: {interval_ms: 200, timeout_ms: 400, canary_interval_s: 0.25, canary_timeout_ms: 800, targets: [${targets}]}
thresholds: {hangs: null}
`;
}

/** The run in this process; resolves with its summary. No preflight: a path broken from the start is a
 * scenario here, not a reason to stop before the agents go. */
export async function runInProcess(scope: Scope, spec: RunSpec, signal: AbortSignal): Promise<Summary> {
  const dir = join(scope.tempDir(), 'run');
  const workload = parseWorkload(workloadYaml(spec), 'matrix.yaml', { set: [...(spec.set ?? [])] });
  const timers: NodeJS.Timeout[] = [];
  const pending: Promise<unknown>[] = [];
  let started = false;
  scope.after(() => timers.forEach((timer) => clearTimeout(timer)));
  await executeRun({
    workload,
    out: dir,
    signal,
    preflight: false,
    clientSample: quietClient,
    onEvent: (e: RunEvent) => {
      if (started || e.kind !== 'request') return;
      started = true;
      for (const [afterMs, act] of spec.acts ?? []) timers.push(setTimeout(() => pending.push(Promise.resolve().then(act)), afterMs));
    },
  });
  timers.forEach((timer) => clearTimeout(timer));
  await Promise.allSettled(pending);
  return readSummary(dir);
}

/** `roundload run` as its own process (so it alone can be starved, its own client sampler measuring it);
 * `during` acts on its pid once its canaries run. The busy client of the host-starved e2e test: 16 agents
 * sending 12 KB tool results back to back, so the starvation catches it mid-work. */
export async function runAsChild(scope: Scope, spec: RunSpec, signal: AbortSignal, during: (pid: number) => Promise<void>): Promise<Summary> {
  const base = scope.tempDir();
  const dir = join(base, 'run');
  const file = join(base, 'starved.yaml');
  const targets = spec.engine.targets.map((x) => `{name: ${x.name}, url: "${x.url}"}`).join(', ');
  writeFileSync(
    file,
    `name: starved
target: {url: "${spec.engine.url}"${spec.via === undefined || spec.via === null ? '' : `, via: ${spec.via}`}}
agents: {count: 16, rounds: 1000, think_time_ms: 20}
duration: 6s
conversation: {max_tokens: 8, tools: none, system_prompt_tokens: 200, first_user_tokens: 50, tool_result_tokens: 3000, tool_result_growth_tokens: 0, max_context_tokens: 30000}
watchdog: {connect_ms: 600, headers_ms: 600, first_token_ms: 800, stall_ms: 600, total_ms: 4000}
monitor: {interval_ms: 200, timeout_ms: 400, canary_interval_s: 0.25, canary_timeout_ms: 800, targets: [${targets}]}
thresholds: {hangs: null}
`,
  );
  const child: Proc = spawnCli(scope.context(), ['run', file, '--out', dir, '--no-preflight']);
  const stop = (): void => child.signal('SIGKILL');
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (let i = 0; i < 2400 && !/canaries every/.test(child.stderr) && !child.exited; i += 1) await sleep(25);
    if (child.exited) throw new Error(`the run ended early: ${child.stderr.slice(-500)}`);
    await during(child.pid);
    for (let i = 0; i < 2400 && !child.exited; i += 1) await sleep(25);
    if (!child.exited) throw new Error('the run did not end');
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return readSummary(dir);
}
