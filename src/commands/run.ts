// `roundload run`: load the workload, run it, print the summary, set the exit code.
import { loadWorkload, workloadSecrets, type FlagOverride, type Workload } from '../config/index.js';
import { planPhases, plannedRequests, laneCount, executeRun, parseShard, shardAgents, planReplay, type Shard, type ReplayPlan } from '../run/index.js';
import { colorWanted, formatSummary, progressDisplay, runVerdict, type ProgressPlan } from '../report/index.js';
import { UsageError } from '../errors.js';
import { guardTerminal } from '../util/index.js';
import { stopOnSignals } from './signals.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

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
  /** `--metrics-host H`: same as `--set client_metrics.host=H`. */
  metricsHost?: string;
  /** `--metrics-linger S`: same as `--set client_metrics.linger_s=S`. */
  metricsLinger?: string;
  /** `--remote-write URL`: same as `--set client_metrics.remote_write_url=URL`. */
  remoteWrite?: string;
  /** `--trace-url T`: same as `--set tracing.trace_url=T`. */
  traceUrl?: string;
  /** `--otlp-endpoint URL`: same as `--set tracing.otlp.endpoint=URL`. */
  otlpEndpoint?: string;
  /** `--otlp-traces-endpoint URL`: same as `--set tracing.otlp.traces_endpoint=URL`. */
  otlpTracesEndpoint?: string;
  /** `--otlp-protocol P`: same as `--set tracing.otlp.protocol=P`. */
  otlpProtocol?: string;
  /** `--via hop` (the built-in hop) or `--via URL` (a CONNECT proxy): sets `target.via`. */
  via?: string;
  /** `--quiet`: no progress lines, no live line, no announcements (the summary still says everything). */
  quiet?: boolean;
  /** `--progress 30s`: time between progress lines (default 10 s, 1 s on a terminal). */
  progress?: string;
  /** `--dashboard [host:]port`: the live dashboard. */
  dashboard?: string;
  /** `--dashboard-expose`: allow the dashboard on an address other than loopback. */
  dashboardExpose?: boolean;
  /** `--no-preflight` makes it false: no test request before the agents start. @default true */
  preflight?: boolean;
  /** `--replay trace.jsonl`: same as `--set replay.file=trace.jsonl`. */
  replay?: string;
  /** `--history FILE`: same as `--set results.history=FILE`. */
  history?: string;
}

/** `--progress 30s` (or seconds) in ms; at least 100 ms. */
export function progressIntervalMs(value: string | undefined): number | undefined {
  return value === undefined ? undefined : flag.duration('--progress', value, 100, 'use --quiet for no progress');
}

/** What the progress display knows before the run: requests planned, phases and their length. */
function progressPlan(workload: Workload, shard: Shard | null, replay: ReplayPlan | null): ProgressPlan {
  const phases = planPhases(workload);
  const schedule = phases[0]?.schedule;
  if (schedule !== undefined) return { plannedRequests: null, phaseMs: null, phases: schedule.stages.length, lengthMs: schedule.lengthMs };
  const replayed = replay === null || replay.settings.loop || workload.duration !== null ? null : replay.requests;
  return { plannedRequests: replay === null ? plannedRequests(workload, shard) : replayed, phaseMs: phases[0]?.durationMs ?? null, phases: phases.length };
}

/** The start line's account of an open-loop or staged run, e.g. `conversations of 8 rounds arriving at 4/s
 * (poisson, at most 256 at once) for 15s`, `stages s1-c4 (4 agents, 30 s), s2-c8 (…) × conversations of 8 rounds`;
 * null for other runs. */
export function describeSchedule(workload: Workload, shard: Shard | null = null): string | null {
  const schedule = planPhases(workload)[0]?.schedule;
  if (schedule === undefined) return null;
  const share = shard === null ? '' : ` (shard ${shard.index}/${shard.count}: ${schedule.kind === 'arrival' ? `1/${shard.count} of the arrivals` : 'its share of the agents'})`;
  const conversations = `conversations of ${roundsText(workload.agents.rounds)}`;
  const arrival = workload.agents.arrival;
  const how = schedule.kind === 'arrival' ? ` (${arrival?.distribution ?? 'poisson'}, at most ${laneCount(workload)} at once)` : '';
  if (workload.agents.stages === null) return `${conversations} arriving at ${arrival?.rate_per_s ?? 0}/s${how} for ${workload.duration}${share}`;
  const stages = schedule.stages
    .map((s) => `${s.name} (${s.from === s.to ? '' : `${s.from} → `}${s.to}${schedule.kind === 'arrival' ? '/s' : ' agents'}, ${(s.endMs - s.startMs) / 1000} s)`)
    .join(', ');
  return `${schedule.stages.length} stages, ${workload.agents.ramp} ramp: ${stages}${schedule.kind === 'arrival' ? ` × ${conversations} arriving${how}` : ` × ${conversations}`}${share}`;
}

/** `1 round`, `8 rounds`. */
const roundsText = (n: number): string => `${n} round${n === 1 ? '' : 's'}`;

/** `--via hop` or `--via http(s)://proxy:3128` as the `target.via` it stands for. */
export function viaValue(value: string): { kind: 'hop' } | { kind: 'connect'; url: string } {
  if (value.trim() === 'hop') return { kind: 'hop' };
  try {
    return { kind: 'connect', url: flag.httpUrl('--via', value).href };
  } catch {
    throw new UsageError(`--via must be "hop" (the built-in TLS hop) or the http:// or https:// URL of a CONNECT proxy, got "${value}"`);
  }
}

/** The run's flags that stand for a workload field, typed: each reported under its own name when the schema
 * refuses its value, merged with a `--set` on the same field or refused beside it (config/overrides.ts). */
export function runFlagOverrides(opts: RunCommandOptions): FlagOverride[] {
  const field = (name: string, path: string, value: unknown): FlagOverride => ({ flag: name, path: path.split('.'), value });
  return [
    ...(opts.duration === undefined ? [] : [field('--duration', 'duration', opts.duration.trim())]),
    ...(opts.metricsPort === undefined ? [] : [field('--metrics-port', 'client_metrics.port', flag.port('--metrics-port', opts.metricsPort))]),
    ...(opts.metricsHost === undefined ? [] : [field('--metrics-host', 'client_metrics.host', opts.metricsHost.trim())]),
    ...(opts.metricsLinger === undefined ? [] : [field('--metrics-linger', 'client_metrics.linger_s', flag.duration('--metrics-linger', opts.metricsLinger) / 1000)]),
    ...(opts.remoteWrite === undefined ? [] : [field('--remote-write', 'client_metrics.remote_write_url', opts.remoteWrite.trim())]),
    ...(opts.traceUrl === undefined ? [] : [field('--trace-url', 'tracing.trace_url', opts.traceUrl.trim())]),
    ...(opts.otlpEndpoint === undefined ? [] : [field('--otlp-endpoint', 'tracing.otlp.endpoint', opts.otlpEndpoint.trim())]),
    ...(opts.otlpTracesEndpoint === undefined ? [] : [field('--otlp-traces-endpoint', 'tracing.otlp.traces_endpoint', opts.otlpTracesEndpoint.trim())]),
    ...(opts.otlpProtocol === undefined ? [] : [field('--otlp-protocol', 'tracing.otlp.protocol', opts.otlpProtocol.trim())]),
    ...(opts.via === undefined ? [] : [field('--via', 'target.via', viaValue(opts.via))]),
    ...(opts.replay === undefined ? [] : [field('--replay', 'replay.file', opts.replay)]),
    ...(opts.history === undefined ? [] : [field('--history', 'results.history', opts.history)]),
  ];
}

/** Exit code of a finished run: 130 interrupted; 1 a threshold failed (by default: any hang, errors on more than
 * 1% of requests) or no request ended ok (always checked); else 0. A failed preflight throws (exit 3). */
export async function runCommand(file: string, opts: RunCommandOptions, argv: readonly string[]): Promise<number> {
  const agents = opts.agents === undefined ? undefined : flag.wholeNumber('--agents', opts.agents, 1);
  const rounds = opts.rounds === undefined ? undefined : flag.wholeNumber('--rounds', opts.rounds, 1);
  const shard = opts.shard === undefined ? null : parseShard(opts.shard);
  const intervalMs = progressIntervalMs(opts.progress);
  // The dashboard and the history are imported only when asked for: a run's start-up pays for neither.
  const dashboardAt = opts.dashboard === undefined ? null : (await import('../dashboard/index.js')).parseDashboardAddress(opts.dashboard, opts.dashboardExpose === true);
  const workload = await loadWorkload(file, {
    set: opts.set,
    flags: runFlagOverrides(opts),
    labels: opts.label,
    ...(agents === undefined ? {} : { agents }),
    ...(rounds === undefined ? {} : { rounds }),
    ...(opts.target === undefined ? {} : { target: opts.target }),
  });
  guardTerminal(workloadSecrets(workload));
  if (shard !== null && workload.replay !== null) throw new UsageError('--shard splits generated agents; a replay sends one recording and cannot be sharded');
  // The trace is read before anything starts: a bad one is a usage error (exit 2).
  const replay = workload.replay === null ? null : planReplay(workload.replay);
  const lanes = laneCount(workload);
  if (shard !== null && shardAgents(lanes, shard).length === 0) {
    const what =
      workload.agents.arrival !== null || planPhases(workload)[0]?.schedule?.kind === 'arrival'
        ? 'agents.arrival.max_active'
        : planPhases(workload)[0]?.schedule !== undefined
          ? 'the largest stage count'
          : 'agents.count';
    throw new UsageError(`--shard ${shard.index}/${shard.count} would run no agents: ${what} is ${lanes}; use at most ${lanes} shards`);
  }
  // Opened first: a taken port fails the command before anything else starts.
  const live = dashboardAt === null ? null : await import('./dashboard.js');
  const dashboard = live === null || dashboardAt === null ? null : await live.openDashboard(dashboardAt, workload, shard, logLine);
  const stop = new AbortController();
  const removeSignalHandlers = stopOnSignals(stop, (signal) => `${signal}: stopping (in-flight requests get a short grace, then results are written; ${signal} again to exit at once)`);
  // On a terminal a live line; piped (CI logs, tee, cron) a line every interval. Both subscribe to the events;
  // the run's own notices go above the live line.
  const progress = opts.quiet === true ? null : progressDisplay(process.stderr, { plan: progressPlan(workload, shard, replay), intervalMs });
  const log = (line: string): void => {
    if (progress === null) logLine(line);
    else progress.print(line);
  };
  // After the run, a first Ctrl-C stops the wait for open dashboard pages.
  if (dashboard !== null) stop.signal.addEventListener('abort', () => void dashboard.close(), { once: true });
  try {
    const share = shard === null ? '' : ` (shard ${shard.index}/${shard.count}: ${shardAgents(workload.agents.count, shard).length} of them)`;
    const length = workload.duration === null ? roundsText(workload.agents.rounds) : `conversations of ${roundsText(workload.agents.rounds)} for ${workload.duration}`;
    const sweep = workload.sweep;
    const scheduled = describeSchedule(workload, shard);
    if (replay !== null) {
      const r = replay.settings;
      log(
        `roundload: ${workload.name}: replaying ${replay.file}: ${replay.conversations.length} conversations, ${replay.requests} requests on ${r.connection === 'as-recorded' ? `${replay.connections.length} connections as recorded` : r.connection === 'pool' ? 'a shared pool' : 'a connection per conversation'}${r.speed === 1 ? '' : `, ${r.speed}× speed`}${r.loop ? ', looping' : ''} → ${workload.target.url ?? 'embedded engine'}`,
      );
      if (replay.skipped > 0) log(`the trace's torn last line was skipped (a recorder killed mid-write)`);
      if (replay.incomplete !== null)
        log(
          `the trace is INCOMPLETE: its recorder stopped recording at ${(replay.incomplete.atMs / 1000).toFixed(1)} s (${replay.incomplete.reason}); ${replay.incomplete.requestsNotRecorded} requests it forwarded are not replayed`,
        );
    } else if (scheduled !== null) log(`roundload: ${workload.name}: ${scheduled} → ${workload.target.url ?? 'embedded engine'}`);
    else {
      const who =
        sweep === null
          ? `${workload.agents.count} agents${share}`
          : `sweep of ${sweep.agents.join(' → ')} agents (phases ${planPhases(workload)
              .map((p) => p.name)
              .join(', ')}, ${sweep.warmup_s} s warm-up each${sweep.phase_duration === null ? '' : `, ${sweep.phase_duration} each`})`;
      const each = sweep !== null && sweep.phase_duration !== null && workload.duration === null ? `conversations of ${roundsText(workload.agents.rounds)}` : length;
      log(`roundload: ${workload.name}: ${who} × ${each} → ${workload.target.url ?? 'embedded engine'}`);
    }
    const result = await executeRun({
      workload,
      out: opts.out,
      argv,
      signal: stop.signal,
      log,
      shard,
      replay,
      preflight: opts.preflight !== false,
      ...(progress === null && dashboard === null
        ? {}
        : {
            onEvent: (e) => {
              progress?.onEvent(e);
              dashboard?.onEvent(e);
            },
          }),
    }).finally(() => progress?.stop());
    const verdict = runVerdict(result.summary);
    if (opts.json === true) process.stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
    else process.stdout.write(`${formatSummary(result.summary, result.dir, { verdict, color: colorWanted(process.stdout) })}\n`);
    if (dashboard !== null) await live?.finishDashboard(dashboard, result);
    // After summary.json is written; a history that cannot take the run is a warning, the exit code stands.
    if (workload.results.history !== null) await (await import('./history.js')).appendToHistory(workload.results.history, result.dir, logLine);
    return verdict.exitCode;
  } finally {
    removeSignalHandlers();
    await dashboard?.close();
  }
}
