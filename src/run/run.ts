// One run, start to end: results folder, embedded engine when no target, transport, the preflight, agents,
// client sampling, and the files at the end. Everything is bounded in time; every outcome is written; whatever
// throws, what the run started is closed.
import { hostname, cpus, platform } from 'node:os';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import type { Workload } from '../config/index.js';
import { redactWorkload, resolveOtlp, workloadSecrets, type OtlpExport } from '../config/index.js';
import type { EngineThreadHandle } from '../engine/index.js';
import { ConnectionTracker, type Transport } from '../transport/index.js';
import { SummaryBuilder, plannedLengthS, ReplayComparison, type Summary } from '../analysis/index.js';
import { recordedFigures } from '../trace/index.js';
import { LatestGauges } from '../monitor/index.js';
import { createRunFolder, writeHistograms, writeManifest, writeSummary, type RunManifestFile } from '../results/index.js';
import { writeReports } from '../report/index.js';
import type { MetricsExport } from '../export/index.js';
import type { RunTracing } from '../otel/index.js';
import { RESULTS_SCHEMA_VERSION, type ClientSampleEvent, type HangEvent, type PathKind, type RunEvent } from '../types/index.js';
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
import { phaseContext, runTransport, type TransportLanes } from './context.js';
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
  // Where the run's spans go (tracing.otlp, else OTEL_EXPORTER_OTLP_*): a variable it cannot honour is a usage
  // error before anything starts.
  const otlp = resolveOtlp(workload.tracing, process.env);
  // The API key, the export's headers and URL credentials never reach a file or the log: every line is
  // scrubbed on its way out.
  const scrubber = new SecretScrubber([...workloadSecrets(workload), ...Object.values(otlp?.headers ?? {})]);
  const log = (line: string): void => options.log?.(scrubber.text(line));
  const headers = requestHeaders(workload.target);
  // A bad trace is a usage error: found before anything starts.
  const replay = options.replay ?? (workload.replay === null ? null : planReplay(workload.replay));
  // A replay that sends recorded contents sends someone's prompts: a server may echo them into any file of the run.
  const ownerOnly = replay !== null && replay.contents.messages.size > 0;
  const dir = createRunFolder({ out: options.out, root: options.resultsRoot ?? 'results', name: workload.name, ownerOnly });
  const startedAt = new Date();
  const runStartMs = performance.now();
  const started = new Started(log);
  const closedLast = new Started(log);
  try {
    return await runStarted(options, { log, scrubber, headers, dir, startedAt, runStartMs, started, closedLast, replay, otlp });
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
  /** The OTLP export of the run's spans, or null when off. */
  otlp: OtlpExport | null;
}

/** Where the requests go: the embedded engine (when the workload names no target), the URL, and the route. */
interface RunTarget {
  engine: EngineThreadHandle | null;
  /** The target's URL, or the embedded engine's. */
  url: string;
  route: Route;
}

/** The target up, the route open and the manifest written; then the run itself (see LiveRun) drives and ends it. */
async function runStarted(options: RunOptions, setup: RunSetup): Promise<RunResult> {
  const { workload } = options;
  const engine = workload.target.url === null ? await startEmbeddedEngine(workload, setup) : null;
  const targetUrl = workload.target.url ?? engine!.url;
  const bus = new RunBus();
  const route = await openRunRoute(workload, targetUrl, bus, setup);
  const target: RunTarget = { engine, url: targetUrl, route };
  const manifest = runManifest(options, setup.startedAt, target);
  writeManifest(setup.dir, manifest, { scrub: (v) => setup.scrubber.value(v) });
  const run = new LiveRun(options, setup, { target, bus, manifest });
  await run.drive();
  return run.finish();
}

/** On a thread of its own: the deployment's work never lands on the client's event loop. Its code is loaded
 * only here: a run against a target of yours never loads the embedded engine's ~30 modules. */
async function startEmbeddedEngine(workload: Workload, setup: RunSetup): Promise<EngineThreadHandle> {
  const { startEngineThread, engineStartLine } = await import('../engine/index.js');
  const embedded = await startEngineThread({ settings: workload.engine, modelName: workload.target.model, logDir: join(setup.dir, 'engine'), trace: setup.otlp?.engine === true });
  setup.started.add('the embedded engine', () => embedded.close());
  setup.log(engineStartLine(embedded));
  return embedded;
}

/** The path requests take (direct, the built-in hop, a proxy) and where they go: decided once, here. */
async function openRunRoute(workload: Workload, targetUrl: string, bus: RunBus, setup: RunSetup): Promise<Route> {
  const { runStartMs } = setup;
  const route = await openRoute(workload, targetUrl, { onFault: (f) => bus.emit({ kind: 'hop_fault', t: new Date().toISOString(), run_ms: Math.round(performance.now() - runStartMs), ...f }) });
  setup.started.add('the route', () => route.close());
  if (route.path !== 'direct') setup.log(`path: ${route.description}`);
  return route;
}

/** run.json as the run starts: `running`, no end; `LiveRun.finish()` gives it its status and end. */
function runManifest(options: RunOptions, startedAt: Date, target: RunTarget): RunManifestFile & { replay_sizing: string | null } {
  const { workload } = options;
  const { engine, route } = target;
  return {
    schema_version: RESULTS_SCHEMA_VERSION,
    name: workload.name,
    status: 'running',
    started_at: startedAt.toISOString(),
    ended_at: null,
    argv: options.argv ?? [],
    labels: workload.labels,
    target: { url: target.url, embedded: engine !== null, model: workload.target.model, tls_insecure: workload.target.tls.insecure },
    embedded_engine:
      engine === null
        ? null
        : {
            topology: engine.topology,
            servers: engine.servers.map((s) => ({ name: s.name, url: s.url, metrics_url: s.metricsUrl, log: s.logFile })),
            // This start's draw (engine.run_spread_pct): a run that was slow because its engine started slow says so.
            run_speed: { factor: engine.runSpeed.factor, spread_pct: engine.runSpeed.spreadPct, seed: engine.runSpeed.seed },
          },
    path: route.path,
    route: { request_url: route.requestUrl, connect_proxy: route.connectProxy, bypass_url: route.bypassUrl },
    shard: options.shard ?? null,
    versions: { roundload: VERSION, node: process.version },
    host: { hostname: hostname(), platform: platform(), cpus: cpus().length },
    workload: redactWorkload(workload) as Record<string, unknown>,
    /** A replay: how its synthetic text is sized to the server's tokens — the endpoint found, or the unrecorded
     * probe requests made (docs/replay.md, "True to the server's tokenizer"); set once they are made. */
    replay_sizing: null,
  };
}

type RunManifest = ReturnType<typeof runManifest>;

/**
 * One run from its results files to its summary, and how it stands (status, reason, failures). Constructing it
 * opens the results files and subscribes the summary to the bus; `drive()` starts the transport, the services
 * and the agents and waits for them; `finish()` closes everything and writes every file.
 */
class LiveRun {
  readonly #options: RunOptions;
  readonly #workload: Workload;
  readonly #setup: RunSetup;
  readonly #target: RunTarget;
  readonly #path: PathKind;
  readonly #bus: RunBus;
  readonly #manifest: RunManifest;
  readonly #sinks: EventSinks;
  /** Until `finish()` starts, `started` closes the results files (a setup step threw); after, `finish()` does. */
  #sinksOpen = true;
  /** A results file that cannot be written (the disk filled up) stops the run: it ends `failed`, exit 4. */
  #writeFailure: ResultsError | null = null;
  readonly #summary: SummaryBuilder;
  readonly #latestGauges = new LatestGauges();
  readonly #comparison: ReplayComparison | null;
  #inFlight = 0;
  /** Token events received so far, counted by the agents, reported by the client sampler. */
  readonly #streamed = { tokens: 0 };
  readonly #tracker: ConnectionTracker;
  readonly #sampler: ClientSampler;
  readonly #stop = new AbortController();
  /** In-flight requests end on their own signal, STOP_GRACE_MS after a stop, so they may finish first. */
  readonly #abortInFlight = new AbortController();
  #status: RunStatus = 'completed';
  #reason: string | null = null;
  #failure: Error | null = null;
  /** roundload's own metrics (scraped, pushed): up before the agents start, given the verdicts at the end. */
  #metricsExport: MetricsExport | null = null;
  /** roundload's spans, exported over OTLP (null: off): up before the agents start, flushed before the summary. */
  #tracing: RunTracing | null = null;

  constructor(options: RunOptions, setup: RunSetup, parts: { target: RunTarget; bus: RunBus; manifest: RunManifest }) {
    this.#options = options;
    this.#workload = options.workload;
    this.#setup = setup;
    this.#target = parts.target;
    this.#path = parts.target.route.path;
    this.#bus = parts.bus;
    this.#manifest = parts.manifest;
    this.#sinks = this.#openSinks();
    this.#summary = summaryBuilder(this.#workload, setup.replay, options.shard ?? null, parts.target.url);
    this.#comparison = replayComparison(setup.replay);
    this.#subscribe();
    this.#tracker = new ConnectionTracker();
    setup.started.add('the connection tracker', () => this.#tracker.close());
    this.#sampler = new ClientSampler({ writer: () => this.#sinks.sample() });
    setup.started.add('the client sampler', () => this.#sampler.stop());
    // Every in-flight request listens on it.
    setMaxListeners(0, this.#abortInFlight.signal);
    // Every in-flight request and think-time sleep listens on it: hundreds of listeners are expected.
    setMaxListeners(0, this.#stop.signal);
    this.#listenForSignal();
  }

  /** Every event to its results file from here on; a file that cannot be written stops the run. */
  #openSinks(): EventSinks {
    const { log, scrubber } = this.#setup;
    const maxFileMb = this.#workload.results.max_file_mb;
    const sinks = new EventSinks(this.#setup.dir, {
      maxFileBytes: maxFileMb === null ? null : maxFileMb * 1024 * 1024,
      compress: this.#workload.results.compress_rotated,
      log,
      scrub: (line) => scrubber.text(line),
      onFailure: (error) => {
        this.#writeFailure ??= error;
        log(`roundload: ${error.message}: stopping the run`);
        this.#end('failed', error.message);
      },
      ...(this.#options.writer === undefined ? {} : { writer: this.#options.writer }),
    });
    sinks.attach(this.#bus);
    this.#setup.started.add('the results files', () => (this.#sinksOpen ? sinks.close({ drainTimeoutMs: DRAIN_AFTER_SIGNAL_MS, settleMs: 0 }) : undefined));
    return sinks;
  }

  /** The summary, the replay comparison and the in-flight count follow the bus; so does the caller's onEvent. */
  #subscribe(): void {
    const bus = this.#bus;
    const summary = this.#summary;
    const latestGauges = this.#latestGauges;
    const comparison = this.#comparison;
    bus.on('scrape', (e) => {
      summary.addScrape(e);
      latestGauges.add(e);
    });
    bus.on('request', (e) => summary.add(e.record));
    if (comparison !== null) bus.on('request', (e) => comparison.add(e.record));
    bus.on('client_sample', (e) => summary.addClientSample(e));
    bus.on('canary', (e) => summary.addCanary(e));
    bus.on('probe', (e) => summary.addProbe(e));
    bus.on('phase', (e) => summary.addLoad(e));
    bus.on('conversation_start', (e) => summary.addLoad(e));
    bus.on('conversation_end', (e) => summary.addLoad(e));
    bus.on('arrivals_end', (e) => summary.addLoad(e));
    bus.on('request_start', () => {
      this.#inFlight += 1;
    });
    bus.on('request', () => {
      this.#inFlight -= 1;
    });
    if (this.#options.onEvent !== undefined) bus.onAny(this.#options.onEvent);
  }

  #listenForSignal(): void {
    const { signal } = this.#options;
    const onSignal = (): void => this.#end('interrupted', 'stopped by signal');
    if (signal?.aborted) onSignal();
    signal?.addEventListener('abort', onSignal, { once: true });
    this.#setup.started.add('the signal listener', () => signal?.removeEventListener('abort', onSignal));
  }

  /** Stops the run early: no new requests, in-flight ones get the grace. The first reason given wins. */
  #end(as: RunStatus, why: string): void {
    if (this.#stop.signal.aborted) return;
    this.#status = as;
    this.#reason = why;
    this.#stop.abort();
    setTimeout(() => this.#abortInFlight.abort(), STOP_GRACE_MS).unref();
  }

  /** Transport, preflight, services and agents, until the agents are done. Never throws: a failure ends the run
   * `failed`, and `finish()` throws it once every file is written. */
  async drive(): Promise<void> {
    try {
      const { route } = this.#target;
      const transport = runTransport(
        this.#workload,
        { url: route.requestUrl, path: this.#path, tls: route.tls, connectProxy: route.connectProxy },
        transportLanes(this.#workload, this.#setup.replay, this.#options.shard),
      );
      this.#setup.started.add('the transport', () => transport.close(STOP_GRACE_MS));
      // The writer thread starts beside the preflight; the agents wait for it (bounded), so its start-up
      // (an isolate and its modules: tens of ms of CPU) does not compete with the first requests, and a results
      // file it cannot open stops the run before any load is sent (onFailure has ended the run: no phase starts).
      const writerUp = this.#sinks.ready(WRITER_START_MS).catch(() => {});
      await this.#preflight(transport);
      await writerUp;
      this.#announceStart();
      await this.#startMetricsExport();
      await this.#startTracing();
      await this.#startServices();
      await this.#runAgents(transport);
    } catch (error) {
      this.#status = 'failed';
      this.#reason = error instanceof Error ? error.message : String(error);
      this.#failure = error instanceof Error ? error : new Error(this.#reason);
    }
  }

  /** The embedded engine reached directly is the run's own, up and serving its model: nothing to check, and
   * its faults are the agents' to meet. Through a hop or proxy, the path is checked all the same. */
  async #preflight(transport: Transport): Promise<void> {
    const workload = this.#workload;
    const { route, engine } = this.#target;
    const path = this.#path;
    if (this.#options.preflight === false || (engine !== null && path === 'direct')) return;
    const endpoint = `${transport.basePath}/v1/chat/completions`;
    const proxyUrl = route.connectProxy ?? (path === 'proxy' ? route.requestUrl : null);
    const { headers, runStartMs, log } = this.#setup;
    const check = await runPreflight({ workload, transport, tracker: this.#tracker, headers, endpoint, path, proxyUrl, runStartMs });
    this.#bus.emit(check);
    if (!check.ok) throw preflightFailure(check, workload);
    log(`preflight: ${preflightLine(check)}`);
    for (const note of check.notes) log(`preflight: warning: ${note}`);
  }

  /** The run starts now: its `run_start` event, and the client sampler's first window. */
  #announceStart(): void {
    const { workload } = this.#options;
    const replay = this.#setup.replay;
    this.#bus.emit({
      kind: 'run_start',
      t: new Date().toISOString(),
      target: this.#target.url,
      path: this.#path,
      agents: replay === null ? shardAgents(laneCount(workload), this.#options.shard).length : replay.conversations.length,
      rounds: replay === null ? workload.agents.rounds : Math.max(...replay.conversations.map((c) => c.rounds.length)),
    });
    this.#sampler.start(
      CLIENT_SAMPLE_MS,
      this.#setup.runStartMs,
      () => this.#inFlight,
      (s) => this.#bus.emit(this.#options.clientSample?.(s) ?? s),
      () => this.#streamed.tokens,
    );
  }

  async #startMetricsExport(): Promise<void> {
    const workload = this.#workload;
    // Asked for by a port or a remote-write URL; only then is the export's code loaded.
    if (workload.client_metrics.port === null && workload.client_metrics.remote_write_url === null) return;
    const { startMetricsExport } = await import('../export/index.js');
    const { signal } = this.#options;
    const exported = await startMetricsExport({
      settings: workload.client_metrics,
      workload: workload.name,
      run: basename(this.#setup.dir),
      version: VERSION,
      labels: workload.labels,
      inFlight: () => this.#inFlight,
      log: this.#setup.log,
      ...(signal === undefined ? {} : { signal }),
    });
    this.#metricsExport = exported;
    this.#setup.closedLast.add('the metrics endpoint', () => exported.close());
    this.#bus.onAny((e) => exported.onEvent(e));
  }

  /** Asked for by an OTLP endpoint (workload or environment); only then is the export's code loaded. */
  async #startTracing(): Promise<void> {
    const { otlp, scrubber, log, startedAt, dir } = this.#setup;
    if (otlp === null) return;
    const { startRunTracing } = await import('../otel/index.js');
    const tracing = startRunTracing({
      settings: otlp,
      workload: this.#workload.name,
      run: basename(dir),
      model: this.#workload.target.model,
      version: VERSION,
      startMs: startedAt.getTime(),
      scrub: (text) => scrubber.text(text),
      log,
    });
    this.#tracing = tracing;
    this.#bus.onAny((e) => tracing.onEvent(e));
    // The embedded engine's spans (started with `trace` when tracing.otlp.engine is on) join the requests' traces.
    if (otlp.engine) this.#target.engine?.onSpans((spans) => tracing.engineSpans(spans));
  }

  async #startServices(): Promise<void> {
    const { dir, runStartMs, log, started } = this.#setup;
    const { engine, route } = this.#target;
    const ctx: RunContext = {
      workload: this.#workload,
      dir,
      bus: this.#bus,
      runStartMs,
      requestUrl: route.requestUrl,
      engineUrl: this.#target.url,
      embeddedTargets: engine?.monitorTargets ?? null,
      path: this.#path,
      route,
      stop: this.#stop.signal,
      log,
      inFlight: () => this.#inFlight,
    };
    for (const service of servicesFor(this.#workload)) {
      try {
        await service.start(ctx);
        started.add(service.name, () => service.stop());
      } catch (error) {
        // An address the user asked for (the metrics port) that cannot be used ends the run; the rest is noted.
        if (error instanceof ServerStartError) throw error;
        log(`${service.name} did not start: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** The load itself: a replay, the agents spread over worker threads, or the phases on this thread. */
  async #runAgents(transport: Transport): Promise<void> {
    const workload = this.#workload;
    const { headers, runStartMs, log, replay } = this.#setup;
    const { route } = this.#target;
    const path = this.#path;
    const shard = this.#options.shard ?? null;
    const enrichHang = (e: HangEvent): HangEvent => this.#latestGauges.enrich(e);
    const phaseCtx = phaseContext({
      workload,
      bus: this.#bus,
      transport,
      tracker: this.#tracker,
      headers,
      path,
      runStartMs,
      histograms: this.#summary.histograms,
      stop: this.#stop.signal,
      abortInFlight: this.#abortInFlight.signal,
      shard,
      enrichHang,
      streamed: this.#streamed,
    });
    const threads = workerCount(workload);
    if (replay !== null) {
      const [main] = planPhases(workload);
      const { calibration, line } = await replayCalibration(transport, headers, replay.settings.model ?? workload.target.model, replay);
      if (line !== null) {
        log(`replay sizing: ${line}`);
        this.#manifest.replay_sizing = line;
      }
      if (main !== undefined) await runReplayPhase(phaseCtx, main, replay, calibration);
    } else if (threads > 1) {
      await runInWorkers({
        count: threads,
        init: { workload, requestUrl: route.requestUrl, tls: route.tls, connectProxy: route.connectProxy, path, headers, stopGraceMs: STOP_GRACE_MS, clientSampleMs: CLIENT_SAMPLE_MS },
        processShard: shard,
        runStartMs,
        bus: this.#bus,
        histograms: this.#summary.histograms,
        enrichHang,
        stop: this.#stop.signal,
        abortInFlight: this.#abortInFlight.signal,
        log,
      });
    } else {
      // One phase after another (a sweep's levels); a stop ends the running one and starts no other.
      for (const plan of planPhases(workload)) {
        if (this.#stop.signal.aborted) break;
        await runPhase(phaseCtx, plan);
      }
    }
  }

  /** Everything closed, every file written; throws what failed the run, once the files say so. */
  async finish(): Promise<RunResult> {
    const { dir } = this.#setup;
    const endedAt = await this.#closeAndDrain();
    // The spans of every request (and the engine's, stopped above) sent within the flush bound; what the export
    // did goes into summary.json.
    if (this.#tracing !== null) {
      this.#summary.setTracing(await this.#tracing.finish(this.#status, this.#reason));
      // The engine's own trace of each hung request: where it ends, a fact of the diagnosis.
      this.#summary.setEngineTraceEnds(this.#tracing.engineTraceEnds());
    }
    this.#tryWrite(() => writeHistograms(dir, this.#summary.histograms));
    this.#writeManifest(endedAt);
    const built = this.#buildSummary(endedAt);
    this.#tryWrite(() => writeSummary(dir, built));
    await this.#writeReports(built);
    if (this.#manifest.status !== this.#status) this.#writeManifest(endedAt);
    // Verdicts as gauges, the remote-write push and the linger: after every file is written (a push that fails
    // or hangs loses nothing), bounded, never failing the run.
    await this.#metricsExport?.finish({ ...built, run: { ...built.run, status: this.#status } });
    if (this.#failure !== null) throw this.#failure;
    if (this.#writeFailure !== null) throw this.#writeFailure;
    return { dir, status: this.#status, summary: built };
  }

  /** Closes what the run started, then the results files; returns when the run ended. */
  async #closeAndDrain(): Promise<Date> {
    const { log, runStartMs } = this.#setup;
    // Services, sockets and servers stop before the files are finished (the monitor's last scrapes go in too).
    // The results files are the oldest entry: everything else is closed first, then they are below.
    this.#sinksOpen = false;
    await this.#setup.started.run();
    const endedAt = new Date();
    this.#bus.emit({ kind: 'run_end', t: endedAt.toISOString(), run_ms: Math.round(performance.now() - runStartMs), status: this.#status, reason: this.#reason });
    // Every line queued reaches the disk before the summary is written (bounded: a stalled volume cannot hold the end).
    const stopped = this.#stop.signal.aborted;
    const closed = await this.#sinks.close({ drainTimeoutMs: stopped ? DRAIN_AFTER_SIGNAL_MS : DRAIN_MS, settleMs: stopped ? 0 : 30_000 });
    if (!closed.drained) log(`results writer: the disk did not take the last ${closed.undrainedLines} lines in time; they are lost (counted in summary.client.writer_dropped_lines)`);
    if (closed.compressing > 0) log('a rotated results part is still being compressed; its plain copy stays until that is done');
    this.#summary.setWriterDropped(closed.droppedLines);
    return endedAt;
  }

  // On a disk that filled up each final file is tried on its own; run.json gets the last word (`failed`).
  #refusedBy(error: ResultsError): void {
    this.#writeFailure ??= error;
    this.#status = 'failed';
    this.#reason ??= error.message;
  }

  #tryWrite(write: () => void): void {
    try {
      write();
    } catch (error) {
      if (!(error instanceof ResultsError)) throw error;
      this.#setup.log(`roundload: ${error.message}`);
      this.#refusedBy(error);
    }
  }

  #writeManifest(endedAt: Date): void {
    this.#manifest.status = this.#status;
    this.#manifest.ended_at = endedAt.toISOString();
    this.#tryWrite(() => writeManifest(this.#setup.dir, this.#manifest, { scrub: (v) => this.#setup.scrubber.value(v), lastResort: true }));
  }

  #buildSummary(endedAt: Date): Summary {
    const { scrubber, startedAt, runStartMs } = this.#setup;
    const workload = this.#workload;
    const built: Summary = scrubber.value(
      this.#summary.build({
        name: workload.name,
        status: this.#status,
        started_at: startedAt.toISOString(),
        ended_at: endedAt.toISOString(),
        wall_s: Math.round(performance.now() - runStartMs) / 1000,
        target: this.#target.url,
        path: this.#path,
        labels: workload.labels,
      }),
    );
    if (this.#comparison !== null) built.replay = scrubber.value(this.#comparison.result());
    return built;
  }

  /** report.html and junit.xml: never fail the run over them (writeReports logs what it could not write),
   * unless the disk refused them. */
  async #writeReports(built: Summary): Promise<void> {
    const { log, scrubber, dir } = this.#setup;
    const reports = await writeReports(dir, built, { log, scrub: (text) => scrubber.text(text) }).catch((error: unknown) => (log(`reports not written: ${String(error)}`), null));
    const refused = reports?.errors.find((e): e is ResultsError => e instanceof ResultsError);
    if (refused !== undefined) this.#refusedBy(refused);
  }
}

/** What the summary is measured against: the plan (its length, its requests), the thresholds, the target. */
function summaryBuilder(workload: Workload, replay: ReplayPlan | null, shard: Shard | null, targetUrl: string): SummaryBuilder {
  return new SummaryBuilder({
    itlFromRecords: false,
    windowS: workload.window_s,
    plannedS: plannedLengthS(workload),
    thresholds: workload.thresholds,
    pinAfterS: workload.monitor.pin_after_s,
    plannedRequests: replay === null ? plannedRequests(workload, shard) : replay.settings.loop || workload.duration !== null ? null : replay.requests,
    thinkTimeMs: workload.agents.think_time_ms,
    targetUrl,
  });
}

function replayComparison(replay: ReplayPlan | null): ReplayComparison | null {
  return replay === null ? null : new ReplayComparison(replay.recorded.map(recordedFigures), { file: replay.file, connection: replay.settings.connection, speed: replay.settings.speed });
}

/** The lanes of the main thread's transport: the workload's agents (this shard's), or the replay's. */
function transportLanes(workload: Workload, replay: ReplayPlan | null, shard: Shard | null | undefined): TransportLanes {
  return replay === null
    ? { agents: shardAgents(laneCount(workload), shard).length, poolConnections: workload.agents.pool_connections }
    : {
        agents: replayLanes(replay),
        poolConnections: workload.agents.pool_connections,
        connection: replay.settings.connection === 'pool' ? 'pool' : 'per-agent',
        // A replay's sockets must outlive the longest idle gap it reproduces.
        keepAliveTimeoutMs: Math.max(workload.agents.keep_alive_timeout_ms, Math.ceil(replay.maxIdleMs / replay.settings.speed) + 5_000),
      };
}
