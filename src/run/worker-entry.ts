// A worker thread's share of a run: its sub-shard of the agents, with its own transport and connection
// tracker, every phase in order; events go to the main thread as they happen, ITL histograms at the end.
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { setMaxListeners } from 'node:events';
import { HistogramSet } from '../metrics/index.js';
import { ConnectionTracker } from '../transport/index.js';
import { RunBus } from './bus.js';
import { planPhases, runPhase } from './phase.js';
import { phaseContext, runTransport } from './context.js';
import { shardAgents } from './shard.js';
import { ClientSampler } from './client-sampler.js';
import type { WorkerInit, ToMainMessage, ToWorkerMessage } from './workers.js';

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: ToMainMessage): void => port.postMessage(m);

async function main(): Promise<void> {
  const { workload } = init;
  // The main thread's run start, on this thread's clock (each thread's performance.now has its own origin).
  const runStartMs = init.runStartEpochMs - performance.timeOrigin;
  const stop = new AbortController();
  const abortInFlight = new AbortController();
  setMaxListeners(0, stop.signal);
  setMaxListeners(0, abortInFlight.signal);
  port.on('message', (m: ToWorkerMessage) => {
    if (m.type === 'stop') stop.abort();
    else if (m.type === 'abort') abortInFlight.abort();
  });
  const bus = new RunBus();
  bus.onAny((event) => {
    // Phase boundaries are announced once, by worker 0.
    if (event.kind === 'phase' && init.workerIndex !== 0) return;
    post({ type: 'event', event });
  });
  // This thread's own event loop is what its agents' timings depend on: sample it too.
  let inFlight = 0;
  bus.on('request_start', () => {
    inFlight += 1;
  });
  bus.on('request', () => {
    inFlight -= 1;
  });
  const sampler = new ClientSampler();
  const streamed = { tokens: 0 };
  sampler.start(
    init.clientSampleMs,
    runStartMs,
    () => inFlight,
    (sample) => bus.emit({ ...sample, thread: init.workerIndex }),
    () => streamed.tokens,
  );
  const tracker = new ConnectionTracker({ idPrefix: `w${init.workerIndex}.` });
  const lanes = Math.max(1, ...planPhases(workload).map((p) => shardAgents(p.agents, init.shard).length));
  const transport = runTransport(
    workload,
    { url: init.requestUrl, path: init.path, tls: init.tls, connectProxy: init.connectProxy },
    { agents: lanes, poolConnections: workload.agents.pool_connections === null ? null : Math.max(1, Math.ceil(workload.agents.pool_connections / init.workerCount)) },
  );
  const histograms = new HistogramSet();
  const ctx = phaseContext({
    workload,
    bus,
    transport,
    tracker,
    headers: init.headers,
    path: init.path,
    runStartMs,
    histograms,
    stop: stop.signal,
    abortInFlight: abortInFlight.signal,
    shard: init.shard,
    streamed,
  });
  try {
    for (const plan of planPhases(workload)) {
      if (stop.signal.aborted) break;
      await runPhase(ctx, plan);
    }
  } finally {
    // The last, partial window too: a short run must still show how this thread's loop fared.
    bus.emit({ ...sampler.sample(runStartMs, inFlight), thread: init.workerIndex });
    sampler.stop();
    tracker.close();
    await transport.close(init.stopGraceMs);
  }
  post({ type: 'done', histograms: histograms.toFile() });
}

main().catch((error: unknown) => post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }));
