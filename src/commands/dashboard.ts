// `roundload run --dashboard [host:]port`: starts the live dashboard before the run, feeds it the run's
// events, and at the end points its pages to the written report.html and closes it (bounded).
import { existsSync } from 'node:fs';
import { workloadSecrets, type Workload } from '../config/index.js';
import { startDashboard, type Dashboard, type DashboardAddress, type DashboardOptions } from '../dashboard/index.js';
import { planPhases, plannedRequests, type Shard } from '../run/index.js';
import { resultPath } from '../results/index.js';
import { SecretScrubber } from '../util/index.js';

/** Starts the server (`address` from parseDashboardAddress, checked before anything started). */
export async function openDashboard(
  address: DashboardAddress,
  workload: Workload,
  shard: Shard | null,
  log: (line: string) => void,
  timing: Pick<DashboardOptions, 'tickMs' | 'lingerMs'> = {},
): Promise<Dashboard> {
  const phases = planPhases(workload);
  // The page and its messages pass the run's scrubber, as every file of the run does.
  const scrubber = new SecretScrubber(workloadSecrets(workload));
  const dashboard = await startDashboard({
    ...address,
    ...timing,
    scrub: (text) => scrubber.text(text),
    plan: {
      name: workload.name,
      target: workload.target.url ?? 'the embedded engine',
      plannedRequests: plannedRequests(workload, shard),
      plannedMs: phases.every((p) => p.durationMs !== null) ? phases.reduce((sum, p) => sum + p.durationMs!, 0) : null,
      pinAfterS: workload.monitor.pin_after_s,
      traceUrl: workload.tracing.trace_url,
    },
  });
  log(`roundload: live dashboard on ${dashboard.url} (it becomes report.html when the run ends)`);
  return dashboard;
}

/** Pages switch to the run's report.html (when it was written); resolves once the server closed. */
export async function finishDashboard(dashboard: Dashboard, run: { dir: string; status: string }): Promise<void> {
  const report = resultPath(run.dir, 'report');
  await dashboard.finish({ path: existsSync(report) ? report : null, status: run.status });
}
