// One run, start to end: results folder, embedded engine when no target, transport, the preflight, agents,
// client sampling, and the files at the end. Everything is bounded in time; every outcome is written; whatever
// throws, what the run started is closed.
import { hostname, cpus, platform } from 'node:os';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import type { Workload } from '../config/index.js';
import { redactWorkload, workloadSecrets } from '../config/index.js';
import { startEngineThread, engineStartLine, type EngineThreadHandle } from '../engine/index.js';
import { ConnectionTracker } from '../transport/index.js';
import { SummaryBuilder, plannedLengthS, ReplayComparison, type Summary } from '../analysis/index.js';
import { recordedFigures } from '../trace/index.js';
import { LatestGauges } from '../monitor/index.js';
import { createRunFolder, resultPath, writeJsonAtomic, writeJsonLastResort } from '../results/index.js';
import { writeReports } from '../report/index.js';
import { metricsExportWanted, startMetricsExport, type MetricsExport } from '../export/index.js';
import { RESULTS_SCHEMA_VERSION, type ClientSampleEvent, type PathKind, type RunEvent } from '../types/index.js';
import { ResultsError, ServerStartError } from '../errors.js';
import { VERSION } from '../version.js';
import { SecretScrubber } from '../util/index.js';
import { RunBus } from './bus.js';
import { EventSinks, type WriterTuning } from './sinks.js';
import { ClientSampler } from './client-sampler.js';
import { servicesFor } from './services.js';
import type { RunContext } from './service.js';
import { openRoute, type Route } from './route.js';
import { planPhases, plannedRequests, laneCount, runPhase } from './phase.js';
import { phaseContext, runTransport } from './context.js';
import { runPreflight, preflightFailure, preflightLine } from './preflight.js';
import { shardAgents, type Shard } from './shard.js';
import { runInWorkers, workerCount } from './workers.js';
import { planReplay, replayLanes, runReplayPhase, type ReplayPlan } from './replay.js';
import { replayCalibration } from './replay-tokenize.js';
import { requestHeaders } from './headers.js';

export type RunStatus = 'completed' | 'interrupted' | 'failed';

export interface RunOptions {
  workload: Workload;
  /** Exact results folder (`--out`); default `results/<stamp>-<name>/`. */
  out?: string | undefined;
  /** Parent of default results folders. @default "results" */
  resultsRoot?: string;
  argv?: readonly string[];
  /** Aborting it stops the run: no new requests, in-flight ones end, everything is written. */
  signal?: AbortSignal;
  /** Sees every event (the progress line subscribes here). */
  onEvent?: (event: RunEvent) => void;
  /** Progress and notices, for stderr. */
  log?: (line: string) => void;
  /** Run only this shard's agents (`--shard i/N`); recorded in run.json for `roundload merge`. */
  shard?: Shard | null;
  /** Send the preflight chat request (and read the model list) before the agents start; a failure ends the
   * run with `PreflightError` / `TargetUnreachableError` (exit 3). Skipped for the embedded engine reached
   * directly. `--no-preflight` sets it false. @default true */
  preflight?: boolean;
  /** The results writer's queue bound and test hooks (a slow disk). */
  writer?: WriterTuning;
  /** The replay, already planned from `workload.replay` (the command reads the trace first); planned here
   * when absent. */
  replay?: ReplayPlan | null;
  /** Test hook: what becomes of each client sample of the main thread before it is recorded. A test of the
   * server-side verdicts pins the client's own health with it, so a loaded test machine is not the culprit. */
  clientSample?: (measured: ClientSampleEvent) => ClientSampleEvent;
}

export interface RunResult {
  dir: string;
  status: RunStatus;
  summary: Summary;
}

/** Grace for in-flight requests after a stop before their sockets are destroyed. */
const STOP_GRACE_MS = 2000;
const CLIENT_SAMPLE_MS = 1000;
/** How long the agents wait for the results writer thread to start before they go anyway (their lines queue). */
const WRITER_START_MS = 5_000;
/** How long the end of a run waits for the results writer to drain: a stalled volume cannot hold it for ever;
 * a run stopped by a signal (a pod being killed, say) waits less. */
const DRAIN_MS = 120_000;
const DRAIN_AFTER_SIGNAL_MS = 15_000;

/**
 * What a run has started and must stop, newest first: whatever throws, at any step, `run()` (in a `finally`)
 * closes each once, bounded by the closer itself, logging (never throwing) what did not close cleanly.
 */
class Started {
  readonly #closers: { name: string; close: () => unknown }[] = [];
  readonly #log: (line: string) => void;

  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  add(name: string, close: () => unknown): void {
    this.#closers.push({ name, close });
  }

  /** Closes everything added so far, newest first; closers added later are left for the next call. */
  async run(): Promise<void> {
    while (this.#closers.length > 0) {
      const { name, close } = this.#closers.pop()!;
      try {
        await close();
      } catch (error) {
        this.#log(`${name} did not stop cleanly: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

export async function executeRun(options: RunOptions): Promise<RunResult> {
  const { workload } = options;
  // The API key and URL credentials never reach a file or the log: every line is scrubbed on its way out.
  const scrubber = new SecretScrubber(workloadSecrets(workload));
  const log = (line: string): void => options.log?.(scrubber.text(line));
  const headers = requestHeaders(workload.target);
  // A bad trace is a usage error: found before anything starts.
  const replay = options.replay ?? (workload.replay === null ? null : planReplay(workload.replay));
  const dir = createRunFolder({ out: options.out, root: options.resultsRoot ?? 'results', name: workload.name });
  const startedAt = new Date();
  const runStartMs = performance.now();
  const started = new Started(log);
  const closedLast = new Started(log);
  try {
    return await runStarted(options, { log, scrubber, headers, dir, startedAt, runStartMs, started, closedLast, replay });
  } finally {
    // A setup step that threw leaves nothing listening: the engine, the hop, the services, the sockets, and
    // the metrics endpoint (which a finished run closes itself, after its summary).
    await started.run();
    await closedLast.run();
  }
}

interface RunSetup {
  log: (line: string) => void;
  scrubber: SecretScrubber;
  headers: Record<string, string>;
  dir: string;
  startedAt: Date;
  runStartMs: number;
  started: Started;
  /** What outlives the services until the summary is built (the metrics export): closed after `started`. */
  closedLast: Started;
  replay: ReplayPlan | null;
}

async function runStarted(options: RunOptions, setup: RunSetup): Promise<RunResult> {
  const { workload } = options;
  const { log, scrubber, headers, dir, startedAt, runStartMs, started, closedLast, replay } = setup;
  let engine: EngineThreadHandle | null = null;
  if (workload.target.url === null) {
    // On a thread of its own: the deployment's work never lands on the client's event loop.
    const embedded = await startEngineThread({ settings: workload.engine, modelName: workload.target.model, logDir: join(dir, 'engine') });
    engine = embedded;
    started.add('the embedded engine', () => embedded.close());
    log(engineStartLine(embedded));
  }
  const targetUrl = workload.target.url ?? engine!.url;
  const bus = new RunBus();
  // The path requests take (direct, the built-in hop, a proxy) and where they go: decided once, here.
  const route: Route = await openRoute(workload, targetUrl, { onFault: (f) => bus.emit({ kind: 'hop_fault', t: new Date().toISOString(), run_ms: Math.round(performance.now() - runStartMs), ...f }) });
  started.add('the route', () => route.close());
  const path: PathKind = route.path;
  if (path !== 'direct') log(`path: ${route.description}`);

  const manifest = {
    schema_version: RESULTS_SCHEMA_VERSION,
    name: workload.name,
    status: 'running' as RunStatus | 'running',
    started_at: startedAt.toISOString(),
    ended_at: null as string | null,
    argv: options.argv ?? [],
    labels: workload.labels,
    target: { url: targetUrl, embedded: engine !== null, model: workload.target.model, tls_insecure: workload.target.tls.insecure },
    embedded_engine: engine === null ? null : { topology: engine.topology, servers: engine.servers.map((s) => ({ name: s.name, url: s.url, metrics_url: s.metricsUrl, log: s.logFile })) },
    path,
    route: { request_url: route.requestUrl, connect_proxy: route.connectProxy, bypass_url: route.bypassUrl },
    shard: options.shard ?? null,
    versions: { roundload: VERSION, node: process.version },
    host: { hostname: hostname(), platform: platform(), cpus: cpus().length },
    workload: redactWorkload(workload),
  };
  writeJsonAtomic(resultPath(dir, 'manifest'), scrubber.value(manifest));

  const maxFileMb = workload.results.max_file_mb;
  // A results file that cannot be written (the disk filled up) stops the run: it ends `failed`, exit 4.
  // Widened on purpose: it is set in callbacks, which narrowing does not see.
  let writeFailure = null as ResultsError | null;
  const sinks = new EventSinks(dir, {
    maxFileBytes: maxFileMb === null ? null : maxFileMb * 1024 * 1024,
    compress: workload.results.compress_rotated,
    log,
    scrub: (line) => scrubber.text(line),
    onFailure: (error) => {
      writeFailure ??= error;
      log(`roundload: ${error.message}: stopping the run`);
      end('failed', error.message);
    },
    ...(options.writer === undefined ? {} : { writer: options.writer }),
  });
  sinks.attach(bus);
  let sinksOpen = true;
  started.add('the results files', () => (sinksOpen ? sinks.close({ drainTimeoutMs: DRAIN_AFTER_SIGNAL_MS, settleMs: 0 }) : undefined));
  const summary = new SummaryBuilder({
    itlFromRecords: false,
    windowS: workload.window_s,
    plannedS: plannedLengthS(workload),
    thresholds: workload.thresholds,
    pinAfterS: workload.monitor.pin_after_s,
    plannedRequests: replay === null ? plannedRequests(workload, options.shard ?? null) : replay.settings.loop || workload.duration !== null ? null : replay.requests,
    thinkTimeMs: workload.agents.think_time_ms,
    targetUrl,
  });
  const latestGauges = new LatestGauges();
  bus.on('scrape', (e) => {
    summary.addScrape(e);
    latestGauges.add(e);
  });
  bus.on('request', (e) => summary.add(e.record));
  const comparison = replay === null ? null : new ReplayComparison(replay.recorded.map(recordedFigures), { file: replay.file, connection: replay.settings.connection, speed: replay.settings.speed });
  if (comparison !== null) bus.on('request', (e) => comparison.add(e.record));
  bus.on('client_sample', (e) => summary.addClientSample(e));
  bus.on('canary', (e) => summary.addCanary(e));
  bus.on('probe', (e) => summary.addProbe(e));
  bus.on('phase', (e) => summary.addLoad(e));
  bus.on('conversation_start', (e) => summary.addLoad(e));
  bus.on('conversation_end', (e) => summary.addLoad(e));
  bus.on('arrivals_end', (e) => summary.addLoad(e));
  let inFlight = 0;
  bus.on('request_start', () => {
    inFlight += 1;
  });
  bus.on('request', () => {
    inFlight -= 1;
  });
  if (options.onEvent !== undefined) bus.onAny(options.onEvent);

  const tracker = new ConnectionTracker();
  started.add('the connection tracker', () => tracker.close());
  const sampler = new ClientSampler({ writer: () => sinks.sample() });
  started.add('the client sampler', () => sampler.stop());
  const stop = new AbortController();
  // In-flight requests end on their own signal, STOP_GRACE_MS after a stop, so they may finish first.
  const abortInFlight = new AbortController();
  // Every in-flight request listens on it.
  setMaxListeners(0, abortInFlight.signal);
  // Every in-flight request and think-time sleep listens on it: hundreds of listeners are expected.
  setMaxListeners(0, stop.signal);
  let status: RunStatus = 'completed';
  let reason: string | null = null;
  /** Stops the run early: no new requests, in-flight ones get the grace. The first reason given wins. */
  function end(as: RunStatus, why: string): void {
    if (stop.signal.aborted) return;
    status = as;
    reason = why;
    stop.abort();
    setTimeout(() => abortInFlight.abort(), STOP_GRACE_MS).unref();
  }
  const onSignal = (): void => end('interrupted', 'stopped by signal');
  if (options.signal?.aborted) onSignal();
  options.signal?.addEventListener('abort', onSignal, { once: true });
  started.add('the signal listener', () => options.signal?.removeEventListener('abort', onSignal));

  let failure: Error | null = null;
  // roundload's own metrics (scraped, pushed): up before the agents start, given the verdicts at the end.
  let metricsExport: MetricsExport | null = null;
  try {
    const transport = runTransport(
      workload,
      { url: route.requestUrl, path, tls: route.tls, connectProxy: route.connectProxy },
      replay === null
        ? { agents: shardAgents(laneCount(workload), options.shard).length, poolConnections: workload.agents.pool_connections }
        : {
            agents: replayLanes(replay),
            poolConnections: workload.agents.pool_connections,
            connection: replay.settings.connection === 'pool' ? 'pool' : 'per-agent',
            // A replay's sockets must outlive the longest idle gap it reproduces.
            keepAliveTimeoutMs: Math.max(workload.agents.keep_alive_timeout_ms, Math.ceil(replay.maxIdleMs / replay.settings.speed) + 5_000),
          },
    );
    started.add('the transport', () => transport.close(STOP_GRACE_MS));
    const endpoint = `${transport.basePath}/v1/chat/completions`;
    // The writer thread starts beside the preflight; the agents wait for it (bounded), so its start-up
    // (an isolate and its modules: tens of ms of CPU) does not compete with the first requests, and a results
    // file it cannot open stops the run before any load is sent (onFailure has ended the run: no phase starts).
    const writerUp = sinks.ready(WRITER_START_MS).catch(() => {});
    // The embedded engine reached directly is the run's own, up and serving its model: nothing to check, and
    // its faults are the agents' to meet. Through a hop or proxy, the path is checked all the same.
    if (options.preflight !== false && !(engine !== null && path === 'direct')) {
      const proxyUrl = route.connectProxy ?? (path === 'proxy' ? route.requestUrl : null);
      const check = await runPreflight({ workload, transport, tracker, headers, endpoint, path, proxyUrl, runStartMs });
      bus.emit(check);
      if (!check.ok) throw preflightFailure(check, workload);
      log(`preflight: ${preflightLine(check)}`);
      for (const note of check.notes) log(`preflight: warning: ${note}`);
    }
    await writerUp;
    bus.emit({
      kind: 'run_start',
      t: new Date().toISOString(),
      target: targetUrl,
      path,
      agents: replay === null ? shardAgents(laneCount(workload), options.shard).length : replay.conversations.length,
      rounds: replay === null ? workload.agents.rounds : Math.max(...replay.conversations.map((c) => c.rounds.length)),
    });
    const streamed = { tokens: 0 };
    sampler.start(
      CLIENT_SAMPLE_MS,
      runStartMs,
      () => inFlight,
      (s) => bus.emit(options.clientSample?.(s) ?? s),
      () => streamed.tokens,
    );
    const ctx: RunContext = {
      workload,
      dir,
      bus,
      runStartMs,
      requestUrl: route.requestUrl,
      engineUrl: targetUrl,
      embeddedTargets: engine?.monitorTargets ?? null,
      path,
      route,
      stop: stop.signal,
      log,
      inFlight: () => inFlight,
    };
    if (metricsExportWanted(workload.client_metrics)) {
      const exported = await startMetricsExport({
        settings: workload.client_metrics,
        workload: workload.name,
        run: basename(dir),
        version: VERSION,
        labels: workload.labels,
        inFlight: () => inFlight,
        log,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      metricsExport = exported;
      closedLast.add('the metrics endpoint', () => exported.close());
      bus.onAny((e) => exported.onEvent(e));
    }
    for (const service of servicesFor(workload)) {
      try {
        await service.start(ctx);
        started.add(service.name, () => service.stop());
      } catch (error) {
        // An address the user asked for (the metrics port) that cannot be used ends the run; the rest is noted.
        if (error instanceof ServerStartError) throw error;
        log(`${service.name} did not start: ${error instanceof Error ? error.message : String(error)}`);
      }
    }

    const phaseCtx = phaseContext({
      workload,
      bus,
      transport,
      tracker,
      headers,
      path,
      runStartMs,
      histograms: summary.histograms,
      stop: stop.signal,
      abortInFlight: abortInFlight.signal,
      shard: options.shard ?? null,
      enrichHang: (e) => latestGauges.enrich(e),
      streamed,
    });
    const threads = workerCount(workload);
    if (replay !== null) {
      const [main] = planPhases(workload);
      const { calibration, line } = await replayCalibration(transport, headers, replay.settings.model ?? workload.target.model, replay);
      if (line !== null) log(`replay sizing: ${line}`);
      if (main !== undefined) await runReplayPhase(phaseCtx, main, replay, calibration);
    } else if (threads > 1) {
      await runInWorkers({
        count: threads,
        init: { workload, requestUrl: route.requestUrl, tls: route.tls, connectProxy: route.connectProxy, path, headers, stopGraceMs: STOP_GRACE_MS, clientSampleMs: CLIENT_SAMPLE_MS },
        processShard: options.shard ?? null,
        runStartMs,
        bus,
        histograms: summary.histograms,
        enrichHang: (e) => latestGauges.enrich(e),
        stop: stop.signal,
        abortInFlight: abortInFlight.signal,
        log,
      });
    } else {
      // One phase after another (a sweep's levels); a stop ends the running one and starts no other.
      for (const plan of planPhases(workload)) {
        if (stop.signal.aborted) break;
        await runPhase(phaseCtx, plan);
      }
    }
  } catch (error) {
    status = 'failed';
    reason = error instanceof Error ? error.message : String(error);
    failure = error instanceof Error ? error : new Error(reason);
  }
  // Services, sockets and servers stop before the files are finished (the monitor's last scrapes go in too).
  // The results files are the oldest entry: everything else is closed first, then they are below.
  sinksOpen = false;
  await started.run();
  const endedAt = new Date();
  bus.emit({ kind: 'run_end', t: endedAt.toISOString(), run_ms: Math.round(performance.now() - runStartMs), status, reason });
  // Every line queued reaches the disk before the summary is written (bounded: a stalled volume cannot hold the end).
  const closed = await sinks.close({ drainTimeoutMs: stop.signal.aborted ? DRAIN_AFTER_SIGNAL_MS : DRAIN_MS, settleMs: stop.signal.aborted ? 0 : 30_000 });
  if (!closed.drained) log(`results writer: the disk did not take the last ${closed.undrainedLines} lines in time; they are lost (counted in summary.client.writer_dropped_lines)`);
  if (closed.compressing > 0) log('a rotated results part is still being compressed; its plain copy stays until that is done');
  summary.setWriterDropped(closed.droppedLines);
  // On a disk that filled up each final file is tried on its own; run.json gets the last word (`failed`).
  const refusedBy = (error: ResultsError): void => {
    writeFailure ??= error;
    status = 'failed';
    reason ??= error.message;
  };
  const tryWrite = (write: () => void): void => {
    try {
      write();
    } catch (error) {
      if (!(error instanceof ResultsError)) throw error;
      log(`roundload: ${error.message}`);
      refusedBy(error);
    }
  };
  tryWrite(() => writeJsonAtomic(resultPath(dir, 'histograms'), summary.histograms.toFile()));
  const writeManifest = (): void => {
    manifest.status = status;
    manifest.ended_at = endedAt.toISOString();
    tryWrite(() => writeJsonLastResort(resultPath(dir, 'manifest'), scrubber.value(manifest)));
  };
  writeManifest();
  const built: Summary = scrubber.value(
    summary.build({
      name: workload.name,
      status,
      started_at: startedAt.toISOString(),
      ended_at: endedAt.toISOString(),
      wall_s: Math.round(performance.now() - runStartMs) / 1000,
      target: targetUrl,
      path,
      labels: workload.labels,
    }),
  );
  if (comparison !== null) built.replay = scrubber.value(comparison.result());
  tryWrite(() => writeJsonAtomic(resultPath(dir, 'summary'), built));
  // report.html and junit.xml: never fail the run over them (writeReports logs what it could not write),
  // unless the disk refused them.
  const reports = await writeReports(dir, built, { log, scrub: (text) => scrubber.text(text) }).catch((error: unknown) => (log(`reports not written: ${String(error)}`), null));
  const refused = reports?.errors.find((e): e is ResultsError => e instanceof ResultsError);
  if (refused !== undefined) refusedBy(refused);
  if (manifest.status !== status) writeManifest();
  // Verdicts as gauges, the remote-write push and the linger: after every file is written (a push that fails
  // or hangs loses nothing), bounded, never failing the run.
  await metricsExport?.finish({ ...built, run: { ...built.run, status } });
  if (failure !== null) throw failure;
  if (writeFailure !== null) throw writeFailure;
  return { dir, status, summary: built };
}
