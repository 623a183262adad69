// The worker thread that hosts embedded deployments for runs (see thread.ts): starts one when asked, reports its
// addresses, closes it when asked, then waits for the next.
import { parentPort } from 'node:worker_threads';
import { startEngine, type EngineHandle, type EngineSpan } from './index.js';
import type { FromEngineThread, ToEngineThread } from './thread.js';

const port = parentPort!;
const post = (m: FromEngineThread): void => port.postMessage(m);
let engine: EngineHandle | null = null;
/** With tracing on: the finished spans go to the run every quarter second (off the servers' path). */
let spanTimer: NodeJS.Timeout | null = null;
const SPAN_INTERVAL_MS = 250;

function postSpans(spans: EngineSpan[]): void {
  if (spans.length > 0) post({ type: 'spans', spans });
}

port.on('message', (m: ToEngineThread) => {
  if (m.type === 'start') {
    startEngine(m.options).then(
      (started) => {
        engine = started;
        const traces = started.traces;
        if (traces !== null) spanTimer = setInterval(() => postSpans(traces.take()), SPAN_INTERVAL_MS).unref();
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
  if (spanTimer !== null) clearInterval(spanTimer);
  spanTimer = null;
  void (closing?.close() ?? Promise.resolve()).then(() => {
    // What finished, and the requests still in a stage, cut at the stop: the hung request's trace shows where.
    if (closing?.traces) postSpans(closing.traces.close());
    post({ type: 'closed' });
  });
});
