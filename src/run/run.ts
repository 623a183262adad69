// One run, start to end: results folder, embedded engine when no target, transport, agents, client
// sampling, and the files at the end. Everything is bounded in time; every outcome is written.
import { hostname, cpus, platform } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import type { Workload } from '../config/index.js';
import { redactWorkload } from '../config/index.js';
import { startEngine, type EngineHandle } from '../engine/index.js';
import { Transport, ConnectionTracker } from '../transport/index.js';
import { resolveTools, systemPrompt, classifyTransportError } from '../agent/index.js';
import { SummaryBuilder, plannedLengthS, type Summary } from '../analysis/index.js';
import { backstopTimeouts } from '../watchdog/index.js';
import { LatestGauges } from '../monitor/index.js';
import { createRunFolder, resultPath, writeJsonAtomic, writeJsonLastResort } from '../results/index.js';
import { writeReports } from '../report/index.js';
import { RESULTS_SCHEMA_VERSION, type PathKind, type RunEvent } from '../types/index.js';
import { ResultsError, ServerStartError, TargetUnreachableError, UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { RunBus } from './bus.js';
import { EventSinks, type WriterTuning } from './sinks.js';
import { ClientSampler } from './client-sampler.js';
import { servicesFor, type RunContext, type RunService } from './services.js';
import { openRoute, type Route } from './route.js';
import { planPhases, laneCount, runPhase, type PhaseRunContext } from './phase.js';
import { shardAgents, type Shard } from './shard.js';
import { runInWorkers, workerCount } from './workers.js';

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
  /** The results writer's queue bound and test hooks (a slow disk). */
  writer?: WriterTuning;
}

export interface RunResult {
  dir: string;
  status: RunStatus;
  summary: Summary;
}

/** Grace for in-flight requests after a stop before their sockets are destroyed. */
const STOP_GRACE_MS = 2000;
const PREFLIGHT_TIMEOUT_MS = 5000;
const CLIENT_SAMPLE_MS = 1000;
/** How long the end of a run waits for the results writer to drain: a stalled volume cannot hold it for ever;
 * a run stopped by a signal (a pod being killed, say) waits less. */
const DRAIN_MS = 120_000;
const DRAIN_AFTER_SIGNAL_MS = 15_000;
const UNREACHABLE = new Set(['connection_refused', 'dns', 'connect_timeout']);

function resolveHeaders(workload: Workload): Record<string, string> {
  const name = workload.target.api_key_env;
  if (name === null) return {};
  const key = process.env[name];
  if (key === undefined || key === '') throw new UsageError(`target.api_key_env names ${name}, but that environment variable is not set`);
  return { authorization: `Bearer ${key}` };
}

export async function executeRun(options: RunOptions): Promise<RunResult> {
  const { workload } = options;
  const log = options.log ?? (() => {});
  const headers = resolveHeaders(workload);
  const dir = createRunFolder({ out: options.out, root: options.resultsRoot ?? 'results', name: workload.name });
  const startedAt = new Date();
  const runStartMs = performance.now();
  let engine: EngineHandle | null = null;
  if (workload.target.url === null) {
    engine = await startEngine({ settings: workload.engine, modelName: workload.target.model });
    log(`embedded engine on ${engine.url}`);
  }
  const targetUrl = workload.target.url ?? engine!.url;
  // The path requests take (direct, the built-in hop, a proxy) and where they go: decided once, here.
  let route: Route;
  try {
    route = await openRoute(workload, targetUrl, { onFault: (f) => bus.emit({ kind: 'hop_fault', t: new Date().toISOString(), run_ms: Math.round(performance.now() - runStartMs), ...f }) });
  } catch (error) {
    if (engine !== null) await engine.close();
    throw error;
  }
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
    path,
    route: { request_url: route.requestUrl, connect_proxy: route.connectProxy, bypass_url: route.bypassUrl },
    shard: options.shard ?? null,
    versions: { roundload: VERSION, node: process.version },
    host: { hostname: hostname(), platform: platform(), cpus: cpus().length },
    workload: redactWorkload(workload),
  };
  try {
    writeJsonAtomic(resultPath(dir, 'manifest'), manifest);
  } catch (error) {
    await route.close();
    if (engine !== null) await engine.close();
    throw error;
  }

  const bus = new RunBus();
  const maxFileMb = workload.results.max_file_mb;
  // A results file that cannot be written (the disk filled up) stops the run: it ends `failed`, exit 4.
  let writeFailure: ResultsError | null = null;
  const sinks = new EventSinks(dir, {
    maxFileBytes: maxFileMb === null ? null : maxFileMb * 1024 * 1024,
    compress: workload.results.compress_rotated,
    log,
    onFailure: (error) => {
      writeFailure ??= error;
      log(`roundload: ${error.message}: stopping the run`);
      end('failed', error.message);
    },
    ...(options.writer === undefined ? {} : { writer: options.writer }),
  });
  sinks.attach(bus);
  const summary = new SummaryBuilder({ itlFromRecords: false, windowS: workload.window_s, plannedS: plannedLengthS(workload), thresholds: workload.thresholds, pinAfterS: workload.monitor.pin_after_s });
  const latestGauges = new LatestGauges();
  bus.on('scrape', (e) => {
    summary.addScrape(e);
    latestGauges.add(e);
  });
  bus.on('request', (e) => summary.add(e.record));
  bus.on('client_sample', (e) => summary.addClientSample(e));
  bus.on('canary', (e) => summary.addCanary(e));
  let inFlight = 0;
  bus.on('request_start', () => {
    inFlight += 1;
  });
  bus.on('request', () => {
    inFlight -= 1;
  });
  if (options.onEvent !== undefined) bus.onAny(options.onEvent);

  const tracker = new ConnectionTracker();
  const w = workload.watchdog;
  const transport = new Transport({
    url: route.requestUrl,
    path,
    tls: route.tls,
    connectProxy: route.connectProxy,
    connection: workload.agents.connection,
    agents: shardAgents(laneCount(workload), options.shard).length,
    poolConnections: workload.agents.pool_connections,
    keepAliveTimeoutMs: workload.agents.keep_alive_timeout_ms,
    connectTimeoutMs: w.connect_ms,
    // undici's deadlines only back the watchdog up and must never fire first.
    ...backstopTimeouts(w),
  });
  const sampler = new ClientSampler({ writer: () => sinks.sample() });
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

  let failure: unknown = null;
  const started: RunService[] = [];
  try {
    await preflight(transport, headers, route.requestUrl);
    bus.emit({ kind: 'run_start', t: new Date().toISOString(), target: targetUrl, path, agents: shardAgents(laneCount(workload), options.shard).length, rounds: workload.agents.rounds });
    sampler.start(CLIENT_SAMPLE_MS, runStartMs, () => inFlight, (s) => bus.emit(s));
    const ctx: RunContext = { workload, dir, bus, runStartMs, requestUrl: route.requestUrl, engineUrl: targetUrl, path, route, stop: stop.signal, log, inFlight: () => inFlight };
    for (const service of servicesFor(workload)) {
      try {
        await service.start(ctx);
        started.push(service);
      } catch (error) {
        // An address the user asked for (the metrics port) that cannot be used ends the run; the rest is noted.
        if (error instanceof ServerStartError) throw error;
        log(`${service.name} did not start: ${error instanceof Error ? error.message : String(error)}`);
      }
    }

    const phaseCtx: PhaseRunContext = {
      workload,
      bus,
      transport,
      tracker,
      headers,
      endpoint: `${transport.basePath}/v1/chat/completions`,
      path,
      runStartMs,
      histograms: summary.histograms,
      system: systemPrompt(workload.conversation),
      tools: resolveTools(workload.conversation.tools),
      stop: stop.signal,
      abortInFlight: abortInFlight.signal,
      conversations: new Map(),
      shard: options.shard ?? null,
      enrichHang: (e) => latestGauges.enrich(e),
    };
    const threads = workerCount(workload);
    if (threads > 1) {
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
    failure = error;
  }
  options.signal?.removeEventListener('abort', onSignal);
  sampler.stop();
  for (const service of started.reverse()) {
    await Promise.resolve(service.stop()).catch((error: unknown) => log(`${service.name} did not stop cleanly: ${String(error)}`));
  }
  tracker.close();
  await transport.close(STOP_GRACE_MS);
  await route.close();
  if (engine !== null) await engine.close();
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
    tryWrite(() => writeJsonLastResort(resultPath(dir, 'manifest'), manifest));
  };
  writeManifest();
  const built = summary.build({
    name: workload.name,
    status,
    started_at: startedAt.toISOString(),
    ended_at: endedAt.toISOString(),
    wall_s: Math.round(performance.now() - runStartMs) / 1000,
    target: targetUrl,
    path,
    labels: workload.labels,
  });
  tryWrite(() => writeJsonAtomic(resultPath(dir, 'summary'), built));
  // report.html and junit.xml: never fail the run over them (writeReports logs what it could not write),
  // unless the disk refused them.
  const reports = await writeReports(dir, built, { log }).catch((error: unknown) => (log(`reports not written: ${String(error)}`), null));
  const refused = reports?.errors.find((e): e is ResultsError => e instanceof ResultsError);
  if (refused !== undefined) refusedBy(refused);
  if (manifest.status !== status) writeManifest();
  if (failure !== null) throw failure;
  if (writeFailure !== null) throw writeFailure;
  return { dir, status, summary: built };
}

async function preflight(transport: Transport, headers: Record<string, string>, url: string): Promise<void> {
  try {
    await transport.get('/v1/models', { timeoutMs: PREFLIGHT_TIMEOUT_MS, headers });
  } catch (error) {
    const info = classifyTransportError(error, false);
    if (UNREACHABLE.has(info.class) || (error as { code?: string }).code === 'ERR_GET_TIMEOUT') {
      throw new TargetUnreachableError(url, { cause: error, detail: `${info.class}: ${info.message}` });
    }
    // Anything else (a TLS failure, say) is what the run is there to record, request by request.
  }
}
