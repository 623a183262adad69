// The embedded deployment on a worker thread of its own, as a run starts it: its servers, schedulers and log
// writes then never share the client's event loop, so the client's timings and its saturation verdict describe
// the client alone. The main thread gets the addresses and a bounded close(). A thread whose deployment closed
// cleanly waits, unreferenced, for the next run of this process (loading the engine's modules again would cost
// every run a few hundred milliseconds).
import { Worker } from 'node:worker_threads';
import type { EngineOptions, EngineServerInfo, EngineTopology } from './options.js';
import type { RunSpeed } from './run-speed.js';
import type { EngineSpan } from './tracing.js';

/** What a run needs of a deployment started on its own thread. */
export interface EngineThreadHandle {
  readonly url: string;
  readonly topology: EngineTopology;
  readonly modelName: string;
  readonly servers: readonly EngineServerInfo[];
  /** This start's speed factor (`engine.run_spread_pct`): drawn on the thread at each start, not once per thread. */
  readonly runSpeed: RunSpeed;
  readonly monitorTargets: readonly { readonly name: string; readonly url: string }[];
  /** Closes every server; resolves within about 3 s whatever the thread does. With `trace`, the spans of the
   * requests still open are handed to `onSpans` before it resolves. */
  close(): Promise<void>;
  /** With `trace`: where the thread's spans go, a batch every quarter second and the rest at close. */
  onSpans(listener: (spans: EngineSpan[]) => void): void;
}

export type EngineThreadInfo = Omit<EngineThreadHandle, 'close' | 'onSpans'>;

export type ToEngineThread = { readonly type: 'start'; readonly options: EngineOptions } | { readonly type: 'close' };
export type FromEngineThread =
  | { readonly type: 'ready'; readonly info: EngineThreadInfo }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'spans'; readonly spans: EngineSpan[] }
  | { readonly type: 'closed' };

/** A thread that does not answer its close this long is terminated (and not reused). */
const CLOSE_BOUND_MS = 3_000;

/** A thread whose last deployment closed cleanly, ready for the next. */
let idle: Worker | null = null;

/** Source runs (tsx) load the entry through tsx's hooks; a build loads the compiled .js directly. */
function spawn(): Worker {
  const self = import.meta.url;
  let worker: Worker;
  if (self.endsWith('.ts')) {
    const entry = new URL('./thread-entry.ts', self).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
    worker = new Worker(code, { eval: true });
  } else {
    worker = new Worker(new URL('./thread-entry.js', self));
  }
  // Once per thread, not per run it serves: an idle thread that dies is forgotten.
  worker.once('exit', () => {
    if (idle === worker) idle = null;
  });
  return worker;
}

function take(): Worker {
  const worker = idle ?? spawn();
  idle = null;
  worker.ref();
  return worker;
}

function giveBack(worker: Worker): void {
  if (idle !== null) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle = worker;
}

/** Starts the deployment on a worker thread; rejects with its start error (a port in use, say). */
export function startEngineThread(opts: EngineOptions): Promise<EngineThreadHandle> {
  const worker = take();
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      void worker.terminate();
      reject(error);
    };
    const onError = (error: Error): void => fail(error);
    const onExit = (code: number): void => fail(new Error(`the embedded engine's thread exited (code ${code}) before it listened`));
    worker.once('error', onError);
    worker.once('exit', onExit);
    worker.once('message', (m: FromEngineThread) => {
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (m.type === 'error') {
        // The thread is fine, its deployment did not start: keep the thread for the next run.
        giveBack(worker);
        return reject(new Error(m.message));
      }
      if (m.type !== 'ready') return fail(new Error(`unexpected message from the engine's thread: ${m.type}`));
      // A thread that dies later is noticed by the run: its requests fail.
      const ignore = (): void => {};
      worker.on('error', ignore);
      let spanListener: ((spans: EngineSpan[]) => void) | null = null;
      const onSpans = (reply: FromEngineThread): void => {
        if (reply.type === 'spans') spanListener?.(reply.spans);
      };
      worker.on('message', onSpans);
      let closing: Promise<void> | null = null;
      resolve({
        ...m.info,
        onSpans: (listener) => {
          spanListener = listener;
        },
        close: () =>
          (closing ??= new Promise<void>((done) => {
            const finish = (clean: boolean): void => {
              clearTimeout(bound);
              worker.off('message', onClosed);
              worker.off('message', onSpans);
              worker.off('exit', onGone);
              worker.off('error', ignore);
              if (clean) {
                giveBack(worker);
                done();
              } else
                void worker.terminate().then(
                  () => done(),
                  () => done(),
                );
            };
            const onClosed = (reply: FromEngineThread): void => {
              if (reply.type === 'closed') finish(true);
            };
            const onGone = (): void => finish(false);
            const bound = setTimeout(() => finish(false), CLOSE_BOUND_MS);
            worker.on('message', onClosed);
            worker.once('exit', onGone);
            worker.postMessage({ type: 'close' } satisfies ToEngineThread);
          })),
      });
    });
    worker.postMessage({ type: 'start', options: opts } satisfies ToEngineThread);
  });
}
