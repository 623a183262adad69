// The worker thread that hosts an embedded deployment for a run (see thread.ts): starts it, reports its addresses,
// closes it when asked.
import { parentPort, workerData } from 'node:worker_threads';
import { startEngine, type EngineOptions } from './index.js';
import type { FromEngineThread, ToEngineThread } from './thread.js';

const port = parentPort!;
const post = (m: FromEngineThread): void => port.postMessage(m);

startEngine(workerData as EngineOptions).then(
  (engine) => {
    port.on('message', (m: ToEngineThread) => {
      if (m.type !== 'close') return;
      void engine.close().then(() => post({ type: 'closed' }));
    });
    post({ type: 'ready', info: { url: engine.url, topology: engine.topology, modelName: engine.modelName, servers: engine.servers, monitorTargets: engine.monitorTargets } });
  },
  (error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
);
