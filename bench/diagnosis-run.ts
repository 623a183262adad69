// One run of a fault-matrix scenario: a short multi-agent run against real parts (in this process, the
// client's own health pinned quiet as the e2e tests pin it, so a loaded machine is not the verdict), or the CLI
// as its own process (the starved-client scenario, whose verdict is the client's health); faults acted on the
// parts at set times after the first completed request. Bounded by the scenario's abort signal.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readSummary } from '../src/results/index.js';
import type { Summary } from '../src/analysis/index.js';
import { realPartsWorkload, runWithActs, type Acts, type RealPartsSpec, type RunOptions } from '../test/helpers/real-parts.js';
import { spawnCli, type Proc } from '../test/helpers/procs.js';
import type { Scope } from './diagnosis-parts.js';

export type { Acts } from '../test/helpers/real-parts.js';

export interface RunSpec extends Omit<RealPartsSpec, 'duration' | 'watchdog' | 'canary' | 'scraped'> {
  acts?: Acts;
  /** What the client's sampler reports. @default its health pinned quiet */
  clientSample?: RunOptions['clientSample'];
}

/** The run in this process (the e2e tests' real-parts workload, test/helpers/real-parts.ts); resolves with its
 * summary. No preflight: a path broken from the start is a scenario here, not a reason to stop before the
 * agents go. */
export async function runInProcess(scope: Scope, spec: RunSpec, signal: AbortSignal): Promise<Summary> {
  const dir = join(scope.tempDir(), 'run');
  return runWithActs(realPartsWorkload('matrix', spec), dir, {
    signal,
    ...(spec.acts === undefined ? {} : { acts: spec.acts }),
    ...(spec.clientSample === undefined ? {} : { clientSample: spec.clientSample }),
  });
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
