// `roundload run`: load the workload, run it, print the summary, set the exit code.
import { loadWorkload } from '../config/index.js';
import { planPhases, plannedRequests, executeRun, parseShard, shardAgents } from '../run/index.js';
import { formatSummary, progressLine } from '../report/index.js';
import { UsageError } from '../errors.js';
import { stopOnSignals } from './signals.js';
import { finishDashboard, openDashboard } from './dashboard.js';
import { parseDashboardAddress } from '../dashboard/index.js';

export interface RunCommandOptions {
  target?: string;
  agents?: string;
  rounds?: string;
  out?: string;
  label: string[];
  set: string[];
  json?: boolean;
  /** `--duration 8h`: same as `--set duration=8h`. */
  duration?: string;
  /** `--shard i/N`. */
  shard?: string;
  /** `--metrics-port N`: same as `--set client_metrics.port=N`. */
  metricsPort?: string;
  /** `--via hop` (the built-in hop) or `--via URL` (a CONNECT proxy): sets `target.via`. */
  via?: string;
  /** `--dashboard [host:]port`: the live dashboard. */
  dashboard?: string;
  /** `--dashboard-expose`: allow the dashboard on an address other than loopback. */
  dashboardExpose?: boolean;
}

/** `--via hop` or `--via http(s)://proxy:3128` as the `target.via` override it stands for. */
export function viaOverride(value: string): string {
  const v = value.trim();
  if (v === 'hop') return 'target.via={kind: hop}';
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {
    // not a URL: the message below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`--via must be "hop" (the built-in TLS hop) or the http:// or https:// URL of a CONNECT proxy, got "${value}"`);
  }
  return `target.via={kind: connect, url: ${JSON.stringify(url.href)}}`;
}

function positive(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number ≥ 1, got "${value}"`);
  return n;
}

/** Exit code of a finished run: 130 interrupted, 1 a threshold failed (by default: any hang), else 0. */
export async function runCommand(file: string, opts: RunCommandOptions, argv: readonly string[]): Promise<number> {
  const agents = positive('--agents', opts.agents);
  const rounds = positive('--rounds', opts.rounds);
  const shard = opts.shard === undefined ? null : parseShard(opts.shard);
  const dashboardAt = opts.dashboard === undefined ? null : parseDashboardAddress(opts.dashboard, opts.dashboardExpose === true);
  if (opts.metricsPort !== undefined && !/^\d{1,5}$/.test(opts.metricsPort.trim())) throw new UsageError(`--metrics-port must be a port number (0 picks a free one), got "${opts.metricsPort}"`);
  // Shortcuts are `--set`s applied last, so they win and the schema validates them like the file.
  const set = [
    ...opts.set,
    ...(opts.duration === undefined ? [] : [`duration=${opts.duration}`]),
    ...(opts.metricsPort === undefined ? [] : [`client_metrics.port=${opts.metricsPort.trim()}`]),
    ...(opts.via === undefined ? [] : [viaOverride(opts.via)]),
  ];
  const workload = await loadWorkload(file, {
    set,
    labels: opts.label,
    ...(agents === undefined ? {} : { agents }),
    ...(rounds === undefined ? {} : { rounds }),
    ...(opts.target === undefined ? {} : { target: opts.target }),
  });
  if (shard !== null && shardAgents(workload.agents.count, shard).length === 0) {
    throw new UsageError(`--shard ${shard.index}/${shard.count} would run no agents: agents.count is ${workload.agents.count}; use at most ${workload.agents.count} shards`);
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dashboard = dashboardAt === null ? null : await openDashboard(dashboardAt, workload, shard, log);
  const stop = new AbortController();
  // After the run, a first Ctrl-C stops the wait for open dashboard pages.
  if (dashboard !== null) stop.signal.addEventListener('abort', () => void dashboard.close(), { once: true });
  const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping (in-flight requests get a short grace, then results are written; ${signal} again to exit at once)`);
  try {
    const share = shard === null ? '' : ` (shard ${shard.index}/${shard.count}: ${shardAgents(workload.agents.count, shard).length} of them)`;
    const length = workload.duration === null ? `${workload.agents.rounds} rounds` : `conversations of ${workload.agents.rounds} rounds for ${workload.duration}`;
    const sweep = workload.sweep;
    const who = sweep === null ? `${workload.agents.count} agents${share}` : `sweep of ${sweep.agents.join(' → ')} agents (phases ${planPhases(workload).map((p) => p.name).join(', ')}, ${sweep.warmup_s} s warm-up each${sweep.phase_duration === null ? '' : `, ${sweep.phase_duration} each`})`;
    const each = sweep !== null && sweep.phase_duration !== null && workload.duration === null ? `conversations of ${workload.agents.rounds} rounds` : length;
    log(`roundload: ${workload.name}: ${who} × ${each} → ${workload.target.url ?? 'embedded engine'}`);
    // The live line only on a terminal: piped stderr (CI logs) gets plain notices.
    const planned = plannedRequests(workload, shard);
    const progress = process.stderr.isTTY ? progressLine(process.stderr, planned) : null;
    const result = await executeRun({
      workload,
      out: opts.out,
      argv,
      signal: stop.signal,
      log,
      shard,
      ...(progress === null && dashboard === null
        ? {}
        : {
            onEvent: (e) => {
              progress?.onEvent(e);
              dashboard?.onEvent(e);
            },
          }),
    }).finally(() => progress?.stop());
    if (opts.json === true) process.stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
    else process.stdout.write(`${formatSummary(result.summary, result.dir)}\n`);
    if (dashboard !== null) await finishDashboard(dashboard, result);
    if (result.status === 'interrupted') return 130;
    return result.summary.thresholds.ok ? 0 : 1;
  } finally {
    removeSignalHandlers();
    await dashboard?.close();
  }
}
