// Agents spread over worker threads (`agents.workers`), for when one event loop cannot keep up with the
// streams (about 20-30k SSE events/s a core): each thread runs a sub-shard of the agents with its own
// sockets; the main thread keeps the bus, the files, the monitor and the summary.
import type { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Workload } from '../config/index.js';
import { HistogramSet, type HistogramsFile } from '../metrics/index.js';
import type { TlsOptions } from '../transport/index.js';
import type { HangEvent, PathKind, RunEvent } from '../types/index.js';
import type { RunBus } from './bus.js';
import type { Shard } from './shard.js';
import { spawnModuleWorker } from '../util/index.js';
import { laneCount } from './phase.js';

export interface WorkerInit {
  workload: Workload;
  workerIndex: number;
  workerCount: number;
  /** The worker's agents: the process's shard split once more (shard i/N, worker k/W → (i + kN)/(NW)). */
  shard: Shard;
  runStartEpochMs: number;
  requestUrl: string;
  tls: TlsOptions;
  connectProxy: string | null;
  path: PathKind;
  headers: Record<string, string>;
  stopGraceMs: number;
  clientSampleMs: number;
}

export type ToWorkerMessage = { type: 'stop' } | { type: 'abort' };
export type ToMainMessage = { type: 'event'; event: RunEvent } | { type: 'done'; histograms: HistogramsFile } | { type: 'failed'; message: string };

/** Streams one thread handles comfortably; `auto` adds a thread per this many agents, up to the cores. */
const AGENTS_PER_WORKER = 256;

/** How many worker threads a workload asks for (1: agents run on the main thread). */
export function workerCount(workload: Workload): number {
  const asked = workload.agents.workers;
  // Agents, or conversations at once (`agents.arrival.max_active`), of the largest phase.
  const agents = laneCount(workload);
  if (asked === 'auto') return Math.max(1, Math.min(availableParallelism() - 1, Math.ceil(agents / AGENTS_PER_WORKER)));
  return Math.max(1, Math.min(asked, agents));
}

export interface WorkerRunOptions {
  count: number;
  init: Omit<WorkerInit, 'workerIndex' | 'workerCount' | 'shard' | 'runStartEpochMs'>;
  processShard: Shard | null;
  runStartMs: number;
  bus: RunBus;
  /** Where the workers' ITL gaps are merged. */
  histograms: HistogramSet;
  enrichHang?: (event: HangEvent) => HangEvent;
  stop: AbortSignal;
  abortInFlight: AbortSignal;
  log: (line: string) => void;
}

/** Runs every phase on `count` worker threads; resolves when all have finished (or failed, which rejects). */
export async function runInWorkers(o: WorkerRunOptions): Promise<void> {
  const n = o.processShard?.count ?? 1;
  const i = o.processShard?.index ?? 0;
  const runStartEpochMs = performance.timeOrigin + o.runStartMs;
  const workers: Worker[] = [];
  const finished = Array.from({ length: o.count }, (_, k) => {
    const init: WorkerInit = { ...o.init, workerIndex: k, workerCount: o.count, shard: { index: i + k * n, count: n * o.count }, runStartEpochMs };
    const worker = spawnModuleWorker(import.meta.url, 'worker-entry', init);
    workers.push(worker);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      worker.on('message', (m: ToMainMessage) => {
        if (m.type === 'event') {
          const e = m.event;
          o.bus.emit(e.kind === 'hang' && o.enrichHang !== undefined ? o.enrichHang(e) : e);
        } else if (m.type === 'done') {
          done = true;
          o.histograms.merge(HistogramSet.fromFile(m.histograms));
          void worker.terminate();
          resolve();
        } else {
          done = true;
          void worker.terminate();
          reject(new Error(`worker ${k} failed: ${m.message}`));
        }
      });
      worker.on('error', (error) => {
        done = true;
        reject(error);
      });
      worker.on('exit', (code) => {
        if (!done) reject(new Error(`worker ${k} exited with code ${code} before finishing`));
      });
    });
  });
  const onStop = (): void => workers.forEach((w) => w.postMessage({ type: 'stop' } satisfies ToWorkerMessage));
  const onAbort = (): void => workers.forEach((w) => w.postMessage({ type: 'abort' } satisfies ToWorkerMessage));
  if (o.stop.aborted) onStop();
  if (o.abortInFlight.aborted) onAbort();
  o.stop.addEventListener('abort', onStop, { once: true });
  o.abortInFlight.addEventListener('abort', onAbort, { once: true });
  o.log(`agents spread over ${o.count} worker threads`);
  try {
    await Promise.all(finished);
  } finally {
    o.stop.removeEventListener('abort', onStop);
    o.abortInFlight.removeEventListener('abort', onAbort);
    await Promise.all(workers.map((w) => w.terminate().catch(() => 0)));
  }
}
