// The embedded deployment on a worker thread of its own, as a run starts it: its servers, schedulers and log
// writes then never share the client's event loop, so the client's timings and its saturation verdict describe
// the client alone. The main thread gets the addresses and a bounded close().
import { Worker } from 'node:worker_threads';
import type { EngineOptions, EngineServerInfo, EngineTopology } from './index.js';

/** What a run needs of a deployment started on its own thread. */
export interface EngineThreadHandle {
  readonly url: string;
  readonly topology: EngineTopology;
  readonly modelName: string;
  readonly servers: readonly EngineServerInfo[];
  readonly monitorTargets: readonly { readonly name: string; readonly url: string }[];
  /** Closes every server, then the thread; resolves within about 3 s whatever the thread does. */
  close(): Promise<void>;
}

export type EngineThreadInfo = Omit<EngineThreadHandle, 'close'>;

export type ToEngineThread = { readonly type: 'close' };
export type FromEngineThread = { readonly type: 'ready'; readonly info: EngineThreadInfo } | { readonly type: 'error'; readonly message: string } | { readonly type: 'closed' };

/** A thread that does not answer its close this long is terminated. */
const CLOSE_BOUND_MS = 3_000;

/** Source runs (tsx) load the entry through tsx's hooks; a build loads the compiled .js directly. */
function spawn(workerData: EngineOptions): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    const entry = new URL('./thread-entry.ts', self).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, workerData });
  }
  return new Worker(new URL('./thread-entry.js', self), { workerData });
}

/** Starts the deployment on a worker thread; rejects with its start error (a port in use, say). */
export function startEngineThread(opts: EngineOptions): Promise<EngineThreadHandle> {
  const worker = spawn(opts);
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      void worker.terminate();
      reject(error);
    };
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the embedded engine's thread exited (code ${code}) before it listened`)));
    worker.once('message', (m: FromEngineThread) => {
      worker.removeAllListeners('error');
      worker.removeAllListeners('exit');
      if (m.type === 'error') return fail(new Error(m.message));
      if (m.type !== 'ready') return fail(new Error(`unexpected message from the engine's thread: ${m.type}`));
      // A thread that dies later is noticed by the run: its requests fail.
      worker.on('error', () => {});
      let closing: Promise<void> | null = null;
      resolve({
        ...m.info,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            const finish = (): void => {
              clearTimeout(bound);
              void worker.terminate().then(() => done(), () => done());
            };
            const bound = setTimeout(finish, CLOSE_BOUND_MS);
            worker.once('message', finish);
            worker.once('exit', finish);
            worker.postMessage({ type: 'close' } satisfies ToEngineThread);
          })),
      });
    });
  });
}
