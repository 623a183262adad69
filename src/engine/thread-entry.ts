// The worker thread that hosts embedded deployments for runs (see thread.ts): starts one when asked, reports its
// addresses, closes it when asked, then waits for the next.
import { parentPort } from 'node:worker_threads';
import { startEngine, type EngineHandle } from './index.js';
import type { FromEngineThread, ToEngineThread } from './thread.js';

const port = parentPort!;
const post = (m: FromEngineThread): void => port.postMessage(m);
let engine: EngineHandle | null = null;

port.on('message', (m: ToEngineThread) => {
  if (m.type === 'start') {
    startEngine(m.options).then(
      (started) => {
        engine = started;
        post({
          type: 'ready',
          info: { url: started.url, topology: started.topology, modelName: started.modelName, servers: started.servers, runSpeed: started.runSpeed, monitorTargets: started.monitorTargets },
        });
      },
      (error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
    return;
  }
  const closing = engine;
  engine = null;
  void (closing?.close() ?? Promise.resolve()).then(() => post({ type: 'closed' }));
});
